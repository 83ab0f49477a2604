package web

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wikid/wikid/internal/diff"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/wiki"
)

func (s *Server) root(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return methodNotAllowed(w, "GET, HEAD")
	}
	w.Header().Set("Cache-Control", s.redirectCacheControl())
	http.Redirect(w, r, s.mainPage.URL(), http.StatusFound)
	return nil
}

// indexPHP accepts MediaWiki's /w/index.php?title=X&action=Y links.
func (s *Server) indexPHP(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	t, err := wiki.ParseTitle(q.Get("title"))
	if err != nil {
		return err
	}
	q.Del("title")
	to := t.URL()
	if len(q) > 0 {
		to += "?" + q.Encode()
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		http.Redirect(w, r, to, http.StatusMovedPermanently)
		return nil
	}
	return methodNotAllowed(w, "GET, HEAD")
}

func methodNotAllowed(w http.ResponseWriter, allow string) error {
	w.Header().Set("Allow", allow)
	return &wiki.Error{Kind: wiki.KindInvalid, Msg: "that HTTP method is not allowed here; allowed: " + allow, Err: errMethod}
}

var errMethod = errors.New("method not allowed")

// titleFromPath parses the {title...} path value.
func titleFromPath(r *http.Request) (wiki.Title, error) {
	raw := r.PathValue("title")
	if !utf8.ValidString(raw) {
		return "", wiki.Errorf(wiki.KindInvalid, "the address is not valid UTF-8; check the link")
	}
	return wiki.ParseTitle(raw)
}

// wikiPage dispatches /wiki/Title by method, action and query, as MediaWiki.
func (s *Server) wikiPage(w http.ResponseWriter, r *http.Request) error {
	t, err := titleFromPath(r)
	if err != nil {
		return err
	}
	if t.IsSpecial() {
		return s.special(w, r, t)
	}
	q := r.URL.Query()
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if want := t.URL(); r.URL.EscapedPath() != want && r.PathValue("title") != t.Key() {
			to := want
			if r.URL.RawQuery != "" {
				to += "?" + r.URL.RawQuery
			}
			w.Header().Set("Cache-Control", s.redirectCacheControl())
			http.Redirect(w, r, to, http.StatusMovedPermanently)
			return nil
		}
		if err := s.requireRead(r); err != nil {
			return err
		}
		if q.Has("diff") {
			return s.diffPage(w, r, t)
		}
		switch action := q.Get("action"); action {
		case "", "view":
			if q.Has("oldid") {
				return s.viewOld(w, r, t)
			}
			return s.view(w, r, t)
		case "edit", "submit":
			return s.editForm(w, r, t)
		case "history":
			return s.history(w, r, t)
		case "raw":
			return s.raw(w, r, t)
		case "move":
			return s.moveForm(w, r, t, "")
		case "delete":
			return s.deleteForm(w, r, t, "")
		case "undelete":
			return s.undeleteForm(w, r, t, "")
		default:
			return wiki.Errorf(wiki.KindInvalid, "unknown action %q; known actions: view, edit, history, raw, move, delete, undelete", sanitizeLine(action))
		}
	}
	if r.Method != http.MethodPost {
		return methodNotAllowed(w, "GET, HEAD, POST")
	}
	if err := r.ParseForm(); err != nil {
		return formError(err)
	}
	if err := s.checkCSRF(r); err != nil {
		return err
	}
	switch action := q.Get("action"); action {
	case "submit", "edit":
		return s.submit(w, r, t)
	case "revert":
		return s.revert(w, r, t)
	case "move":
		return s.move(w, r, t)
	case "delete":
		return s.delete(w, r, t)
	case "undelete":
		return s.undelete(w, r, t)
	case "purge":
		s.eng.Purge(r.Context(), t)
		redirect(w, r, t.URL(), http.StatusSeeOther)
		return nil
	default:
		return wiki.Errorf(wiki.KindInvalid, "unknown action %q for POST; known: submit, revert, move, delete, undelete, purge", sanitizeLine(action))
	}
}

func formError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return err
	}
	return wiki.Errorf(wiki.KindInvalid, "the form data could not be read (%v); submit the form again", err)
}

