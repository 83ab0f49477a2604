package render

import (
	"bytes"
	"context"
	"strings"

	"github.com/wikid/wikid/internal/wiki"
	"github.com/yuin/goldmark/ast"
	xhtml "golang.org/x/net/html"
)

// PlainText returns the text a reader of src sees, without markup: what
// the search index holds, so that a search matches and its snippets show
// words, not "**", "[[" or URLs. Blocks end with a line break; link
// labels, image descriptions, code and footnotes are text; categories,
// macros, URLs, HTML tags (and the content of <script> and <style>) and
// the redirect line are not. A parse that runs out of time (the render
// time limit) returns src as it is.
func (r *Renderer) PlainText(src string) string {
	_, plain := r.Analyze(src)
	return plain
}

// Analyze parses src once for what a save stores beside the revision: its
// link set (see Links) and its plain text (see PlainText).
func (r *Renderer) Analyze(src string) (ls wiki.LinkSet, plain string) {
	defer func() {
		if v := recover(); v != nil {
			if v != errTimeout {
				panic(v)
			}
			ls, plain = r.redirectLinks(src), src
		}
	}()
	bud, done := r.budget(context.Background())
	defer done()
	source, doc, ls := r.parse(src, bud)
	return ls, plainOf(doc, source)
}

// plainOf is the text of a parsed document as PlainText returns it.
func plainOf(doc ast.Node, source []byte) string {
	var b strings.Builder
	b.Grow(len(source))
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || n.Type() != ast.TypeBlock {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			writeLines(&b, n, source)
		case *ast.HTMLBlock:
			var raw []byte
			lines := n.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				raw = append(raw, seg.Value(source)...)
			}
			if n.HasClosure() {
				raw = append(raw, n.ClosureLine.Value(source)...)
			}
			htmlText(&b, raw)
		default:
			if c := n.FirstChild(); c == nil || c.Type() != ast.TypeInline {
				return ast.WalkContinue, nil
			}
			appendText(&b, n, source)
		}
		b.WriteByte('\n')
		return ast.WalkSkipChildren, nil
	})
	return b.String()
}

func writeLines(b *strings.Builder, n ast.Node, source []byte) {
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(source))
	}
}

// htmlText writes the text of the author's HTML, tags and the content of
// the elements the sanitizer drops whole left out.
func htmlText(b *strings.Builder, raw []byte) {
	z := xhtml.NewTokenizer(bytes.NewReader(raw))
	skip := 0
	for {
		switch z.Next() {
		case xhtml.ErrorToken:
			return
		case xhtml.TextToken:
			if skip == 0 {
				b.Write(z.Text())
			}
		case xhtml.StartTagToken:
			if name, _ := z.TagName(); isDropped(name) {
				skip++
			}
			b.WriteByte(' ')
		case xhtml.EndTagToken:
			if name, _ := z.TagName(); isDropped(name) && skip > 0 {
				skip--
			}
			b.WriteByte(' ')
		}
	}
}

func isDropped(tag []byte) bool { return string(tag) == "script" || string(tag) == "style" }
