package render

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// codeSpanParser is goldmark's code span parser (parser/code_span.go,
// v1.8.7) with cmark's memo: goldmark looks for the closing run of
// backticks up to the end of the block at every opener, adding a node for
// each line it passes, so openers of many lengths that never close
// ("e`e“e```…", one a line) take n^1.5 time and allocate as much (3 s for
// 2 MB). Here the first opener of a block notes where the last run of each
// length starts; an opener with no run of its length after it is text at
// once, and one with such a run finds it, as goldmark does.
type codeSpanParser struct{}

var backtickRunsKey = parser.NewContextKey()

// backtickRuns is the memo of one block: last[n] is the start of the last
// run of n backticks at or after from.
type backtickRuns struct {
	block ast.Node
	from  int
	last  map[int]int
}

func (codeSpanParser) Trigger() []byte { return []byte{'`'} }

func (codeSpanParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, startSegment := block.PeekLine()
	opener := 0
	for ; opener < len(line) && line[opener] == '`'; opener++ {
	}
	block.Advance(opener)
	if runs := backtickRunsOf(parent, block, pc, startSegment.Start); runs.last[opener] <= startSegment.Start {
		return returnText(pc, startSegment.WithStop(startSegment.Start+opener))
	}
	l, pos := block.Position()
	node := ast.NewCodeSpan()
	for {
		line, segment := block.PeekLine()
		if line == nil {
			block.SetPosition(l, pos)
			return returnText(pc, startSegment.WithStop(startSegment.Start+opener))
		}
		for i := 0; i < len(line); i++ {
			c := line[i]
			if c == '`' {
				oldi := i
				for ; i < len(line) && line[i] == '`'; i++ {
				}
				closure := i - oldi
				if closure == opener && (i >= len(line) || line[i] != '`') {
					segment = segment.WithStop(segment.Start + i - closure)
					if !segment.IsEmpty() {
						node.AppendChild(node, ast.NewRawTextSegment(segment))
					}
					block.Advance(i)
					goto end
				}
			}
		}
		node.AppendChild(node, ast.NewRawTextSegment(segment))
		block.AdvanceLine()
	}
end:
	if !node.IsBlank(block.Source()) {
		// trim first halfspace and last halfspace
		segment := node.FirstChild().(*ast.Text).Segment
		shouldTrimmed := true
		if !(!segment.IsEmpty() && isSpaceOrNewline(block.Source()[segment.Start])) {
			shouldTrimmed = false
		}
		segment = node.LastChild().(*ast.Text).Segment
		if !(!segment.IsEmpty() && isSpaceOrNewline(block.Source()[segment.Stop-1])) {
			shouldTrimmed = false
		}
		if shouldTrimmed {
			t := node.FirstChild().(*ast.Text)
			segment := t.Segment
			t.Segment = segment.WithStart(segment.Start + 1)
			t = node.LastChild().(*ast.Text)
			segment = node.LastChild().(*ast.Text).Segment
			t.Segment = segment.WithStop(segment.Stop - 1)
		}
	}
	return node
}

// backtickRunsOf returns the memo for parent's block, made on its first
// opener (at from, already read past): the runs goldmark's scan would see
// from there, line by line, to the end of the block.
func backtickRunsOf(parent ast.Node, block text.Reader, pc parser.Context, from int) *backtickRuns {
	if r, ok := pc.Get(backtickRunsKey).(*backtickRuns); ok && r.block == parent && r.from <= from {
		return r
	}
	r := &backtickRuns{block: parent, from: from, last: map[int]int{}}
	source := block.Source()
	lines := parent.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		if seg.Stop <= from {
			continue
		}
		start := max(seg.Start, from)
		for j := start; j < seg.Stop; {
			if source[j] != '`' {
				j++
				continue
			}
			k := j
			for k < seg.Stop && source[k] == '`' {
				k++
			}
			r.last[k-j] = j
			j = k
		}
	}
	pc.Set(backtickRunsKey, r)
	return r
}

func isSpaceOrNewline(c byte) bool {
	return c == ' ' || c == '\n'
}
