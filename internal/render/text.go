package render

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/util"
)

// maxIDBytes bounds heading ids so that a huge heading does not produce a
// huge id (it appears three times in the output).
const maxIDBytes = 200

// plainText returns the text of an inline container as a reader sees it.
func plainText(n ast.Node, source []byte) string {
	var b strings.Builder
	appendText(&b, n, source)
	return strings.TrimSpace(b.String())
}

func appendText(b *strings.Builder, n ast.Node, source []byte) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			v := c.Value(source)
			if !c.IsRaw() {
				v = util.UnescapePunctuations(util.ResolveNumericReferences(util.ResolveEntityNames(v)))
			}
			b.Write(v)
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.AutoLink:
			b.Write(c.Label(source))
		case *ast.RawHTML:
		case *wikiLink:
			switch {
			case c.Invalid:
				b.WriteString(c.Raw)
			case !c.Category:
				b.WriteString(c.Label)
			}
		case *macro:
		case *fileEmbed:
			if c.media {
				b.WriteString(c.label)
			} else {
				appendText(b, c, source) // the caption
			}
		default:
			appendText(b, c, source)
		}
	}
}

// anchorID turns heading text or a link fragment into an id the way
// MediaWiki does: runs of white space and underscores become one
// underscore, the rest is kept. The id never starts or ends with an
// underscore and never holds two in a row: idSet and the footnotes use
// those forms for ids of their own, which no heading text can produce.
func anchorID(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || r == '_' {
			space = true
			continue
		}
		sep := space && b.Len() > 0
		n := utf8.RuneLen(r)
		if sep {
			n++
		}
		if b.Len()+n > maxIDBytes {
			break
		}
		if sep {
			b.WriteByte('_')
		}
		space = false
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "section"
	}
	return b.String()
}

// fragmentID is anchorID for the fragment of a link, which may name a
// repeated heading by its numbered id: "A__2" stays "A__2".
func fragmentID(f string) string {
	if i := strings.LastIndex(f, "__"); i > 0 && isOrdinal(f[i+2:]) {
		return anchorID(f[:i]) + f[i:]
	}
	return anchorID(f)
}

// isOrdinal reports whether s is a number from 2 up, as idSet writes them.
func isOrdinal(s string) bool {
	if len(s) == 0 || len(s) > 9 || s[0] == '0' || s == "1" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// idSet hands out heading ids: the first heading with a given base id gets
// the base, the n-th one base+"__n". Since anchorID never writes "__", no
// numbered id can equal another heading's base, so an id depends only on
// the heading's own text and on how many headings before it share that
// text: editing, adding or removing a heading with other text leaves it
// alone, and links to it keep working.
type idSet struct{ seen map[string]int }

func (s *idSet) unique(base string) string {
	if s.seen == nil {
		s.seen = map[string]int{}
	}
	n := s.seen[base] + 1
	s.seen[base] = n
	if n == 1 {
		return base
	}
	return base + "__" + strconv.Itoa(n)
}

type paraKind int

const (
	paraNormal     paraKind = iota
	paraEmpty               // only categories and white space: render nothing
	paraBlockMacro          // one block macro and white space: render the macro as a <div>
	// paraFiles: file embeds (one at least a thumbnail or floated),
	// categories and white space: render the embeds without a <p>, which
	// may not hold a <figure>.
	paraFiles
)

func paragraphKind(p ast.Node, source []byte) paraKind {
	macros, other, embeds, blocks := 0, false, 0, 0
	for c := p.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *wikiLink:
			if !c.Category || c.Invalid {
				return paraNormal
			}
		case *fileEmbed:
			if c.media {
				return paraNormal
			}
			embeds++
			if c.blockLevel() {
				blocks++
			}
		case *macro:
			if !c.spec.isBlock() {
				return paraNormal
			}
			macros++
		case *ast.Text:
			if len(strings.TrimSpace(string(c.Value(source)))) > 0 {
				return paraNormal
			}
		default:
			other = true
		}
	}
	switch {
	case other || macros > 1 || macros == 1 && embeds > 0 || embeds > 0 && blocks == 0:
		return paraNormal
	case blocks > 0:
		return paraFiles
	case macros == 1:
		return paraBlockMacro
	}
	return paraEmpty
}

func firstMacro(p *ast.Paragraph) *macro {
	for c := p.FirstChild(); c != nil; c = c.NextSibling() {
		if m, ok := c.(*macro); ok {
			return m
		}
	}
	return nil
}

// trimHeadingEnd removes the spaces and tabs that end heading h's text
// (CommonMark strips them): goldmark trims a line's last text segment
// only if a line break follows it, and how many segments a line has
// depends on where inline parsers ran (linkify at every space, or not).
func trimHeadingEnd(h *ast.Heading, source []byte) {
	for t := h.LastChild(); t != nil; t = t.PreviousSibling() {
		text, ok := t.(*ast.Text)
		if !ok || text.IsRaw() {
			return
		}
		text.Segment = text.Segment.TrimRightSpace(source)
		if text.Segment.Len() > 0 {
			return
		}
	}
}

// trimBeforeBreak removes the spaces and tabs before a line break that
// ends n: they are not part of the text (CommonMark, "Hard line breaks"
// and "Soft line breaks"). goldmark trims the last text segment of a line
// only, and the line is cut into several segments wherever an inline
// parser was tried, at every space for linkify: "aaa     \n" kept "aaa ".
// A break written with a backslash keeps what stands before it.
func trimBeforeBreak(n *ast.Text, source []byte) {
	if !n.HardLineBreak() && !n.SoftLineBreak() || n.IsRaw() {
		return
	}
	if stop := n.Segment.Stop; stop < len(source) && source[stop] == '\\' {
		return
	}
	var t ast.Node = n
	for {
		text, ok := t.(*ast.Text)
		if !ok || text.IsRaw() || text != n && (text.HardLineBreak() || text.SoftLineBreak()) {
			return
		}
		text.Segment = text.Segment.TrimRightSpace(source)
		if text.Segment.Len() > 0 {
			return
		}
		t = text.PreviousSibling()
	}
}
