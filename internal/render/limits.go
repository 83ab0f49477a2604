package render

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
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