// formValue returns a form field, rejecting invalid UTF-8.
func formValue(r *http.Request, name string) (string, error) {
	v := r.PostFormValue(name)
	if !utf8.ValidString(v) {
		return "", wiki.Errorf(wiki.KindInvalid, "the field %q is not valid UTF-8 text", name)
	}
	return v, nil
}

type crumb struct {
	Label  string
	URL    string
	Exists bool
}

type viewData struct {
	Title          wiki.Title
	Revision       wiki.Revision
	Body           template.HTML
	TOC            template.HTML
	Categories     []wiki.Title
	RedirectedFrom wiki.Title
	IsRedirectPage bool
	RedirectTarget wiki.Title
	OldRevision    bool
	Breadcrumbs    []crumb
	Members        []wiki.Page
	MembersNext    string
}

func (s *Server) view(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	ctx := r.Context()
	noRedirect := r.URL.Query().Get("redirect") == "no"
	v, err := s.eng.ViewPage(ctx, t, noRedirect)
	if errors.Is(err, wiki.ErrNotFound) {
		return s.missing(w, r, t, v.Page.Deleted)
	}
	if err != nil {
		return err
	}
	d := &viewData{
		Title: v.Page.Title, Revision: v.Revision, Body: template.HTML(v.Rendered.HTML), TOC: template.HTML(v.Rendered.TOC),
		Categories: v.Rendered.Categories, RedirectedFrom: v.RedirectedFrom,
	}
	if v.RedirectedFrom != "" {
		addTag(r, v.Page.Title)
	}
	if v.Page.Redirect != "" && v.RedirectedFrom == "" {
		d.IsRedirectPage, d.RedirectTarget = true, v.Page.Redirect
	}
	if err := s.fillPageExtras(r, d); err != nil {
		return err
	}
	p := s.page(r, string(d.Title))
	p.Tabs = s.titleTabs(r, d.Title, "view", true)
	p.ReturnTo = returnToQuery(d.Title)
	p.Data = d
	s.writeBodyPage(w, r, p, "view", cachePublic, v.Revision.Time)
	return nil
}

// writeBodyPage renders a 200 page whose content last changed at modified.
func (s *Server) writeBodyPage(w http.ResponseWriter, r *http.Request, p *Page, tmpl string, mode cacheMode, modified time.Time) {
	body, err := s.views.RenderBytes(tmpl, p)
	if err != nil {
		s.log.Error("render template", "template", tmpl, "err", err)
		http.Error(w, "Internal server error: a page template failed; the error was logged.", http.StatusInternalServerError)
		return
	}
	s.writeBody(w, r, http.StatusOK, "text/html; charset=utf-8", body, mode, modified)
}

// fillPageExtras adds breadcrumbs for subpages and members for categories:
// one batched query each.
func (s *Server) fillPageExtras(r *http.Request, d *viewData) error {
	ctx := r.Context()
	if parents := d.Title.Parents(); len(parents) > 0 {
		exists, err := s.store.ExistingTitles(ctx, parents)
		if err != nil {
			return err
		}
		// As MediaWiki: links to the parents that exist, "A › A/B".
		for _, p := range parents {
			if !exists[p] {
				continue
			}
			label := p.Subpage()
			if p == parents[0] {
				label = string(p)
			}
			d.Breadcrumbs = append(d.Breadcrumbs, crumb{Label: label, URL: p.URL(), Exists: true})
		}
	}
	if d.Title.Namespace() == wiki.NSCategory {
		from, _ := wiki.ParseTitle(r.URL.Query().Get("from"))
		const limit = 200
		members, err := s.store.CategoryMembers(ctx, d.Title, wiki.ListQuery{From: from, Limit: limit + 1})
		if err != nil {
			return err
		}
		if len(members) > limit {
			d.MembersNext = d.Title.URL() + "?from=" + url.QueryEscape(members[limit].Title.Key())
			members = members[:limit]
		}
		d.Members = members
	}
	return nil
}

type missingData struct {
	Title   wiki.Title
	Deleted bool
	CanEdit bool
}

