package mwxml

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"
)

// DefaultSiteInfo is the siteinfo of a MediaWiki 1.39 wiki in English with
// the default namespaces; the generator writes it, and so does Wikid's
// export with its own names.
func DefaultSiteInfo(sitename string) SiteInfo {
	return SiteInfo{
		SiteName: sitename, DBName: "wiki", Base: "http://localhost/wiki/Main_Page",
		Generator: "MediaWiki 1.39.17", Case: "first-letter",
		Namespaces: []Namespace{
			{-2, "first-letter", "Media"}, {-1, "first-letter", "Special"},
			{0, "first-letter", ""}, {1, "first-letter", "Talk"},
			{2, "first-letter", "User"}, {3, "first-letter", "User talk"},
			{4, "first-letter", sitename}, {5, "first-letter", sitename + " talk"},
			{6, "first-letter", "File"}, {7, "first-letter", "File talk"},
			{8, "first-letter", "MediaWiki"}, {9, "first-letter", "MediaWiki talk"},
			{10, "first-letter", "Template"}, {11, "first-letter", "Template talk"},
			{12, "first-letter", "Help"}, {13, "first-letter", "Help talk"},
			{14, "first-letter", "Category"}, {15, "first-letter", "Category talk"},
		},
	}
}

// Generate writes a dump of pages pages with revs revisions each of
// realistic wikitext (a few KB: headings, links between the pages,
// templates, categories, lists, tables), then one page of each kind an
// importer treats apart (a redirect, talk, user, category and file pages,
// unicode), the same for the same seed: the corpus of the import
// benchmark.
func Generate(w io.Writer, pages, revs int, seed uint64) error {
	rnd := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	wr := NewWriter(w, DefaultSiteInfo("Benchwiki"), "en")
	start := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	words := strings.Fields(`the of and to in is was for on that with as by it from at his an
		were are which this be or has had first one their its new after who they have her she two
		been other when there all during into school time may years more most only over city some
		world would where later up such used many can state about national out known university
		united then made century river music between age under war while team game album series`)
	revID := int64(0)
	for p := range pages {
		title := fmt.Sprintf("Page %d", p)
		if p%50 == 0 {
			title = fmt.Sprintf("Template:Box %d", p)
		}
		ns := 0
		if strings.HasPrefix(title, "Template:") {
			ns = 10
		}
		if err := wr.Page(Page{Title: title, NS: ns, ID: int64(p + 1)}); err != nil {
			return err
		}
		var text strings.Builder
		parent := int64(0)
		for v := range revs {
			revID++
			// Each revision adds a paragraph to the last one's text,
			// as edits mostly do.
			switch {
			case v == 0 && ns == 10:
				// A template shows a small box; its own documentation,
				// the rest of its text, is not transcluded.
				fmt.Fprintf(&text, "<includeonly>{| class=\"wikitable\"\n! {{{1|%s}}}\n|-\n| a box of the benchmark\n|}</includeonly><noinclude>\n", title)
			case v == 0:
				fmt.Fprintf(&text, "{{Box %d|%s}}\n'''%s''' is a page of the benchmark.\n", (p/50)*50, title, title)
			}
			fmt.Fprintf(&text, "\n== Section %d ==\n", v)
			for range 4 + rnd.IntN(4) {
				for i := range 20 + rnd.IntN(30) {
					if i > 0 {
						text.WriteByte(' ')
					}
					if rnd.IntN(25) == 0 { // about a link every 25 words, as in an encyclopedia article
						fmt.Fprintf(&text, "[[Page %d|%s]]", rnd.IntN(pages), words[rnd.IntN(len(words))])
						continue
					}
					text.WriteString(words[rnd.IntN(len(words))])
				}
				text.WriteString(".\n\n")
			}
			fmt.Fprintf(&text, "* item %d\n* item ''%d''\n{| class=\"wikitable\"\n| a || b\n|}\n", v, rnd.IntN(100))
			body := text.String() + fmt.Sprintf("\n[[Category:Group %d]]\n", p%20)
			if ns == 10 {
				body += "</noinclude>\n"
			}
			c := Contributor{Username: fmt.Sprintf("Editor %d", rnd.IntN(50)), ID: int64(1 + rnd.IntN(50))}
			if rnd.IntN(10) == 0 {
				c = Contributor{IP: fmt.Sprintf("192.0.2.%d", rnd.IntN(250))}
			}
			err := wr.Revision(Revision{
				ID: revID, ParentID: parent, Contributor: c, Minor: rnd.IntN(4) == 0,
				Timestamp: start.Add(time.Duration(p)*time.Hour + time.Duration(v)*time.Minute),
				Comment:   fmt.Sprintf("edit %d of %s", v, title), Model: "wikitext", Text: body,
			})
			if err != nil {
				return err
			}
			parent = revID
		}
		if err := wr.EndPage(); err != nil {
			return err
		}
	}
	// A page of each kind the importer treats apart.
	at := start.Add(time.Duration(pages) * time.Hour)
	for i, x := range []struct {
		title, redirect, text, comment string
		ns                             int
		c                              Contributor
	}{
		{"Page 0 (alias)", "Page 0", "#REDIRECT [[Page 0]]\n", "a redirect", 0, Contributor{Username: "Editor 1", ID: 2}},
		{"Talk:Page 0", "", "Why? --[[User:Editor 1]]\n", "a question", 1, Contributor{IP: "2001:db8::7"}},
		{"User:Editor 1", "", "I edit.\n", "about me", 2, Contributor{Username: "Editor 1", ID: 2}},
		{"Category:Group 1", "", "Pages of group 1.\n", "a category", 14, Contributor{Username: "Editor 1", ID: 2}},
		{"File:Map.png", "", "A map.\n", "a file page", 6, Contributor{Username: "Editor 1", ID: 2}},
		{"Zürich – 日本語", "", "Unicode: Zürich, 日本語, ελληνικά.\n", `specials: <b> & "q" 'a' ]]>`, 0, Contributor{Username: "Ünïcödé", ID: 3}},
	} {
		if err := wr.Page(Page{Title: x.title, NS: x.ns, ID: int64(pages + i + 1), Redirect: x.redirect}); err != nil {
			return err
		}
		revID++
		err := wr.Revision(Revision{ID: revID, Timestamp: at.Add(time.Duration(i) * time.Minute), Contributor: x.c,
			Minor: i%2 == 1, Comment: x.comment, Model: "wikitext", Text: x.text})
		if err != nil {
			return err
		}
	}
	return wr.Close()
}
