package engine

import (
	"context"
	"errors"

	"github.com/wikid/wikid/internal/markup/template"
	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/wiki"
)

// Templates are expanded in a page's text before it is parsed: rendering,
// the link rows and the search entry all see the expanded text. The pages
// transcluded are recorded as the page's template rows (LinkSet.Templates),
// so that an edit of one of them reaches every page using it
// (runTransclusions).

// expand expands the templates in text, the source of page t in model m:
// the expanded text, the pages it transcluded and its DEFAULTSORT. A text
// without "{{" is returned as it is, without a look-up, and so is the
// text of a model without a renderer (shown as plain text, markup.go).
//
// A template's text is inserted as it is, whatever its own model: a
// wikitext Template: page transcluded into a Markdown page is read as
// Markdown there, and the other way round, as MediaWiki inserts a
// template's text into the page without converting it.
func (e *Engine) expand(ctx context.Context, t wiki.Title, text string, m wiki.ContentModel) (template.Result, error) {
	if !template.Has(text) || !e.HasMarkup(m) {
		return template.Result{Text: text}, nil
	}
	page := template.Page{Title: t, SiteName: e.siteName, Rules: e.TitleRules()}
	// The page's model picks the preprocessor: wikitext keeps
	// MediaWiki's literal elements (<nowiki>, <pre>) and reads backticks
	// as text.
	page.Wikitext = m == wiki.ModelWikitext
	return template.Expand(ctx, text, page, e.loadTemplate, render.IsMacro, template.Limits{})
}

// plainText is the text of page t's source src, in model m, as readers
// see it, for its search entry: expanded, then without markup. A template
// that cannot be loaded leaves its call as written.
func (e *Engine) plainText(ctx context.Context, t wiki.Title, src string, m wiki.ContentModel) string {
	if res, err := e.expand(ctx, t, src, m); err == nil {
		src = res.Text
	}
	return e.markupOf(m).PlainText(src)
}

// loadTemplate returns the latest text of the live page t.
func (e *Engine) loadTemplate(ctx context.Context, t wiki.Title) (string, bool, error) {
	if t.IsSpecial() {
		return "", false, nil
	}
	p, err := e.store.FindPage(ctx, t)
	if errors.Is(err, wiki.ErrNotFound) {
		return "", false, nil
	}
	if err != nil || p.Deleted {
		return "", false, err
	}
	rev, err := e.store.FindRevision(ctx, p.LatestID)
	if errors.Is(err, wiki.ErrNotFound) {
		return "", false, nil // deleted meanwhile
	}
	if err != nil {
		return "", false, err
	}
	return rev.Text, true, nil
}

// CountTransclusions is how many pages an edit of t refreshes: the live
// pages that transclude it.
func (e *Engine) CountTransclusions(ctx context.Context, t wiki.Title) (int, error) {
	return e.store.CountTransclusions(ctx, t)
}
