package wikitext

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	xhtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/wiki"
)

// Render renders src with no options (see RenderWith).
func (r *Renderer) Render(ctx context.Context, src string, exists render.Exists) (render.Result, error) {
	return r.RenderWith(ctx, src, exists, render.Options{})
}

// RenderWith renders src. exists may be nil: then every link is blue; it
// is called at most once, with every distinct link target that is not a
// special page, and o.Files at most once with every distinct file. A
// render that runs out of time returns the page as plain text
// (Result.TimedOut); one whose ctx ends returns ctx's error.
func (r *Renderer) RenderWith(ctx context.Context, src string, exists render.Exists, o render.Options) (res render.Result, err error) {
	b, done := r.start(ctx)
	defer done()
	defer func() {
		switch v := recover().(type) {
		case nil:
		case stopRender:
			res, err = render.Result{}, fmt.Errorf("wikitext: %w", v.err)
		default:
			if v != errTimeout {
				panic(v)
			}
			res, err = render.Result{HTML: render.TimedOutHTML(src), Links: r.redirectLinks(src), TimedOut: true}, nil
		}
	}()
	d := r.parse(src, b)

	var targets []wiki.Title
	seen := map[wiki.Title]bool{}
	add := func(t wiki.Title) {
		if t != "" && !t.IsSpecial() && !seen[t] {
			seen[t] = true
			targets = append(targets, t)
		}
	}
	for _, l := range d.links {
		add(l.target)
	}
	for _, f := range d.files {
		for _, t := range f.links {
			add(t)
		}
	}
	found := map[wiki.Title]bool{}
	if exists != nil && len(targets) > 0 {
		if found, err = exists(ctx, targets); err != nil {
			return render.Result{}, fmt.Errorf("wikitext: look up link targets: %w", err)
		}
	}
	w := &writer{d: d, o: o, ctx: ctx, exists: func(t wiki.Title) bool { return exists == nil || t.IsSpecial() || found[t] },
		hl: render.NewHighlighter(0), seenIDs: map[string]int{}, opens: map[link]string{}, limit: maxOutput(len(src))}
	if len(d.files) > 0 && o.Files != nil {
		var titles []wiki.Title
		seenFile := map[wiki.Title]bool{}
		for _, f := range d.files {
			if !seenFile[f.title] {
				seenFile[f.title] = true
				titles = append(titles, f.title)
			}
		}
		if w.files, err = o.Files(ctx, titles); err != nil {
			return render.Result{}, fmt.Errorf("wikitext: look up files: %w", err)
		}
	}
	w.expand(d.body, 0)
	html := w.out.String()
	toc := w.toc
	if d.noTOC {
		toc = nil
	}
	switch {
	case d.tocHere:
		t := ""
		if toc != nil {
			t = tocHTML(toc, d.forceTOC)
		}
		html = strings.Replace(html, tocPlaceholder, t, 1)
		toc = nil
	case d.forceTOC && len(toc) > 0 && len(toc) < minTOC:
		// The engine shows a TOC from three headings on; a forced one
		// for fewer stands before the first heading, as in MediaWiki.
		if i := strings.Index(html, "<h"); i >= 0 {
			html = html[:i] + tocHTML(toc, true) + html[i:]
		}
		toc = nil
	}
	if o.SectionMark != "" {
		html = unmark(html, o.SectionMark)
	}
	if len(html) > w.limit {
		panic(errTimeout)
	}
	b.steps = checkEvery // the clock once more before the balancing parse
	b.check()
	return render.Result{
		HTML:    finish(html, b),
		TOC:     toc,
		Links:   d.linkSet(),
		Partial: w.hl.Cut(),
	}, nil
}

// minTOC is the number of headings from which render.TOCHTML writes a
// table of contents.
const minTOC = 3

// tocHTML is render.TOCHTML, for fewer headings too when forced.
func tocHTML(toc []render.Heading, force bool) string {
	if force {
		return render.TOCList(toc)
	}
	return render.TOCHTML(toc)
}

// tocPlaceholder marks where __TOC__ puts the table of contents.
const tocPlaceholder = "\x7fTOC\x7f"

