package render

import (
	"bytes"
	"context"
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/util"

	"github.com/wikid/wikid/internal/wiki"
)

// Sections are numbered as MediaWiki numbers them: the headings of the
// page's own text, in document order, from 1; section 0 is the text before
// the first heading. A section runs from its heading's line to the next
// heading of the same or a higher level. Only headings at the top level of
// the document count (not those in lists, quotes or footnotes), and only
// what the Markdown parser takes for a heading: "## x" in a code block is
// code.

// Section is one section of a page's source.
type Section struct {
	Index   int    // 0 for the text before the first heading
	Level   int    // 1–6; 0 for section 0
	Heading string // the heading's plain text; "" for section 0
	// Start and End are the section's byte offsets in the source: Start
	// is the start of the heading's first line.
	Start, End int
	// mark is where MarkSections puts the heading's mark, and atx whether
	// it is an ATX heading ("## x"; else a setext heading).
	mark int
	atx  bool
}

// Sections returns the sections of src: element i is section i, element 0
// the text before the first heading (possibly empty). A source too large
// to parse within the render time limit is an error.
func (r *Renderer) Sections(src string) (secs []Section, err error) {
	defer func() {
		if v := recover(); v != nil {
			if v != errTimeout {
				panic(v)
			}
			secs, err = nil, wiki.Errorf(wiki.KindTooLarge, "the page is too large or complex to find its sections in time; edit the whole page instead")
		}
	}()
	b, done := r.budget(context.Background())
	defer done()
	source, doc, _ := r.parse(src, b)
	off := len(src) - len(source) // a #REDIRECT line parse strips
	secs = []Section{{Index: 0}}
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		h, ok := n.(*ast.Heading)
		if !ok {
			continue
		}
		s := Section{Index: len(secs), Level: h.Level, Heading: plainText(h, source)}
		pos := h.Pos()
		if pos >= 0 && pos < len(source) && source[pos] == '#' {
			s.atx = true
			s.mark = pos + h.Level
		} else if h.Lines().Len() > 0 {
			s.mark = h.Lines().At(0).Start
			pos = s.mark
		} else {
			continue // not reached: a setext heading has text
		}
		s.Start = bytes.LastIndexByte(source[:pos], '\n') + 1 + off
		s.mark += off
		secs = append(secs, s)
	}
	SetSectionEnds(secs, len(src), func(s *Section) *Section { return s })
	return secs, nil
}

// SetSectionEnds sets the End of each of secs (section 0 first, then the
// headings in order, their Start and Level set; sec gives an element's
// Section), in a source of n bytes: section 0 ends where the first
// heading starts, a heading's section where the next heading of the same
// or a higher level starts, or at n. One pass with a stack of the
// sections still open, whatever the headings' shape.
func SetSectionEnds[S any](secs []S, n int, sec func(*S) *Section) {
	at := func(i int) *Section { return sec(&secs[i]) }
	at(0).End = n
	if len(secs) > 1 {
		at(0).End = at(1).Start
	}
	var open []int
	for i := 1; i < len(secs); i++ {
		for len(open) > 0 && at(open[len(open)-1]).Level >= at(i).Level {
			at(open[len(open)-1]).End = at(i).Start
			open = open[:len(open)-1]
		}
		open = append(open, i)
	}
	for _, i := range open {
		at(i).End = n
	}
}

// Section marks: MarkSections writes one at the start of each section
// heading's text before templates are expanded, so that after expansion
// the renderer knows which headings are the page's own sections (and
// which) and which a template wrote. A mark is private-use characters
// around a nonce and the section number: no Markdown syntax, so it
// changes no parse, and unguessable by the nonce, so that no template can
// write one.
const (
	markOpen  = "\uE000"
	markSep   = "\uE001"
	markClose = "\uE002"
)

// MarkSections returns src with the mark of nonce (letters and digits) on
// each section heading (see Sections).
func (r *Renderer) MarkSections(src, nonce string) (string, error) {
	secs, err := r.Sections(src)
	if err != nil {
		return "", err
	}
	if len(secs) == 1 {
		return src, nil
	}
	var b strings.Builder
	b.Grow(len(src) + (len(secs)-1)*(len(nonce)+16))
	last := 0
	for _, s := range secs[1:] {
		b.WriteString(src[last:s.mark])
		if s.atx {
			// After the opening run of '#': "## x" becomes "## M x", and an
			// empty "##" stays a heading.
			b.WriteByte(' ')
		}
		b.WriteString(markOpen + nonce + markSep + strconv.Itoa(s.Index) + markClose)
		last = s.mark
	}
	b.WriteString(src[last:])
	return b.String(), nil
}

// takeMark removes a section mark of nonce from the start of heading h's
// text and returns its section number, or 0 when h has none.
func takeMark(h *ast.Heading, source []byte, nonce string) int {
	t, ok := h.FirstChild().(*ast.Text)
	if !ok {
		return 0
	}
	v := t.Segment.Value(source)
	prefix := markOpen + nonce + markSep
	if !bytes.HasPrefix(v, []byte(prefix)) {
		return 0
	}
	rest := v[len(prefix):]
	end := bytes.Index(rest, []byte(markClose))
	if end <= 0 {
		return 0
	}
	n, err := strconv.Atoi(string(rest[:end]))
	if err != nil || n <= 0 {
		return 0
	}
	t.Segment.Start += len(prefix) + end + len(markClose)
	// The white space after an ATX heading's mark: the text starts after it.
	for c := ast.Node(t); c != nil; {
		t, ok := c.(*ast.Text)
		if !ok {
			break
		}
		for t.Segment.Start < t.Segment.Stop && util.IsSpace(source[t.Segment.Start]) {
			t.Segment.Start++
		}
		next := c.NextSibling()
		if t.Segment.Start < t.Segment.Stop || t.SoftLineBreak() || t.HardLineBreak() {
			break
		}
		h.RemoveChild(h, t)
		c = next
	}
	return n
}

// SectionEditURL is the address of the form that edits section n of page t.
func SectionEditURL(t wiki.Title, n int) string {
	return t.URL() + "?action=edit&section=" + strconv.Itoa(n)
}

// editSectionAttr is the node attribute under which walker leaves a
// heading's edit link (an editSection) for renderHeading.
const editSectionAttr = "wikid-editsection"

type editSection struct{ href, heading string }

// writeEditSection writes a heading's edit link, as MediaWiki's.
func writeEditSection(w util.BufWriter, e editSection) {
	_, _ = w.WriteString(` <span class="mw-editsection">`)
	var title bytes.Buffer
	_, _ = title.WriteString(` title="`)
	canonEscapeString(bufWriter{&title}, "Edit section: "+e.heading)
	_ = title.WriteByte('"')
	writeAnchor(w, "", e.href, title.String(), false)
	_, _ = w.WriteString(`edit</a></span>`)
}

// StripEditLinks returns html, a render's HTML, without its section edit
// links: for showing a render as an old revision's, whose sections are not
// those the links edit.
func StripEditLinks(html string) string {
	const open, end = ` <span class="mw-editsection"><a href="`, `">edit</a></span>`
	i := strings.Index(html, open)
	if i < 0 {
		return html
	}
	var b strings.Builder
	b.Grow(len(html))
	for i >= 0 {
		j := strings.Index(html[i:], end)
		if j < 0 {
			break
		}
		b.WriteString(html[:i])
		html = html[i+j+len(end):]
		i = strings.Index(html, open)
	}
	b.WriteString(html)
	return b.String()
}
