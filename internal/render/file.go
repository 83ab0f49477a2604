package render

import (
	"bytes"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"

	"github.com/wikid/wikid/internal/wiki"
)

// Files shown in pages, with MediaWiki's syntax (Help:Images):
// [[File:Name.png|options…|caption]] shows the file, [[Media:Name.pdf|label]]
// links to its bytes, and a Markdown image of a file of the wiki
// (image.go) shows it at its own size. Which files exist and what they
// are is looked up once per render (Options.Files); everything here is
// decided from the parse and that lookup alone.

// maxFileEmbed bounds a [[File:…]] with everything in it, options and
// caption: how far the parser looks for its "]]" (maxWikiLink bounds
// other links), so that unclosed embeds stay linear.
const maxFileEmbed = 4096

// maxSizeDigits bounds the numbers of a size option ("200px"): a larger
// one is no size.
const maxSizeDigits = 5

// defaultUpright is the factor of "upright" without a value, MediaWiki's
// $wgThumbUpright.
const defaultUpright = 0.75

var (
	kindFileEmbed = ast.NewNodeKind("FileEmbed")
	kindFileBlock = ast.NewNodeKind("FileBlock")
)

// fileRef is a file a page shows or links to as media: its title, and
// the version the lookup found, set before rendering (nil: missing).
type fileRef struct {
	title   wiki.Title
	version *wiki.FileVersion
}

// fileRefAttr is the node attribute under which parse leaves the fileRef
// of a Markdown image that names a file of the wiki (a *fileRef, whose
// title is empty when the path names no valid file).
const fileRefAttr = "wikid-file"

// imageFileRef returns the fileRef parse left on n; nil when n names no
// file of the wiki.
func imageFileRef(n *ast.Image) *fileRef {
	v, ok := n.AttributeString(fileRefAttr)
	if !ok {
		return nil
	}
	ref, _ := v.(*fileRef)
	return ref
}

// fileEmbed is [[File:Name|options…]] or [[Media:Name|label]]. The
// caption of an embed is its children: text (ast.String) and wiki links.
type fileEmbed struct {
	ast.BaseInline
	ref   fileRef
	media bool   // [[Media:…]]: a link to the file's bytes
	label string // a Media: link's text, plain
	opts  fileOptions
	// block is set before rendering when the embed stands in a paragraph
	// of embeds only: a thumbnail is then a <figure>, not a <span>.
	block bool
}

func (n *fileEmbed) Kind() ast.NodeKind { return kindFileEmbed }

func (n *fileEmbed) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"File": string(n.ref.title)}, nil)
}

// fileBlock holds the embeds of a paragraph that had nothing else: their
// figures must not stand in a <p>.
type fileBlock struct{ ast.BaseBlock }

func (n *fileBlock) Kind() ast.NodeKind { return kindFileBlock }

func (n *fileBlock) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

// fileFormat is how an embed frames its image, in MediaWiki's order of
// precedence when several are given.
type fileFormat uint8

const (
	formatPlain     fileFormat = iota
	formatFrameless            // thumbnail size, no frame
	formatThumb                // thumbnail size, frame and caption
	formatFrame                // own size, frame and caption
)

// linkMode is where an embedded image links to.
type linkMode uint8

const (
	linkFilePage linkMode = iota // the file's page, the default
	linkNone                     // link=
	linkPage                     // link=Page
	linkExternal                 // link=https://…
)

// fileOptions are an embed's options (everything but its caption).
type fileOptions struct {
	format fileFormat
	border bool
	// width and height are the size asked for in pixels, 0 when not
	// given; both given are a box the image fits in.
	width, height int
	align         string  // "left", "right", "center", "none" or ""
	upright       float64 // factor of the default thumbnail width; 0: not given
	link          linkMode
	linkTitle     wiki.Title // linkPage: "" for a section of this page
	linkFragment  string     // linkPage
	linkURL       string     // linkExternal, escaped
	alt           string
	hasAlt        bool
}

// hasFilePrefix reports whether line starts with "[[" and a target in the
// File or Media namespace ("[[ image :", "[[:Media:"…): a cheap test
// before looking for an embed whose caption holds links.
func hasFilePrefix(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("[[")) {
		return false
	}
	s := line[2:]
	if len(s) > 64 {
		s = s[:64] // a prefix is short: the test stays cheap on any line
	}
	s = bytes.TrimLeft(s, " \t")
	if len(s) > 0 && s[0] == ':' {
		s = bytes.TrimLeft(s[1:], " \t")
	}
	for _, p := range []string{"file", "image", "media"} {
		if hasPrefixFold(s, p) {
			rest := bytes.TrimLeft(s[len(p):], " \t")
			return len(rest) > 0 && rest[0] == ':'
		}
	}
	return false
}

