package wikitext

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/race"
	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/wiki"
)

// mustRender renders src with every link blue and checks that the HTML
// is a fixpoint of the sanitizer.
func mustRender(tb testing.TB, r *Renderer, src string, o render.Options) render.Result {
	tb.Helper()
	res, err := r.RenderWith(context.Background(), src, nil, o)
	if err != nil {
		tb.Fatalf("RenderWith(%q): %v", src, err)
	}
	if !render.IsSafe(res.HTML) {
		tb.Fatalf("RenderWith(%q) is no fixpoint of the sanitizer:\n%s\nsanitized:\n%s", src, res.HTML, render.Sanitize(res.HTML))
	}
	return res
}

func TestRender(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string // substrings of the HTML, in order
		not       []string
	}{
		{"bold and italic", "'''b''' ''i'' '''''bi'''''", []string{"<b>b</b>", "<i>i</i>", "<i><b>bi</b></i>"}, nil},
		{"an apostrophe before bold is text", "l''''x''''", []string{"l&#39;<b>x&#39;</b>"}, nil},
		{"odd bold and italic: the bold after a one-letter word is an apostrophe", "''a l'''s x", []string{"<i>a l&#39;</i>s x"}, nil},
		{"internal link with label and trail", "[[Foo bar|a]]s", []string{`<a href="/wiki/Foo_bar" title="Foo bar">as</a>`}, nil},
		{"same-page link", "[[#Top|up]]", []string{`<a href="#Top">up</a>`}, nil},
		{"category is not shown", "x [[Category:C|k]]", []string{"<p>x</p>"}, []string{"Category"}},
		// A caption holds links one level deep, as in MediaWiki: an embed
		// in a caption holding a link of its own leaves the outer one text.
		{"embed nested two deep", "[[File:A.png|thumb|[[File:B.png|[[c]]]]]]",
			[]string{"[[File:A.png|thumb|", `title="File:B.png (upload it)">c</a>]]`}, []string{"File:A.png (upload it)"}},
		// A URL is read once: a protocol inside a refused one starts none.
		{"URL inside a refused URL", "ftp://a/http://b.example and http://c.example",
			[]string{"ftp://a/http://b.example and ", `<a href="http://c.example"`}, []string{`href="http://b.example"`}},
		{"link to a category", "[[:Category:C]]", []string{`href="/wiki/Category:C"`, ">Category:C</a>"}, nil},
		{"numbered external links", "[http://a.example] [http://b.example]", []string{">[1]</a>", ">[2]</a>"}, nil},
		{"labelled external link", "[https://a.example/x?y=1&z=2 A site]", []string{`<a href="https://a.example/x?y=1&amp;z=2" class="external" rel="nofollow noopener">A site</a>`}, nil},
		{"bare URL without its full stop", "see http://a.example/x.", []string{`>http://a.example/x</a>.`}, nil},
		{"javascript is no link", "[javascript:alert(1) x]", []string{"[javascript:alert(1) x]"}, []string{"<a"}},
		{"heading with id", "== A b ==\ntext", []string{`<h2 id="A_b">A b`, "<p>text</p>"}, nil},
		{"nested lists", "* a\n** b\n*# c\n* d", []string{"<ul><li>a<ul><li>b</li></ul><ol><li>c</li></ol></li><li>d</li></ul>"}, nil},
		{"definition list on one line", "; t : d", []string{"<dl><dt>t</dt><dd>d</dd></dl>"}, nil},
		{"indented text", ": a\n:: b", []string{"<dl><dd>a<dl><dd>b</dd></dl></dd></dl>"}, nil},
		{"preformatted line", " code ''x''", []string{"<pre>code <i>x</i></pre>"}, nil},
		{"rule", "----\nx", []string{"<hr/>", "<p>x</p>"}, nil},
		{"table", "{| class=\"wikitable\" onclick=\"x\"\n|+ Cap\n! a !! b\n|-\n| colspan=2 style=\"x\" | c\n|}", []string{`<table class="wikitable">`, "<caption>Cap</caption>", "<th>a</th>", "<th>b</th>", `<td colspan="2">c</td>`}, []string{"onclick", "style"}},
		{"nowiki", "<nowiki>[[x]] ''y'' &amp; <b></nowiki>", []string{"[[x]] &#39;&#39;y&#39;&#39; &amp; &lt;b&gt;"}, nil},
		{"pre", "<pre>\n[[x]]\n  y</pre>", []string{"<pre>[[x]]  y</pre>"}, nil},
		{"syntaxhighlight", "<syntaxhighlight lang=\"go\">\nfunc f() {}\n</syntaxhighlight>", []string{`<pre><code class="language-go"><span class="k">func</span>`}, nil},
		{"disallowed tags are text", "<script>x</script><a href=\"y\">z</a>", []string{"&lt;script&gt;x&lt;/script&gt;&lt;a href=&#34;y&#34;&gt;z&lt;/a&gt;"}, nil},
		{"comments are removed", "a<!-- b -->c", []string{"<p>ac</p>"}, nil},
		{"allowed tags keep what the sanitizer allows", "<span style=\"color:red\" class=\"x\">s</span><br>", []string{"<span>s</span><br/>"}, nil},
		{"references", "a<ref name=n>note ''x''</ref> b<ref name=n/> c<ref>other</ref>\n<references/>",
			[]string{`<sup id="_fnref-1"><a href="#_fn-1" role="doc-noteref">[1]</a></sup>`, `<sup id="_fnref-1-2">`, `<sup id="_fnref-2">`, `<li id="_fn-1">`, "note <i>x</i>", `<li id="_fn-2">`}, nil},
		{"references listed at the end without a references tag", "a<ref>n</ref>\n\n== H ==\nb", []string{"<h2", `<div class="footnotes" role="doc-endnotes">`, "n</li>"}, nil},
		{"magic words are removed", "__NOTOC____NOEDITSECTION__x", []string{"<p>x</p>"}, []string{"NOTOC"}},
		{"line break", "a<br/>b", []string{"a<br/>b"}, nil},
		{"blockquote", "<blockquote>q</blockquote>", []string{"<blockquote><p>q</p></blockquote>"}, nil},
		{"paragraphs", "a\nb\n\nc", []string{"<p>ab</p>", "<p>c</p>"}, nil},
		{"unclosed tags are balanced", "<div><span>''a", []string{"<div><span><i>a</i></span></div>"}, nil},
		{"math is code", "<math>x^2</math>", []string{"<code>x^2</code>"}, nil},
	}
	r := New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRender(t, r, tt.src, render.Options{})
			res.HTML = strings.ReplaceAll(res.HTML, "\n", "")
			rest := res.HTML
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("render of %q:\n%s\nlacks (in order) %q", tt.src, res.HTML, w)
				}
				rest = rest[i+len(w):]
			}
			for _, n := range tt.not {
				if strings.Contains(res.HTML, n) {
					t.Errorf("render of %q:\n%s\nhas %q", tt.src, res.HTML, n)
				}
			}
		})
	}
}

