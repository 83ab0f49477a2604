package render

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// linkParser is goldmark's inline parser of links and images
// (parser/link.go, v1.8.7) with three changes that make it linear; the
// links it finds are goldmark's except where goldmark breaks the spec:
//
//   - "links may not contain links" is a counter of links made so far,
//     compared with its value when the opener was pushed. goldmark walks
//     every node after the opener at each "]", quadratic for "[[[[…]]]]"
//     (26 s for 2 MB).
//   - A destination in <…> ends at an unescaped "<" (the spec does not
//     allow one there; goldmark reads on to the end of the line at every
//     "](<", quadratic for "[a](<b[a](<b…").
//   - A bare destination may nest parentheses 32 deep (as cmark; the spec
//     lets implementations bound it): goldmark reads on to the end of the
//     line at every "](", quadratic for "[a](b[a](b…".
//
// Emphasis inside link text is matched by processDelimiters
// (delimiters.go), which also runs at the end of every block, from
// CloseBlock. The destination and title parsers are shared with link
// reference definitions (linkref.go).
type linkParser struct{}

var linkLabelsKey = parser.NewContextKey()

// linkLabel is an open "[" or "![": a node in the inline tree until its
// "]" comes (or the block ends), and an entry in the block's stack.
type linkLabel struct {
	ast.BaseInline
	Segment text.Segment
	IsImage bool
	bottom  *parser.Delimiter // the newest delimiter when it was pushed: emphasis inside starts above it
	links   int               // links made in the block before it was pushed
}

var kindLinkLabel = ast.NewNodeKind("LinkLabel")

func (s *linkLabel) Kind() ast.NodeKind { return kindLinkLabel }

func (s *linkLabel) Dump(source []byte, level int) {
	ast.DumpHelper(s, source, level, map[string]string{"Segment": string(s.Segment.Value(source))}, nil)
}

// linkLabels is the block's stack of open labels.
type linkLabels struct {
	stack []*linkLabel
	links int // links (not images) made so far in the block
}

func labels(pc parser.Context) *linkLabels {
	if l, ok := pc.Get(linkLabelsKey).(*linkLabels); ok {
		return l
	}
	l := &linkLabels{}
	pc.Set(linkLabelsKey, l)
	return l
}

// inLinkLabel reports whether the parser is inside a link's text: goldmark's
// parser.Context.IsInLinkLabel, which knows only goldmark's link parser.
func inLinkLabel(pc parser.Context) bool {
	l, ok := pc.Get(linkLabelsKey).(*linkLabels)
	return ok && len(l.stack) > 0
}

func (linkParser) Trigger() []byte { return []byte{'!', '[', ']'} }

func (p linkParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, segment := block.PeekLine()
	if line[0] == '!' {
		if len(line) > 1 && line[1] == '[' {
			block.Advance(1)
			return openLinkLabel(block, segment.Start+1, true, pc)
		}
		return nil
	}
	if line[0] == '[' {
		return openLinkLabel(block, segment.Start, false, pc)
	}

	// line[0] == ']'
	ls := labels(pc)
	if len(ls.stack) == 0 {
		return nil
	}
	last := ls.stack[len(ls.stack)-1]
	ls.stack = ls.stack[:len(ls.stack)-1]
	block.Advance(1)
	// goldmark measures from the oldest open label to the newest one still
	// open, a bound of its own on top of the spec's 999 characters.
	if len(ls.stack) > 1 && ls.stack[len(ls.stack)-1].Segment.Stop-ls.stack[0].Segment.Start > 998 {
		ast.MergeOrReplaceTextSegment(last.Parent(), last, last.Segment)
		return nil
	}
	if !last.IsImage && ls.links > last.links { // a link in a link text is not allowed
		ast.MergeOrReplaceTextSegment(last.Parent(), last, last.Segment)
		return nil
	}

	c := block.Peek()
	l, pos := block.Position()
	var link *ast.Link
	var hasValue bool
	switch c {
	case '(':
		link = p.parseLink(parent, last, block, pc)
	case '[':
		link, hasValue = p.parseReferenceLink(parent, last, block, pc)
		if link == nil && hasValue {
			ast.MergeOrReplaceTextSegment(last.Parent(), last, last.Segment)
			return nil
		}
	}

	if link == nil {
		// maybe a shortcut reference link
		block.SetPosition(l, pos)
		ssegment := text.NewSegment(last.Segment.Stop, segment.Start)
		// A link label can have at most 999 characters inside the brackets.
		maybeReference, ok := segmentValue(parent.Lines(), block.Source(), ssegment, 999)
		if !ok {
			ast.MergeOrReplaceTextSegment(last.Parent(), last, last.Segment)
			return nil
		}
		ref, ok := pc.Reference(util.ToLinkReference(maybeReference))
		if !ok {
			ast.MergeOrReplaceTextSegment(last.Parent(), last, last.Segment)
			return nil
		}
		link = ast.NewLink()
		p.processLinkLabel(parent, link, last, pc)
		link.Title = ref.Title()
		link.Destination = ref.Destination()
		link.Reference = ast.NewReferenceLink(ast.ReferenceLinkShortcut, maybeReference)
	}
	var n ast.Node = link
	if last.IsImage {
		n = ast.NewImage(link)
	} else {
		ls.links++
	}
	last.Parent().RemoveChild(last.Parent(), last)
	n.(interface{ SetPos(int) }).SetPos(last.Segment.Start)
	return n
}

