package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/wiki"
)

type notificationsData struct {
	Items []wiki.Notification
	Next  string
}

// notificationsPage is Special:Notifications: what others did that concerns
// the viewer, newest first. Showing the list marks it read (the user
// bar's count goes), as MediaWiki's does; the entries new to this view
// stay marked on it.
func (s *Server) notificationsPage(w http.ResponseWriter, r *http.Request, _ string) error {
	v := viewerOf(r)
	if !v.LoggedIn || v.Token {
		redirect(w, r, "/wiki/Special:UserLogin?returnto=Special%3ANotifications", http.StatusFound)
		return nil
	}
	ctx := r.Context()
	rq := httpx.From(r)
	limit := int(rq.Int("limit", 50))
	items, err := s.store.Notifications(ctx, v.User.ID, rq.Int("offset", 0), limit+1)
	if err != nil {
		return err
	}
	d := notificationsData{}
	if len(items) > limit {
		d.Next = rq.Link("/wiki/Special:Notifications", "offset", strconv.FormatInt(items[limit-1].ID, 10), "limit", strconv.Itoa(limit))
		items = items[:limit]
	}
	d.Items = items
	read := v.Unread() > 0
	if read {
		if err := s.store.MarkNotificationsRead(ctx, v.User.ID); err != nil {
			return err
		}
		s.accountChanged(ctx, v.User.ID)
	}
	p := s.page(r, "Notifications")
	if read {
		p.Viewer = v.withNoUnread() // this page's user bar counts none, as the next one will
	}
	p.NoIndex = true
	p.Data = d
	s.writeBodyPage(w, r, p, "notifications", cacheNone, time.Time{})
	return nil
}

// withNoUnread returns v with no unread notifications, for the page that
// has just marked them read. The state is copied: the cached one is
// shared by the user's requests (its watch titles are never written once
// built, so the copy may share them).
func (v Viewer) withNoUnread() Viewer {
	if v.State != nil {
		st := *v.State
		st.unread = 0
		v.State = &st
	}
	return v
}