func TestLinksAndExistence(t *testing.T) {
	r := New()
	src := "#REDIRECT [[Target]]\n[[A]] [[b|x]] [[A#s]] [[Special:Search]] [[Category:C|key]] [[Category:D]] [[File:F.png|thumb|cap [[Capt]]]] [[Media:G.pdf]] <ref>[[InRef]]</ref>"
	calls := 0
	var asked []wiki.Title
	exists := func(_ context.Context, ts []wiki.Title) (map[wiki.Title]bool, error) {
		calls++
		asked = ts
		return map[wiki.Title]bool{"A": true}, nil
	}
	fileCalls := 0
	var filesAsked []wiki.Title
	files := func(_ context.Context, ts []wiki.Title) (map[wiki.Title]wiki.FileVersion, error) {
		fileCalls++
		filesAsked = ts
		return nil, nil
	}
	res, err := r.RenderWith(context.Background(), src, exists, render.Options{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || fileCalls != 1 {
		t.Fatalf("exists called %d times, files %d times, want once each", calls, fileCalls)
	}
	slices.Sort(asked)
	if want := []wiki.Title{"A", "B", "Capt", "InRef"}; !slices.Equal(asked, want) {
		t.Errorf("exists asked for %v, want %v", asked, want)
	}
	slices.Sort(filesAsked)
	if want := []wiki.Title{"File:F.png", "File:G.pdf"}; !slices.Equal(filesAsked, want) {
		t.Errorf("files asked for %v, want %v", filesAsked, want)
	}
	ls := res.Links
	if ls.Redirect != "Target" || !slices.Equal(ls.Categories, []wiki.Title{"Category:C", "Category:D"}) || ls.SortKeys["Category:C"] != "key" {
		t.Errorf("link set %+v", ls)
	}
	for _, want := range []wiki.Title{"Target", "A", "B", "InRef", "Capt"} {
		if !slices.Contains(ls.Links, want) {
			t.Errorf("links %v lack %s", ls.Links, want)
		}
	}
	if !strings.Contains(res.HTML, `<a href="/wiki/B?action=edit&amp;redlink=1" class="new" title="B (page does not exist)">x</a>`) {
		t.Errorf("no red link to B in\n%s", res.HTML)
	}
	if !strings.Contains(res.HTML, `<a href="/wiki/A" title="A">A</a>`) {
		t.Errorf("no blue link to A in\n%s", res.HTML)
	}
	if got := r.Links(src); !slices.Equal(got.Links, ls.Links) {
		t.Errorf("Links = %v, RenderWith's %v", got.Links, ls.Links)
	}
	if got := r.WikiLinks("[[a]] [[Special:X]] [[Category:Y]] [[#f]]"); !slices.Equal(got, []wiki.Title{"A", "Special:X"}) {
		t.Errorf("WikiLinks = %v", got)
	}
}

func TestSectionsAndEditLinks(t *testing.T) {
	r := New()
	src := "intro\n== A ==\na\n<nowiki>\n== no ==\n</nowiki>\n<!--\n== no ==\n-->\n{{T|\n== no ==\n}}\n=== B ===\nb\n== ''C'' ==\nc"
	secs, err := r.Sections(src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range secs[1:] {
		got = append(got, fmt.Sprintf("%d %d %s %q", s.Index, s.Level, s.Heading, src[s.Start:s.End]))
	}
	want := []string{
		`1 2 A "== A ==\na\n<nowiki>\n== no ==\n</nowiki>\n<!--\n== no ==\n-->\n{{T|\n== no ==\n}}\n=== B ===\nb\n"`,
		`2 3 B "=== B ===\nb\n"`,
		`3 2 C "== ''C'' ==\nc"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("Sections:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if secs[0].End != strings.Index(src, "== A") {
		t.Errorf("section 0 ends at %d", secs[0].End)
	}

	marked, err := r.MarkSections(src, "n0nce")
	if err != nil {
		t.Fatal(err)
	}
	// A template adds a heading: it gets no edit link, the page's get theirs.
	expanded := strings.Replace(marked, "{{T|\n== no ==\n}}", "== From template ==", 1)
	res := mustRender(t, r, expanded, render.Options{EditPage: "P", SectionMark: "n0nce"})
	for i, h := range []string{"A", "B", "C"} {
		link := fmt.Sprintf(`<a href="/wiki/P?action=edit&amp;section=%d" title="Edit section: %s">edit</a>`, i+1, h)
		if !strings.Contains(res.HTML, link) {
			t.Errorf("no edit link %s in\n%s", link, res.HTML)
		}
	}
	if strings.Count(res.HTML, "mw-editsection") != 3 || strings.Contains(res.HTML, "\uE000") {
		t.Errorf("edit links or marks wrong in\n%s", res.HTML)
	}
	if len(res.TOC) != 4 || res.TOC[3].Text != "C" {
		t.Errorf("TOC %+v", res.TOC)
	}

	plain := mustRender(t, r, "== A ==\n== A ==\n__NOEDITSECTION__", render.Options{EditPage: "P"})
	if strings.Contains(plain.HTML, "mw-editsection") || !strings.Contains(plain.HTML, `id="A__2"`) {
		t.Errorf("render:\n%s", plain.HTML)
	}
	if res := mustRender(t, r, "__NOTOC__\n== A ==\n== B ==\n== C ==", render.Options{}); res.TOC != nil {
		t.Errorf("__NOTOC__ left a TOC: %+v", res.TOC)
	}
	if res := mustRender(t, r, "x\n__TOC__\n== A ==\n== B ==\n== C ==", render.Options{}); res.TOC != nil || !strings.Contains(res.HTML, `<nav class="toc"`) {
		t.Errorf("__TOC__ did not place the TOC: %+v\n%s", res.TOC, res.HTML)
	}
}

func TestExpandTildes(t *testing.T) {
	r := New()
	sig := func(n int) string { return fmt.Sprintf("<%d>", n) }
	src := "a ~~~~ <nowiki>~~~</nowiki> <pre>~~~~</pre> <code>~~~</code> <!-- ~~~ --> <syntaxhighlight>~~~~~</syntaxhighlight> <math>~~~</math> ~~~~~~~~"
	got, err := r.ExpandTildes(src, sig)
	if err != nil {
		t.Fatal(err)
	}
	want := "a <4> <nowiki>~~~</nowiki> <pre>~~~~</pre> <code>~~~</code> <!-- ~~~ --> <syntaxhighlight>~~~~~</syntaxhighlight> <math>~~~</math> <5><3>"
	if got != want {
		t.Errorf("ExpandTildes = %q, want %q", got, want)
	}
}

func TestPlainText(t *testing.T) {
	r := New()
	got := r.PlainText("#REDIRECT [[X]]\n== Head ==\n'''Bold''' [[A|label]] [http://x.example site] <ref>note</ref> [[Category:C]]\n<nowiki>lit</nowiki>")
	for _, w := range []string{"Head", "Bold label site", "note", "lit"} {
		if !strings.Contains(got, w) {
			t.Errorf("PlainText = %q, lacks %q", got, w)
		}
	}
	for _, n := range []string{"REDIRECT", "Category", "http", "'''", "[["} {
		if strings.Contains(got, n) {
			t.Errorf("PlainText = %q, has %q", got, n)
		}
	}
}

func TestVersion(t *testing.T) {
	v := New().Version()
	cs := New(WithTitleRules(wiki.NewTitleRules(false))).Version()
	if v == render.Version || v&caseSensitiveVersion != 0 || cs != v|caseSensitiveVersion || v < versionBase {
		t.Errorf("Version %d, case-sensitive %d", v, cs)
	}
}

func TestTimeout(t *testing.T) {
	r := New(WithTimeout(time.Nanosecond))
	src := strings.Repeat("''a'' [[b]] {|\n| c\n|}\n", 5000)
	res, err := r.Render(context.Background(), "#REDIRECT [[T]]\n"+src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Links.Redirect != "T" || !render.IsSafe(res.HTML) {
		t.Errorf("TimedOut %v, links %+v", res.TimedOut, res.Links)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New().Render(ctx, src, nil); err == nil {
		t.Error("a cancelled render returned no error")
	}
}

// TestPathological renders inputs known to make naive parsers slow or
// deep, with generous limits: each must finish well within the render
// time limit and its output stay a fixpoint of the sanitizer.
func TestPathological(t *testing.T) {
	cases := map[string]string{
		"deep list nesting":    strings.Repeat("*", 100000) + " x\n" + strings.Repeat("#:;*", 10000) + "\n",
		"100k apostrophes":     strings.Repeat("'", 100000),
		"apostrophe runs":      strings.Repeat("a''b'''c", 30000),
		"10k nested tables":    strings.Repeat("{|\n|\n", 10000) + strings.Repeat("|}\n", 10000),
		"unclosed tables":      strings.Repeat("{|\n|-\n| a || b\n", 10000),
		"unclosed tags":        strings.Repeat("<div><span><b><i><nowiki><pre><ref><syntaxhighlight>", 10000),
		"unclosed links":       strings.Repeat("[[a|", 50000) + strings.Repeat("[http://x ", 20000),
		"unclosed files":       strings.Repeat("[[File:a.png|", 20000),
		"nested spans":         strings.Repeat("<span>", 20000) + "x" + strings.Repeat("</span>", 20000),
		"many refs":            strings.Repeat("<ref name=a>x</ref><ref>y</ref>", 10000),
		"many headings":        strings.Repeat("== h ==\n", 20000),
		"unclosed comments":    strings.Repeat("<!-- ", 50000),
		"less-than signs":      strings.Repeat("<a ", 100000),
		"bare urls":            strings.Repeat("http://a.example/(", 20000),
		"url punctuation":      "http://a.example/" + strings.Repeat("&amp;;", 50000) + strings.Repeat(";", 100000),
		"definition colons":    strings.Repeat(";a:b:c", 30000),
		"nested blockquotes":   strings.Repeat("<blockquote>", 10000) + "x",
		"headings everywhere":  strings.Repeat("=", 100000),
		"template-like braces": strings.Repeat("{{", 50000),
	}
	r := New(WithTimeout(20 * time.Second))
	bound := 10 * time.Second
	if race.Enabled {
		bound = 30 * time.Second
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			start := cpuTime()
			res := mustRender(t, r, src, render.Options{EditPage: "P"})
			if d := cpuTime() - start; d > bound || res.TimedOut {
				t.Errorf("took %v of CPU (timed out %v)", d, res.TimedOut)
			}
			if len(res.HTML) > 40*len(src)+4096 {
				t.Errorf("%d bytes of HTML for %d of source", len(res.HTML), len(src))
			}
			r.Analyze(src)
			if _, err := r.Sections(src); err != nil {
				t.Error(err)
			}
		})
	}
}

// largeArticle generates a realistic article of about size bytes:
// sections with paragraphs, bold and italic, links, references, lists and
// tables.
func largeArticle(size int) string {
	rng := rand.New(rand.NewSource(1))
	words := strings.Fields("the wiki renders pages of text with links tables lists and notes that readers follow from one article to another in a few milliseconds")
	var b strings.Builder
	sentence := func() {
		n := 8 + rng.Intn(12)
		for i := 0; i < n; i++ {
			w := words[rng.Intn(len(words))]
			switch rng.Intn(20) {
			case 0:
				fmt.Fprintf(&b, "[[%s article|%s]] ", w, w)
			case 1:
				fmt.Fprintf(&b, "'''%s''' ", w)
			case 2:
				fmt.Fprintf(&b, "''%s'' ", w)
			case 3:
				fmt.Fprintf(&b, "[https://example.org/%s %s] ", w, w)
			case 4:
				fmt.Fprintf(&b, "[[%s]]s ", w)
			default:
				b.WriteString(w + " ")
			}
		}
		b.WriteString(".")
		if rng.Intn(4) == 0 {
			fmt.Fprintf(&b, "<ref>Source %d, [https://example.org/s%d page %d].</ref>", rng.Intn(100), rng.Intn(100), rng.Intn(500))
		}
		b.WriteString(" ")
	}
	b.WriteString("'''Large article''' is a test page.\n\n")
	for sec := 0; b.Len() < size; sec++ {
		fmt.Fprintf(&b, "== Section %d ==\n", sec)
		for p := 0; p < 3; p++ {
			for s := 0; s < 4; s++ {
				sentence()
			}
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "=== Details %d ===\n", sec)
		for i := 0; i < 5; i++ {
			b.WriteString("* ")
			sentence()
			b.WriteString("\n")
			if i%2 == 0 {
				b.WriteString("** ")
				sentence()
				b.WriteString("\n")
			}
		}
		b.WriteString("\n{| class=\"wikitable\"\n|+ Figures\n! Name !! Value !! Notes\n")
		for i := 0; i < 6; i++ {
			fmt.Fprintf(&b, "|-\n| [[Item %d]] || %d || ''note'' %s\n", i, rng.Intn(1000), words[rng.Intn(len(words))])
		}
		b.WriteString("|}\n\n")
		for s := 0; s < 3; s++ {
			sentence()
		}
		b.WriteString("\n\n")
	}
	b.WriteString("== References ==\n<references/>\n[[Category:Tests]]\n")
	return b.String()
}

func TestLargeArticle(t *testing.T) {
	src := largeArticle(300 << 10)
	res := mustRender(t, New(), src, render.Options{EditPage: "P"})
	if res.TimedOut || !strings.Contains(res.HTML, `<div class="footnotes"`) || len(res.TOC) < 20 {
		t.Errorf("large article: timed out %v, %d headings", res.TimedOut, len(res.TOC))
	}
}

// BenchmarkRenderLarge renders a generated 300 KB article.
func BenchmarkRenderLarge(b *testing.B) {
	src := largeArticle(300 << 10)
	r := New()
	exists := func(_ context.Context, ts []wiki.Title) (map[wiki.Title]bool, error) {
		m := make(map[wiki.Title]bool, len(ts))
		for i, t := range ts {
			m[t] = i%3 != 0
		}
		return m, nil
	}
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.RenderWith(context.Background(), src, exists, render.Options{EditPage: "P"}); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"'''b''' ''i'' [[a|b]]s [http://x y] http://z.",
		"== h ==\n* a\n*# b\n; c : d\n x\n----",
		"{| a=b\n|+ c\n! d !! e\n|-\n| f || g\n|}",
		"<ref name=a>x</ref><ref name=a/><references/>",
		"<nowiki>[[x]]</nowiki><pre>y</pre><syntaxhighlight lang=go>z</syntaxhighlight>",
		"<div style=\"x\"><span onclick=y>z</div>",
		"[[File:A.png|thumb|left|cap [[L]]]] [[Category:C]]",
		"#REDIRECT [[T]]\n__TOC__ <!-- c --> ~~~~",
		"== __TOC__ ==\n== b ==\n== c ==",
		"==<!--m==\n<!--\n<h2 id=content>x</h2>",
		"==<!--0=", // a comment not closed on a heading line
		"{|\n|a||b\n|-\n{|\nx\n<table>y<tr>z",
		"<ref name=a>x</ref><ref follow=a>y</ref><references><ref name=b>z</ref></references>",
		"<ref group=g>[[G]]</ref>text [[Category:C]] <references>\n== R ==\n</references>",
	} {
		f.Add(s)
	}
	r := New()
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 1<<16 {
			return
		}
		res := mustRender(t, r, src, render.Options{EditPage: "P"})
		checkHTML(t, src, res.HTML)
		if strings.Contains(res.HTML, "\x7f") {
			t.Errorf("a marker shows in\n%s", res.HTML)
		}
		checkSections(t, r, src, false)
		if len(res.HTML) > 64*len(src)+8192 {
			t.Errorf("%d bytes of HTML for %d of source", len(res.HTML), len(src))
		}
		r.Analyze(src)
		if _, err := r.Sections(src); err != nil {
			t.Error(err)
		}
		if _, err := r.ToMarkdown(context.Background(), src); err != nil {
			t.Error(err)
		}
	})
}

func TestForceTOC(t *testing.T) {
	r := New()
	res := mustRender(t, r, "__FORCETOC__\nx\n== A ==\ny", render.Options{})
	if res.TOC != nil || !strings.Contains(res.HTML, `<nav class="toc" aria-label="Contents"><ol><li><a href="#A">A</a></li></ol></nav><h2`) {
		t.Errorf("forced TOC: %+v\n%s", res.TOC, res.HTML)
	}
	res = mustRender(t, r, "== A ==\n== B ==\n== C ==", render.Options{})
	if len(res.TOC) != 3 || strings.Contains(res.HTML, "<nav") {
		t.Errorf("TOC: %+v\n%s", res.TOC, res.HTML)
	}
}
