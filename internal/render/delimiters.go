package render

import (
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Emphasis and strikethrough delimiters are matched here, not by goldmark's
// parser.ProcessDelimiters: for every closer it walks back over every
// earlier delimiter, so "*a_ *a_ …" or "a**b c* c* …" (closers that find no
// opener, kept because they might still match) take quadratic time, hours
// for a 2 MB page. processDelimiters is the same algorithm with CommonMark's
// openers_bottom: once a closer of some class found no opener, later closers
// of that class do not search below it again. The matches are goldmark's.
//
// The delimiters live in a list of Wikid's own (delimiterList, in the parse
// context), never in goldmark's: goldmark processes its list at the end of
// every block, before any extension could, so a delimiter left there would
// be matched the slow way. The inline parsers of links and images
// (links.go) call processDelimiters when a link closes, and the list's
// CloseBlock at the end of each block.

var delimiterListKey = parser.NewContextKey()

// delimiterList is the block's pending delimiters, linked through their
// PreviousDelimiter and NextDelimiter fields.
type delimiterList struct {
	first, last *parser.Delimiter
}

func delimiters(pc parser.Context) *delimiterList {
	if l, ok := pc.Get(delimiterListKey).(*delimiterList); ok {
		return l
	}
	l := &delimiterList{}
	pc.Set(delimiterListKey, l)
	return l
}

// pushDelimiter is parser.Context.PushDelimiter for Wikid's list: inline
// parsers of delimiter runs call it instead.
func pushDelimiter(pc parser.Context, d *parser.Delimiter) {
	l := delimiters(pc)
	if l.last == nil {
		l.first, l.last = d, d
		return
	}
	d.PreviousDelimiter = l.last
	l.last.NextDelimiter = d
	l.last = d
}

// lastDelimiter is the newest pending delimiter (nil: none), the bottom a
// link opener records.
func lastDelimiter(pc parser.Context) *parser.Delimiter { return delimiters(pc).last }

// remove takes d off the list; what is left of its run becomes text.
func (l *delimiterList) remove(d *parser.Delimiter) {
	if d.PreviousDelimiter == nil {
		l.first = d.NextDelimiter
	} else {
		d.PreviousDelimiter.NextDelimiter = d.NextDelimiter
	}
	if d.NextDelimiter == nil {
		l.last = d.PreviousDelimiter
	} else {
		d.NextDelimiter.PreviousDelimiter = d.PreviousDelimiter
	}
	d.NextDelimiter, d.PreviousDelimiter = nil, nil
	if d.Length != 0 {
		ast.MergeOrReplaceTextSegment(d.Parent(), d, d.Segment)
	} else {
		d.Parent().RemoveChild(d.Parent(), d)
	}
}

// delimiterClass is what decides which openers a closer can use: the
// character, the closer's length (modulo 3 for emphasis, whose rule of 3
// looks at nothing else) and whether the closer can also open. Two closers
// of one class accept exactly the same openers, so a search that failed for
// one need not be repeated below the same point for the other.
type delimiterClass struct {
	char    byte
	length  int
	canOpen bool
}

func classOf(d *parser.Delimiter) delimiterClass {
	n := d.OriginalLength
	if d.Char == '*' || d.Char == '_' {
		n %= 3
	}
	return delimiterClass{d.Char, n, d.CanOpen}
}

// processDelimiters matches the delimiters above bottom (all when nil) as
// goldmark's ProcessDelimiters does, then turns the unmatched ones to text.
func processDelimiters(bottom *parser.Delimiter, pc parser.Context) {
	l := delimiters(pc)
	if l.last == nil {
		return
	}
	closer := l.first
	if bottom != nil {
		closer = bottom.NextDelimiter
	}
	// openersBottom[k]: no opener at or before this source position
	// matches a closer of class k. (A position, not a delimiter: the
	// delimiter there may be removed meanwhile, the bound still holds.)
	var openersBottom map[delimiterClass]int
	for closer != nil {
		check(pc)
		if !closer.CanClose {
			closer = closer.NextDelimiter
			continue
		}
		class := classOf(closer)
		floor, bounded := openersBottom[class]
		consume := 0
		found, maybeOpener := false, false
		var opener *parser.Delimiter
		for opener = closer.PreviousDelimiter; opener != nil && opener != bottom; opener = opener.PreviousDelimiter {
			if bounded && opener.Segment.Start <= floor {
				break
			}
			if opener.CanOpen && opener.Processor.CanOpenCloser(opener, closer) {
				maybeOpener = true
				if consume = opener.CalcComsumption(closer); consume > 0 {
					found = true
					break
				}
			}
		}
		if !found {
			if openersBottom == nil {
				openersBottom = map[delimiterClass]int{}
			}
			openersBottom[class] = -1
			if p := closer.PreviousDelimiter; p != nil {
				openersBottom[class] = p.Segment.Start
			}
			next := closer.NextDelimiter
			if !maybeOpener && !closer.CanOpen {
				l.remove(closer)
			}
			closer = next
			continue
		}
		opener.ConsumeCharacters(consume)
		closer.ConsumeCharacters(consume)

		node := opener.Processor.OnMatch(consume)
		node.(interface{ SetPos(int) }).SetPos(opener.Segment.Start)
		parent := opener.Parent()
		for child := opener.NextSibling(); child != nil && child != closer; {
			next := child.NextSibling()
			node.AppendChild(node, child)
			child = next
		}
		parent.InsertAfter(parent, opener, node)
		for d := opener.NextDelimiter; d != nil && d != closer; {
			next := d.NextDelimiter
			l.remove(d)
			d = next
		}
		if opener.Length == 0 {
			l.remove(opener)
		}
		if closer.Length == 0 {
			next := closer.NextDelimiter
			l.remove(closer)
			closer = next
		}
	}
	for d := l.last; d != nil && d != bottom; {
		prev := d.PreviousDelimiter
		l.remove(d)
		d = prev
	}
}

// emphasisParser is goldmark's emphasis parser, pushing to Wikid's list.
type emphasisParser struct{}

func (emphasisParser) Trigger() []byte { return []byte{'*', '_'} }

func (emphasisParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	before := block.PrecendingCharacter()
	line, segment := block.PeekLine()
	d := parser.ScanDelimiter(line, before, 1, emphasisDelimiters{})
	if d == nil {
		return nil
	}
	d.Segment = segment.WithStop(segment.Start + d.OriginalLength)
	block.Advance(d.OriginalLength)
	pushDelimiter(pc, d)
	return d
}

type emphasisDelimiters struct{}

func (emphasisDelimiters) IsDelimiter(b byte) bool { return b == '*' || b == '_' }
func (emphasisDelimiters) CanOpenCloser(opener, closer *parser.Delimiter) bool {
	return opener.Char == closer.Char
}
func (emphasisDelimiters) OnMatch(consumes int) ast.Node { return ast.NewEmphasis(consumes) }

// strikethrough is GFM's strikethrough (~a~ or ~~a~~), its delimiters
// pushed to Wikid's list, with the spec's rule that the two runs of tildes
// match: goldmark's own extension pairs "~a~~" into a struck "a" followed by
// a tilde, where GFM leaves the text alone. A run of three or more tildes is
// text.
type strikethrough struct{}

func (strikethrough) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(parser.WithInlineParsers(util.Prioritized(strikethroughParser{}, 500)))
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(extension.NewStrikethroughHTMLRenderer(), 500)))
}

type strikethroughParser struct{}

func (strikethroughParser) Trigger() []byte { return []byte{'~'} }

func (strikethroughParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	before := block.PrecendingCharacter()
	line, segment := block.PeekLine()
	d := parser.ScanDelimiter(line, before, 1, tildes{})
	if d == nil || d.OriginalLength > 2 || before == '~' {
		return nil
	}
	d.Segment = segment.WithStop(segment.Start + d.OriginalLength)
	block.Advance(d.OriginalLength)
	pushDelimiter(pc, d)
	return d
}

// tildes is the delimiter processor for runs of one or two tildes; the
// closer's length is part of its delimiterClass, so openers_bottom holds.
type tildes struct{}

func (tildes) IsDelimiter(b byte) bool { return b == '~' }
func (tildes) CanOpenCloser(opener, closer *parser.Delimiter) bool {
	return opener.Char == closer.Char && opener.OriginalLength == closer.OriginalLength
}
func (tildes) OnMatch(int) ast.Node { return extast.NewStrikethrough() }
