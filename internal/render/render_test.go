package render

import (
	"context"
	"errors"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/wikid/wikid/internal/wiki"
)

// existing is an Exists that knows a fixed set of pages and counts its calls.
type existing struct {
	mu    sync.Mutex
	pages map[wiki.Title]bool
	calls int
	asked []wiki.Title
}

func exists(titles ...string) *existing {
	e := &existing{pages: map[wiki.Title]bool{}}
	for _, t := range titles {
		e.pages[wiki.MustTitle(t)] = true
	}
	return e
}

func (e *existing) fn(_ context.Context, ts []wiki.Title) (map[wiki.Title]bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls++
	e.asked = append(e.asked, ts...)
	out := map[wiki.Title]bool{}
	for _, t := range ts {
		if e.pages[t] {
			out[t] = true
		}
	}
	return out, nil
}

func mustRender(tb testing.TB, src string, ex Exists) Result {
	tb.Helper()
	res, err := New().Render(context.Background(), src, ex)
	if err != nil {
		tb.Fatalf("Render(%q): %v", src, err)
	}
	if !IsSafe(res.HTML) {
		tb.Fatalf("Render(%q) output is not a sanitizer fixpoint:\n%s\nvs\n%s", src, res.HTML, Sanitize(res.HTML))
	}
	return res
}

