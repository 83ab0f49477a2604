package wikitext

import (
	"context"

	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/wiki"
)

// markup is what the engine asks of a page's renderer: the Markdown
// renderer and this one both provide it.
type markup interface {
	TitleRules() wiki.TitleRules
	Version() int
	Links(src string) wiki.LinkSet
	RenderWith(ctx context.Context, src string, exists render.Exists, o render.Options) (render.Result, error)
	Analyze(src string) (wiki.LinkSet, string)
	PlainText(src string) string
	Sections(src string) ([]render.Section, error)
	MarkSections(src, nonce string) (string, error)
	ExpandTildes(src string, sig func(n int) string) (string, error)
	WikiLinks(src string) []wiki.Title
}

var (
	_ markup = (*Renderer)(nil)
	_ markup = (*render.Renderer)(nil)
)