// finish balances the page's tags as a browser would (an HTML parse) and
// wraps the text standing outside any block in paragraphs as MediaWiki's
// HTML tidying does. Everything the page holds is in the sanitizer's
// canonical form already (the author's tags passed through it one by one,
// openTag; the rest is written by this package and package render), and
// the parse writes it out again in that form: the page is a fixpoint of
// render.Sanitize (the tests and FuzzRender check it).
//
// The parse reads the page through b's clock: text standing in a table
// outside its cells is moved before the table and joined to the text
// moved there before, at a cost that grows with it, so that a page of
// such text costs time quadratic in its size.
func finish(h string, b *budget) string {
	body := &xhtml.Node{Type: xhtml.ElementNode, Data: "body", DataAtom: atom.Body}
	nodes, err := xhtml.ParseFragment(&clockedReader{s: h, b: b}, body)
	if err != nil {
		// Elements nested past the parser's bound (512): the page's text
		// is shown without its markup, which the parse could not balance.
		b.steps = checkEvery
		b.check()
		return render.NestedTooDeepHTML(h)
	}
	for _, n := range nodes {
		body.AppendChild(n)
	}
	pWrap(body)
	var buf bytes.Buffer
	buf.Grow(len(h) + len(h)/8)
	for n := body.FirstChild; n != nil; n = n.NextSibling {
		_ = xhtml.Render(&buf, n)
	}
	return buf.String()
}

// phrasing are the elements that are text to paragraphs.
var phrasing = map[atom.Atom]bool{
	atom.A: true, atom.Abbr: true, atom.B: true, atom.Bdi: true, atom.Bdo: true, atom.Big: true,
	atom.Br: true, atom.Cite: true, atom.Code: true, atom.Data: true, atom.Del: true, atom.Dfn: true,
	atom.Em: true, atom.Font: true, atom.I: true, atom.Img: true, atom.Ins: true, atom.Kbd: true,
	atom.Mark: true, atom.Q: true, atom.Rb: true, atom.Rp: true, atom.Rt: true, atom.Rtc: true,
	atom.Ruby: true, atom.S: true, atom.Samp: true, atom.Small: true, atom.Span: true,
	atom.Strike: true, atom.Strong: true, atom.Sub: true, atom.Sup: true, atom.Time: true,
	atom.Tt: true, atom.U: true, atom.Var: true, atom.Wbr: true,
}

// inline reports whether n is text to a paragraph: text, or a phrasing
// element with no block inside.
func inlineNode(n *xhtml.Node) bool {
	switch n.Type {
	case xhtml.TextNode:
		return true
	case xhtml.ElementNode:
		if !phrasing[n.DataAtom] {
			return false
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == xhtml.ElementNode && !inlineNode(c) {
				return false
			}
		}
		return true
	}
	return false
}

// pWrap wraps the runs of inline content among the children of n (the
// body, or a block quote) in paragraphs; white space alone starts none.
// Block quotes further down are wrapped the same way.
func pWrap(n *xhtml.Node) {
	var p *xhtml.Node
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		switch {
		case c.Type == xhtml.TextNode && p == nil && strings.TrimSpace(c.Data) == "":
		case inlineNode(c):
			if p == nil {
				p = &xhtml.Node{Type: xhtml.ElementNode, Data: "p", DataAtom: atom.P}
				n.InsertBefore(p, c)
			}
			n.RemoveChild(c)
			p.AppendChild(c)
		default:
			p = nil
			quotes(c)
		}
		c = next
	}
}

// quotes p-wraps the block quotes in n's tree.
func quotes(n *xhtml.Node) {
	if n.Type != xhtml.ElementNode {
		return
	}
	if n.DataAtom == atom.Blockquote {
		pWrap(n)
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		quotes(c)
	}
}

// writer replaces the markers of a parse by their HTML.
type writer struct {
	d      *doc
	o      render.Options
	ctx    context.Context
	exists func(wiki.Title) bool
	files  map[wiki.Title]wiki.FileVersion
	hl     *render.Highlighter
	out    bytes.Buffer
	limit  int // maxOutput of the source: out may not grow past it
	opens  map[link]string

	heads    []int // output offsets of the open headings
	seenIDs  map[string]int
	toc      []render.Heading
	sections int
	marked   map[int]bool
}