func TestRenderHTML(t *testing.T) {
	ex := exists("Foo", "Category:Cats", "서울")
	tests := []struct {
		name, src string
		want      []string // substrings of the HTML
		not       []string // must not appear
	}{
		{"a link to an existing page is blue", "[[Foo]]",
			[]string{`<a href="/wiki/Foo" title="Foo">Foo</a>`}, []string{"class=\"new\""}},
		{"a link to a missing page is red", "[[bar baz]]",
			[]string{`<a href="/wiki/Bar_baz?action=edit&amp;redlink=1" class="new" title="Bar baz (page does not exist)">bar baz</a>`}, nil},
		{"a piped link shows its label", "[[Foo|the foo]]",
			[]string{`<a href="/wiki/Foo" title="Foo">the foo</a>`}, nil},
		{"a section link carries the anchor id", "[[Foo#Some section]]",
			[]string{`<a href="/wiki/Foo#Some_section" title="Foo">Foo#Some section</a>`}, nil},
		{"a section link with a label", "[[Foo#Some section|there]]",
			[]string{`<a href="/wiki/Foo#Some_section" title="Foo">there</a>`}, nil},
		{"a same-page anchor", "[[#Some section]]",
			[]string{`<a href="#Some_section">#Some section</a>`}, nil},
		{"special pages always exist", "[[Special:RecentChanges]]",
			[]string{`<a href="/wiki/Special:RecentChanges" title="Special:RecentChanges">`}, nil},
		{"a category link does not render", "Text [[Category:Cats]]",
			[]string{"<p>Text </p>"}, []string{"Cats"}},
		{"a paragraph of categories renders nothing", "[[Category:A]]\n[[Category:B|key]]",
			nil, []string{"<p>"}},
		{"a leading colon links to the category page", "[[:Category:Cats]]",
			[]string{`<a href="/wiki/Category:Cats" title="Category:Cats">Category:Cats</a>`}, nil},
		{"an invalid target is literal text", "[[Foo<b>bar</b>]]",
			[]string{"[[Foo&lt;b&gt;bar&lt;/b&gt;]]"}, []string{"<b>", "<a"}},
		{"an unclosed link is literal text", "[[Foo",
			[]string{"[[Foo"}, []string{"<a"}},
		{"Korean titles", "[[서울]] [[부산 광역시|부산]]",
			[]string{`<a href="/wiki/%EC%84%9C%EC%9A%B8" title="서울">서울</a>`,
				`<a href="/wiki/%EB%B6%80%EC%82%B0_%EA%B4%91%EC%97%AD%EC%8B%9C?action=edit&amp;redlink=1" class="new" title="부산 광역시 (page does not exist)">부산</a>`}, nil},
		{"a piped link in a table cell", "| a |\n|---|\n| [[Foo\\|x]] |",
			[]string{`<td><a href="/wiki/Foo" title="Foo">x</a></td>`}, nil},
		{"a wiki link in code is code", "`[[Foo]]`",
			[]string{"<code>[[Foo]]</code>"}, []string{"<a"}},
		{"an escaped wiki link is text", `\[[Foo]]`,
			[]string{"[[Foo]]"}, []string{"<a"}},
		{"headings get ids and a self-link", "## Hello world",
			[]string{`<h2 id="Hello_world">Hello world <a class="anchor" href="#Hello_world" aria-hidden="true">#</a></h2>`}, nil},
		{"duplicate headings get numbered ids no heading text can take", "# A\n# A\n# A_2\n# A",
			[]string{`id="A"`, `id="A__2"`, `id="A_2"`, `id="A__3"`}, nil},
		{"a link can name a repeated heading", "[[#A__2]] [[Foo#B b__3]] [[#A__1]]",
			[]string{`<a href="#A__2">`, `href="/wiki/Foo#B_b__3"`, `<a href="#A_1">`}, nil},
		{"Unicode headings keep their letters", "## 한국어 제목",
			[]string{`<h2 id="한국어_제목">`}, nil},
		{"external links are marked", "[x](https://example.org/) <https://example.com> www.example.net",
			[]string{`<a href="https://example.org/" class="external" rel="nofollow noopener">x</a>`,
				`<a href="https://example.com" class="external" rel="nofollow noopener">`,
				`<a href="http://www.example.net" class="external" rel="nofollow noopener">`}, nil},
		{"relative markdown links are internal", "[x](/wiki/Foo)",
			[]string{`<a href="/wiki/Foo">x</a>`}, []string{"external"}},
		{"GFM tables align by attribute", "| a | b |\n|:-|-:|\n| 1 | 2 |",
			[]string{`<th align="left">a</th>`, `<td align="right">2</td>`}, nil},
		{"strikethrough", "~~gone~~", []string{"<del>gone</del>"}, nil},
		{"task lists", "- [ ] todo\n- [x] done",
			[]string{`<li class="task-list-item"><input disabled="" type="checkbox"> todo</li>`,
				`<li class="task-list-item"><input checked="" disabled="" type="checkbox"> done</li>`}, nil},
		{"code blocks keep their language class", "```go\nx := 1\n```",
			[]string{"<pre><code class=\"language-go\">x := <span class=\"m\">1</span>\n</code></pre>"}, nil},
		{"ordinary raw HTML survives", "<details><summary>More</summary>\n\n<kbd>Ctrl</kbd> H<sub>2</sub>O <mark>m</mark> <ins>i</ins>\n\n</details>",
			[]string{"<details><summary>More</summary>", "<kbd>Ctrl</kbd>", "<sub>2</sub>", "<mark>m</mark>", "<ins>i</ins>"}, nil},
		{"images on the wiki itself are embedded", "![alt](/static/a.png)",
			[]string{`<img src="/static/a.png" alt="alt">`}, nil},
		{"images from other sites become links, so readers never contact them", "![alt](https://example.org/a.png) ![](http://x.test/b.png)",
			[]string{`<a href="https://example.org/a.png" class="external" rel="nofollow noopener">alt</a>`,
				`<a href="http://x.test/b.png" class="external" rel="nofollow noopener">http://x.test/b.png</a>`}, []string{"<img"}},
		{"raw img tags from other sites lose their source", `<img src="https://example.org/a.png" alt="a"> <img src="//x.test/a.png">`,
			[]string{`<img alt="a">`}, []string{"example.org", "x.test"}},
		{"the recent changes macro is a block placeholder", "{{RecentChanges}}",
			[]string{`<div class="wikid-macro" data-macro="recentchanges"><a href="/wiki/Special:RecentChanges">Recent changes</a></div>`}, []string{"<p>"}},
		{"the page count macro is inline", "There are {{PageCount}} pages.",
			[]string{`<p>There are <span class="wikid-macro" data-macro="pagecount"><a href="/wiki/Special:AllPages">page count</a></span> pages.</p>`}, nil},
		{"the all pages macro takes a prefix", "{{AllPages|prefix=Foo}}",
			[]string{`<div class="wikid-macro" data-macro="allpages" data-prefix="Foo"><a href="/wiki/Special:AllPages?prefix=Foo">Pages starting with Foo</a></div>`}, nil},
		{"macro attributes are escaped", `{{AllPages|prefix=a"><script>x</script>}}`,
			[]string{`data-prefix="a&#34;&gt;&lt;script&gt;x&lt;/script&gt;"`, `?prefix=a%22%3E%3Cscript%3Ex%3C%2Fscript%3E"`}, []string{"<script"}},
		{"template boxes keep their classes, the wiki's own do not", "<div class=\"infobox\">a</div><div class=\"mbox\">b</div><div class=\"navbox\">c</div>" +
			"<table class=\"wikitable\"><tr><td>d</td></tr></table><div class=\"notice\">e</div><div class=\"infobox x\">f</div><strong class=\"error\">g</strong>",
			[]string{`<div class="infobox">a</div>`, `<div class="mbox">b</div>`, `<div class="navbox">c</div>`, `<table class="wikitable">`,
				`<div>e</div>`, `<div>f</div>`, `<strong class="error">g</strong>`}, []string{`class="notice"`, `class="infobox x"`}},
		{"unknown macros stay literal", "{{Unknown}} {{PageCount|x=1}}",
			[]string{"{{Unknown}} {{PageCount|x=1}}"}, []string{"wikid-macro"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRender(t, tt.src, ex.fn)
			for _, w := range tt.want {
				if !strings.Contains(res.HTML, w) {
					t.Errorf("HTML lacks %s\ngot:\n%s", w, res.HTML)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(res.HTML, w) {
					t.Errorf("HTML contains %s\ngot:\n%s", w, res.HTML)
				}
			}
		})
	}
}

func TestXSS(t *testing.T) {
	tests := []struct{ name, src string }{
		{"a script tag", "<script>alert(1)</script>"},
		{"a script tag inline", "hi <script>alert(1)</script> there"},
		{"an event handler", `<img src="https://x/a.png" onerror="alert(1)">`},
		{"an event handler inline", `text <b onclick="alert(1)">b</b>`},
		{"a javascript: markdown link", "[x](javascript:alert(1))"},
		{"a javascript: markdown link with entities", "[x](&#106;avascript:alert(1))"},
		{"a javascript: raw link", `<a href="javascript:alert(1)">x</a>`},
		{"a javascript: raw link with whitespace", "<a href=\" jav\tascript:alert(1)\">x</a>"},
		{"a vbscript: link", `<a href="vbscript:msgbox(1)">x</a>`},
		{"a data: image", `<img src="data:image/svg+xml;base64,PHN2Zz4=">`},
		{"a data: markdown image", "![x](data:text/html;base64,PHNjcmlwdD4=)"},
		{"a javascript: wiki link", "[[javascript:alert(1)]]"},
		{"a wiki link label with an image", "[[Foo|<img src=x onerror=alert(1)>]]"},
		{"a wiki link label with a script", "[[Foo|<script>alert(1)</script>]]"},
		{"a wiki link target with quotes", `[[Foo" onmouseover="alert(1)]]`},
		{"a style attribute", `<p style="background:url(javascript:alert(1))">x</p>`},
		{"a style element", "<style>body{display:none}</style>"},
		{"an iframe", `<iframe src="https://evil.example"></iframe>`},
		{"object and embed", `<object data="x"></object><embed src="x">`},
		{"a form", `<form action="https://evil"><input name=p><button>go</button></form>`},
		{"meta, base and link", `<meta http-equiv="refresh" content="0;url=https://evil"><base href="https://evil/"><link rel=stylesheet href=x>`},
		{"an svg", `<svg onload=alert(1)><script>alert(1)</script></svg>`},
		{"a heading with HTML", "## <img src=x onerror=alert(1)> title"},
		{"a macro prefix with HTML", `{{AllPages|prefix=<img src=x onerror=alert(1)>}}`},
		{"a markdown link title", `[x](/a "<img src=x onerror=alert(1)>")`},
		{"an autolink with javascript", "<javascript:alert(1)>"},
		{"a code class injection", "```\" onmouseover=\"alert(1)\nx\n```"},
		// Raw HTML is sanitized node by node: nothing an author leaves
		// open in one node may reach the markup after it.
		{"a tag split across lines", "<a\nhref=\"javascript:alert(1)\"\nonclick=\"alert(2)\">x</a>"},
		{"a tag split across lines inline", "text <img\nsrc=x\nonerror=alert(1)> more"},
		{"a javascript: URL with an entity tab", `<a href="java&#x09;script:alert(1)">x</a>`},
		{"a javascript: URL with an entity colon", `<a href="javascript&colon;alert(1)">x</a>`},
		{"a script in svg", "<svg><script>alert(1)</script></svg>"},
		{"a script in svg inline", "x <svg><script>alert(1)</script></svg> y"},
		{"math with a link", `<math><mi xlink:href="javascript:alert(1)">x</mi></math>`},
		{"an unterminated attribute then markdown", "<img src=\"x\n\n[[Foo]] *em* <b onclick=x>b</b>"},
		{"an unterminated attribute in an HTML block", "<div title=\"x\n\n<img src=x onerror=alert(1)> **b**"},
		{"an unterminated comment then markdown", "<!-- open\n\n<script>alert(1)</script> [[Foo]]"},
		{"an unterminated comment inline", "a <!-- b\n\n<img src=x onerror=alert(1)>"},
		{"a style block then markdown", "<style>\nbody{}\n\n*x* <img src=x onerror=alert(1)>"},
		{"a textarea then markdown", "<textarea>\n\n</textarea><img src=x onerror=alert(1)>\n\n*x*"},
		{"a textarea inline then markdown", "a <textarea> b\n\n<img src=x onerror=alert(1)>"},
		{"a title element", "<title><img src=x onerror=alert(1)></title>"},
		{"xmp and plaintext", "<xmp><img src=x onerror=alert(1)></xmp><plaintext><img src=x onerror=alert(1)>"},
		{"noscript", "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\"></noscript>"},
		{"a template", "<template><img src=x onerror=alert(1)></template>"},
		{"an iframe with srcdoc", `<iframe srcdoc="<script>alert(1)</script>"></iframe>`},
		{"a script in a paragraph", "one <script>alert(1)</script> two <script src=//evil/x.js></script> three"},
		{"a script split across a paragraph", "one <script>\nalert(1)\n</script> two"},
		{"an entity-encoded javascript: link destination", "[x](&#x6A;avascript&#x3A;alert(1)) [y](jav&#x09;ascript:alert(1))"},
		{"a javascript: link with a title", `[x](javascript:alert(1) "t")`},
		{"a javascript: reference link", "[x][r]\n\n[r]: javascript:alert(1)"},
		{"a javascript: image", "![x](javascript:alert(1))"},
		{"a relative image", `![x](/a.png "t")`},
		{"a wiki link label with a bare script", "[[Foo|<script>]]"},
		{"autolinks with javascript", "<javascript:alert(1)> <JAVASCRIPT:alert(1)> <vbscript:x> <data:text/html,x>"},
		{"a linkified javascript", "javascript:alert(1) www.example.org/<script>"},
		{"a cdata section", "<![CDATA[<img src=x onerror=alert(1)>]]>"},
		{"a processing instruction", "<?xml <img src=x onerror=alert(1)> ?>"},
		{"a doctype", "<!DOCTYPE html><img src=x onerror=alert(1)>"},
		{"attributes without quotes", "<a href=javascript:alert(1) title=x>y</a>"},
		{"an end tag with attributes", "x </b onclick=alert(1)> y"},
		{"a base64 data URL with white space", "<img src=\"data:image/png;base64,AA AA\">"},
		{"a table with a script", "| a |\n|---|\n| <script>alert(1)</script> |"},
		{"a heading with raw HTML", "## a <img src=x onerror=alert(1)> <script>x</script>"},
		{"an object in a list", "- <object data=x>\n- <embed src=x>"},
		{"a form input", "<input type=text autofocus onfocus=alert(1)> <INPUT type=checkbox>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRender(t, tt.src, nil)
			checkSafeHTML(t, res.HTML)
		})
	}
}