// missing answers a view of a page that does not exist: 404 with a
// "create it" link (a category page still lists its members).
func (s *Server) missing(w http.ResponseWriter, r *http.Request, t wiki.Title, deleted bool) error {
	if t.Namespace() == wiki.NSCategory {
		d := &viewData{Title: t}
		if err := s.fillPageExtras(r, d); err != nil {
			return err
		}
		if len(d.Members) > 0 {
			p := s.page(r, string(t))
			p.Tabs = s.titleTabs(r, t, "view", false)
			p.Data = d
			s.writeBodyPage(w, r, p, "view", cachePublic, time.Time{})
			return nil
		}
	}
	p := s.page(r, string(t))
	p.Tabs = s.titleTabs(r, t, "view", false)
	p.ReturnTo = returnToQuery(t)
	p.NoIndex = true
	p.Data = missingData{Title: t, Deleted: deleted, CanEdit: s.canEdit(viewerOf(r))}
	s.writePage(w, r, http.StatusNotFound, "missing", p, cacheNone)
	return nil
}

func (s *Server) viewOld(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	id, err := strconv.ParseInt(r.URL.Query().Get("oldid"), 10, 64)
	if err != nil || id <= 0 {
		return wiki.Errorf(wiki.KindInvalid, "oldid must be a revision number")
	}
	ctx := r.Context()
	page, rev, err := s.revisionOf(r, t, id)
	if err != nil {
		return err
	}
	rd, err := s.eng.Render(ctx, rev)
	if err != nil {
		return err
	}
	rev.Text = ""
	d := &viewData{Title: page.Title, Revision: rev, Body: template.HTML(rd.HTML), TOC: template.HTML(rd.TOC),
		Categories: rd.Categories, OldRevision: rev.ID != page.LatestID}
	p := s.page(r, string(t))
	p.Tabs = s.titleTabs(r, t, "view", true)
	p.NoIndex = true
	p.Data = d
	s.writeBodyPage(w, r, p, "view", cachePublic, rev.Time)
	return nil
}

// revisionOf loads revision id and checks that it belongs to page t.
func (s *Server) revisionOf(r *http.Request, t wiki.Title, id int64) (wiki.Page, wiki.Revision, error) {
	ctx := r.Context()
	page, err := s.store.FindPage(ctx, t)
	if err != nil {
		return page, wiki.Revision{}, err
	}
	rev, err := s.store.FindRevision(ctx, id)
	if errors.Is(err, wiki.ErrNotFound) || (err == nil && rev.PageID != page.ID) {
		return page, rev, wiki.Errorf(wiki.KindNotFound, "revision %d of %q does not exist; see the page's history for its revisions", id, t)
	}
	if err != nil {
		return page, rev, err
	}
	if page.Deleted && !viewerOf(r).IsAdmin() {
		return page, rev, wiki.ErrNotFound
	}
	return page, rev, nil
}

// oldidOr returns the ?oldid= revision number, or def when there is none.
func oldidOr(r *http.Request, def int64) (int64, error) {
	o := r.URL.Query().Get("oldid")
	if o == "" {
		return def, nil
	}
	id, err := strconv.ParseInt(o, 10, 64)
	if err != nil || id <= 0 {
		return 0, wiki.Errorf(wiki.KindInvalid, "oldid must be a revision number")
	}
	return id, nil
}

func (s *Server) raw(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	ctx := r.Context()
	page, err := s.store.FindPage(ctx, t)
	if err != nil || page.Deleted {
		return wiki.Errorf(wiki.KindNotFound, "the page %q does not exist", t)
	}
	id, err := oldidOr(r, page.LatestID)
	if err != nil {
		return err
	}
	_, rev, err := s.revisionOf(r, t, id)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Disposition", "inline")
	s.writeBody(w, r, http.StatusOK, "text/plain; charset=utf-8", []byte(rev.Text), cachePublic, rev.Time)
	return nil
}

type editData struct {
	Title       wiki.Title
	Text        string
	Summary     string
	Minor       bool
	BaseRev     int64
	Creating    bool
	OldRevision bool
	Preview     *previewData
	Conflict    bool
	Yours       string
	Merged      bool
	Error       string
}