// enclosedNested is enclosed for a file embed, whose caption may hold wiki
// links one level deep: what stands between the "[[" at the start of line
// and its own "]]", within max bytes. A "[[" inside a nested link ends the
// search: so every search stops at the second "[[" it meets unless a "]]"
// closed the first, and a line of many unclosed embeds stays linear.
func enclosedNested(line []byte, max int) ([]byte, bool) {
	if !bytes.HasPrefix(line, []byte("[[")) {
		return nil, false
	}
	rest := line[2:]
	if len(rest) > max {
		rest = rest[:max]
	}
	nested := false
	for i := 0; i+1 < len(rest); i++ {
		switch c := rest[i]; {
		case c == '\n' || c == '\r':
			return nil, false
		case c == '[' && rest[i+1] == '[':
			if nested {
				return nil, false
			}
			nested = true
			i++
		case c == ']' && rest[i+1] == ']':
			if !nested {
				return rest[:i], true
			}
			nested = false
			i++
		}
	}
	return nil, false
}

// splitOptions splits s at the pipes that are not inside a nested [[…]].
func splitOptions(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '[' && i+1 < len(s) && s[i+1] == '[':
			depth++
			i++
		case s[i] == ']' && i+1 < len(s) && s[i+1] == ']' && depth > 0:
			depth--
			i++
		case s[i] == '|' && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// parseFileLink interprets inner, the text inside [[…]], when its target
// is a file: a *fileEmbed, or an invalid *wikiLink for a Media: link that
// names no file. ok is false when the target is no file ([[:File:X]] is an
// ordinary link to the file's page).
func parseFileLink(raw, inner string, rules wiki.TitleRules) (n ast.Node, ok bool) {
	inner = strings.ReplaceAll(inner, `\|`, "|")
	target, rest, piped := strings.Cut(inner, "|")
	target = strings.TrimSpace(target)
	name := target
	colon := strings.HasPrefix(name, ":")
	if colon {
		name = strings.TrimSpace(name[1:])
	}
	if prefix, file, ok := strings.Cut(name, ":"); ok && strings.EqualFold(strings.TrimSpace(prefix), "media") {
		t, _, err := rules.ParseLink("File:" + file)
		if err != nil || t.Namespace() != wiki.NSFile {
			return &wikiLink{Raw: raw, Invalid: true}, true
		}
		label := strings.TrimSpace(rest)
		if !piped || label == "" {
			label = name
		}
		return &fileEmbed{ref: fileRef{title: t}, media: true, label: label}, true
	}
	// Only a name with a namespace prefix can be a file's: most links
	// are not parsed twice.
	if colon || !strings.Contains(name, ":") {
		return nil, false
	}
	t, _, err := rules.ParseLink(name)
	if err != nil || t.Namespace() != wiki.NSFile {
		return nil, false
	}
	e := &fileEmbed{ref: fileRef{title: t}}
	if !piped {
		return e, true
	}
	caption := ""
	for _, opt := range splitOptions(rest) {
		opt = strings.TrimSpace(opt)
		if opt != "" && !e.opts.parse(opt, rules) {
			caption = opt // the last option that is none of the others
		}
	}
	appendCaption(e, caption, rules)
	return e, true
}

// parse reads one option (trimmed) into o and reports whether it was one;
// what is none is a caption.
func (o *fileOptions) parse(opt string, rules wiki.TitleRules) bool {
	key, val, hasValue := strings.Cut(opt, "=")
	if hasValue {
		val = strings.TrimSpace(val)
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "link":
			o.setLink(val, rules)
			return true
		case "alt":
			o.alt, o.hasAlt = val, true
			return true
		case "upright":
			o.upright = defaultUpright
			if f, err := strconv.ParseFloat(val, 64); err == nil && f > 0 && f <= 10 {
				o.upright = f
			}
			return true
		}
		return false
	}
	if len(opt) > 16 {
		return false // longer than any keyword or size
	}
	switch k := strings.ToLower(opt); k {
	case "thumb", "thumbnail":
		o.format = max(o.format, formatThumb)
	case "frame", "framed", "enframed":
		o.format = formatFrame
	case "frameless":
		o.format = max(o.format, formatFrameless)
	case "border":
		o.border = true
	case "left", "right", "center", "none":
		o.align = k
	case "centre":
		o.align = "center"
	case "upright":
		o.upright = defaultUpright
	case "baseline", "sub", "super", "top", "text-top", "middle", "bottom", "text-bottom":
		// Vertical alignment: an option in MediaWiki, no caption; Wikid's
		// style sheet aligns images one way.
	default:
		w, h, ok := parseSize(k)
		if !ok {
			return false
		}
		o.width, o.height = w, h
	}
	return true
}