var (
	allowedSchemes = []string{"http", "https", "mailto"}
	forbiddenTags  = []string{"script", "style", "iframe", "object", "embed", "form", "meta", "base", "link", "svg", "math", "button", "textarea", "select",
		"title", "xmp", "plaintext", "noscript", "template", "noembed", "noframes", "frameset", "frame", "listing"}
)

// checkSafeHTML tokenizes html and fails on any forbidden element,
// event handler, style attribute or URL with a scheme outside the allow-list.
func checkSafeHTML(tb testing.TB, s string) {
	tb.Helper()
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		if slices.Contains(forbiddenTags, tok.Data) {
			tb.Errorf("forbidden element <%s> in:\n%s", tok.Data, s)
		}
		for _, a := range tok.Attr {
			switch {
			case strings.HasPrefix(a.Key, "on"), a.Key == "style", a.Key == "formaction":
				tb.Errorf("forbidden attribute %s=%q in:\n%s", a.Key, a.Val, s)
			case a.Key == "srcset":
				// The wiki's own media only: each candidate a path under /media/.
				for _, c := range strings.Split(a.Val, ",") {
					u, _, _ := strings.Cut(strings.TrimSpace(c), " ")
					if tok.Data != "img" || !strings.HasPrefix(u, "/media/") || strings.HasPrefix(u, "//") {
						tb.Errorf("srcset candidate %q outside the wiki's media in:\n%s", u, s)
					}
				}
			case a.Key == "href" || a.Key == "src":
				u, err := url.Parse(a.Val)
				if err != nil || (u.Scheme != "" && !slices.Contains(allowedSchemes, strings.ToLower(u.Scheme))) {
					tb.Errorf("unsafe URL %s=%q in:\n%s", a.Key, a.Val, s)
				}
			}
			if tok.Data == "input" && (a.Key != "type" || a.Val != "checkbox") && a.Key != "checked" && a.Key != "disabled" {
				tb.Errorf("input with %s=%q in:\n%s", a.Key, a.Val, s)
			}
		}
		if tok.Data == "input" && !slices.Contains(tok.Attr, html.Attribute{Key: "disabled"}) {
			tb.Errorf("an enabled <input> in:\n%s", s)
		}
	}
}

