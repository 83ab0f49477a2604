package wikitext

import (
	"context"
	"math/rand"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/render"
)

// mixPieces are fragments of markup that interact: random pages made of
// them must render safely and keep their link sets and sections straight.
var mixPieces = []string{
	"[[", "]]", "[", "]", "|", "{|", "|}", "|-", "!", "||", "\n", "\n", "\n", " ", "=", "==", "'''", "''", "<", ">", "\"", "'",
	"<ref>", "</ref>", "<ref name=\"a\">", "<ref name=a/>", "<references/>", "<nowiki>", "</nowiki>", "<nowiki/>",
	"<pre>", "</pre>", "<!--", "-->", "<span title=\"", "<div>", "</div>", "<h2>", "</h2>", "<b>", "</b>",
	"__TOC__", "__NOTOC__", "__FORCETOC__", "__NOEDITSECTION__", "~~~~", "{{", "}}", "{{{1}}}",
	"http://a.example/", "javascript:alert(1)", "[http://b.example ", "mailto:a@b", "File:A.png", "Category:C",
	"onmouseover=alert(1) ", "style=\"x\" ", "&#60;", "&lt;", "&amp;", "&", "*", "#", ":", ";", "----",
	"<syntaxhighlight lang=\"", "</syntaxhighlight>", "<math>", "</math>", "\u202e", "\xff", "#x",
	"a", "b", "text ", "<table>", "<td>", "</table>", "<br>", "<blockquote>",
}

func TestRandomMix(t *testing.T) {
	r := New()
	rng := rand.New(rand.NewSource(42))
	n := 4000
	if testing.Short() {
		n = 500
	}
	for i := 0; i < n; i++ {
		var b strings.Builder
		for k := rng.Intn(40); k >= 0; k-- {
			b.WriteString(mixPieces[rng.Intn(len(mixPieces))])
		}
		src := b.String()
		res, err := r.RenderWith(context.Background(), src, nil, render.Options{EditPage: "P"})
		if err != nil {
			t.Fatal(err)
		}
		checkHTML(t, src, res.HTML)
		if res.TOC != nil {
			checkHTML(t, src, render.TOCHTML(res.TOC))
		}
		if strings.Contains(res.HTML, "\x7f") {
			t.Errorf("a marker shows in the render of %q:\n%s", src, res.HTML)
		}
		checkSections(t, r, src, false)
		if t.Failed() {
			return
		}
	}
}
