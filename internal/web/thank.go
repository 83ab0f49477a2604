package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/wiki"
)

// Thanks, as MediaWiki's Thanks extension: a logged-in user thanks the
// author of a revision, who is told by a notification. A GET of
// ?action=thank&rev=N asks first (a link must not change state); the
// POST with the session's CSRF token sends it.

// thanksPerMinute bounds the thanks a user sends (each one notifies).
const thanksPerMinute = 30

var thankRevParam = httpx.Param{Name: "rev", Kind: httpx.ID, What: "the number of the revision to thank for"}

// thankable returns the revision r's thanks would be for, checked: a live
// revision of page t by another registered user.
func (s *Server) thankable(r *http.Request, t wiki.Title) (wiki.Revision, error) {
	v := viewerOf(r)
	if !v.LoggedIn || v.Token {
		return wiki.Revision{}, wiki.Errorf(wiki.KindUnauthorized, "log in to thank other editors")
	}
	id, err := strconv.ParseInt(r.FormValue("rev"), 10, 64)
	if err != nil || id <= 0 {
		return wiki.Revision{}, wiki.Errorf(wiki.KindInvalid, "say which revision to thank for: ?action=thank&rev=N, from a history page")
	}
	rev, err := s.store.FindRevision(r.Context(), id)
	if errors.Is(err, wiki.ErrNotFound) {
		return wiki.Revision{}, wiki.Errorf(wiki.KindNotFound, "there is no revision %d (it may have been deleted)", id)
	}
	if err != nil {
		return wiki.Revision{}, err
	}
	if page, err := s.store.FindPage(r.Context(), t); err != nil || page.ID != rev.PageID {
		return wiki.Revision{}, wiki.Errorf(wiki.KindInvalid, "revision %d is not a revision of %q; thank from that page's history", id, t)
	}
	switch {
	case rev.UserID == 0:
		return wiki.Revision{}, wiki.Errorf(wiki.KindInvalid, "revision %d was made without an account, so there is no one to thank", id)
	case rev.UserID == v.User.ID:
		return wiki.Revision{}, wiki.Errorf(wiki.KindInvalid, "revision %d is your own edit; thanks are for other editors", id)
	}
	return rev, nil
}

func (s *Server) thankForm(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	rev, err := s.thankable(r, t)
	if err != nil {
		return err
	}
	return s.writeForm(w, r, t, "history", http.StatusOK, formData{
		Heading: "Thank " + rev.UserName,
		Intro:   "Send " + rev.UserName + " a thank-you for their edit of " + string(t) + " (" + rev.Time.UTC().Format("15:04, 2 January 2006") + "). They are told who thanked them; nothing else is published.",
		Action:  t.URL() + "?action=thank&rev=" + strconv.FormatInt(rev.ID, 10), Submit: "Send thanks", Cancel: t.URL() + "?action=history",
	})
}

func (s *Server) thank(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	rev, err := s.thankable(r, t)
	if err != nil {
		return err
	}
	v := viewerOf(r)
	if wait, ok := s.thanks.allow("u" + strconv.FormatInt(v.User.ID, 10)); !ok {
		return &wiki.Error{Kind: wiki.KindTooMany, RetryAfter: wait, Msg: "you have sent many thanks in the last minute; wait a minute and try again"}
	}
	ctx := r.Context()
	if err := s.store.AddNotifications(ctx, []wiki.Notification{{UserID: rev.UserID, Kind: wiki.NotifyThank,
		Title: t, RevID: rev.ID, Agent: v.User.Name, Time: s.now()}}); err != nil {
		return err
	}
	s.accountChanged(ctx, rev.UserID)
	redirect(w, r, t.URL()+"?action=history", http.StatusSeeOther)
	return nil
}
