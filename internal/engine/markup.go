package engine

import (
	"context"
	"errors"
	"fmt"
	"html"
	"strings"

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

// Markup is the renderer of model m, for a reader of a revision's links
// or sections outside the engine (the Action API); a model without one
// reads as plain text.
func (e *Engine) Markup(m wiki.ContentModel) Markup { return e.markupOf(m) }

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

// ModelChange is a change of a page's content model
// (?action=editmodel): its text in the new model, reviewed by the
// editor, saved as one revision.
type ModelChange struct {
	Title wiki.Title
	Model wiki.ContentModel // the new model
	// Text is the page's text in Model (ConvertText's, as the editor left
	// it).
	Text string
	// Summary defaults to "Changed content model from wikitext to
	// Markdown".
	Summary string
	// BaseRevID is the revision the conversion was made from: the change
	// is refused when the page was edited since (a text in another model
	// cannot be merged).
	BaseRevID int64
	Editor    Editor
}

// ModelSummary is the default summary of a change from model from to
// model to, as MediaWiki's: "Changed content model from wikitext to
// Markdown".
func ModelSummary(from, to wiki.ContentModel) string {
	name := func(m wiki.ContentModel) string {
		if m == wiki.ModelMarkdown {
			return "Markdown"
		}
		return string(m)
	}
	return "Changed content model from " + name(from.Or(wiki.ModelMarkdown)) + " to " + name(to)
}

// ChangeModel saves c.Text as page c.Title's latest revision in model
// c.Model: a save like any other (protection, purge, jobs), with the
// text as given (no signatures expanded). The page must exist and be in
// another model.
func (e *Engine) ChangeModel(ctx context.Context, c ModelChange) (SaveOutcome, error) {
	if !c.Model.Valid() {
		return SaveOutcome{}, wiki.Errorf(wiki.KindInvalid, "choose the new content model: %s", ModelNames())
	}
	p, err := e.store.FindPage(ctx, c.Title)
	if errors.Is(err, wiki.ErrNotFound) || err == nil && p.Deleted {
		return SaveOutcome{}, wiki.Errorf(wiki.KindNotFound, "the page %q does not exist; create it in the model you want instead", c.Title)
	}
	if err != nil {
		return SaveOutcome{}, err
	}
	from := p.Model.Or(wiki.ModelMarkdown)
	if from == c.Model {
		return SaveOutcome{}, wiki.Errorf(wiki.KindInvalid, "the page %q is already in %s; choose another model", c.Title, c.Model)
	}
	if c.BaseRevID == 0 {
		c.BaseRevID = p.LatestID
	}
	if strings.TrimSpace(c.Summary) == "" {
		c.Summary = ModelSummary(from, c.Model)
	}
	out, err := e.Save(ctx, Edit{Title: c.Title, Text: c.Text, Summary: c.Summary, BaseRevID: c.BaseRevID,
		Editor: c.Editor, Verbatim: true, ExactBase: true, Model: c.Model})
	if errors.Is(err, errChangedMeanwhile) {
		return out, wiki.Errorf(wiki.KindConflict, "%q was edited while its content model was being changed; open the form again to convert the current text", c.Title)
	}
	return out, err
}

// ConvertText returns text, in model from, written in model to, and
// whether it was converted: wikitext becomes Markdown through the
// converter the engine was given (Options.WikitextToMarkdown); Markdown
// is kept as it is in wikitext (no converter goes that way), as is
// everything without a converter. The editor reviews the result before
// ChangeModel saves it.
//
// A conversion costs what a render does: it takes a slot of the render
// gate (a busy gate is the gate's KindUnavailable error), and it stops
// after convertTimeout, however the text is made.
func (e *Engine) ConvertText(ctx context.Context, text string, from, to wiki.ContentModel) (string, bool, error) {
	from = from.Or(wiki.ModelMarkdown)
	if from == wiki.ModelWikitext && to == wiki.ModelMarkdown && e.toMarkdown != nil {
		release, err := e.gate.acquire(ctx)
		if err != nil {
			return "", false, err
		}
		defer release()
		cctx, cancel := context.WithTimeout(ctx, convertTimeout)
		defer cancel()
		out, err := e.toMarkdown(cctx, text)
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return "", false, wiki.Errorf(wiki.KindInvalid, "converting it took longer than %v, the most a conversion may take", convertTimeout)
		}
		if err != nil {
			return "", false, fmt.Errorf("engine: convert wikitext to Markdown: %w", err)
		}
		// Markdown can take more bytes than the wikitext it says the same
		// as (a table's padding, escapes): a text the page could not be
		// saved with is no conversion to offer.
		if len(out) > e.maxPage {
			return "", false, wiki.Errorf(wiki.KindTooLarge, "converted, the text would be %d bytes; the limit (max_page_bytes) is %d bytes. Split the page into smaller pages first", len(out), e.maxPage)
		}
		return out, true, nil
	}
	return text, false, nil
}

// convertTimeout bounds a conversion of a page's text to another markup,
// as long as a render may take: the largest page of ordinary text
// converts in well under a second.
const convertTimeout = render.DefaultTimeout

// CanConvert reports whether ConvertText rewrites text from model from
// into model to (else it keeps it as it is).
func (e *Engine) CanConvert(from, to wiki.ContentModel) bool {
	return from.Or(wiki.ModelMarkdown) == wiki.ModelWikitext && to == wiki.ModelMarkdown && e.toMarkdown != nil
}
