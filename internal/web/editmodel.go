package web

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strconv"

	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/wiki"
)

// ?action=editmodel changes a page's content model, as MediaWiki's
// Special:ChangeContentModel: the editor chooses the new model, reviews
// the text in it (converted from wikitext to Markdown; kept as it is the
// other way), previews it and saves it as one revision. Editors who may
// edit the page may do it, as they may move it.

// conversionsPerMinute bounds the conversions of a page's text each user
// asks for (each may take a render's time).
const conversionsPerMinute = 10

// modelParam is the model the editmodel form converts to.
var modelParam = httpx.Param{Name: "model", Kind: httpx.Enum, Values: []string{string(wiki.ModelMarkdown), string(wiki.ModelWikitext)}}

var routeEditModel = &pageRoute{spec: pageSpec("page:editmodel", modelParam), handle: (*Server).editModelForm}

// editModelData is the editmodel form.
type editModelData struct {
	Title    wiki.Title
	From, To wiki.ContentModel
	Models   []wiki.ContentModel // the choices of To
	Text     string              // the text in To
	// Converted: Text was rewritten from From's markup; Unconverted: it
	// is From's text as it is, for a direction without a converter
	// (Markdown to wikitext, or a build without the wikitext converter).
	Converted, Unconverted bool
	Summary                string
	BaseRev                int64
	Preview                *previewData
	Error                  string
}

// requireModelChange lets through who may change t's model: logged-in
// editors, who may save t (its protection); it returns t's page.
func (s *Server) requireModelChange(r *http.Request, t wiki.Title) (wiki.Page, error) {
	v := viewerOf(r)
	if !v.LoggedIn || !s.canEdit(v) {
		return wiki.Page{}, wiki.Errorf(wiki.KindForbidden, "you need to be logged in with edit rights to change the content model of pages")
	}
	p, err := s.store.FindPage(r.Context(), t)
	if errors.Is(err, wiki.ErrNotFound) || err == nil && p.Deleted {
		return p, wiki.Errorf(wiki.KindNotFound, "the page %q does not exist, so it has no content model to change; create it instead", t)
	}
	if err != nil {
		return p, err
	}
	pr, active, err := s.eng.Protection(r.Context(), t)
	if err != nil {
		return p, err
	}
	if active && !pr.Edit.Allows(v.Group()) {
		return p, wiki.Errorf(wiki.KindForbidden, "the page %q is protected from editing, so its content model cannot be changed either; ask an administrator", t)
	}
	return p, nil
}

// editModelForm shows the form, for the model in ?model= (by default the
// first other than the page's), with the page's text in that model.
func (s *Server) editModelForm(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	p, err := s.requireModelChange(r, t)
	if err != nil {
		return err
	}
	rev, err := s.store.FindRevision(r.Context(), p.LatestID)
	if err != nil {
		return err
	}
	d := &editModelData{Title: t, From: rev.Model.Or(wiki.ModelMarkdown), BaseRev: rev.ID}
	d.To = wiki.ContentModel(httpx.From(r).Get("model"))
	if d.To == "" {
		for _, m := range wiki.ContentModels {
			if m != d.From {
				d.To = m
				break
			}
		}
	}
	if d.To != d.From {
		// A conversion costs up to a render's time: a few a minute each.
		if s.eng.CanConvert(d.From, d.To) {
			if wait, ok := s.conversions.allow(s.limitKey(r)); !ok {
				return &wiki.Error{Kind: wiki.KindTooMany, RetryAfter: wait,
					Msg: fmt.Sprintf("you have converted %d pages to another markup in the last minute; wait a minute and try again", conversionsPerMinute)}
			}
		}
		text, converted, err := s.eng.ConvertText(r.Context(), rev.Text, d.From, d.To)
		if err != nil && (wiki.KindOf(err) == wiki.KindUnavailable || r.Context().Err() != nil) {
			return err // busy, or the reader left: the error page, not the form without the conversion
		}
		if err != nil {
			// A converter that fails leaves the text to the editor.
			d.Error = "The text could not be converted automatically (" + wiki.Message(err) + "); it is shown as it is: rewrite it in " + modelLabel(d.To) + " before saving."
			text = rev.Text
		}
		d.Text, d.Converted, d.Unconverted = text, converted, !converted
		d.Summary = engine.ModelSummary(d.From, d.To)
	}
	return s.writeEditModel(w, r, http.StatusOK, d)
}

// editModel previews or saves the form.
func (s *Server) editModel(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	p, err := s.requireModelChange(r, t)
	if err != nil {
		return err
	}
	text, err := formValue(r, "text")
	if err != nil {
		return err
	}
	summary, err := formValue(r, "summary")
	if err != nil {
		return err
	}
	to, err := formModel(r)
	if err != nil {
		return err
	}
	base, _ := strconv.ParseInt(r.PostFormValue("baserev"), 10, 64)
	d := &editModelData{Title: t, From: p.Model.Or(wiki.ModelMarkdown), To: to, Text: text, Summary: summary, BaseRev: base,
		Converted: r.PostFormValue("converted") != "", Unconverted: r.PostFormValue("converted") == ""}
	if to == "" {
		d.Error = "Choose the new content model."
		return s.writeEditModel(w, r, http.StatusBadRequest, d)
	}
	if r.PostFormValue("preview") != "" {
		rd, err := s.preview(r, t, text, to)
		if k := wiki.KindOf(err); k == wiki.KindTooLarge || k == wiki.KindUnavailable || k == wiki.KindInvalid || k == wiki.KindTooMany {
			setRetryAfter(w, err)
			d.Error = wiki.Message(err)
			return s.writeEditModel(w, r, statusOf(err), d)
		}
		if err != nil {
			return err
		}
		d.Preview = &previewData{HTML: template.HTML(rd.HTML), TOC: template.HTML(rd.TOC), Templates: rd.Templates}
		return s.writeEditModel(w, r, http.StatusOK, d)
	}
	if err := s.checkBlock(r); err != nil {
		return err
	}
	_, err = s.eng.ChangeModel(r.Context(), engine.ModelChange{Title: t, Model: to, Text: text, Summary: summary,
		BaseRevID: base, Editor: s.editorOf(r)})
	if k := wiki.KindOf(err); k == wiki.KindInvalid || k == wiki.KindConflict || k == wiki.KindTooLarge || k == wiki.KindUnavailable {
		// The form again, with the editor's text and what was wrong.
		setRetryAfter(w, err)
		d.Error = wiki.Message(err)
		return s.writeEditModel(w, r, statusOf(err), d)
	}
	if err != nil {
		return err
	}
	s.autoWatch(r, t)
	redirect(w, r, t.URL(), http.StatusSeeOther)
	return nil
}

func (s *Server) writeEditModel(w http.ResponseWriter, r *http.Request, status int, d *editModelData) error {
	pg := s.formPage(r, "Change content model of "+string(d.Title))
	if err := s.setTabs(pg, r, d.Title, "editmodel", true); err != nil {
		return err
	}
	d.Models = wiki.ContentModels
	pg.Data = d
	s.writePage(w, r, status, "editmodel", pg)
	return nil
}

// modelLabel is a model's name in running text: "Markdown", "wikitext".
func modelLabel(m wiki.ContentModel) string {
	if m == wiki.ModelMarkdown {
		return "Markdown"
	}
	return string(m)
}
