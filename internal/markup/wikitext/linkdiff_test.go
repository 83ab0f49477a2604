package wikitext

import (
	"context"
	"slices"
	"strings"
	"testing"

	xhtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/wikid/wikid/internal/render"
)

// renderedTargets are the titles of the wiki links a page's HTML shows.
func renderedTargets(tb testing.TB, h string) []string {
	body := &xhtml.Node{Type: xhtml.ElementNode, Data: "body", DataAtom: atom.Body}
	nodes, err := xhtml.ParseFragment(strings.NewReader(h), body)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	var walk func(n *xhtml.Node)
	walk = func(n *xhtml.Node) {
		if n.Type == xhtml.ElementNode && n.Data == "a" {
			var href, title string
			for _, a := range n.Attr {
				switch a.Key {
				case "href":
					href = a.Val
				case "title":
					title = a.Val
				}
			}
			// Special pages are in no link set.
			if strings.HasPrefix(href, "/wiki/") && title != "" && !strings.Contains(href, "action=edit&section=") &&
				!strings.HasPrefix(title, "Special:") {
				if !slices.Contains(out, title) {
					out = append(out, title)
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
	slices.Sort(out)
	return out
}

// TestLinkSetsAgree: the link set of Links, Analyze and RenderWith is the
// set of links the page shows: a link counted and not shown (or shown and
// not counted) makes the wiki's red links and purges wrong.
func TestLinkSetsAgree(t *testing.T) {
	srcs := []string{
		"[[A]] [[b|B]] [[A#x]] [[#y]]",
		"<nowiki>[[N]]</nowiki> <pre>[[P]]</pre> <!-- [[C]] --> <syntaxhighlight>[[S]]</syntaxhighlight> <math>[[M]]</math>",
		"<ref>[[R1]]</ref>", "<ref group=g>[[G1]]</ref>", "<ref group=g>[[G2]]</ref><references group=g/>",
		"<ref name=a>[[D1]]</ref><ref name=a>[[D2]]</ref><references/>",
		"<ref name=a>x</ref><references><ref name=a>[[D3]]</ref></references>",
		"<references><ref name=zz>[[D4]]</ref></references>",
		"<ref name=a>x</ref><ref follow=a>[[F1]]</ref><references/>", "<ref follow=q>[[F2]]</ref>",
		"<ref name=1>[[E1]]</ref>", "<ref>[[X1]]<ref>[[X2]]</ref></ref>", "<ref name=a foo=b>[[E2]]</ref>",
		"== [[H]] ==\n{|\n| [[T]] || <span title=\"[[Attr]]\">x</span>\n|}",
		"[[Category:K]] [[:Category:K2]]",
		"[[a|[[b]]]] [[c|[http://x y]]] [[d]]e [[ e ]] [[f_g]] [[F g]]",
		"[http://x [[InExt]]] <span title=\"[[Q]]\">", "[[Special:Recent]] [[Talk:T]] [[:a]]",
		"''[[I1]]'' '''[[B1''']]''", "[[<nowiki>x</nowiki>]] [[a<!-- -->b]]",
		strings.Repeat("<ref>a</ref>", 3) + "<references/><ref>[[After]]</ref>",
		"{{T|[[InTemplate]]}}", "[[a\nb]] [[c|d\ne]]", "[[%41]] [[&amp;]] [[a&#93;b]]",
		"<references group=g><ref name=n>[[GD]]</ref></references><ref group=g name=n/>",
	}
	r := New()
	for _, src := range srcs {
		res, err := r.RenderWith(context.Background(), src, nil, render.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, l := range res.Links.Links {
			if !slices.Contains(res.Links.Files, l) {
				want = append(want, string(l))
			}
		}
		slices.Sort(want)
		got := renderedTargets(t, res.HTML)
		if !slices.Equal(got, want) {
			t.Errorf("%q: rendered links %q, link set %q\n%s", src, got, want, res.HTML)
		}
		ls := r.Links(src)
		als, _ := r.Analyze(src)
		if !slices.Equal(ls.Links, res.Links.Links) || !slices.Equal(als.Links, res.Links.Links) ||
			!slices.Equal(ls.Categories, res.Links.Categories) || !slices.Equal(ls.Files, res.Links.Files) {
			t.Errorf("%q: Links %+v, Analyze %+v, RenderWith %+v", src, ls, als, res.Links)
		}
	}
}
