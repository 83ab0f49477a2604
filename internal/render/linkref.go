package render

import (
	"bytes"
	"sort"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// linkReferences is goldmark's link reference definition paragraph
// transformer (parser/link_ref.go, v1.8.7), linear: goldmark takes each
// definition out of the paragraph's lines by copying all the lines after
// it, so a paragraph of n definitions costs n² (minutes for 2 MB). Here
// the lines left are computed in one pass (removeLines); the definitions
// and the lines left are goldmark's.
type linkReferences struct{}

func (linkReferences) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	// Most paragraphs do not start with "[": no definition, no reader.
	// The parse below skips what util.IsSpace calls space, "\r" included,
	// across lines, so only a first line with something else decides.
	first := lines.At(0)
	if v := bytes.TrimLeft(first.Value(reader.Source()), " \t\r\n"); len(v) > 0 && v[0] != '[' {
		return
	}
	block := text.NewBlockReader(reader.Source(), lines)
	var removes [][2]int
	for {
		check(pc)
		ref, start, end := parseLinkReferenceDefinition(block, lines, pc)
		if start < 0 {
			break
		}
		if start == 0 {
			ref.SetBlankPreviousLines(node.HasBlankPreviousLines())
		}
		node.Parent().InsertBefore(node.Parent(), node, ref)
		for i := start + 1; i < end; i++ {
			ref.Lines().Append(lines.At(i))
		}
		seg := ref.Lines().At(ref.Lines().Len() - 1)
		ref.Lines().Set(ref.Lines().Len()-1, seg.TrimRightSpace(reader.Source()))
		if start == end {
			end++
		}
		removes = append(removes, [2]int{start, end})
	}
	if len(removes) == 0 {
		return
	}
	kept := removeLines(lines.Sliced(0, lines.Len()), removes)
	if len(kept) == 0 {
		node.Parent().RemoveChild(node.Parent(), node)
		return
	}
	node.SetLines(text.NewSegments())
	node.Lines().AppendAll(kept)
}

// removeLines returns what goldmark leaves of lines after taking out each
// removes[i] = [start, end) in turn: it reslices the lines after each
// definition, with line numbers shifted by the end of the previous one.
// (That shift is right only while no line between two definitions stays,
// which a title that never closes breaks: then goldmark drops other lines
// than the definitions'. This does the same, in linear time: the lines
// are kept as head ++ orig[tail:].)
func removeLines(orig []text.Segment, removes [][2]int) []text.Segment {
	var head []text.Segment
	tail, offset := 0, 0
	for _, rm := range removes {
		h := len(head)
		n := h + len(orig) - tail
		if n == 0 {
			break
		}
		a := min(max(rm[0]-offset, 0), n)
		b := min(max(rm[1]-offset, a), n)
		switch {
		case b <= h:
			head = append(head[:a], head[b:]...)
		case a <= h:
			head = head[:a]
			tail += b - h
		default:
			head = append(head, orig[tail:tail+a-h]...)
			tail += b - h
		}
		offset = rm[1]
	}
	return append(head, orig[tail:]...)
}

// reference is parser.Reference for a definition node (goldmark's is
// unexported).
type reference struct{ v *ast.LinkReferenceDefinition }

func (r reference) String() string      { return "Reference{" + string(r.v.Label) + "}" }
func (r reference) Label() []byte       { return r.v.Label }
func (r reference) Destination() []byte { return r.v.Destination }
func (r reference) Title() []byte       { return r.v.Title }

