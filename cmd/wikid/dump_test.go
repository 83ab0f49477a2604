package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/mwxml"
	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/wiki"
)

// dumpRev is one revision of the test dump, as the wiki should hold it.
type dumpRev struct {
	title   string // the wiki's title
	text    string
	user    string // as stored: imported>Name, or an IP
	comment string
	minor   bool
	at      time.Time
}

// fieldDump writes a dump that exercises every field the importer reads:
// history, redirects, namespaces by local names (Benutzer: is User:, the
// site's name is Project:), a namespace the wiki has not, unicode titles,
// minor edits, IP authors, a comment with XML's specials, restrictions,
// hidden text and an unsupported model. It returns the revisions the wiki
// should hold, oldest first per page.
func fieldDump(t *testing.T) ([]byte, []dumpRev) {
	t.Helper()
	site := mwxml.DefaultSiteInfo("Oldwiki")
	site.Namespaces[4].Name = "Benutzer" // key 2, as a German wiki names it
	site.Namespaces = append(site.Namespaces, mwxml.Namespace{Key: 100, Case: "first-letter", Name: "Portal"})
	var b bytes.Buffer
	w := mwxml.NewWriter(&b, site, "de")
	at := func(n int) time.Time { return time.Date(2015, 3, 1, 12, 0, n, 0, time.UTC) }
	var want []dumpRev
	id := int64(0)
	page := func(title string, ns int, wikiTitle string, redirect string, restrictions string, revs ...dumpRev) {
		id++
		w.Page(mwxml.Page{Title: title, NS: ns, ID: id, Redirect: redirect, Restrictions: restrictions})
		for _, r := range revs {
			id++
			c := mwxml.Contributor{Username: strings.TrimPrefix(r.user, "imported>"), ID: 7}
			if !strings.HasPrefix(r.user, "imported>") {
				c = mwxml.Contributor{IP: r.user}
			}
			w.Revision(mwxml.Revision{ID: id, Timestamp: r.at, Contributor: c, Minor: r.minor, Comment: r.comment, Model: "wikitext", Text: r.text})
			r.title = wikiTitle
			want = append(want, r)
		}
		w.EndPage()
	}
	page("Zürich", 0, "Zürich", "", "edit=sysop:move=sysop",
		dumpRev{text: "Zürich is a city.\n", user: "imported>Anna", comment: `first <b>&amp;</b> "q" 'a'`, at: at(1)},
		dumpRev{text: "Zürich is a city in [[Schweiz]].\n[[Category:Städte]]\n", user: "192.0.2.7", comment: "ip edit", minor: true, at: at(2)},
		dumpRev{text: "Zürich is the largest city in [[Schweiz]].\n[[Category:Städte]]\n", user: "imported>Bob", comment: "", at: at(3)},
	)
	page("Zurich", 0, "Zurich", "Zürich", "",
		dumpRev{text: "#REDIRECT [[Zürich]]\n", user: "imported>Bob", comment: "redirect", at: at(4)})
	page("Talk:Zürich", 1, "Talk:Zürich", "", "",
		dumpRev{text: "Why? ~~~~\n", user: "2001:db8::1", comment: "q", at: at(5)})
	page("Benutzer:Anna", 2, "User:Anna", "", "",
		dumpRev{text: "I am Anna.\n", user: "imported>Anna", comment: "me", at: at(6)})
	page("Oldwiki:Über", 4, "Project:Über", "", "",
		dumpRev{text: "About the wiki.\n", user: "imported>Anna", comment: "about", at: at(7)})
	page("Template:Box", 10, "Template:Box", "", "",
		dumpRev{text: "<div>{{{1}}}</div>\n", user: "imported>Anna", comment: "tpl", at: at(8)})
	page("Category:Städte", 14, "Category:Städte", "", "",
		dumpRev{text: "Cities.\n", user: "imported>Anna", comment: "cat", at: at(9)})
	page("File:Karte.png", 6, "File:Karte.png", "", "",
		dumpRev{text: "A map.\n", user: "imported>Anna", comment: "file page", at: at(10)})
	page("Portal:Geo", 100, "Portal:Geo", "", "",
		dumpRev{text: "Geography portal.\n", user: "imported>Anna", comment: "portal", at: at(11)})
	page("日本語", 0, "日本語", "", "",
		dumpRev{text: "日本語のページ。\n", user: "imported>Kenji", comment: "ja", at: at(12)},
		dumpRev{text: "日本語のページ、改訂。\n", user: "imported>Kenji", comment: "ja 2", minor: true, at: at(13)})
	// A revision whose text is hidden, and one of a model Wikid has not.
	id++
	w.Page(mwxml.Page{Title: "Hidden", NS: 0, ID: id})
	w.Revision(mwxml.Revision{ID: id + 1, Timestamp: at(14), Contributor: mwxml.Contributor{Deleted: true}, CommentDeleted: true, TextDeleted: true})
	w.EndPage()
	w.Page(mwxml.Page{Title: "MediaWiki:Common.css", NS: 8, ID: id + 2})
	w.Revision(mwxml.Revision{ID: id + 3, Timestamp: at(15), Contributor: mwxml.Contributor{Username: "Anna", ID: 7}, Model: "css", Text: "body {}"})
	w.EndPage()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), want
}

