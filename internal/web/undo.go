package web

import (
	"errors"
	"html/template"
	"net/http"
	"strconv"
	"time"

	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/view"
	"github.com/wikid/wikid/internal/wiki"
)

// The parameters of undo (the edit form) and rollback, as MediaWiki names
// them.
var (
	undoParam         = httpx.Param{Name: "undo", Kind: httpx.ID, What: "the number of the revision to undo"}
	undoAfterParam    = httpx.Param{Name: "undoafter", Kind: httpx.ID, What: "the number of the revision before the ones to undo"}
	rollbackFromParam = httpx.Param{Name: "from", Kind: httpx.Text, Max: 255, What: "a user name"}
)

// rollbacksPerMinute limits each user's rollbacks, as MediaWiki's default
// rate limit for rollback does.
const rollbacksPerMinute = 10

// rollbackLinkMax is the largest count a rollback link names ("rollback
// 10 edits"); a longer streak reads "rollback more than 10 edits".
const rollbackLinkMax = 10

// undoParams reads the edit form's undo and undoafter (0 when absent),
// refusing combinations that mean nothing.
func undoParams(r *http.Request) (undo, after int64, err error) {
	q := httpx.From(r)
	undo, after = q.Int(undoParam.Name, 0), q.Int(undoAfterParam.Name, 0)
	switch {
	case after != 0 && undo == 0:
		return 0, 0, wiki.Errorf(wiki.KindInvalid, "undoafter needs undo, the newest revision to undo; take the undo link from the page's history")
	case undo != 0 && q.Has(oldidParam.Name):
		return 0, 0, wiki.Errorf(wiki.KindInvalid, "give either oldid (to edit an old revision) or undo (to undo one), not both")
	}
	return undo, after, nil
}

// undoForm opens the edit form with the latest text less the revisions
// undone (engine.PrepareUndo), their default summary, and a comparison of
// the current text with the proposed one. An undo that cannot be made
// (conflicting later edits, nothing left to undo) is a page saying why,
// never a form holding conflict markers.
func (s *Server) undoForm(w http.ResponseWriter, r *http.Request, t wiki.Title, undoID, afterID int64, d *editData) error {
	ctx := r.Context()
	u, err := s.eng.PrepareUndo(ctx, t, undoID, afterID)
	if wiki.KindOf(err) == wiki.KindConflict {
		p := s.page(r, "Undo failed")
		p.NoIndex = true
		if err := s.setTabs(p, r, t, "edit", true); err != nil {
			return err
		}
		p.Data = errorData{Heading: "The edit could not be undone", Message: wiki.Message(err), Back: t.URL() + "?action=history"}
		s.writePage(w, r, http.StatusConflict, "error", p)
		return nil
	}
	if err != nil {
		return err
	}
	d.Creating, d.BaseRev, d.Text, d.Summary, d.Model = false, u.Latest.ID, u.Text, u.Summary, u.Latest.Model.Or(wiki.ModelMarkdown)
	d.Undo, d.UndoAfter = undoID, afterID
	res, err := s.eng.DiffText(ctx, u.Latest.Text, u.Text)
	if err != nil {
		return err
	}
	d.UndoDiff = template.HTML(res.HTML())
	if err := s.noteProtection(r, d); err != nil {
		return err
	}
	return s.writeEdit(w, r, http.StatusOK, d)
}

