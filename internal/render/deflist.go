package render

import (
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// definitionList is PHP Markdown Extra's definition lists (a term, then
// lines starting with ": " that define it): goldmark's parsers under the
// nesting bound, and goldmark's renderer, whose bare <dl>, <dt> and <dd>
// tags are already in canonical form.
type definitionList struct{}

func (definitionList) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(parser.WithBlockParsers(
		util.Prioritized(depthLimited{extension.NewDefinitionListParser()}, 101),
		util.Prioritized(depthLimited{extension.NewDefinitionDescriptionParser()}, 102),
	))
	m.Renderer().AddOptions(renderer.WithNodeRenderers(
		util.Prioritized(extension.NewDefinitionListHTMLRenderer(), 500)))
}