// parseSize reads "200px", "x100px" or "200x100px" (lower case).
func parseSize(s string) (w, h int, ok bool) {
	body, found := strings.CutSuffix(s, "px")
	if !found {
		return 0, 0, false
	}
	ws, hs, box := strings.Cut(strings.TrimSpace(body), "x")
	if ws == "" && !box {
		return 0, 0, false
	}
	if ws != "" {
		if w, ok = smallNumber(ws); !ok {
			return 0, 0, false
		}
	}
	if box {
		if h, ok = smallNumber(hs); !ok {
			return 0, 0, false
		}
	}
	return w, h, true
}

func smallNumber(s string) (int, bool) {
	if len(s) == 0 || len(s) > maxSizeDigits {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// setLink reads link=v: nothing (no link), an external URL (http, https,
// mailto or protocol-relative, which the sanitizer must keep), or a page.
// A URL with any other scheme that browsers run (javascript:, data:…) or
// that names no page links nowhere.
func (o *fileOptions) setLink(v string, rules wiki.TitleRules) {
	o.link = linkNone
	switch {
	case v == "" || html.IsDangerousURL([]byte(v)):
	case strings.HasPrefix(v, "//") || hasPrefixFold([]byte(v), "http://") || hasPrefixFold([]byte(v), "https://") || hasPrefixFold([]byte(v), "mailto:"):
		href := string(util.URLEscape([]byte(v), true))
		if _, ok := cleanURL(href); ok {
			o.link, o.linkURL = linkExternal, href
		}
	default:
		t, frag, err := rules.ParseLink(strings.TrimPrefix(v, ":"))
		if err == nil {
			o.link, o.linkTitle, o.linkFragment = linkPage, t, frag
		}
	}
}

// appendCaption makes caption the children of n: its text, and its wiki
// links as links (enclosedNested let in one level of them, each closed
// before the next opens).
func appendCaption(n *fileEmbed, caption string, rules wiki.TitleRules) {
	for {
		i := strings.Index(caption, "[[")
		if i < 0 {
			break
		}
		inner, ok := enclosed([]byte(caption[i:]), "[[", "]]", maxFileEmbed)
		if !ok {
			break
		}
		if i > 0 {
			n.AppendChild(n, ast.NewString([]byte(caption[:i])))
		}
		end := i + len(inner) + 4
		n.AppendChild(n, parseWikiLink(caption[i:end], string(inner), rules))
		caption = caption[end:]
	}
	if caption != "" {
		n.AppendChild(n, ast.NewString([]byte(caption)))
	}
}

// blockLevel reports whether n is shown apart from the text around it: a
// framed thumbnail, or an image floated or centred.
func (n *fileEmbed) blockLevel() bool {
	return !n.media && (n.opts.format >= formatThumb || n.floatClass() != "")
}

// fileShow is how a file can be shown.
type fileShow uint8

const (
	showMissing     fileShow = iota
	showImage                // a raster image thumbnails are made of
	showSVG                  // from its original, scaled by the browser
	showNotImage             // a link to its page
	showTooLarge             // an image over wiki.MaxImagePixels: a link to its page
	showUnsupported          // an image of another type: a link to its page
)

func showOf(v *wiki.FileVersion) fileShow {
	switch {
	case v == nil:
		return showMissing
	case !validSHA256(v.SHA256):
		return showUnsupported // no URL of the wiki's could serve it
	case v.Thumbable():
		return showImage
	case v.MIME == "image/svg+xml":
		return showSVG
	case !v.IsImage():
		return showNotImage
	case int64(v.Width)*int64(v.Height) > wiki.MaxImagePixels:
		return showTooLarge
	}
	return showUnsupported
}

// whyClass is the class of the link a file shown as a link has: why it is
// no picture.
func whyClass(s fileShow) string {
	switch s {
	case showNotImage:
		return "file-not-image"
	case showTooLarge:
		return "file-too-large"
	}
	return "file-unsupported"
}

// validSHA256 reports whether s is a SHA-256 as media URLs carry it:
// lower-case hex, the form the sanitizer's srcset rule expects.
func validSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// displaySize is the size, in CSS pixels, at which v is shown with
// options o: its own for a plain image or a frame; the width asked (or the
// default thumbnail width, times upright) for a thumbnail or a sized
// image, never wider than the original for a raster image, the height
// following. Either is 0 when it cannot be known (an SVG of unknown size).
func displaySize(v *wiki.FileVersion, o fileOptions) (w, h int) {
	W, H := v.Width, v.Height
	w, h = W, H
	if o.format == formatFrame {
		return w, h
	}
	bw, bh := o.width, o.height
	if bw == 0 && bh == 0 && (o.format == formatThumb || o.format == formatFrameless) {
		bw = wiki.DefaultThumbWidth
		if o.upright > 0 {
			// As MediaWiki: the width rounded to tens.
			bw = max(int(math.Round(float64(wiki.DefaultThumbWidth)*o.upright/10))*10, 1)
		}
	}
	if bw == 0 && bh == 0 {
		return w, h
	}
	if W <= 0 || H <= 0 { // an SVG without a known size: what was asked
		if bw > 0 {
			return bw, 0
		}
		return 0, bh
	}
	w = bw
	if bh > 0 {
		if fit := scale(bh, W, H); bw == 0 || fit < w {
			w = fit
		}
	}
	if v.MIME != "image/svg+xml" {
		w = min(w, W) // a raster image is never enlarged
	}
	w = max(w, 1)
	return w, max(scale(w, H, W), 1)
}

// scale is a·num/den rounded to the nearest integer.
func scale(a, num, den int) int {
	return int((2*int64(a)*int64(num) + int64(den)) / (2 * int64(den)))
}

// imageSources are the src and srcset of v shown w pixels wide: the
// original when w is its width; else a thumbnail, with thumbnails 1.5 and
// 2 times as wide for denser screens while they are narrower than the
// original, and the original for the first density it serves.
func imageSources(v *wiki.FileVersion, w int) (src, srcset string) {
	name := v.Name()
	if v.MIME == "image/svg+xml" || w >= v.Width {
		return wiki.OriginalURL(v.SHA256, name), ""
	}
	var b strings.Builder
	for _, d := range []struct {
		width   int
		density string
	}{{(3*w + 1) / 2, "1.5x"}, {2 * w, "2x"}} {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if d.width >= v.Width {
			b.WriteString(wiki.OriginalURL(v.SHA256, name) + " " + d.density)
			break
		}
		b.WriteString(wiki.ThumbURL(v.SHA256, name, d.width) + " " + d.density)
	}
	return wiki.ThumbURL(v.SHA256, name, w), b.String()
}

// fileImg is an <img> of a file; alt and title are escaped already.
type fileImg struct {
	src, srcset   string
	width, height int
	alt, title    string
	border        bool
}

func (img fileImg) write(w util.BufWriter) {
	_, _ = w.WriteString("<img")
	if u, ok := cleanURL(img.src); ok {
		_, _ = w.WriteString(` src="`)
		canonEscapeString(w, u)
		_ = w.WriteByte('"')
	}
	if img.srcset != "" {
		_, _ = w.WriteString(` srcset="`)
		canonEscapeString(w, img.srcset)
		_ = w.WriteByte('"')
	}
	_, _ = w.WriteString(` alt="` + img.alt + `"`)
	if img.title != "" {
		_, _ = w.WriteString(` title="` + img.title + `"`)
	}
	if img.width > 0 {
		_, _ = w.WriteString(` width="` + strconv.Itoa(img.width) + `"`)
	}
	if img.height > 0 {
		_, _ = w.WriteString(` height="` + strconv.Itoa(img.height) + `"`)
	}
	if img.border {
		_, _ = w.WriteString(` class="thumbborder"`)
	}
	_, _ = w.WriteString(` loading="lazy" decoding="async">`)
}

// newFileImg is the <img> of v shown with options o.
func newFileImg(v *wiki.FileVersion, o fileOptions) fileImg {
	w, h := displaySize(v, o)
	img := fileImg{width: w, height: h, border: o.border && o.format < formatThumb}
	img.src, img.srcset = imageSources(v, w)
	return img
}

// writeUploadLink writes the red link of missing file t, whose text is
// text (escaped), or t when text is empty.
func writeUploadLink(w util.BufWriter, t wiki.Title, text string) {
	var attrs strings.Builder
	attrs.WriteString(` class="new" title="`)
	canonEscapeString(stringsWriter{&attrs}, string(t))
	attrs.WriteString(` (upload it)"`)
	href := wiki.Title("Special:Upload").URL() + "?wpDestFile=" + url.QueryEscape(wiki.FileName(t))
	writeAnchor(w, "", href, attrs.String(), false)
	writeLinkText(w, t, text)
}

// writeFilePageLink writes a link to the page of file t, which cannot be
// shown as a picture (class says why), whose text is text (escaped), or
// t's name when text is empty.
func writeFilePageLink(w util.BufWriter, t wiki.Title, class, text string) {
	var attrs strings.Builder
	attrs.WriteString(` class="` + class + `" title="`)
	canonEscapeString(stringsWriter{&attrs}, string(t))
	attrs.WriteString(`"`)
	writeAnchor(w, "", t.URL(), attrs.String(), false)
	if text == "" {
		canonEscapeString(w, t.Name())
	} else {
		_, _ = w.WriteString(text)
	}
	_, _ = w.WriteString("</a>")
}

func writeLinkText(w util.BufWriter, t wiki.Title, text string) {
	if text == "" {
		canonEscapeString(w, string(t))
	} else {
		_, _ = w.WriteString(text)
	}
	_, _ = w.WriteString("</a>")
}

// captionText is n's caption as plain text, escaped: the text of its
// links, no markup.
func captionText(n *fileEmbed) string {
	var b strings.Builder
	w := stringsWriter{&b}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.String:
			canonWriter{}.Write(w, c.Value)
		case *wikiLink:
			switch {
			case c.Invalid:
				canonEscapeString(w, c.Raw)
			case !c.Category:
				canonEscapeString(w, c.Label)
			}
		}
	}
	return b.String()
}

