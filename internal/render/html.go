package render

import (
	"bytes"
	"strconv"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// nodeRenderer renders the wiki nodes and replaces goldmark's HTML for the
// nodes whose output differs: headings (self-link), links (external class),
// raw HTML (no form inputs). It keeps no state: everything a node needs was
// stored on it by walker before rendering.
type nodeRenderer struct{}

func (nodeRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindWikiLink, func(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			renderWikiLink(w, n.(*wikiLink))
		}
		return ast.WalkSkipChildren, nil
	})
	reg.Register(kindMacro, func(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			renderMacro(w, n.(*macro).spec, false)
		}
		return ast.WalkSkipChildren, nil
	})
	reg.Register(kindMacroBlock, func(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			renderMacro(w, n.(*macroBlock).spec, true)
		}
		return ast.WalkSkipChildren, nil
	})
	reg.Register(ast.KindHeading, renderHeading)
	reg.Register(ast.KindLink, renderLink)
	reg.Register(ast.KindAutoLink, renderAutoLink)
	reg.Register(ast.KindRawHTML, renderRawHTML)
	reg.Register(ast.KindHTMLBlock, renderHTMLBlock)
}

func renderHeading(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Heading)
	level := strconv.Itoa(n.Level)
	var id []byte
	if v, ok := n.AttributeString("id"); ok {
		id, _ = v.([]byte)
	}
	if entering {
		_, _ = w.WriteString("<h" + level + ` id="`)
		_, _ = w.Write(util.EscapeHTML(id))
		_, _ = w.WriteString(`">`)
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString(` <a class="anchor" href="#`)
	_, _ = w.Write(util.EscapeHTML([]byte(escapeFragment(string(id)))))
	_, _ = w.WriteString(`" aria-hidden="true">#</a></h` + level + ">\n")
	return ast.WalkContinue, nil
}

// isExternal reports whether a link destination leaves the wiki: it has a
// scheme or is protocol-relative.
func isExternal(dest []byte) bool {
	if bytes.HasPrefix(dest, []byte("//")) {
		return true
	}
	for i, c := range dest {
		switch {
		case c == ':':
			return i > 0
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return false
}

func renderLink(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	if !entering {
		_, _ = w.WriteString("</a>")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString(`<a href="`)
	if !html.IsDangerousURL(n.Destination) {
		_, _ = w.Write(util.EscapeHTML(util.URLEscape(n.Destination, true)))
	}
	_ = w.WriteByte('"')
	if n.Title != nil {
		_, _ = w.WriteString(` title="`)
		html.DefaultWriter.Write(w, n.Title)
		_ = w.WriteByte('"')
	}
	if isExternal(n.Destination) {
		_, _ = w.WriteString(` class="external" rel="` + externalRel + `"`)
	}
	_ = w.WriteByte('>')
	return ast.WalkContinue, nil
}

func renderAutoLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.AutoLink)
	if !entering {
		return ast.WalkContinue, nil
	}
	url := n.URL(source)
	_, _ = w.WriteString(`<a href="`)
	if n.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(url), []byte("mailto:")) {
		_, _ = w.WriteString("mailto:")
	}
	_, _ = w.Write(util.EscapeHTML(util.URLEscape(url, false)))
	_, _ = w.WriteString(`" class="external" rel="` + externalRel + `">`)
	_, _ = w.Write(util.EscapeHTML(n.Label(source)))
	_, _ = w.WriteString("</a>")
	return ast.WalkContinue, nil
}

func renderRawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	segs := node.(*ast.RawHTML).Segments
	for i := 0; i < segs.Len(); i++ {
		seg := segs.At(i)
		writeRawHTML(w, seg.Value(source))
	}
	return ast.WalkSkipChildren, nil
}

func renderHTMLBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.HTMLBlock)
	if entering {
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			line := lines.At(i)
			writeRawHTML(w, line.Value(source))
		}
	} else if n.HasClosure() {
		writeRawHTML(w, n.ClosureLine.Value(source))
	}
	return ast.WalkContinue, nil
}

// writeRawHTML writes the author's HTML for the sanitizer to judge, with
// one change: <input> tags are escaped, because the sanitizer keeps inputs
// for task list check boxes and the author must not get text fields.
func writeRawHTML(w util.BufWriter, b []byte) {
	for {
		i := indexFold(b, "<input")
		if i < 0 {
			break
		}
		html.DefaultWriter.SecureWrite(w, b[:i])
		_, _ = w.WriteString("&lt;")
		b = b[i+1:]
	}
	html.DefaultWriter.SecureWrite(w, b)
}

// indexFold is a case-insensitive bytes.Index for an ASCII lower-case needle.
func indexFold(b []byte, needle string) int {
	for i := 0; i+len(needle) <= len(b); i++ {
		j := 0
		for ; j < len(needle); j++ {
			c := b[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != needle[j] {
				break
			}
		}
		if j == len(needle) {
			return i
		}
	}
	return -1
}