func TestSanitizeKeepsOwnMarkup(t *testing.T) {
	own := []string{
		`<a href="/wiki/A?action=edit&amp;redlink=1" class="new" title="A (page does not exist)">A</a>`,
		`<a href="/wiki/Category:%ED%95%9C" title="Category:한 &amp; &#34;q&#34;">x</a>`,
		`<h2 id="A_(b)&amp;c">A <a class="anchor" href="#A_%28b%29&amp;c" aria-hidden="true">#</a></h2>`,
		`<a href="https://example.org" class="external" rel="nofollow noopener">x</a>`,
		`<nav class="toc" aria-label="Contents"><ol><li><a href="#a">a</a></li></ol></nav>`,
		`<div class="wikid-macro" data-macro="allpages" data-prefix="&lt;x&gt;"><a href="/wiki/Special:AllPages?prefix=%3Cx%3E">Pages starting with &lt;x&gt;</a></div>`,
		`<span class="wikid-macro" data-macro="pagecount"><a href="/wiki/Special:AllPages">page count</a></span>`,
		`<ul><li class="task-list-item"><input checked="" disabled="" type="checkbox"> x</li></ul>`,
		`<pre><code class="language-c++">x</code></pre>`,
		`<table><thead><tr><th align="center">a</th></tr></thead><tbody><tr><td colspan="2">b</td></tr></tbody></table>`,
		`<img src="/static/a.png" alt="a">`,
	}
	for _, h := range own {
		if got := Sanitize(h); got != h {
			t.Errorf("Sanitize changed our own markup:\n in: %s\nout: %s", h, got)
		}
	}
	if got := Sanitize(`<a href="https://x.example">x</a>`); got != `<a href="https://x.example" rel="nofollow">x</a>` {
		t.Errorf("raw external link: %s", got)
	}
}

