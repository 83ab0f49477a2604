package render

import (
	"bytes"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// maxDepth bounds the nesting of lists and block quotes. goldmark visits
// every open block on every line, so without a bound 10,000 nested lists
// followed by many lines take quadratic time. Deeper markers stay text.
const maxDepth = 32

// limitedBlockParsers is goldmark's default set with the container parsers
// wrapped by a depth check, and lists by a bound on blank lines.
func limitedBlockParsers() []util.PrioritizedValue {
	ps := parser.DefaultBlockParsers()
	for i, p := range ps {
		switch p.Priority {
		case listPriority:
			ps[i].Value = blankLimited{depthLimited{p.Value.(parser.BlockParser)}}
		case listItemPriority:
			ps[i].Value = blankLimited{p.Value.(parser.BlockParser)}
		case blockquotePriority:
			ps[i].Value = depthLimited{p.Value.(parser.BlockParser)}
		}
	}
	return ps
}

// Priorities of the container parsers in parser.DefaultBlockParsers.
const (
	listPriority       = 300
	listItemPriority   = 400
	blockquotePriority = 800
)

type depthLimited struct{ parser.BlockParser }

func (d depthLimited) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	check(pc)
	depth := 0
	for n := parent; n != nil; n = n.Parent() {
		if depth++; depth > maxDepth {
			return nil, parser.NoChildren
		}
	}
	return d.BlockParser.Open(parent, reader, pc)
}

// linearInlineParsers is goldmark's default set with the code span, link
// and emphasis parsers replaced by Wikid's linear ones (codespan.go,
// links.go, delimiters.go).
func linearInlineParsers() []util.PrioritizedValue {
	ps := parser.DefaultInlineParsers()
	for i, p := range ps {
		switch p.Priority {
		case codeSpanPriority:
			ps[i].Value = codeSpanParser{}
		case linkPriority:
			ps[i].Value = linkParser{}
		case emphasisPriority:
			ps[i].Value = emphasisParser{}
		}
	}
	return ps
}

// Priorities of the code span, link and emphasis parsers in
// parser.DefaultInlineParsers and of the link reference definitions in parser.DefaultParagraphTransformers.
const (
	codeSpanPriority      = 100
	linkPriority          = 200
	emphasisPriority      = 500
	linkReferencePriority = 100
)

// maxBlankWork bounds how long lists stay open over blank lines. goldmark
// notes, for every line, each open block it continues, and forgets the
// notes only when the top-level block ends: a list 16 deep followed by a
// million blank lines (1 byte each) made 32 million notes, 4.5 GB. Here a
// container that is the d-th open list or item on a run of r blank lines
// closes when r·d exceeds maxBlankWork, so a run costs at most a few
// thousand notes. Only text that continues a list item after that many
// blank lines (512 at the top level, 32 at depth 32) renders differently:
// after the list instead of inside it.
const maxBlankWork = 1024

var blankRunKey = parser.NewContextKey()

// blankRun is the run of blank lines the current line belongs to.
type blankRun struct {
	line      int // the line last seen
	lastBlank int // the last blank line seen
	run       int // blank lines in a row up to line (0: line is not blank)
	depth     int // containers asked about line so far
}

type blankLimited struct{ parser.BlockParser }

func (b blankLimited) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	check(pc)
	r, _ := pc.Get(blankRunKey).(*blankRun)
	if r == nil {
		r = &blankRun{line: -1, lastBlank: -2}
		pc.Set(blankRunKey, r)
	}
	if n, _ := reader.Position(); n != r.line {
		r.line, r.depth = n, 0
		if line, _ := reader.PeekLine(); util.IsBlank(line) {
			if n == r.lastBlank+1 {
				r.run++
			} else {
				r.run = 1
			}
			r.lastBlank = n
		} else {
			r.run = 0
		}
	}
	r.depth++
	if r.run*r.depth > maxBlankWork {
		return parser.Close
	}
	return b.BlockParser.Continue(node, reader, pc)
}

// limitedTable is goldmark's GFM table transformer, refused for paragraphs
// whose table would be mostly padding. GFM pads short rows to the header's
// width, so "|a|a|…|" with thousands of columns followed by thousands of
// "|x" lines renders columns×rows cells from a few kilobytes of source.
// A real table has at most about one cell per byte of source.
type limitedTable struct{ parser.ParagraphTransformer }

func (t limitedTable) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	check(pc)
	lines := node.Lines()
	source := reader.Source()
	width, size := 0, 0
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		v := seg.Value(source)
		size += len(v)
		width = max(width, bytes.Count(v, []byte("|"))+1)
	}
	if width*lines.Len() > 2*size+1024 {
		return
	}
	t.ParagraphTransformer.Transform(node, reader, pc)
}

// table registers the GFM table extension with limitedTable.
type table struct{}

func (table) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(
		parser.WithParagraphTransformers(util.Prioritized(limitedTable{wikiLinkCells{extension.NewTableParagraphTransformer()}}, 200)),
		parser.WithASTTransformers(util.Prioritized(extension.NewTableASTTransformer(), 0)),
	)
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(
		extension.NewTableHTMLRenderer(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)), 500)))
}