type previewData struct {
	HTML template.HTML
	TOC  template.HTML
}

func (s *Server) editForm(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	if err := s.requireEdit(r); err != nil {
		if !viewerOf(r).LoggedIn {
			redirect(w, r, "/wiki/Special:UserLogin?returnto="+url.QueryEscape(t.Key()+"?action=edit"), http.StatusFound)
			return nil
		}
		return err
	}
	ctx := r.Context()
	d := &editData{Title: t, Creating: true}
	page, err := s.store.FindPage(ctx, t)
	if err == nil && !page.Deleted {
		d.Creating = false
		d.BaseRev = page.LatestID
		id, err := oldidOr(r, page.LatestID)
		if err != nil {
			return err
		}
		_, rev, err := s.revisionOf(r, t, id)
		if err != nil {
			return err
		}
		d.Text = rev.Text
		if rev.ID != page.LatestID {
			d.OldRevision = true
			d.Summary = "Restored revision " + strconv.FormatInt(rev.ID, 10) + " by " + rev.UserName
		}
	} else if err != nil && !errors.Is(err, wiki.ErrNotFound) {
		return err
	}
	return s.writeEdit(w, r, http.StatusOK, d)
}

func (s *Server) writeEdit(w http.ResponseWriter, r *http.Request, status int, d *editData) error {
	verb := "Editing "
	if d.Creating {
		verb = "Creating "
	}
	p := s.formPage(r, verb+string(d.Title))
	p.Tabs = s.titleTabs(r, d.Title, "edit", !d.Creating)
	p.Data = d
	s.writePage(w, r, status, "edit", p, cacheNone)
	return nil
}

// submit saves an edit (or shows a preview), merging with edits made since
// the form was opened; an overlapping edit gets the conflict form.
func (s *Server) submit(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	if err := s.requireEdit(r); err != nil {
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
	base, _ := strconv.ParseInt(r.PostFormValue("baserev"), 10, 64)
	d := &editData{Title: t, Text: text, Summary: summary, Minor: r.PostFormValue("minor") != "", BaseRev: base, Creating: base == 0}
	if r.PostFormValue("preview") != "" {
		rd, err := s.eng.Preview(r.Context(), text)
		if err != nil {
			return err
		}
		d.Preview = &previewData{HTML: template.HTML(rd.HTML), TOC: template.HTML(rd.TOC)}
		return s.writeEdit(w, r, http.StatusOK, d)
	}
	if strings.TrimSpace(text) == "" {
		d.Error = "The page text is empty. Write something before saving; to remove a page, ask an administrator to delete it."
		return s.writeEdit(w, r, http.StatusBadRequest, d)
	}
	uid, uname := s.editor(r)
	out, err := s.eng.Save(r.Context(), engine.Edit{Title: t, Text: text, Summary: summary, Minor: d.Minor,
		BaseRevID: base, Editor: engine.Editor{UserID: uid, UserName: uname}})
	var conflict *engine.ConflictError
	if errors.As(err, &conflict) {
		d.Conflict, d.Text, d.Yours, d.BaseRev = true, conflict.Current, conflict.Yours, conflict.CurrentRev
		return s.writeEdit(w, r, http.StatusConflict, d)
	}
	if err != nil {
		if k := wiki.KindOf(err); k == wiki.KindInvalid || k == wiki.KindTooLarge {
			d.Error = wiki.Message(err)
			return s.writeEdit(w, r, statusOf(err), d)
		}
		return err
	}
	redirect(w, r, out.Page.Title.URL(), http.StatusSeeOther)
	return nil
}

type historyData struct {
	Title     wiki.Title
	Revisions []wiki.Revision
	LatestID  int64
	CanEdit   bool
	Next      string
}

func (s *Server) history(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	ctx := r.Context()
	page, err := s.store.FindPage(ctx, t)
	if err != nil || (page.Deleted && !viewerOf(r).IsAdmin()) {
		return wiki.Errorf(wiki.KindNotFound, "the page %q does not exist, so it has no history", t)
	}
	before, _ := strconv.ParseInt(r.URL.Query().Get("offset"), 10, 64)
	limit := clampLimit(r.URL.Query().Get("limit"), 50, 500)
	revs, err := s.store.History(ctx, wiki.HistoryQuery{PageID: page.ID, Before: before, Limit: limit + 1})
	if err != nil {
		return err
	}
	d := historyData{Title: page.Title, LatestID: page.LatestID, CanEdit: s.canEdit(viewerOf(r)) && viewerOf(r).LoggedIn}
	if len(revs) > limit {
		d.Next = t.URL() + "?action=history&offset=" + strconv.FormatInt(revs[limit-1].ID, 10) + "&limit=" + strconv.Itoa(limit)
		revs = revs[:limit]
	}
	d.Revisions = revs
	p := s.page(r, "History of "+string(t))
	p.Tabs = s.titleTabs(r, t, "history", !page.Deleted)
	p.NoIndex = true
	p.Data = d
	s.writeBodyPage(w, r, p, "history", cachePublic, page.Touched)
	return nil
}

func clampLimit(v string, def, max int) int {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return def
	}
	if n > max {
		return max
	}
	return n
}

