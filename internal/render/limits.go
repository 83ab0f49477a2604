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
// wrapped by a depth check.
func limitedBlockParsers() []util.PrioritizedValue {
	ps := parser.DefaultBlockParsers()
	for i, p := range ps {
		if p.Priority == listPriority || p.Priority == blockquotePriority {
			ps[i].Value = depthLimited{p.Value.(parser.BlockParser)}
		}
	}
	return ps
}

// Priorities of the list and block quote parsers in parser.DefaultBlockParsers.
const (
	listPriority       = 300
	blockquotePriority = 800
)

type depthLimited struct{ parser.BlockParser }

func (d depthLimited) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	depth := 0
	for n := parent; n != nil; n = n.Parent() {
		if depth++; depth > maxDepth {
			return nil, parser.NoChildren
		}
	}
	return d.BlockParser.Open(parent, reader, pc)
}

// limitedTable is goldmark's GFM table transformer, refused for paragraphs
// whose table would be mostly padding. GFM pads short rows to the header's
// width, so "|a|a|…|" with thousands of columns followed by thousands of
// "|x" lines renders columns×rows cells from a few kilobytes of source.
// A real table has at most about one cell per byte of source.
type limitedTable struct{ parser.ParagraphTransformer }

func (t limitedTable) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
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
