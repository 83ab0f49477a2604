package app

import (
	"time"

	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/markup/wikitext"
	"github.com/wikid/wikid/internal/wiki"
)

// newWikitext is the wikitext renderer, with the wiki's title rules and
// render time limit, as Markdown's.
func newWikitext(cfg config.Config) *wikitext.Renderer {
	return wikitext.New(wikitext.WithTimeout(time.Duration(cfg.RenderTimeout)), wikitext.WithTitleRules(cfg.TitleRules()))
}

// markups are the renderers of the content models other than Markdown
// (whose renderer the engine gets as Options.Renderer). A model left out
// would show its pages as plain text.
func markups(wt *wikitext.Renderer) map[wiki.ContentModel]engine.Markup {
	return map[wiki.ContentModel]engine.Markup{wiki.ModelWikitext: wt}
}
