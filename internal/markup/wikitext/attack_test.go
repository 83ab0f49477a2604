package wikitext

import (
	"context"
	"strings"
	"testing"

	xhtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/wikid/wikid/internal/render"
)

// forbiddenElements may never appear in a rendered page.
var forbiddenElements = map[string]bool{
	"script": true, "style": true, "iframe": true, "object": true, "embed": true, "form": true,
	"input": true, "meta": true, "base": true, "link": true, "svg": true, "math": true,
	"textarea": true, "button": true, "select": true, "frame": true, "frameset": true, "template": true,
}

// siteIDs are element ids the wiki's own pages and scripts use.
var siteIDs = []string{"content", "search-q", "dropzone", "upload-form", "upload-error", "upload-status",
	"upload-progress", "file-name", "f-file", "f-dest", "wpTextbox1", "wpSummary", "rollback-form"}

// checkHTML parses h and fails on anything a page may not hold.
func checkHTML(tb testing.TB, src, h string) {
	tb.Helper()
	if !render.IsSafe(h) {
		tb.Errorf("render of %q is no fixpoint of the sanitizer:\n%s\nsanitized:\n%s", src, h, render.Sanitize(h))
	}
	body := &xhtml.Node{Type: xhtml.ElementNode, Data: "body", DataAtom: atom.Body}
	nodes, err := xhtml.ParseFragment(strings.NewReader(h), body)
	if err != nil {
		tb.Fatalf("parse: %v", err)
	}
	var walk func(n *xhtml.Node)
	walk = func(n *xhtml.Node) {
		if n.Type == xhtml.ElementNode {
			if forbiddenElements[n.Data] {
				tb.Errorf("render of %q has <%s>:\n%s", src, n.Data, h)
			}
			for _, a := range n.Attr {
				v := strings.ToLower(strings.Map(func(r rune) rune {
					if r <= ' ' {
						return -1
					}
					return r
				}, a.Val))
				switch {
				case strings.HasPrefix(a.Key, "on"), a.Key == "style", a.Key == "name", a.Key == "form",
					a.Key == "formaction", a.Key == "action", a.Key == "srcdoc", a.Key == "xmlns":
					tb.Errorf("render of %q has attribute %s=%q on <%s>:\n%s", src, a.Key, a.Val, n.Data, h)
				case a.Key == "href" || a.Key == "src" || a.Key == "srcset":
					for _, bad := range []string{"javascript:", "data:", "vbscript:", "file:"} {
						if strings.HasPrefix(v, bad) || strings.Contains(v, "\""+bad) {
							tb.Errorf("render of %q has %s=%q:\n%s", src, a.Key, a.Val, h)
						}
					}
				case a.Key == "id" && !isHeading(n.Data):
					// A heading's id is its text's, as in Markdown pages
					// (render.AnchorID); the author's own ids are dropped
					// (TestAuthorIDs).
					for _, s := range siteIDs {
						if strings.EqualFold(a.Val, s) {
							tb.Errorf("render of %q has the site's id %q:\n%s", src, a.Val, h)
						}
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
}

var attacks = []string{
	"{| onmouseover=alert(1)\n| x\n|}",
	"{| style=\"x:expression(alert(1))\"\n| x\n|}",
	"{|\n| style=\"background:url(javascript:alert(1))\" | x\n|}",
	"{|\n|- onclick=alert(1)\n! onclick=\"alert(1)\" | h\n|}",
	"{| class=\"wikitable\" \"><script>alert(1)</script>\n| x\n|}",
	"[javascript:alert(1) x]", "[JaVaScRiPt:alert(1) x]", "[data:text/html,<script>alert(1)</script> x]",
	"[vbscript:msgbox x]", "[&#106;avascript:alert(1) x]", "[java&#09;script:alert(1) x]",
	"[java\tscript:alert(1) x]", "[java\x00script:alert(1) x]", "[//evil.example/\"><script>alert(1)</script> x]",
	"[http://a.example/\"onmouseover=alert(1) x]", "[http://a.example/'onmouseover=alert(1) x]",
	"http://a.example/\"><script>alert(1)</script>", "http://a.example/<script>alert(1)</script>",
	"[[javascript:alert(1)]]", "[[javascript:alert(1)|x]]", "[[\"><script>alert(1)</script>]]",
	"[[a\"onmouseover=alert(1)|x]]", "[[#\"><script>alert(1)</script>|x]]", "[[#a\" onmouseover=\"x|y]]",
	"[[File:X.png|link=javascript:alert(1)]]", "[[File:X.png|alt=\"><script>alert(1)</script>]]",
	"[[File:X.png|thumb|\"><script>x</script>]]", "[[Media:X.png|<script>x</script>]]",
	"[[:File:X.png|x]]", "[[Image:x.png|link=//evil.example]]",
	"<ref name=\"x><script>alert(1)</script>\">a</ref><references/>",
	"<ref name=x group=\"\"><script>alert(1)</script>\">a</ref><references group=\"\"><script>\"/>",
	"<ref group=\"<script>alert(1)</script>\">a</ref>",
	"== \"><script>alert(1)</script> ==\n== <span onmouseover=x>h</span> ==",
	"__TOC__\n== <script>alert(1)</script> ==\n== b ==\n== c ==",
	"<syntaxhighlight lang=\"&quot;><script>alert(1)</script>\">x</syntaxhighlight>",
	"<syntaxhighlight lang=\"\\\"><script>\">x</syntaxhighlight>",
	"<source lang=\"go onmouseover=x\" inline>x</source>",
	"<span title=\"\"><script>alert(1)</script>\">x</span>",
	"<span title=\"<nowiki>\"><script>alert(1)</script></nowiki>\">x</span>",
	"<span title=\"<nowiki>\" onmouseover=\"alert(1)</nowiki>\">x</span>",
	"<scr<!-- -->ipt>alert(1)</script>", "<<!-- -->script>alert(1)</script>", "<span on<!-- -->mouseover=x>y</span>",
	"<pre><script>alert(1)</script></pre>", "<pre onmouseover=x style=x>y</pre>",
	"<div title=\"'''x'''\">a</div>", "<div title=\"''x''\" class='''a'''>b</div>",
	"<span title=\"[[x|y]]\">z</span>", "<span title=\"[http://a.example x]\">z</span>", "<span title=\"http://a.example/\">z</span>",
	"<span title=\"{{{1}}}\">z</span>", "<span title=\"~~~~\">z</span>", "<span title=\"__TOC__\">z</span>",
	"&lt;script&gt;alert(1)&lt;/script&gt;", "&#60;script&#62;alert(1)&#60;/script&#62;", "&#x3c;script&#x3e;",
	"<span title=\"&#34;&#62;&#60;script&#62;\">x</span>",
	"a\xff\xfeb<span title=\"\xff\">c</span>", "a\u2028b\u202ec<span title=\"\u202e\">x</span>",
	"== a\u2028b ==\n[[a\u202eb]]",
	"<h2 id=\"content\">x</h2>", "<h2 id=\"search-q\">x</h2>", "<h3 id=\"_fn-1\">x</h3><ref>a</ref>", "<sup id=\"_fnref-1\">x</sup>",
	"<span name=\"csrf\">x</span>", "<div id=\"content\" name=\"x\">y</div>",
	"<div><span>== x ==\n", "== <div> ==\n== b ==",
	"<a href=\"javascript:alert(1)\">x</a>", "<img src=x onerror=alert(1)>", "<svg onload=alert(1)>",
	"<math><mi xlink:href=\"javascript:alert(1)\">x</mi></math>",
	"<nowiki><script>alert(1)</script></nowiki>", "<nowiki>&#60;script&#62;</nowiki>",
	"<table><tr><td onclick=x>a</td></tr></table>", "<td colspan=\"2 onclick=x\">x</td>",
	"<font color=\"red\" face=\"x\" size=1>x</font>", "<time datetime=\"javascript:x\">t</time>",
	"; a : b\n: c\n* <span onclick=x>d</span>", " <script>x</script>",
	"{{{1|<script>x</script>}}}", "<ref>[[File:X.png|thumb|a<ref>b</ref>]]</ref><references/>",
	"[[Category:<script>]]", "[[Category:X|<script>]]",
	"[http://a.example <a href=\"javascript:x\">y</a>]", "[http://a.example [[b|c]]]",
	"[[a|[http://a.example b]]]", "[[a|http://a.example]]",
	"mailto:x@y.example\"><script>", "[mailto:x@y.example?subject=\"><script> x]",
	"ISBN 123\"><script>", "RFC 1234", "PMID 1",
	"<references group=\"a\"/><ref group=\"a\">x</ref>", "<span/><div/><br/></br>",
	"<blockquote cite=\"javascript:alert(1)\">x</blockquote>", "<q cite=\"javascript:x\">y</q>",
	"<abbr title=\"javascript:alert(1)\">x</abbr>",
}

// TestAuthorIDs: an id the author writes on a heading could take the id of
// one of the site's own elements (which its scripts look up) or of the
// renderer's own anchors (footnotes, headings); none is kept.
func TestAuthorIDs(t *testing.T) {
	r := New()
	for _, src := range []string{"<h2 id=\"content\">x</h2>", "<h2 ID=search-q>x</h2>", "<h3 id=\"_fn-1\">x</h3>a<ref>b</ref>",
		"<h4 id=\"A\">x</h4>\n== A ==", "{|\n|-\n| <h2 id=upload-form>x</h2>\n|}"} {
		res := mustRender(t, r, src, render.Options{})
		for _, bad := range []string{`id="content"`, `id="search-q"`, `<h3 id=`, `<h4 id=`, `id="upload-form"`} {
			if strings.Contains(res.HTML, bad) && !strings.Contains(res.HTML, "<li "+bad) {
				t.Errorf("render of %q keeps the author's id:\n%s", src, res.HTML)
			}
		}
	}
}

func TestAttacks(t *testing.T) {
	r := New()
	for _, src := range attacks {
		for _, o := range []render.Options{{}, {EditPage: "P"}} {
			res, err := r.RenderWith(context.Background(), src, nil, o)
			if err != nil {
				t.Fatalf("RenderWith(%q): %v", src, err)
			}
			checkHTML(t, src, res.HTML)
			for _, h := range res.TOC {
				checkHTML(t, src, render.TOCList(res.TOC))
				_ = h
				break
			}
		}
	}
}

// TestTOCInHeading: __TOC__ in a heading's text must not put the table of
// contents into the heading's id (breaking out of the attribute).
func TestTOCInHeading(t *testing.T) {
	r := New()
	for _, src := range []string{"== __TOC__ ==\n== B ==\n== C ==", "== a __TOC__ b ==\n== B ==\n== C ==\n== D ==",
		"=== x\"__TOC__ ===\n== B ==\n== C ==", "== [[a|__TOC__]] ==\n== B ==\n== C =="} {
		for _, o := range []render.Options{{}, {EditPage: "P"}} {
			res, err := r.RenderWith(context.Background(), src, nil, o)
			if err != nil {
				t.Fatal(err)
			}
			checkHTML(t, src, res.HTML)
			if strings.Contains(res.HTML, "\x7f") || strings.Count(res.HTML, `<nav class="toc"`) != 1 {
				t.Errorf("render of %q:\n%s", src, res.HTML)
			}
		}
	}
}

func isHeading(e string) bool { return len(e) == 2 && e[0] == 'h' && '1' <= e[1] && e[1] <= '6' }
