package app

import (
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/wiki"
)

// markups are the renderers of the content models other than Markdown
// (whose renderer the engine gets as Options.Renderer), with the wiki's
// title rules and render time limit, as Markdown's. A model left out
// shows its pages as plain text.
//
// The wikitext renderer (internal/markup/wikitext) is not in this build
// yet; once it is, the map gets its line:
//
//	wiki.ModelWikitext: wikitext.New(wikitext.WithTimeout(time.Duration(cfg.RenderTimeout)), wikitext.WithTitleRules(cfg.TitleRules())),
func markups(cfg config.Config) map[wiki.ContentModel]engine.Markup {
	_ = cfg
	return map[wiki.ContentModel]engine.Markup{}
}

// wikitextToMarkdown converts a wikitext page's text for a change of its
// model to Markdown (engine.Options.WikitextToMarkdown); nil offers the
// text unconverted. Once internal/markup/wikitext is in this build it is
// wikitext.ToMarkdown.
var wikitextToMarkdown func(src string) (string, error)
