package engine

import (
	"context"
	"html"

	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/wiki"
)

// Markup is a markup language's renderer, as the engine uses it: every
// read of a page's text (render, links, search text, sections,
// signatures) goes through the Markup of the text's content model
// (Engine.markupOf). *render.Renderer is Markdown's; wikitext's
// renderer has the same methods.
type Markup interface {
	// TitleRules are how links in the markup become titles.
	TitleRules() wiki.TitleRules
	// Version changes whenever the HTML made from the same source
	// changes: stored renders are keyed by it with the revision.
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

var _ Markup = (*render.Renderer)(nil)

// markupOf returns the Markup of model m: an empty model is Markdown (a
// revision read before models existed), and a model without a Markup
// (wikitext in a build that has no wikitext renderer) is read as plain
// text, so that its pages still show, as text.
func (e *Engine) markupOf(m wiki.ContentModel) Markup {
	if mk, ok := e.markups[m.Or(wiki.ModelMarkdown)]; ok {
		return mk
	}
	return plainMarkup{md: e.markups[wiki.ModelMarkdown]}
}

// HasMarkup reports whether the engine renders model m, rather than
// showing its pages as plain text.
func (e *Engine) HasMarkup(m wiki.ContentModel) bool {
	_, ok := e.markups[m.Or(wiki.ModelMarkdown)]
	return ok
}

// DefaultModel is the model of a page created without one
// (default_content_model).
func (e *Engine) DefaultModel() wiki.ContentModel { return e.defaultModel }

// modelOf is the model an edit of page cur saves its text in: the edit's
// own, else the page's (a deleted page's too), else the site default.
func (e *Engine) modelOf(ed wiki.ContentModel, cur wiki.Page, found bool) wiki.ContentModel {
	switch {
	case ed != "":
		return ed
	case found && cur.Model != "":
		return cur.Model
	}
	return e.defaultModel
}

// checkModel refuses a model that is not one of wiki.ContentModels.
func checkModel(m wiki.ContentModel) error {
	if m == "" || m.Valid() {
		return nil
	}
	return wiki.Errorf(wiki.KindInvalid, "the content model %.40q is not one this wiki knows; use %s", m, ModelNames())
}

// ModelNames lists the content models as text: "markdown or wikitext".
func ModelNames() string {
	s := ""
	for i, m := range wiki.ContentModels {
		switch {
		case i == len(wiki.ContentModels)-1 && i > 0:
			s += " or "
		case i > 0:
			s += ", "
		}
		s += string(m)
	}
	return s
}

// plainVersion is the Version of plainMarkup's renders: negative, apart
// from every renderer's, so that once the model's renderer is there none
// of them is read again.
const plainVersion = -1

// plainMarkup reads a text whose model has no renderer as plain text: its
// render is the text escaped in a <pre>, with no links but its redirect
// (#REDIRECT [[…]] is written alike in every model: md reads it), one
// section and no signatures expanded.
type plainMarkup struct{ md Markup }

func (p plainMarkup) TitleRules() wiki.TitleRules { return p.md.TitleRules() }
func (plainMarkup) Version() int                  { return plainVersion }

func (p plainMarkup) Links(src string) wiki.LinkSet {
	return wiki.LinkSet{Redirect: p.md.Links(src).Redirect}
}

func (p plainMarkup) Analyze(src string) (wiki.LinkSet, string) { return p.Links(src), src }
func (plainMarkup) PlainText(src string) string                 { return src }
func (plainMarkup) MarkSections(src, _ string) (string, error)  { return src, nil }
func (plainMarkup) WikiLinks(string) []wiki.Title               { return nil }

func (plainMarkup) RenderWith(_ context.Context, src string, _ render.Exists, _ render.Options) (render.Result, error) {
	return render.Result{HTML: "<pre>" + html.EscapeString(src) + "</pre>\n"}, nil
}

func (plainMarkup) Sections(src string) ([]render.Section, error) {
	return []render.Section{{Start: 0, End: len(src)}}, nil
}

func (plainMarkup) ExpandTildes(src string, _ func(int) string) (string, error) { return src, nil }