func TestLinks(t *testing.T) {
	r := New()
	src := "#redirect: [[target page#x]]\n[[Foo]] [[foo#a]] [[Foo|x]] [[#Local]] [[Special:Search]] [[Bar]]\n" +
		"[[Category:Cats]] [[Category:cats|sort]] [[:Category:Dogs]] [[bad<title]] `[[InCode]]`\n\n    [[InIndentedCode]]\n"
	want := wiki.LinkSet{
		Links:      []wiki.Title{"Target page", "Foo", "Bar", "Category:Dogs"},
		Categories: []wiki.Title{"Category:Cats"},
		Redirect:   "Target page",
	}
	got := r.Links(src)
	if !slices.Equal(got.Links, want.Links) || !slices.Equal(got.Categories, want.Categories) || got.Redirect != want.Redirect {
		t.Errorf("Links:\n got %#v\nwant %#v", got, want)
	}
	res := mustRender(t, src, nil)
	if !slices.Equal(res.Links.Links, want.Links) || res.Links.Redirect != want.Redirect {
		t.Errorf("Render links: got %#v", res.Links)
	}
	if strings.Contains(res.HTML, "REDIRECT") || strings.Contains(strings.ToLower(res.HTML), "redirect") {
		t.Errorf("the redirect line was rendered: %s", res.HTML)
	}
}