// captionMode is how an embed shows its caption.
type captionMode uint8

const (
	captionNone     captionMode = iota
	captionChildren             // rendered from the children, links and all
	captionPlain                // as text: inside a link, whose text may hold no link
)

func (n *fileEmbed) captionMode() captionMode {
	switch {
	case n.opts.format < formatThumb || n.FirstChild() == nil:
		return captionNone
	case inLink(n):
		return captionPlain
	}
	return captionChildren
}

// thumbClass is the class of a thumbnail's figure: "thumb" and where it
// stands (MediaWiki's tright, tleft, tcenter, tnone).
func (n *fileEmbed) thumbClass() string {
	switch n.opts.align {
	case "left":
		return "thumb tleft"
	case "center":
		return "thumb tcenter"
	case "none":
		return "thumb tnone"
	}
	return "thumb tright"
}

// floatClass is the class of the <span> around an image that is no
// thumbnail but is floated or centred; "" when it stands in the text.
func (n *fileEmbed) floatClass() string {
	switch n.opts.align {
	case "left", "right", "center":
		return "image-" + n.opts.align
	}
	return ""
}

// writeLinkOpen writes the start tag of the link around an embedded image
// and reports whether it wrote one: to the file's page unless link= says
// otherwise; none inside a link.
func (n *fileEmbed) writeLinkOpen(w util.BufWriter) bool {
	if inLink(n) {
		return false
	}
	o := n.opts
	switch o.link {
	case linkNone:
		return false
	case linkExternal:
		return writeAnchor(w, "", o.linkURL, ` class="image external" rel="`+externalRel+`"`, true)
	case linkPage:
		if o.linkTitle == "" {
			return writeAnchor(w, "", "#"+escapeFragment(fragmentID(o.linkFragment)), ` class="image"`, false)
		}
		href := o.linkTitle.URL()
		if o.linkFragment != "" {
			href += "#" + escapeFragment(fragmentID(o.linkFragment))
		}
		var attrs strings.Builder
		attrs.WriteString(` class="image" title="`)
		canonEscapeString(stringsWriter{&attrs}, string(o.linkTitle))
		attrs.WriteString(`"`)
		return writeAnchor(w, "", href, attrs.String(), false)
	}
	return writeAnchor(w, "", n.ref.title.URL(), ` class="image"`, false)
}

