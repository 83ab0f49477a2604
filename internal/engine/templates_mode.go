package engine

import "github.com/wikid/wikid/internal/markup/template"

// wikitextMode sets page's preprocessor to wikitext's when on. The
// template package's wikitext mode (template.Page.Wikitext) is not in
// this build yet: once it is, this becomes
//
//	page.Wikitext = on
func wikitextMode(page *template.Page, on bool) { _, _ = page, on }