func openLinkLabel(block text.Reader, pos int, isImage bool, pc parser.Context) *linkLabel {
	start := pos
	if isImage {
		start--
	}
	ls := labels(pc)
	l := &linkLabel{Segment: text.NewSegment(start, pos+1), IsImage: isImage, bottom: lastDelimiter(pc), links: ls.links}
	ls.stack = append(ls.stack, l)
	block.Advance(1)
	return l
}

// processLinkLabel matches the emphasis inside the link text and moves the
// text into link.
func (linkParser) processLinkLabel(parent ast.Node, link *ast.Link, last *linkLabel, pc parser.Context) {
	processDelimiters(last.bottom, pc)
	for c := last.NextSibling(); c != nil; {
		next := c.NextSibling()
		parent.RemoveChild(parent, c)
		link.AppendChild(link, c)
		c = next
	}
}

var linkFindClosureOptions = text.FindClosureOptions{
	Nesting: false,
	Newline: true,
	Advance: true,
}

func (p linkParser) parseReferenceLink(parent ast.Node, last *linkLabel, block text.Reader, pc parser.Context) (*ast.Link, bool) {
	_, orgpos := block.Position()
	block.Advance(1) // skip '['
	segments, found := block.FindClosure('[', ']', linkFindClosureOptions)
	if !found {
		return nil, false
	}
	maybeReference := segmentsValue(parent.Lines(), block.Source(), segments)
	refType := ast.ReferenceLinkFull
	if util.IsBlank(maybeReference) { // collapsed reference link
		s := text.NewSegment(last.Segment.Stop, orgpos.Start-1)
		var ok bool
		if maybeReference, ok = segmentValue(parent.Lines(), block.Source(), s, 999); !ok {
			return nil, true
		}
		refType = ast.ReferenceLinkCollapsed
	}
	// A link label can have at most 999 characters inside the brackets.
	if len(maybeReference) > 999 {
		return nil, true
	}
	ref, ok := pc.Reference(util.ToLinkReference(maybeReference))
	if !ok {
		return nil, true
	}
	link := ast.NewLink()
	p.processLinkLabel(parent, link, last, pc)
	link.Title = ref.Title()
	link.Destination = ref.Destination()
	link.Reference = ast.NewReferenceLink(refType, maybeReference)
	return link, true
}

func (p linkParser) parseLink(parent ast.Node, last *linkLabel, block text.Reader, pc parser.Context) *ast.Link {
	block.Advance(1) // skip '('
	block.SkipSpaces()
	var title []byte
	var destination []byte
	var ok bool
	if block.Peek() == ')' { // empty link like '[link]()'
		block.Advance(1)
	} else {
		destination, ok = parseLinkDestination(block)
		if !ok {
			return nil
		}
		block.SkipSpaces()
		if block.Peek() == ')' {
			block.Advance(1)
		} else {
			title, ok = parseLinkTitle(block, parent.Lines())
			if !ok {
				return nil
			}
			block.SkipSpaces()
			if block.Peek() == ')' {
				block.Advance(1)
			} else {
				return nil
			}
		}
	}
	link := ast.NewLink()
	p.processLinkLabel(parent, link, last, pc)
	link.Destination = destination
	link.Title = title
	return link
}

// maxDestinationParens is how deeply a bare link destination may nest
// parentheses (cmark's bound): each "](" can then read at most that many
// later "](" ahead, so that unclosed links stay linear.
const maxDestinationParens = 32

func parseLinkDestination(block text.Reader) ([]byte, bool) {
	block.SkipSpaces()
	line, _ := block.PeekLine()
	if block.Peek() == '<' {
		i := 1
		for i < len(line) {
			c := line[i]
			if c == '\\' && i < len(line)-1 && util.IsPunct(line[i+1]) {
				i += 2
				continue
			} else if c == '>' {
				block.Advance(i + 1)
				return line[1:i], true
			} else if c == '<' {
				return nil, false
			}
			i++
		}
		return nil, false
	}
	opened := 0
	i := 0
	for i < len(line) {
		c := line[i]
		if c == '\\' && i < len(line)-1 && util.IsPunct(line[i+1]) {
			i += 2
			continue
		} else if c == '(' {
			if opened++; opened > maxDestinationParens {
				return nil, false
			}
		} else if c == ')' {
			opened--
			if opened < 0 {
				break
			}
		} else if util.IsSpace(c) {
			break
		}
		i++
	}
	block.Advance(i)
	return line[:i], len(line[:i]) != 0
}

func parseLinkTitle(block text.Reader, lines *text.Segments) ([]byte, bool) {
	block.SkipSpaces()
	opener := block.Peek()
	if opener != '"' && opener != '\'' && opener != '(' {
		return nil, false
	}
	closer := opener
	if opener == '(' {
		closer = ')'
	}
	block.Advance(1)
	segments, found := block.FindClosure(opener, closer, linkFindClosureOptions)
	if !found {
		return nil, false
	}
	return segmentsValue(lines, block.Source(), segments), true
}

// CloseBlock ends the block's inline parse: emphasis first (goldmark
// matches it before calling any CloseBlock), then labels still open are text.
func (linkParser) CloseBlock(parent ast.Node, block text.Reader, pc parser.Context) {
	processDelimiters(nil, pc)
	ls, ok := pc.Get(linkLabelsKey).(*linkLabels)
	if !ok {
		return
	}
	for _, s := range ls.stack {
		s.Parent().ReplaceChild(s.Parent(), s, ast.NewTextSegment(s.Segment))
	}
	ls.stack, ls.links = ls.stack[:0], 0
}