// A category link's text after the pipe is the page's sort key there, as
// in MediaWiki: trimmed, none when empty, " " when only white space (the
// idiom that lists a category's main article first), the last one given
// when a category is linked twice.
func TestCategorySortKeys(t *testing.T) {
	r := New()
	src := "[[Category:A|Smith, John]] [[Category:B|]] [[Category:C|  ]] [[Category:D| key ]] [[Category:E]]\n\n" +
		"[[Category:F|first]] [[Category:F|second]] [[Category:G|x]] [[Category:G]] [[:Category:H|label]] [[Other|label]]\n\n" +
		"| a | b |\n|---|---|\n| [[Category:I\\|in a cell]] | x |\n"
	want := map[wiki.Title]string{"Category:A": "Smith, John", "Category:C": " ", "Category:D": "key", "Category:F": "second", "Category:G": "x", "Category:I": "in a cell"}
	for _, ls := range []wiki.LinkSet{r.Links(src), mustRender(t, src, nil).Links} {
		if !maps.Equal(ls.SortKeys, want) {
			t.Errorf("sort keys = %q, want %q", ls.SortKeys, want)
		}
		if len(ls.Categories) != 8 {
			t.Errorf("categories = %q", ls.Categories)
		}
	}
	if ls := r.Links("[[Category:A]]"); ls.SortKeys != nil {
		t.Errorf("sort keys without any given = %q", ls.SortKeys)
	}
	if html := mustRender(t, src, nil).HTML; strings.Contains(html, "Smith") || strings.Contains(html, "second") {
		t.Errorf("a sort key was rendered: %s", html)
	}
}

func TestRedirect(t *testing.T) {
	tests := []struct {
		src  string
		want wiki.Title
	}{
		{"#REDIRECT [[Foo]]", "Foo"},
		{"#redirect[[foo bar]]\nrest", "Foo bar"},
		{"#Redirect: [[Foo#Section|label]]", "Foo"},
		{"  #REDIRECT [[:Category:X]]", "Category:X"},
		{"#REDIRECT [[서울]]", "서울"},
		{"text\n#REDIRECT [[Foo]]", ""},
		{"#REDIRECT [[]]", ""},
		{"#REDIRECT [[#Local]]", ""},
		{"#REDIRECT [[a<b]]", ""},
		{"#REDIRECTS [[Foo]]", ""},
	}
	r := New()
	for _, tt := range tests {
		if got := r.Links(tt.src).Redirect; got != tt.want {
			t.Errorf("Links(%q).Redirect = %q, want %q", tt.src, got, tt.want)
		}
	}
	res := mustRender(t, "#REDIRECT [[Foo]]\nSee **this**.", nil)
	if res.Links.Redirect != "Foo" || !strings.Contains(res.HTML, "<strong>this</strong>") {
		t.Errorf("the rest of a redirect page did not render: %#v %s", res.Links, res.HTML)
	}
}