func renderFileEmbed(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*fileEmbed)
	show := showOf(n.ref.version)
	if n.media || (show != showImage && show != showSVG) {
		if entering {
			n.renderLink(w, show)
		}
		return ast.WalkSkipChildren, nil
	}
	frame := n.opts.format >= formatThumb
	caption := n.captionMode()
	if !entering {
		if caption == captionChildren {
			if n.block {
				_, _ = w.WriteString("</figcaption>")
			} else {
				_, _ = w.WriteString("</span>")
			}
		}
		switch {
		case frame && n.block:
			_, _ = w.WriteString("</figure>")
		case frame || n.floatClass() != "":
			_, _ = w.WriteString("</span>")
		}
		return ast.WalkContinue, nil
	}
	switch {
	case frame && n.block:
		_, _ = w.WriteString(`<figure class="` + n.thumbClass() + `">`)
	case frame:
		_, _ = w.WriteString(`<span class="` + n.thumbClass() + `">`)
	case n.floatClass() != "":
		_, _ = w.WriteString(`<span class="` + n.floatClass() + `">`)
	}
	img := newFileImg(n.ref.version, n.opts)
	text := captionText(n)
	var alt strings.Builder
	switch {
	case n.opts.hasAlt:
		canonEscapeString(stringsWriter{&alt}, n.opts.alt)
	case text != "":
		alt.WriteString(text)
	default:
		canonEscapeString(stringsWriter{&alt}, n.ref.title.Name())
	}
	img.alt = alt.String()
	if !frame {
		img.title = text // the caption of an image without a frame is its tooltip
	}
	linked := n.writeLinkOpen(w)
	img.write(w)
	if linked {
		_, _ = w.WriteString("</a>")
	}
	switch caption {
	case captionChildren:
		if n.block {
			_, _ = w.WriteString("<figcaption>")
		} else {
			_, _ = w.WriteString(`<span class="thumbcaption">`)
		}
		return ast.WalkContinue, nil
	case captionPlain:
		_, _ = w.WriteString(`<span class="thumbcaption">` + text + `</span>`)
	}
	return ast.WalkSkipChildren, nil
}

