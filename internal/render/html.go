package render

import (
	"bytes"
	"regexp"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
	xhtml "golang.org/x/net/html"

	"github.com/wikid/wikid/internal/wiki"
)

// nodeRenderer renders the wiki nodes and replaces goldmark's HTML for the
// nodes whose output differs: headings (self-link), links (external class),
// images and code blocks (the policy's attribute rules), raw HTML (sanitized
// node by node, no form inputs). Everything is written as the policy would
// leave it (canon.go). It keeps no state: everything a node needs was
// stored on it by walker before rendering, but for the wiki's title rules,
// by which macro prefixes name titles.
type nodeRenderer struct{ rules wiki.TitleRules }

func (r nodeRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindWikiLink, func(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			renderWikiLink(w, n.(*wikiLink))
		}
		return ast.WalkSkipChildren, nil
	})
	reg.Register(kindMacro, func(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			renderMacro(w, n.(*macro).spec, false, r.rules)
		}
		return ast.WalkSkipChildren, nil
	})
	reg.Register(kindMacroBlock, func(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			renderMacro(w, n.(*macroBlock).spec, true, r.rules)
		}
		return ast.WalkSkipChildren, nil
	})
	reg.Register(kindFileEmbed, renderFileEmbed)
	reg.Register(kindFileBlock, renderFileBlock)
	reg.Register(ast.KindHeading, renderHeading)
	reg.Register(ast.KindLink, renderLink)
	reg.Register(ast.KindAutoLink, renderAutoLink)
	reg.Register(ast.KindImage, r.renderImage)
	reg.Register(ast.KindFencedCodeBlock, renderFencedCodeBlock)
	reg.Register(ast.KindRawHTML, renderRawHTML)
	reg.Register(ast.KindHTMLBlock, renderHTMLBlock)
}

func renderHeading(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Heading)
	level := byte('0' + n.Level)
	var id []byte
	if v, ok := n.AttributeString("id"); ok {
		id, _ = v.([]byte)
	}
	if entering {
		_, _ = w.WriteString("<h")
		_ = w.WriteByte(level)
		_, _ = w.WriteString(` id="`)
		canonEscape(w, id)
		_, _ = w.WriteString(`">`)
		return ast.WalkContinue, nil
	}
	_ = w.WriteByte(' ')
	writeAnchor(w, ` class="anchor"`, "#"+escapeFragment(string(id)), ` aria-hidden="true"`, false)
	_, _ = w.WriteString(`#</a>`)
	if v, ok := n.AttributeString(editSectionAttr); ok {
		writeEditSection(w, v.(editSection))
	}
	_, _ = w.WriteString(`</h`)
	_ = w.WriteByte(level)
	_, _ = w.WriteString(">\n")
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

// linkAnchor writes the <a> start tag of a Markdown link and reports
// whether it wrote one; it is a pure function of the node so that the end
// tag can be decided the same way.
func linkAnchor(w util.BufWriter, n *ast.Link) bool {
	href := ""
	if !html.IsDangerousURL(n.Destination) {
		href = string(util.URLEscape(n.Destination, true))
	}
	var attrs bytes.Buffer
	if n.Title != nil {
		_, _ = attrs.WriteString(` title="`)
		canonWriter{}.Write(bufWriter{&attrs}, n.Title)
		_ = attrs.WriteByte('"')
	}
	ext := isExternal(n.Destination)
	if ext {
		_, _ = attrs.WriteString(` class="external" rel="` + externalRel + `"`)
	}
	return writeAnchor(w, "", href, attrs.String(), ext)
}

func renderLink(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	if !entering {
		if linkAnchor(discard{}, n) {
			_, _ = w.WriteString("</a>")
		}
		return ast.WalkContinue, nil
	}
	linkAnchor(w, n)
	return ast.WalkContinue, nil
}

func renderAutoLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.AutoLink)
	if !entering {
		return ast.WalkContinue, nil
	}
	url := n.URL(source)
	href := string(util.URLEscape(url, false))
	if n.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(url), []byte("mailto:")) {
		href = "mailto:" + href
	}
	// Always attributes: always an end tag.
	writeAnchor(w, "", href, ` class="external" rel="`+externalRel+`"`, true)
	canonWriter{}.RawWrite(w, n.Label(source))
	_, _ = w.WriteString("</a>")
	return ast.WalkContinue, nil
}

// imageSrc is the policy's rule for img src, before the URL check: a path
// on the wiki itself (a relative path names a file: fileImageTitle, and
// is shown from its media URL, file.go). Images from other sites are not embedded (as with
// MediaWiki's default $wgAllowExternalImages = false): a reader's browser
// then never contacts a third party, which would leak who reads what and
// let anyone change what a page shows. They render as links instead.
var imageSrc = regexp.MustCompile(`^/[^/\\]`)