// maxMarkDepth bounds markers within markers (a link in a note in a list).
const maxMarkDepth = 8

func (w *writer) expand(s string, depth int) {
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != markerChar {
			continue
		}
		kind, n, end, ok := readMarker(s, i)
		if !ok {
			continue
		}
		w.d.b.check()
		w.out.WriteString(s[last:i])
		last, i = end, end-1
		if depth > maxMarkDepth {
			continue
		}
		switch kind {
		case kindLinkOpen:
			if n < len(w.d.links) {
				w.out.WriteString(w.linkOpen(w.d.links[n]))
			}
		case kindLinkClose:
			if n < len(w.d.links) && w.linkOpen(w.d.links[n]) != "" {
				w.out.WriteString("</a>")
			}
		case kindHeadOpen:
			w.heads = append(w.heads, w.out.Len())
		case kindHeadClose:
			if n < len(w.d.heads) && len(w.heads) > 0 {
				start := w.heads[len(w.heads)-1]
				w.heads = w.heads[:len(w.heads)-1]
				w.heading(w.d.heads[n], start)
			}
		case kindInline, kindBlock:
			if n < len(w.d.marks) {
				w.mark(&w.d.marks[n], depth)
			}
		}
		if w.out.Len() > w.limit {
			panic(errTimeout)
		}
	}
	w.out.WriteString(s[last:])
}

func (w *writer) linkOpen(l *link) string {
	open, ok := w.opens[*l]
	if !ok {
		open = render.WikiLinkOpen(l.target, l.fragment, l.target == "" || w.exists(l.target))
		w.opens[*l] = open
	}
	return open
}

func (w *writer) mark(m *mark, depth int) {
	switch {
	case m.toc:
		w.out.WriteString(tocPlaceholder)
	case m.refs != nil:
		w.expand(refsHTML(m.refs), depth+1)
	case m.file != nil:
		w.out.WriteString(w.file(m.file))
	case m.code != "" || m.lang != "":
		w.out.WriteString("<pre><code")
		if c := render.CodeLanguageClass(m.lang); c != "" && m.lang != "" {
			w.out.WriteString(` class="` + c + `"`)
		}
		w.out.WriteString(">")
		if h, ok := w.hl.Highlight(m.lang, m.code+"\n"); ok && m.lang != "" {
			w.out.WriteString(h)
		} else {
			w.out.WriteString(escapeText(m.code))
		}
		w.out.WriteString("</code></pre>")
	default:
		w.expand(m.html, depth+1)
	}
}

// file renders a file embed as the Markdown renderer does, from the
// lookups made already.
func (w *writer) file(f *fileEmbed) string {
	exists := func(_ context.Context, ts []wiki.Title) (map[wiki.Title]bool, error) {
		m := make(map[wiki.Title]bool, len(ts))
		for _, t := range ts {
			m[t] = w.exists(t)
		}
		return m, nil
	}
	files := func(_ context.Context, ts []wiki.Title) (map[wiki.Title]wiki.FileVersion, error) {
		m := make(map[wiki.Title]wiki.FileVersion, len(ts))
		for _, t := range ts {
			if v, ok := w.files[t]; ok {
				m[t] = v
			}
		}
		return m, nil
	}
	res, err := w.d.r.md.RenderWith(w.ctx, f.src, exists, render.Options{Files: files})
	if err != nil {
		return ""
	}
	h := strings.TrimSpace(res.HTML)
	if strings.HasPrefix(h, "<p>") && strings.HasSuffix(h, "</p>") {
		h = h[3 : len(h)-4]
	}
	return h
}