// renderLink writes an embed shown as a link: a Media: link, or a file
// that is missing or no picture. Its text is the label, the caption or the
// alt text, or the file's name; inside a link, the text alone.
func (n *fileEmbed) renderLink(w util.BufWriter, show fileShow) {
	var text strings.Builder
	switch {
	case n.media:
		canonEscapeString(stringsWriter{&text}, n.label)
	default:
		text.WriteString(captionText(n))
		if text.Len() == 0 && n.opts.hasAlt {
			canonEscapeString(stringsWriter{&text}, n.opts.alt)
		}
	}
	t := n.ref.title
	if inLink(n) {
		switch {
		case text.Len() > 0:
			_, _ = w.WriteString(text.String())
		case show == showMissing:
			canonEscapeString(w, string(t))
		default:
			canonEscapeString(w, t.Name())
		}
		return
	}
	switch {
	case show == showMissing:
		writeUploadLink(w, t, text.String())
	case n.media && validSHA256(n.ref.version.SHA256):
		var attrs strings.Builder
		attrs.WriteString(` class="internal" title="`)
		canonEscapeString(stringsWriter{&attrs}, string(t))
		attrs.WriteString(`"`)
		writeAnchor(w, "", wiki.OriginalURL(n.ref.version.SHA256, n.ref.version.Name()), attrs.String(), false)
		writeLinkText(w, t, text.String())
	default:
		writeFilePageLink(w, t, whyClass(show), text.String())
	}
}

// renderFileImage writes a Markdown image of file ref: the picture at its
// own size, or a link as for an embed (without options).
func renderFileImage(w util.BufWriter, source []byte, n *ast.Image, ref *fileRef) {
	var alt bytes.Buffer
	writeAltText(bufWriter{&alt}, source, n)
	show := showOf(ref.version)
	if show != showImage && show != showSVG {
		switch {
		case inLink(n) && alt.Len() > 0:
			_, _ = w.Write(alt.Bytes())
		case inLink(n) && show == showMissing:
			canonEscapeString(w, string(ref.title))
		case inLink(n):
			canonEscapeString(w, ref.title.Name())
		case show == showMissing:
			writeUploadLink(w, ref.title, alt.String())
		default:
			writeFilePageLink(w, ref.title, whyClass(show), alt.String())
		}
		return
	}
	img := newFileImg(ref.version, fileOptions{})
	img.alt = alt.String()
	if n.Title != nil {
		var title bytes.Buffer
		canonWriter{}.Write(bufWriter{&title}, n.Title)
		img.title = title.String()
	}
	img.write(w)
}

func renderFileBlock(w util.BufWriter, _ []byte, _ ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		_ = w.WriteByte('\n')
	}
	return ast.WalkContinue, nil
}