// checkHistory compares the wiki's revisions with want, page by page.
func checkHistory(t *testing.T, data string, want []dumpRev) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(data, "wikid.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	byTitle := map[string][]dumpRev{}
	var order []string
	for _, r := range want {
		if byTitle[r.title] == nil {
			order = append(order, r.title)
		}
		byTitle[r.title] = append(byTitle[r.title], r)
	}
	for _, title := range order {
		revs := byTitle[title]
		p, err := db.FindPage(ctx, wiki.Title(title))
		if err != nil {
			t.Errorf("page %q: %v", title, err)
			continue
		}
		h, err := db.History(ctx, wiki.HistoryQuery{PageID: p.ID, Limit: 100})
		if err != nil || len(h) != len(revs) {
			t.Errorf("page %q: %d revisions, want %d (%v)", title, len(h), len(revs), err)
			continue
		}
		for i, w := range revs {
			got := h[len(h)-1-i]
			full, err := db.FindRevision(ctx, got.ID)
			if err != nil {
				t.Fatal(err)
			}
			if full.Text != w.text || got.UserName != w.user || got.UserID != 0 || got.Summary != w.comment ||
				got.Minor != w.minor || !got.Time.Equal(w.at) || got.Model != wiki.ModelWikitext {
				t.Errorf("page %q, revision %d:\n got %q by %q (%d) %q minor %v at %v, %s\nwant %q by %q %q minor %v at %v",
					title, i, full.Text, got.UserName, got.UserID, got.Summary, got.Minor, got.Time, got.Model, w.text, w.user, w.comment, w.minor, w.at)
			}
		}
	}
	if p, err := db.FindPage(ctx, "Zurich"); err != nil || p.Redirect != "Zürich" {
		t.Errorf("the redirect: %+v, %v", p, err)
	}
	ch, err := db.RecentChanges(ctx, wiki.ChangeQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ch {
		// The pages the wiki made on its first start have theirs.
		if byTitle[string(c.Title)] != nil && (c.Kind == wiki.ChangeNew || c.Kind == wiki.ChangeEdit) {
			t.Errorf("a recent change of an imported page: %+v", c)
		}
	}
	log, err := db.Log(ctx, wiki.LogQuery{Type: wiki.LogImport, Limit: 100})
	logged := map[wiki.Title]bool{}
	for _, e := range log {
		logged[e.Target] = true
	}
	for _, title := range order {
		if !logged[wiki.Title(title)] {
			t.Errorf("no import log entry for %q (%v)", title, err)
		}
	}
	if hits, err := db.Search(ctx, wiki.SearchQuery{Text: "largest", Limit: 5}); err != nil || len(hits) != 1 || hits[0].Title != "Zürich" {
		t.Errorf("search for the latest text: %+v, %v", hits, err)
	}
	if hits, err := db.Search(ctx, wiki.SearchQuery{Text: "Schweiz", Limit: 5}); err != nil || len(hits) != 1 {
		t.Errorf("search: %+v, %v", hits, err)
	}
	if bl, err := db.Backlinks(ctx, "Schweiz", wiki.ListQuery{Limit: 5}); err != nil || len(bl) != 1 {
		t.Errorf("links of the latest revision: %+v, %v", bl, err)
	}
}

func TestImportDump(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dump, want := fieldDump(t)
	plain := filepath.Join(dir, "dump.xml")
	os.WriteFile(plain, dump, 0o600)
	data := filepath.Join(dir, "data")

	out, stderr, err := wikid(t, "", nil, "import", plain, "--data", data)
	if err != nil {
		t.Fatalf("import: %v\n%s%s", err, out, stderr)
	}
	for _, s := range []string{
		"imported 10 pages (10 created, 0 updated), 13 revisions", "13 added, 0 skipped",
		"1 revisions not imported: their text is hidden", `1 revisions not imported: content model "css"`,
		`1 pages of namespace "Portal", which this wiki has not`,
	} {
		if !strings.Contains(out, s) {
			t.Errorf("summary %q lacks %q", out, s)
		}
	}
	checkHistory(t, data, want)

	t.Run("importing again changes nothing, from gzip too", func(t *testing.T) {
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(dump)
		zw.Close()
		name := filepath.Join(dir, "dump.xml.gz")
		os.WriteFile(name, gz.Bytes(), 0o600)
		out, _, err := wikid(t, "", nil, "import", name, "--data", data)
		if err != nil || !strings.Contains(out, "0 added, 13 skipped, already present") {
			t.Fatalf("import again: %v, %q", err, out)
		}
		checkHistory(t, data, want)
	})

	t.Run("bzip2 from standard input", func(t *testing.T) {
		if _, err := exec.LookPath("bzip2"); err != nil {
			t.Skip("no bzip2 command")
		}
		cmd := exec.Command("bzip2", "-c")
		cmd.Stdin = bytes.NewReader(dump)
		bz, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		fresh := filepath.Join(t.TempDir(), "data")
		out, _, err := wikid(t, string(bz), nil, "import", "-", "--data", fresh)
		if err != nil || !strings.Contains(out, "13 added") {
			t.Fatalf("bzip2 import: %v, %q", err, out)
		}
		checkHistory(t, fresh, want)
	})

	t.Run("a page deleted here is created again by the next import, with the dump's history", func(t *testing.T) {
		db, err := sqlite.Open(context.Background(), filepath.Join(data, "wikid.db"))
		if err != nil {
			t.Fatal(err)
		}
		err = db.DeletePage(context.Background(), "Talk:Zürich", 0, "Admin", "test", time.Now())
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		out, _, err := wikid(t, "", nil, "import", plain, "--data", data)
		if err != nil || !strings.Contains(out, "1 added, 12 skipped") {
			t.Fatalf("import after a delete: %v, %q", err, out)
		}
		checkHistory(t, data, want)
	})

	t.Run("a wiki's own export imported into it adds nothing, its pages' times in milliseconds and all", func(t *testing.T) {
		all, _, err := wikid(t, "", nil, "export", "--full", "--all", "--markdown-model", "--data", data)
		if err != nil || !strings.Contains(all, "<title>Main Page</title>") {
			t.Fatalf("export --all: %v", err)
		}
		out, _, err := wikid(t, all, nil, "import", "-", "--data", data)
		if err != nil || !strings.Contains(out, " 0 added") {
			t.Fatalf("import of the wiki's own export: %v, %q", err, out)
		}
	})

	t.Run("export, import, export gives the same dump", func(t *testing.T) {
		// The titles imported, not --all: a new wiki has pages of its own.
		var titles []string
		for _, r := range want {
			if !slices.Contains(titles, r.title) {
				titles = append(titles, r.title)
			}
		}
		first, _, err := wikid(t, "", nil, append([]string{"export", "--full", "--data", data}, titles...)...)
		if err != nil {
			t.Fatal(err)
		}
		again := filepath.Join(t.TempDir(), "data")
		if out, _, err := wikid(t, first, nil, "import", "-", "--data", again); err != nil {
			t.Fatalf("import of the export: %v, %q", err, out)
		}
		checkHistory(t, again, want)
		second, _, err := wikid(t, "", nil, append([]string{"export", "--full", "--data", again}, titles...)...)
		if err != nil {
			t.Fatal(err)
		}
		// Page and revision IDs are each wiki's own.
		ids := regexp.MustCompile(`<(id|parentid|origin)>\d+</(id|parentid|origin)>`)
		a, b := ids.ReplaceAllString(first, "<$1/>"), ids.ReplaceAllString(second, "<$1/>")
		if a != b {
			t.Errorf("the second export differs from the first:\n%s\n----\n%s", a, b)
		}
		for _, s := range []string{`<title>User:Anna</title>`, `<ns>2</ns>`, `<redirect title="Zürich" />`, `<minor />`,
			`<ip>192.0.2.7</ip>`, `<username>imported&gt;Anna</username>`, `<comment>first &lt;b&gt;&amp;amp;&lt;/b&gt; &quot;q&quot; 'a'</comment>`,
			`<model>wikitext</model>`} {
			if !strings.Contains(first, s) {
				t.Errorf("the export lacks %s", s)
			}
		}
	})
}

func TestImportDumpErrors(t *testing.T) {
	t.Parallel()
	good, want := fieldDump(t)
	t.Run("an import stopped half-way completes when run again", func(t *testing.T) {
		dir := t.TempDir()
		data := filepath.Join(dir, "data")
		half := filepath.Join(dir, "half.xml")
		os.WriteFile(half, good[:len(good)/2], 0o600)
		out, _, err := wikid(t, "", nil, "import", half, "--data", data)
		if err == nil || !strings.Contains(err.Error(), "ends in the middle") {
			t.Fatalf("half a dump: %v", err)
		}
		added := regexp.MustCompile(`(\d+) added`).FindStringSubmatch(out)
		full := filepath.Join(dir, "full.xml")
		os.WriteFile(full, good, 0o600)
		out, _, err = wikid(t, "", nil, "import", full, "--data", data)
		if err != nil || added == nil || atoi(added[1]) == 0 || !strings.Contains(out, fmt.Sprintf("%d skipped", atoi(added[1]))) {
			t.Fatalf("the whole dump after half of it: %v, %q (first run added %v)", err, out, added)
		}
		checkHistory(t, data, want)
	})
	rev := func(title, body string) string {
		return `  <page>
    <title>` + title + `</title>
    <ns>0</ns>
    <id>99</id>
    <revision>
      ` + body + `
    </revision>
  </page>
`
	}
	okRev := `<id>1</id><timestamp>2020-01-01T00:00:00Z</timestamp><contributor><ip>192.0.2.1</ip></contributor><text>ok</text>`
	head, _, _ := strings.Cut(string(good), "  <page>")
	tail := "</mediawiki>\n"
	for _, tc := range []struct {
		name, dump, want string
	}{
		{"a truncated dump", string(good[:len(good)*2/3]), "ends in the middle"},
		{"bad XML", head + rev("Before", okRev) + rev("Bad", okRev+"<x></y>") + tail, `page "Bad": bad XML`},
		{"bad XML after a good revision", head + rev("Before", okRev) + strings.Replace(rev("Bad", okRev), "</revision>", "</revision><revision><id>2</id><timestamp>2020-01-02T00:00:00Z</timestamp><text>x</txt>", 1) + tail, `page "Bad": bad XML`},
		{"a huge text", head + rev("Before", okRev) + rev("Huge", `<timestamp>2020-01-01T00:00:00Z</timestamp><text>`+strings.Repeat("x", 3000)+`</text>`) + tail, `page "Huge": the revision's text is longer than the limit (max_page_bytes) of 2048 bytes`},
		{"a bad timestamp", head + rev("Before", okRev) + rev("When", `<timestamp>2020-13-45</timestamp>`) + tail, `page "When": <timestamp> is "2020-13-45"`},
		{"a missing title", head + rev("Before", okRev) + "<page><ns>0</ns><revision>" + okRev + "</revision></page>" + tail, "a <page> without a <title>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			name := filepath.Join(dir, "dump.xml")
			os.WriteFile(name, []byte(tc.dump), 0o600)
			cfg := filepath.Join(dir, "config.json")
			os.WriteFile(cfg, []byte(`{"max_page_bytes": 2048}`), 0o600)
			data := filepath.Join(dir, "data")
			_, _, err := wikid(t, "", nil, "import", name, "--data", data, "--config", cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !regexp.MustCompile(`line \d+, column \d+`).MatchString(err.Error()) {
				t.Fatalf("err %v, want %q with a position", err, tc.want)
			}
			db, err := sqlite.Open(context.Background(), filepath.Join(data, "wikid.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			// The pages before the bad one are in; the bad one is not.
			if tc.name != "a truncated dump" {
				if _, err := db.FindPage(context.Background(), "Before"); err != nil {
					t.Errorf("the page before the bad one: %v", err)
				}
			}
			for _, bad := range []wiki.Title{"Bad", "Huge", "When"} {
				if _, err := db.FindPage(context.Background(), bad); err == nil {
					t.Errorf("the bad page %q was imported", bad)
				}
			}
		})
	}
}

func TestImportDumpFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	var png1 bytes.Buffer
	if err := png.Encode(&png1, img); err != nil {
		t.Fatal(err)
	}
	files := filepath.Join(dir, "files")
	os.MkdirAll(files, 0o750)
	os.WriteFile(filepath.Join(files, "Red_dot.png"), png1.Bytes(), 0o600)
	up := time.Date(2016, 5, 4, 3, 2, 1, 0, time.UTC)
	var b bytes.Buffer
	w := mwxml.NewWriter(&b, mwxml.DefaultSiteInfo("Old"), "en")
	w.Page(mwxml.Page{Title: "File:Red dot.png", NS: 6, ID: 1})
	w.Revision(mwxml.Revision{ID: 1, Timestamp: up, Contributor: mwxml.Contributor{Username: "Anna", ID: 3}, Comment: "a dot", Text: "A red dot.\n"})
	w.Upload(mwxml.Upload{Timestamp: up, Contributor: mwxml.Contributor{Username: "Anna", ID: 3}, Comment: "a dot", Filename: "Red dot.png", Size: int64(png1.Len())})
	w.Page(mwxml.Page{Title: "File:Missing.png", NS: 6, ID: 2})
	w.Revision(mwxml.Revision{ID: 2, Timestamp: up, Contributor: mwxml.Contributor{Username: "Anna", ID: 3}, Text: "Gone.\n"})
	w.Upload(mwxml.Upload{Timestamp: up, Contributor: mwxml.Contributor{Username: "Anna", ID: 3}, Filename: "Missing.png", Size: 10})
	w.Close()
	name := filepath.Join(dir, "dump.xml")
	os.WriteFile(name, b.Bytes(), 0o600)
	data := filepath.Join(dir, "data")
	out, _, err := wikid(t, "", nil, "import", name, "--files", files, "--data", data)
	if err != nil || !strings.Contains(out, "files: 1 uploaded, 0 present already, 1 not found") {
		t.Fatalf("import with files: %v, %q", err, out)
	}
	out, _, err = wikid(t, "", nil, "import", name, "--files", files, "--data", data)
	if err != nil || !strings.Contains(out, "files: 0 uploaded, 1 present already, 1 not found") || !strings.Contains(out, "0 added") {
		t.Fatalf("import with files again: %v, %q", err, out)
	}
	db, err := sqlite.Open(context.Background(), filepath.Join(data, "wikid.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	vs, err := db.FileVersions(context.Background(), "File:Red dot.png")
	if err != nil || len(vs) != 1 {
		t.Fatalf("versions: %+v, %v", vs, err)
	}
	if v := vs[0]; !v.Time.Equal(up) || v.UserName != "imported>Anna" || v.Size != int64(png1.Len()) || v.Width != 4 {
		t.Errorf("the version: %+v", v)
	}
	if _, _, err := wikid(t, "", nil, "import", name, "--files", filepath.Join(dir, "nowhere"), "--data", data); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("--files of a missing directory: %v", err)
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