type diffData struct {
	Title     wiki.Title
	Old, New  wiki.Revision
	Table     template.HTML
	Identical bool
	CanRevert bool
}

// diffPage shows ?diff=NEW&oldid=OLD; diff may also be "prev" or "cur".
func (s *Server) diffPage(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	ctx := r.Context()
	q := r.URL.Query()
	page, err := s.store.FindPage(ctx, t)
	if err != nil {
		return wiki.Errorf(wiki.KindNotFound, "the page %q does not exist", t)
	}
	parse := func(name, v string) (int64, error) {
		if v == "cur" || v == "" {
			return page.LatestID, nil
		}
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			return 0, wiki.Errorf(wiki.KindInvalid, "%s must be a revision number (or cur)", name)
		}
		return id, nil
	}
	var newID, oldID int64
	switch q.Get("diff") {
	case "prev":
		if newID, err = parse("oldid", q.Get("oldid")); err != nil {
			return err
		}
	default:
		if newID, err = parse("diff", q.Get("diff")); err != nil {
			return err
		}
		if q.Get("oldid") != "" {
			if oldID, err = parse("oldid", q.Get("oldid")); err != nil {
				return err
			}
		}
	}
	_, newRev, err := s.revisionOf(r, t, newID)
	if err != nil {
		return err
	}
	if oldID == 0 {
		oldID = newRev.ParentID
	}
	var oldRev wiki.Revision
	if oldID != 0 {
		if _, oldRev, err = s.revisionOf(r, t, oldID); err != nil {
			return err
		}
	}
	if oldRev.ID > newRev.ID {
		oldRev, newRev = newRev, oldRev
	}
	d := diffData{Title: page.Title, Old: oldRev, New: newRev, Identical: oldRev.Text == newRev.Text}
	if !d.Identical {
		d.Table = template.HTML(diff.HTML(diff.Lines(oldRev.Text, newRev.Text)))
	}
	v := viewerOf(r)
	d.CanRevert = v.LoggedIn && s.canEdit(v) && oldRev.ID != 0 && newRev.ID == page.LatestID && !d.Identical
	oldRev.Text, newRev.Text = "", ""
	d.Old, d.New = oldRev, newRev
	p := s.page(r, "Difference between revisions of "+string(t))
	if d.CanRevert {
		p.CSRF = s.csrfToken(r)
	}
	p.Tabs = s.titleTabs(r, t, "history", true)
	p.NoIndex = true
	p.Data = d
	s.writeBodyPage(w, r, p, "diff", cachePublic, newRev.Time)
	return nil
}

func (s *Server) revert(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	if err := s.requireEdit(r); err != nil {
		return err
	}
	id, err := strconv.ParseInt(r.PostFormValue("oldid"), 10, 64)
	if err != nil {
		return wiki.Errorf(wiki.KindInvalid, "oldid must be a revision number")
	}
	uid, uname := s.editor(r)
	if _, err := s.eng.Revert(r.Context(), t, id, engine.Editor{UserID: uid, UserName: uname}); err != nil {
		return err
	}
	redirect(w, r, t.URL(), http.StatusSeeOther)
	return nil
}