func TestExistsCalledOnceInBatch(t *testing.T) {
	ex := exists("Foo")
	res := mustRender(t, "[[Foo]] [[foo]] [[Bar]] [[Bar#x]] [[Special:Log]] [[Category:C]] [[#x]] [[:Category:D]]", ex.fn)
	if ex.calls != 1 {
		t.Errorf("Exists called %d times, want 1", ex.calls)
	}
	if want := []wiki.Title{"Foo", "Bar", "Category:D"}; !slices.Equal(ex.asked, want) {
		t.Errorf("Exists asked %v, want %v", ex.asked, want)
	}
	if strings.Count(res.HTML, `class="new"`) != 3 {
		t.Errorf("want 3 red links (Bar, Bar#x, Category:D):\n%s", res.HTML)
	}

	none := exists()
	mustRender(t, "no links [[Special:Log]] [[#x]]", none.fn)
	if none.calls != 0 {
		t.Errorf("Exists called for a page without link targets")
	}
}

func TestExistsError(t *testing.T) {
	boom := errors.New("boom")
	_, err := New().Render(context.Background(), "[[Foo]]", func(context.Context, []wiki.Title) (map[wiki.Title]bool, error) {
		return nil, boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want it to wrap boom", err)
	}
}

func TestNilExistsMakesBlueLinks(t *testing.T) {
	res := mustRender(t, "[[Foo]] [[Bar#x]]", nil)
	if strings.Contains(res.HTML, "class=\"new\"") || !strings.Contains(res.HTML, `href="/wiki/Bar#x"`) {
		t.Errorf("got %s", res.HTML)
	}
}

func TestTOC(t *testing.T) {
	res := mustRender(t, "# One\n## Two [[Foo|link]] `code`\n#### Four\n### Three\n## Two\n# &amp; *em*", nil)
	want := []Heading{
		{1, "One", "One"},
		{2, "Two link code", "Two_link_code"},
		{4, "Four", "Four"},
		{3, "Three", "Three"},
		{2, "Two", "Two"},
		{1, "& em", "&_em"},
	}
	if !slices.Equal(res.TOC, want) {
		t.Fatalf("TOC:\n got %+v\nwant %+v", res.TOC, want)
	}
	got := TOCHTML(res.TOC)
	wantHTML := `<nav class="toc" aria-label="Contents"><ol>` +
		`<li><a href="#One">One</a><ol>` +
		`<li><a href="#Two_link_code">Two link code</a><ol>` +
		`<li><a href="#Four">Four</a></li>` +
		`<li><a href="#Three">Three</a></li></ol></li>` +
		`<li><a href="#Two">Two</a></li></ol></li>` +
		`<li><a href="#&amp;_em">&amp; em</a></li></ol></nav>`
	if got != wantHTML {
		t.Errorf("TOCHTML:\n got %s\nwant %s", got, wantHTML)
	}
	if !IsSafe(got) {
		t.Errorf("TOCHTML is not safe: %s", Sanitize(got))
	}
	if TOCHTML(want[:2]) != "" {
		t.Errorf("TOCHTML with two headings should be empty")
	}
}

func TestMacros(t *testing.T) {
	res := mustRender(t, "{{PageCount}} {{RecentChanges}}\n\n{{recentchanges}}\n\n{{ AllPages | prefix = Foo }}", nil)
	if want := []string{"pagecount", "recentchanges", "allpages"}; !slices.Equal(res.Macros, want) {
		t.Errorf("Macros = %v, want %v", res.Macros, want)
	}
	if !strings.Contains(res.HTML, `<p><span class="wikid-macro" data-macro="pagecount">`) ||
		!strings.Contains(res.HTML, `<span class="wikid-macro" data-macro="recentchanges">`) {
		t.Errorf("macros within text should be spans:\n%s", res.HTML)
	}
	if mustRender(t, "plain", nil).Macros != nil {
		t.Errorf("a page without macros reports some")
	}
}

func TestConcurrentRender(t *testing.T) {
	// Highlighting's deadline depends on the machine's load; this test is
	// about sharing one Renderer, so the deadline is out of reach.
	r := New(WithHighlightBudget(time.Hour))
	src := benchDocument(5)
	want, err := r.Render(context.Background(), src, exists("Page 1").fn)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5 {
				got, err := r.Render(context.Background(), src, exists("Page 1").fn)
				if err != nil || got.HTML != want.HTML {
					t.Errorf("concurrent render differs (err %v)", err)
				}
			}
		})
	}
	wg.Wait()
}