func (r nodeRenderer) renderImage(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.Image)
	src := ""
	if ref := imageFileRef(n); ref != nil {
		if ref.title != "" {
			renderFileImage(w, source, n, ref)
			return ast.WalkSkipChildren, nil
		}
		// A path that names no file: no source.
	} else if !html.IsDangerousURL(n.Destination) {
		src = string(util.URLEscape(n.Destination, true))
	}
	if src != "" && !imageSrc.MatchString(src) {
		// An image from elsewhere: a link to it, labelled with its alt
		// text (or its URL when it has none) and keeping its title. Inside
		// a link, the label alone: links do not nest.
		var label bytes.Buffer
		writeAltText(bufWriter{&label}, source, n)
		if label.Len() == 0 {
			canonEscapeString(bufWriter{&label}, src)
		}
		if inLink(n) {
			_, _ = w.Write(label.Bytes())
			return ast.WalkSkipChildren, nil
		}
		attrs := ` class="external" rel="` + externalRel + `"`
		if n.Title != nil {
			var title bytes.Buffer
			_, _ = title.WriteString(` title="`)
			canonWriter{}.Write(bufWriter{&title}, n.Title)
			_ = title.WriteByte('"')
			attrs = title.String() + attrs
		}
		if writeAnchor(w, "", src, attrs, true) {
			_, _ = w.Write(label.Bytes())
			_, _ = w.WriteString("</a>")
			return ast.WalkSkipChildren, nil
		}
		src = ""
	}
	_, _ = w.WriteString("<img")
	if src != "" {
		// The policy judges the URL as cleaned: "/#" becomes "/".
		if u, ok := cleanURL(src); ok && imageSrc.MatchString(u) {
			_, _ = w.WriteString(` src="`)
			canonEscapeString(w, u)
			_ = w.WriteByte('"')
		}
	}
	_, _ = w.WriteString(` alt="`)
	writeAltText(w, source, n)
	_ = w.WriteByte('"')
	if n.Title != nil {
		_, _ = w.WriteString(` title="`)
		canonWriter{}.Write(w, n.Title)
		_ = w.WriteByte('"')
	}
	_ = w.WriteByte('>')
	return ast.WalkSkipChildren, nil
}

// onlyAllowedTag reports whether b holds one tag, of an element in
// authorElements, and maybe text after it: then escapeTags would copy it
// unchanged, and it can skip the tokenizer (and its 4 KB buffer). Most raw
// HTML is such a tag inline, as <kbd> or </sub>.
func onlyAllowedTag(b []byte) bool {
	if len(b) < 3 || b[0] != '<' || bytes.IndexByte(b[1:], '<') >= 0 {
		return false
	}
	name := b[1:]
	if name[0] == '/' {
		name = name[1:]
	}
	if len(name) == 0 || !('a' <= name[0]|0x20 && name[0]|0x20 <= 'z') {
		return false
	}
	end := bytes.IndexAny(name, " \t\n\f\r/>")
	if end < 0 {
		end = len(name)
	}
	name = name[:end]
	var lower [16]byte
	if len(name) > len(lower) {
		return false
	}
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	return authorElements[string(lower[:len(name)])]
}

// inLink reports whether n is inside a Markdown link.
func inLink(n ast.Node) bool {
	for p := n.Parent(); p != nil; p = p.Parent() {
		if p.Kind() == ast.KindLink {
			return true
		}
	}
	return false
}

// writeAltText writes the text of an image's children as goldmark does,
// escaped for an attribute value: a hard line break is the text "<br>".
func writeAltText(w util.BufWriter, source []byte, n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.String:
			if c.IsRaw() || c.IsCode() {
				canonEscape(w, c.Value)
			} else {
				canonWriter{}.Write(w, c.Value)
			}
		case *ast.Text:
			v := c.Segment.Value(source)
			if c.IsRaw() {
				canonEscape(w, v)
				continue
			}
			canonWriter{}.Write(w, v)
			if c.HardLineBreak() {
				_, _ = w.WriteString("&lt;br&gt;\n")
			} else if c.SoftLineBreak() {
				_ = w.WriteByte('\n')
			}
		default:
			writeAltText(w, source, c)
		}
	}
}

// codeLanguage is the policy's rule for the class of <code>.
var codeLanguage = regexp.MustCompile(`^language-[\p{L}\p{N}_+#.-]{1,64}$`)

func renderFencedCodeBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.FencedCodeBlock)
	if !entering {
		_, _ = w.WriteString("</code></pre>\n")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString("<pre><code")
	if lang := codeLanguageOf(n, source); lang != nil {
		var b bytes.Buffer
		bw := bufWriter{&b}
		_, _ = b.WriteString("language-")
		canonWriter{}.Write(bw, lang)
		// The sanitizer judges the unescaped value.
		if v := htmlUnescape(b.String()); codeLanguage.MatchString(v) {
			_, _ = w.WriteString(` class="`)
			_, _ = w.Write(b.Bytes())
			_ = w.WriteByte('"')
		}
	}
	_ = w.WriteByte('>')
	if v, ok := n.AttributeString(highlightAttr); ok {
		_, _ = w.WriteString(v.(string))
		return ast.WalkContinue, nil
	}
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		line := lines.At(i)
		canonEscape(w, line.Value(source))
	}
	return ast.WalkContinue, nil
}

func renderRawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	segs := node.(*ast.RawHTML).Segments
	if segs.Len() == 1 {
		seg := segs.At(0)
		sanitizeRaw(w, seg.Value(source))
		return ast.WalkSkipChildren, nil
	}
	var b []byte
	for i := 0; i < segs.Len(); i++ {
		seg := segs.At(i)
		b = append(b, seg.Value(source)...)
	}
	sanitizeRaw(w, b)
	return ast.WalkSkipChildren, nil
}

// renderHTMLBlock sanitizes the whole block at once: a tag may span lines.
func renderHTMLBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.HTMLBlock)
	if !entering {
		return ast.WalkContinue, nil
	}
	var b []byte
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		line := lines.At(i)
		b = append(b, line.Value(source)...)
	}
	if n.HasClosure() {
		b = append(b, n.ClosureLine.Value(source)...)
	}
	sanitizeRaw(w, b)
	return ast.WalkContinue, nil
}

// sanitizeRaw writes the author's HTML b through the sanitizer, on its own:
// whatever b leaves open (a comment, an attribute, a tag) ends with it, and
// the sanitizer's output is complete tokens in canonical form. The tags of
// elements outside authorElements are turned into text first (escapeTags).
func sanitizeRaw(w util.BufWriter, b []byte) {
	pw, memo := w.(pageWriter)
	if memo {
		if v, ok := pw.raw[string(b)]; ok {
			_, _ = w.Write(v)
			return
		}
	}
	var pre bytes.Buffer
	pre.Grow(len(b) + 16)
	escapeTags(bufWriter{&pre}, b)
	out := policy.SanitizeBytes(pre.Bytes())
	if memo && len(b) <= maxMemoRaw && len(pw.raw) < maxMemoEntries {
		pw.raw[string(b)] = out
	}
	_, _ = w.Write(out)
}

// escapeTags writes b with the start and end tags of elements outside
// authorElements escaped, so that they read as text, as MediaWiki and GFM's
// tag filter show them: "<center>" or "<script>" and what stands between
// them stay visible instead of vanishing. Everything else is copied (NUL
// replaced) for the sanitizer to judge. After an escaped start tag of a raw
// text element (<script>, <style>, <textarea>, <title>, <xmp>,
// <plaintext>…) what follows is read as markup again, because that is how a
// browser reads it once the tag is text.
func escapeTags(w util.BufWriter, b []byte) {
	if onlyAllowedTag(b) {
		canonWriter{}.SecureWrite(w, b)
		return
	}
	tokenizeTags(w, b)
}

// tokenizeTags is escapeTags without the shortcut.
func tokenizeTags(w util.BufWriter, b []byte) {
	z := xhtml.NewTokenizer(bytes.NewReader(b))
	for off := 0; ; {
		tt := z.Next()
		// The tokens' raw texts follow each other through b. They are
		// taken from b itself: the tokenizer lower-cases tag names in
		// its buffer, and the author's text is shown as written.
		raw := b[off : off+len(z.Raw())]
		off += len(raw)
		switch tt {
		case xhtml.ErrorToken:
			// The end, or a construct cut off by it (a tag or a comment
			// left open): the sanitizer drops it as a browser would.
			canonWriter{}.SecureWrite(w, raw)
			return
		case xhtml.StartTagToken, xhtml.EndTagToken, xhtml.SelfClosingTagToken:
			name, _ := z.TagName()
			if !authorElements[string(name)] {
				canonEscape(w, raw)
				if tt == xhtml.StartTagToken {
					z.NextIsNotRawText()
				}
				continue
			}
		}
		canonWriter{}.SecureWrite(w, raw)
	}
}
