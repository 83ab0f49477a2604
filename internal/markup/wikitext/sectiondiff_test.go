package wikitext

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/render"
)

var editLinkRE = regexp.MustCompile(`<span class="mw-editsection"><a href="/wiki/P\?action=edit&amp;section=([0-9]+)" title="Edit section: ([^"]*)">edit</a></span>`)

// checkSections renders src as the engine does (marked sections) and checks
// that the edit links are those of Sections: section n's link stands on a
// heading of section n's text, and (when all) every section has one. A
// heading line that a comment or a tag running on to a later line makes
// no heading to the renderer is a section without a link: harmless, since
// the links are numbered by the marks and a section edit shows the text
// it replaces.
func checkSections(t *testing.T, r *Renderer, src string, all bool) {
	t.Helper()
	secs, err := r.Sections(src)
	if err != nil {
		t.Fatal(err)
	}
	marked, err := r.MarkSections(src, "n0nce")
	if err != nil {
		t.Fatal(err)
	}
	res := mustRender(t, r, marked, render.Options{EditPage: "P", SectionMark: "n0nce"})
	if strings.Contains(res.HTML, "\uE000") || strings.Contains(res.HTML, "n0nce") {
		t.Errorf("%q: a section mark shows:\n%s", src, res.HTML)
	}
	html := strings.ReplaceAll(res.HTML, "\n", "")
	seen := map[int]bool{}
	for _, m := range editLinkRE.FindAllStringSubmatch(html, -1) {
		n, _ := strconv.Atoi(m[1])
		if n <= 0 || n >= len(secs) || seen[n] {
			t.Errorf("%q: edit link to section %d of %d:\n%s", src, n, len(secs)-1, res.HTML)
			continue
		}
		seen[n] = true
		// A note or a magic word in a heading is its text to Sections (the
		// edit summary).
		text := strings.TrimSpace(htmlText(m[2]))
		if secs[n].Heading != text && !strings.Contains(secs[n].Heading, "<ref") &&
			!strings.Contains(secs[n].Heading, "__") {
			t.Errorf("%q: section %d is %q, its edit link stands on %q", src, n, secs[n].Heading, text)
		}
	}
	if strings.Count(html, "mw-editsection") != len(seen) {
		t.Errorf("%q: edit links not understood:\n%s", src, res.HTML)
	}
	if strings.Contains(strings.ToUpper(src), "__NOEDITSECTION__") {
		return // none, unless the word is in literal text
	}
	for n := 1; n < len(secs); n++ {
		// A heading line the page does not show as one (in an attribute
		// value) has no link: harmless, the marks number the others.
		if all && !seen[n] && !strings.Contains(src, "title=\"\n") {
			t.Errorf("%q: section %d (%q) has no edit link:\n%s", src, n, secs[n].Heading, res.HTML)
		}
	}
}

func TestSectionsMatchHeadings(t *testing.T) {
	srcs := []string{
		"== A ==\n<nowiki>\n== N ==\n</nowiki>\n== B ==",
		"<pre>\n== P ==\n</pre>\n== B ==", "<!--\n== C ==\n-->\n== B ==", "== A <!-- c --> ==\n== B == <!-- x -->",
		"{|\n|-\n| x\n== T ==\n|}\n== B ==", "{|\n|\n== T ==\n|}", "<ref>\n== R ==\n</ref>\n== B ==\n<references/>",
		" == L ==\n== B ==", "== [[a|b=c]] ==\n== x=y ==", "==[[a|=]]==\n== B ==", "=== A ==\n== B ===\n= C =",
		"==\n== ==\n===\n====\n== B ==", "== A ==\t\n==B==  ", "<code>\n== K ==\n</code>\n== B ==",
		"<syntaxhighlight>\n== S ==\n</syntaxhighlight>\n== B ==", "<math>\n== M ==\n</math>\n== B ==",
		"<nowiki>\n== N ==\n", "<pre>\n== P ==\n", "<!-- \n== Q ==", "== A ==\n<nowiki/>== N ==",
		"== ''A'' ==\n== '''B ==\n== <span>C</span> ==\n== <b>D ==", "== <ref>x</ref>A ==\n<references/>",
		"== A<ref>\n== R ==\n</ref> ==\n<references/>", "==<nowiki>==</nowiki>==\n== B ==",
		"== A ==\n== A ==\n== a ==", "== __TOC__ ==\n== B ==\n== C ==", "== ~~~~ ==", "====== six ======\n======= seven =======",
		"<div>\n== D ==\n</div>\n== B ==", "<blockquote>\n== Q ==\n</blockquote>", "* x\n== L ==\n: y\n== M ==",
		"<gallery>\n== G ==\n</gallery>\n== B ==", "<includeonly>\n== I ==\n</includeonly>\n== B ==",
		"<noinclude>\n== I ==\n</noinclude>\n== B ==", "<source>\n== S ==\n</source>\n== B ==",
		"<ref name=a>\n== R ==\n</ref>\n<ref name=a/>\n== B ==", "<references>\n== R ==\n</references>\n== B ==",
		"<Nowiki>\n== N ==\n</NOWIKI >\n== B ==", "<pre\n>\n== P ==\n</pre>\n== B ==",
		"<span title=\"\n== A ==\n\">x</span>", "<!-- a --> == A ==\n== B ==", "<!-- a -->\n== A ==",
		"x<!-- a\n-->== A ==\n== B ==", "{{T|\n== A ==\n}}\n== B ==", "{{{1|\n== A ==\n}}}\n== B ==",
		"<nowiki>{{</nowiki>\n== A ==\n}}\n== B ==", "<code>{{</code>\n== A ==\n== B ==",
		"== A ==\r\n== B ==\r\n", "\n== A ==\n", "=\u00a0A\u00a0=", "== A\u2028B ==",
	}
	r := New()
	for _, src := range srcs {
		checkSections(t, r, src, true)
	}
}