func TestCaseSensitiveTitleRules(t *testing.T) {
	r := New(WithTitleRules(wiki.NewTitleRules(false)))
	if r.Version() == New().Version() || New().Version() != Version {
		t.Fatalf("Version: %d case-sensitive, %d by default: the stored renders of the two settings must be kept apart, the default's under Version %d",
			r.Version(), New().Version(), Version)
	}
	src := "[[apple]] [[Apple]] [[apple pie#Crust|pie]] [[user:bob]] [[talk:apple]] [[category:fruit]] [[:category:fruit]]\n\n" +
		"![a pear](pear.png) ![a plum](file:plum.png)\n\n{{AllPages|prefix=apple}}\n"
	ex := &existing{pages: map[wiki.Title]bool{"apple": true}}
	res, err := r.Render(context.Background(), src, ex.fn)
	if err != nil {
		t.Fatal(err)
	}
	wantLinks := []wiki.Title{"apple", "Apple", "apple pie", "User:Bob", "Talk:apple", "Category:fruit"}
	if !slices.Equal(res.Links.Links, wantLinks) || !slices.Equal(res.Links.Categories, []wiki.Title{"Category:fruit"}) {
		t.Errorf("links %q, categories %q; want %q and [Category:fruit]", res.Links.Links, res.Links.Categories, wantLinks)
	}
	if want := []wiki.Title{"File:pear.png", "File:plum.png"}; !slices.Equal(res.Links.Files, want) {
		t.Errorf("files %q, want %q", res.Links.Files, want)
	}
	for _, want := range []string{
		`<a href="/wiki/apple" title="apple">apple</a>`,
		`<a href="/wiki/Apple?action=edit&amp;redlink=1" class="new" title="Apple (page does not exist)">Apple</a>`,
		`<a href="/wiki/apple_pie?action=edit&amp;redlink=1"`,
		`<a href="/wiki/User:Bob?action=edit&amp;redlink=1"`,
		`<a href="/wiki/Special:Upload?wpDestFile=pear.png" class="new" title="File:pear.png (upload it)">a pear</a>`,
		`<a href="/wiki/Special:Upload?wpDestFile=plum.png" class="new" title="File:plum.png (upload it)">a plum</a>`,
		`href="/wiki/Special:AllPages?prefix=apple"`,
	} {
		if !strings.Contains(res.HTML, want) {
			t.Errorf("the case-sensitive render lacks %s:\n%s", want, res.HTML)
		}
	}
	for _, tc := range []struct {
		src  string
		want wiki.Title
	}{
		{"#REDIRECT [[apple]]", "apple"},
		{"#redirect [[help:syntax#Links]]", "Help:syntax"},
		{"#REDIRECT [[user:bob]]", "User:Bob"},
	} {
		if got := r.Links(tc.src).Redirect; got != tc.want {
			t.Errorf("Links(%q).Redirect = %q, want %q", tc.src, got, tc.want)
		}
		if ls, _ := r.Analyze(tc.src); ls.Redirect != tc.want {
			t.Errorf("Analyze(%q).Redirect = %q, want %q", tc.src, ls.Redirect, tc.want)
		}
	}
	// The default rules, for contrast: the same source links Apple.
	if got := New().Links("[[apple]]").Links; !slices.Equal(got, []wiki.Title{"Apple"}) {
		t.Errorf("default rules: [[apple]] links %q, want [Apple]", got)
	}
}