// undoTags returns the tags of a submitted edit: undo when the form came
// from an undo link (its undo field names a revision of the page).
func (s *Server) undoTags(r *http.Request, t wiki.Title, d *editData) ([]string, error) {
	v := r.PostFormValue("undo")
	if v == "" {
		return nil, nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return nil, wiki.Errorf(wiki.KindInvalid, "the form's undo field must be a revision number; open the undo link again")
	}
	d.Undo = id
	d.UndoAfter, _ = strconv.ParseInt(r.PostFormValue("undoafter"), 10, 64)
	rev, err := s.store.FindRevision(r.Context(), id)
	if errors.Is(err, wiki.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if page, err := s.store.FindPage(r.Context(), t); err != nil || page.ID != rev.PageID {
		return nil, nil // not this page's revision (moved meanwhile?): an ordinary edit
	}
	return []string{wiki.TagUndo}, nil
}

// requireRollback lets rollbackers and administrators through, their
// group read from the store as requireAdmin reads it: a demotion applies
// on the next request. It returns the viewer's current group.
func (s *Server) requireRollback(r *http.Request) (wiki.Group, error) {
	v := viewerOf(r)
	if !v.LoggedIn {
		return "", wiki.Errorf(wiki.KindUnauthorized, "rollback is for rollbackers and administrators; log in first")
	}
	u, err := s.store.FindUser(r.Context(), v.User.ID)
	if err != nil && !errors.Is(err, wiki.ErrNotFound) {
		return "", err
	}
	if err == nil && u.Group.CanRollback() {
		return u.Group, nil
	}
	if v.User.Group.CanRollback() {
		s.sessions.bumpUser(v.User.ID) // demoted elsewhere: drop the stale entries
	}
	return "", wiki.Errorf(wiki.KindForbidden, "rollback is for rollbackers and administrators; undo the edits from the page's history instead, or ask an administrator for the rollback right")
}

// canRollback says whether to draw rollback buttons for the viewer: its
// session's group (the POST checks the store's).
func canRollback(v Viewer) bool { return v.LoggedIn && v.User.Group.CanRollback() }

// rollbackFrom reads the from parameter: the user whose edits to roll back.
func rollbackFrom(r *http.Request) (string, error) {
	from := httpx.From(r).Get(rollbackFromParam.Name)
	if from == "" {
		return "", wiki.Errorf(wiki.KindInvalid, "give the user whose edits to roll back: ?action=rollback&from=NAME (take the link from the page's history)")
	}
	return from, nil
}

// rollbackForm is a GET of action=rollback: a link cannot POST, so it asks
// first, naming what the rollback reverts.
func (s *Server) rollbackForm(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	if _, err := s.requireRollback(r); err != nil {
		return err
	}
	from, err := rollbackFrom(r)
	if err != nil {
		return err
	}
	page, err := s.store.FindPage(r.Context(), t)
	if err != nil || page.Deleted {
		return wiki.Errorf(wiki.KindNotFound, "the page %q does not exist, so there is nothing to roll back", t)
	}
	st, err := s.eng.Streak(r.Context(), page, rollbackLinkMax)
	if err != nil {
		return err
	}
	switch {
	case st.User != from:
		return wiki.Errorf(wiki.KindConflict, "the latest edit of %q is by %s, not %s: someone edited the page meanwhile. Look at its history before rolling back", t, st.User, from)
	case st.Alone:
		return wiki.Errorf(wiki.KindConflict, "every revision of %q is by %s: there is no earlier version by another user to roll back to", t, from)
	}
	edits := "latest edit"
	switch {
	case st.More:
		edits = "more than " + strconv.Itoa(st.Edits) + " latest edits"
	case st.Edits > 1:
		edits = strconv.Itoa(st.Edits) + " latest edits"
	}
	return s.writeForm(w, r, t, "history", http.StatusOK, formData{
		Heading: "Roll back edits to " + string(t),
		Intro:   "Revert the " + edits + " by " + from + " to the last revision by another user, in one new revision marked “rollback”.",
		Action:  view.RollbackURL(t, from), Submit: "Roll back", Cancel: t.URL() + "?action=history", Danger: true,
	})
}

// rollback reverts the latest editor's streak (engine.Rollback): a POST
// with the CSRF token, from a rollback button or the confirmation form.
func (s *Server) rollback(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	group, err := s.requireRollback(r)
	if err != nil {
		return err
	}
	if err := s.checkBlock(r); err != nil {
		return err
	}
	from, err := rollbackFrom(r)
	if err != nil {
		return err
	}
	v := viewerOf(r)
	if wait, ok := s.rollbacks.allow(v.User.Name); !ok {
		secs := int(wait/time.Second) + 1
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		return wiki.Errorf(wiki.KindTooMany, "you rolled back %d pages in the last minute; wait %d seconds and try again", rollbacksPerMinute, secs)
	}
	ed := s.editorOf(r)
	ed.Group = group
	out, err := s.eng.Rollback(r.Context(), t, from, ed)
	if err != nil {
		return err
	}
	// The change made, as a comparison: what the rollback reverted.
	redirect(w, r, t.URL()+"?diff="+strconv.FormatInt(out.Revision.ID, 10)+"&oldid="+strconv.FormatInt(out.Revision.ParentID, 10), http.StatusSeeOther)
	return nil
}

// rollbackLink is a rollback button's label and target, drawn for the
// viewers who may roll back.
type rollbackLink struct {
	URL   string
	Label string // "rollback 3 edits"
}

// rollbackLinkFor returns the rollback button of page for the viewer, or
// nil: the latest editor's streak, when there is an earlier version by
// someone else.
func (s *Server) rollbackLinkFor(r *http.Request, page wiki.Page) (*rollbackLink, error) {
	if !canRollback(viewerOf(r)) || page.Deleted {
		return nil, nil
	}
	st, err := s.eng.Streak(r.Context(), page, rollbackLinkMax)
	if err != nil || st.Edits == 0 || st.Alone {
		return nil, err
	}
	label := "rollback " + strconv.Itoa(st.Edits) + " edit"
	if st.Edits != 1 {
		label += "s"
	}
	if st.More {
		label = "rollback more than " + strconv.Itoa(st.Edits) + " edits"
	}
	return &rollbackLink{URL: view.RollbackURL(page.Title, st.User), Label: label}, nil
}