func parseLinkReferenceDefinition(block text.Reader, lines *text.Segments, pc parser.Context) (*ast.LinkReferenceDefinition, int, int) {
	block.SkipSpaces()
	line, _ := block.PeekLine()
	if line == nil {
		return nil, -1, -1
	}
	startLine, _ := block.Position()
	width, pos := util.IndentWidth(line, 0)
	if width > 3 {
		return nil, -1, -1
	}
	if width != 0 {
		pos++
	}
	if line[pos] != '[' {
		return nil, -1, -1
	}
	_, startPos := block.Position()
	block.Advance(pos + 1)
	segments, found := block.FindClosure('[', ']', linkFindClosureOptions)
	if !found {
		return nil, -1, -1
	}
	label := segmentsValue(lines, block.Source(), segments)
	if util.IsBlank(label) {
		return nil, -1, -1
	}
	if block.Peek() != ':' {
		return nil, -1, -1
	}
	block.Advance(1)
	block.SkipSpaces()
	destination, ok := parseLinkDestination(block)
	if !ok {
		return nil, -1, -1
	}
	line, _ = block.PeekLine()
	isNewLine := line == nil || util.IsBlank(line)

	endLine, _ := block.Position()
	_, spaces, _ := block.SkipSpaces()
	opener := block.Peek()
	if opener != '"' && opener != '\'' && opener != '(' {
		if !isNewLine {
			return nil, -1, -1
		}
		ref := ast.NewLinkReferenceDefinition(label, destination, nil)
		ref.Lines().Append(startPos)
		pc.AddReference(reference{ref})
		return ref, startLine, endLine + 1
	}
	if spaces == 0 {
		return nil, -1, -1
	}
	block.Advance(1)
	closer := opener
	if opener == '(' {
		closer = ')'
	}
	segments, found = block.FindClosure(opener, closer, linkFindClosureOptions)
	if !found {
		if !isNewLine {
			return nil, -1, -1
		}
		ref := ast.NewLinkReferenceDefinition(label, destination, nil)
		ref.Lines().Append(startPos)
		pc.AddReference(reference{ref})
		block.AdvanceLine()
		return ref, startLine, endLine + 1
	}
	title := segmentsValue(lines, block.Source(), segments)

	line, _ = block.PeekLine()
	if line != nil && !util.IsBlank(line) {
		if !isNewLine {
			return nil, -1, -1
		}
		ref := ast.NewLinkReferenceDefinition(label, destination, title)
		ref.Lines().Append(startPos)
		pc.AddReference(reference{ref})
		return ref, startLine, endLine
	}

	endLine, _ = block.Position()
	ref := ast.NewLinkReferenceDefinition(label, destination, title)
	ref.Lines().Append(startPos)
	pc.AddReference(reference{ref})
	return ref, startLine, endLine + 1
}

// segmentValue is text.BlockReader.Value(seg) for a block of these lines,
// or false when it would be longer than limit bytes (limit < 0: no limit).
// goldmark's Value finds seg's first line by scanning back from the block's
// last line, so n labels in an n-line paragraph cost n²; here a binary
// search finds it, and a value that fits in one line without padding is
// not copied.
func segmentValue(lines *text.Segments, source []byte, seg text.Segment, limit int) ([]byte, bool) {
	n := lines.Len()
	// The last line starting at or before seg.Start, as Value's scan finds.
	first := sort.Search(n, func(i int) bool { return lines.At(i).Start > seg.Start }) - 1
	if first < 0 {
		first = 0
	}
	if first < n {
		// One line: the bytes themselves. (When seg ends exactly where its
		// line does, Value also adds the next line's padding.)
		l := lines.At(first)
		if l.Padding == 0 && (seg.Stop < l.Stop || seg.Stop == l.Stop && (first+1 == n || lines.At(first+1).Padding == 0)) {
			if limit >= 0 && seg.Len() > limit {
				return nil, false
			}
			return source[seg.Start:seg.Stop], true
		}
	}
	size := 0
	for i, at := first, seg.Start; i < n; i++ {
		l := lines.At(i)
		if i > first {
			at = l.Start
		}
		size += l.Padding + max(min(seg.Stop, l.Stop)-at, 0)
		if limit >= 0 && size > limit {
			return nil, false
		}
		if l.Stop > seg.Stop {
			break
		}
	}
	ret := make([]byte, 0, size)
	for i, at := first, seg.Start; i < n; i++ {
		l := lines.At(i)
		if i > first {
			at = l.Start
		}
		ret = l.ConcatPadding(ret)
		if stop := min(seg.Stop, l.Stop); stop > at {
			ret = append(ret, source[at:stop]...)
		}
		if l.Stop > seg.Stop {
			break
		}
	}
	return ret, true
}

// segmentsValue is the text of segments (from FindClosure), each read as
// segmentValue reads it.
func segmentsValue(lines *text.Segments, source []byte, segments *text.Segments) []byte {
	if segments.Len() == 1 {
		v, _ := segmentValue(lines, source, segments.At(0), -1)
		return v
	}
	var v []byte
	for i := range segments.Len() {
		s, _ := segmentValue(lines, source, segments.At(i), -1)
		v = append(v, s...)
	}
	return v
}