// heading writes the heading whose text the output holds from start.
func (w *writer) heading(h *heading, start int) {
	inner := strings.TrimSpace(string(w.out.Bytes()[start:]))
	w.out.Truncate(start)
	// __TOC__ in a heading's text puts the table of contents before the
	// heading: left in the text, the place holder would go into the id
	// and title attributes, and the contents' HTML with it.
	if strings.Contains(inner, tocPlaceholder) {
		inner = strings.TrimSpace(strings.ReplaceAll(inner, tocPlaceholder, ""))
		w.out.WriteString(tocPlaceholder)
	}
	section := 0
	if w.o.SectionMark != "" {
		inner, section = w.takeMark(inner)
		inner = unmark(inner, w.o.SectionMark)
	} else {
		w.sections++
		section = w.sections
	}
	text := strings.TrimSpace(htmlText(inner))
	id := render.UniqueID(w.seenIDs, render.AnchorID(text))
	level := strconv.Itoa(h.level)
	b := &w.out
	b.WriteString("<h" + level + ` id="` + escapeText(id) + `">`)
	b.WriteString(inner)
	b.WriteString(render.HeadingAnchor(id))
	if section > 0 && w.o.EditPage != "" && !w.d.noEditSection {
		b.WriteString(render.EditSectionHTML(w.o.EditPage, section, text))
	}
	b.WriteString("</h" + level + ">")
	w.toc = append(w.toc, render.Heading{Level: h.level, Text: text, ID: id})
}

// takeMark removes a section mark of Options.SectionMark from the start
// of a heading's HTML and returns its section number (0: none, or one
// linked already).
func (w *writer) takeMark(inner string) (string, int) {
	prefix := markOpen + w.o.SectionMark + markSep
	if !strings.HasPrefix(inner, prefix) {
		return inner, 0
	}
	rest := inner[len(prefix):]
	end := strings.Index(rest, markClose)
	if end <= 0 {
		return inner, 0
	}
	n, err := strconv.Atoi(rest[:end])
	inner = strings.TrimSpace(rest[end+len(markClose):])
	if err != nil || n <= 0 || w.marked[n] {
		return inner, 0
	}
	if w.marked == nil {
		w.marked = map[int]bool{}
	}
	w.marked[n] = true
	return inner, n
}

// htmlText is the text of HTML: tags left out, references resolved.
func htmlText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return s
	}
	var b strings.Builder
	z := xhtml.NewTokenizer(strings.NewReader(s))
	for {
		switch z.Next() {
		case xhtml.ErrorToken:
			return b.String()
		case xhtml.TextToken:
			b.Write(z.Text())
		}
	}
}

// maxOutput bounds the HTML of a render of n bytes of source: a render
// whose output grows past it stops as one over its time limit does, and
// the page shows as plain text. Realistic pages write two to five times
// their source and a page of nothing but short headings some thirty; "=a="
// lines (an id, an anchor, an edit link with the page's name for four
// bytes) write a hundred, which for the largest page would be hundreds of
// megabytes.
func maxOutput(n int) int { return 32*n + 1<<20 }

// unmark removes from s the section marks of nonce that no heading took:
// those of heading lines the page does not show as headings (a comment
// or a nowiki running on from inside the line), written as they are or
// percent-encoded in a URL. The nonce is the engine's secret; shown, it
// would let a template forge the marks, and so the edit links.
func unmark(s, nonce string) string {
	for _, f := range [...][3]string{
		{markOpen, markSep, markClose},
		{url.PathEscape(markOpen), url.PathEscape(markSep), url.PathEscape(markClose)},
	} {
		prefix := f[0] + nonce + f[1]
		if !strings.Contains(s, prefix) {
			continue
		}
		var b strings.Builder
		b.Grow(len(s))
		for {
			i := strings.Index(s, prefix)
			if i < 0 {
				break
			}
			b.WriteString(s[:i])
			rest := s[i+len(prefix):]
			j := 0
			for j < len(rest) && isDigit(rest[j]) {
				j++
			}
			if strings.HasPrefix(rest[j:], f[2]) {
				j += len(f[2])
			}
			s = rest[j:]
		}
		b.WriteString(s)
		s = b.String()
	}
	return s
}

// clockedReader reads s to the HTML parse a little at a time, reading b's
// clock before each part: the parse ends (panics) when the render is out
// of time.
type clockedReader struct {
	s string
	b *budget
}

// clockedRead is how much the parse reads between two readings of the
// clock: a part of fostered text costs at most this many joins.
const clockedRead = 256

func (r *clockedReader) Read(p []byte) (int, error) {
	if len(r.s) == 0 {
		return 0, io.EOF
	}
	r.b.steps = checkEvery
	r.b.check()
	n := copy(p[:min(len(p), clockedRead)], r.s)
	r.s = r.s[n:]
	return n, nil
}