// TestExpandTildesLiteral: no signature goes where the page shows text as
// written, and expanding again changes nothing.
func TestExpandTildesLiteral(t *testing.T) {
	r := New()
	sig := func(n int) string { return "[[User:U|U]]" + strings.Repeat("!", n) }
	for _, tc := range []struct{ src, want string }{
		{"<PRE class=x>~~~~</PRE> ~~~", "<PRE class=x>~~~~</PRE> [[User:U|U]]!!!"},
		{"<!-- <nowiki> --> ~~~ <!-- </nowiki> -->", "<!-- <nowiki> --> [[User:U|U]]!!! <!-- </nowiki> -->"},
		{"<nowiki>~~~ <!-- </nowiki> ~~~ -->", "<nowiki>~~~ <!-- </nowiki> [[User:U|U]]!!! -->"},
		{"<!-- ~~~~", "<!-- ~~~~"},
		{"<nowiki>~~~~", "<nowiki>[[User:U|U]]!!!!"},
		{"<nowiki/>~~~", "<nowiki/>[[User:U|U]]!!!"},
		{"<syntaxhighlight lang=go>~~~</syntaxhighlight><source>~~~</source><math>~~~</math><code>~~~</code>",
			"<syntaxhighlight lang=go>~~~</syntaxhighlight><source>~~~</source><math>~~~</math><code>~~~</code>"},
		{"<pre\n>~~~</pre >", "<pre\n>~~~</pre >"},
		{"~~<nowiki/>~~", "~~<nowiki/>~~"},
		{"<precode>~~~</precode>", "<precode>[[User:U|U]]!!!</precode>"},
	} {
		got, err := r.ExpandTildes(tc.src, sig)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("ExpandTildes(%q) = %q, want %q", tc.src, got, tc.want)
		}
		again, _ := r.ExpandTildes(got, sig)
		if again != got {
			t.Errorf("ExpandTildes is not idempotent on %q: %q", got, again)
		}
	}
}

// TestSectionMarksDoNotShow: a section mark whose heading line the page
// does not show as a heading (a comment running from inside it to the end,
// a line the heading pass reads otherwise) must not show: its nonce is the
// engine's secret, and with it a template could forge edit links.
func TestSectionMarksDoNotShow(t *testing.T) {
	r := New()
	for _, src := range []string{"==<!--m==\n<!--", "x\n==<!--m==\n<!--\n== B ==", "==<nowiki>==\n</nowiki>",
		"== a <!-- ==\n-->\n== B ==", "=<!--==\n--> a =", "== A ==\n== B ==<!--\n== C ==\n"} {
		marked, err := r.MarkSections(src, "n0nce")
		if err != nil {
			t.Fatal(err)
		}
		res := mustRender(t, r, marked, render.Options{EditPage: "P", SectionMark: "n0nce"})
		var toc strings.Builder
		for _, h := range res.TOC {
			toc.WriteString(h.Text + h.ID)
		}
		if s := res.HTML + toc.String(); strings.Contains(s, "n0nce") || strings.Contains(s, "\uE000") || strings.Contains(s, "%EE%80%80") {
			t.Errorf("render of %q shows a section mark:\n%s\n%+v", marked, res.HTML, res.TOC)
		}
	}
}
