package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/wiki"
)

// The watch star: a GET of ?action=watch or ?action=unwatch asks first (a
// link must not change state), a POST with the session's CSRF token
// changes the watchlist. The star's script posts the form itself and
// toggles the star, so that a click does not leave the page.

func watchExpiryOptions(selected string) []formOption {
	opts := make([]formOption, len(wiki.WatchExpiries))
	for i, e := range wiki.WatchExpiries {
		opts[i] = formOption{Value: e.Name, Label: e.Label, Selected: e.Name == selected}
	}
	return opts
}

func requireLogin(v Viewer, what string) error {
	if !v.LoggedIn || v.Token {
		return wiki.Errorf(wiki.KindUnauthorized, "log in to %s: a watchlist belongs to an account", what)
	}
	return nil
}

func (s *Server) watchForm(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	if err := requireLogin(viewerOf(r), "watch pages"); err != nil {
		return err
	}
	pair := "its discussion page"
	if t.IsTalk() {
		pair = "the page it discusses"
	}
	return s.writeForm(w, r, t, "watch", http.StatusOK, formData{
		Heading: "Watch " + string(t),
		Intro:   "Changes to this page and " + pair + " will be listed on your watchlist.",
		Action:  t.URL() + "?action=watch", Submit: "Watch", Cancel: t.URL(),
		Fields: []formField{{Name: "expiry", Label: "Watch for", Type: "select", Options: watchExpiryOptions("infinite")}},
	})
}

func (s *Server) unwatchForm(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	if err := requireLogin(viewerOf(r), "unwatch pages"); err != nil {
		return err
	}
	return s.writeForm(w, r, t, "unwatch", http.StatusOK, formData{
		Heading: "Unwatch " + string(t),
		Intro:   "Remove this page and its discussion page from your watchlist.",
		Action:  t.URL() + "?action=unwatch", Submit: "Unwatch", Cancel: t.URL(),
	})
}

func (s *Server) watch(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	v := viewerOf(r)
	if err := requireLogin(v, "watch pages"); err != nil {
		return err
	}
	name := r.PostFormValue("expiry")
	if name == "" {
		name = "infinite"
	}
	expires, ok := wiki.WatchExpiry(name, s.now())
	if !ok {
		return wiki.Errorf(wiki.KindInvalid, "unknown watch period %q; choose one of the form's periods", sanitizeLine(name))
	}
	if err := s.setWatch(r, v, t, true, expires); err != nil {
		return err
	}
	return s.watchDone(w, r, t, true)
}

func (s *Server) unwatch(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	v := viewerOf(r)
	if err := requireLogin(v, "unwatch pages"); err != nil {
		return err
	}
	if err := s.setWatch(r, v, t, false, time.Time{}); err != nil {
		return err
	}
	return s.watchDone(w, r, t, false)
}

// setWatch adds t and its talk (or subject) page to the viewer's
// watchlist, or removes them, and has every process read the list again.
func (s *Server) setWatch(r *http.Request, v Viewer, t wiki.Title, on bool, expires time.Time) error {
	ctx := r.Context()
	var err error
	if on {
		err = s.store.WatchTitles(ctx, v.User.ID, wiki.WatchPair(t), expires, s.now())
	} else {
		err = s.store.UnwatchTitles(ctx, v.User.ID, wiki.WatchPair(t))
	}
	if err != nil {
		return err
	}
	s.watchChanged(ctx, v.User.ID)
	return nil
}

// watchDone answers a watch change: the script gets 204 and a header
// naming the new state; a browser without it goes back to the page.
func (s *Server) watchDone(w http.ResponseWriter, r *http.Request, t wiki.Title, watched bool) error {
	if r.Header.Get("X-Requested-With") == "wikid" {
		state := "unwatched"
		if watched {
			state = "watched"
		}
		httpx.Write(w, r, &httpx.Response{Status: http.StatusNoContent, Cache: httpx.NoStore,
			Header: http.Header{"X-Wikid-Watch": {state}}})
		return nil
	}
	redirect(w, r, t.URL(), http.StatusSeeOther)
	return nil
}

// autoWatch adds a page the viewer just created or edited to their
// watchlist, unless they turned that off, the edit form's box was
// cleared, or it is there already; the box cleared on a watched page
// removes it, as in MediaWiki. A failure is logged: the edit is saved.
func (s *Server) autoWatch(r *http.Request, t wiki.Title) {
	v := viewerOf(r)
	if !v.LoggedIn || v.Token {
		return
	}
	watching := v.Watching(t, s.now())
	want := !v.User.Prefs.NoAutoWatch || watching
	if _, ok := r.PostForm["watchthis-shown"]; ok {
		want = r.PostFormValue("watchthis") != ""
	}
	if want == watching {
		return
	}
	if err := s.setWatch(r, v, t, want, time.Time{}); err != nil {
		s.log.Error("watch edited page", "title", string(t), "err", err)
	}
}

// pages counts the pages the watchlist covers: each watched page with its
// talk page counts once.
func (w *userState) pages(now time.Time) int {
	if w == nil {
		return 0
	}
	n := 0
	for t := range w.titles {
		if w.Has(t, now) && !(t.IsTalk() && w.Has(t.Subject(), now)) {
			n++
		}
	}
	return n
}

// watchlistPage is Special:Watchlist: the changes to the viewer's watched
// pages, with the filters of RecentChanges (the last 7 days unless asked).
func (s *Server) watchlistPage(w http.ResponseWriter, r *http.Request, _ string) error {
	v := viewerOf(r)
	rq := httpx.From(r)
	if rq.Has("wlowner") || rq.Has("wltoken") {
		return s.watchlistFeed(w, r)
	}
	if v.LoggedIn {
		if err := s.requireRead(r); err != nil {
			return err
		}
	}
	if !v.LoggedIn || v.Token {
		redirect(w, r, "/wiki/Special:UserLogin?returnto=Special%3AWatchlist", http.StatusFound)
		return nil
	}
	d := changesData{Heading: "Watchlist", Watchlist: true, Watched: v.State.pages(s.now())}
	var q wiki.ChangeQuery
	s.changeFilters(r, &q, &d, "7", v.User.Name)
	list := func(ctx context.Context, q wiki.ChangeQuery) ([]wiki.Change, error) {
		return s.store.WatchedChanges(ctx, v.User.ID, q, s.now())
	}
	return s.changesPage(w, r, d, q, "/wiki/Special:Watchlist", list, cacheShort) // private: the viewer is logged in
}

type editWatchlistData struct {
	Titles []wiki.Watch
	Count  int // the pages watched (a page and its talk page count once)
	Next   string
}

// editWatchlistPage is Special:EditWatchlist: the watched pages, with
// boxes to remove some or all of them.
func (s *Server) editWatchlistPage(w http.ResponseWriter, r *http.Request, _ string) error {
	v := viewerOf(r)
	if !v.LoggedIn || v.Token {
		if r.Method != http.MethodPost {
			redirect(w, r, "/wiki/Special:UserLogin?returnto=Special%3AEditWatchlist", http.StatusFound)
			return nil
		}
		return requireLogin(v, "edit your watchlist")
	}
	ctx := r.Context()
	if r.Method == http.MethodPost {
		var remove []wiki.Title
		if r.PostFormValue("clear") != "" {
			for {
				ws, err := s.store.Watchlist(ctx, v.User.ID, "", 1000, s.now())
				if err != nil {
					return err
				}
				if len(ws) == 0 {
					break
				}
				titles := make([]wiki.Title, len(ws))
				for i, x := range ws {
					titles[i] = x.Title
				}
				if err := s.store.UnwatchTitles(ctx, v.User.ID, titles); err != nil {
					return err
				}
			}
			s.watchChanged(ctx, v.User.ID)
			redirect(w, r, "/wiki/Special:EditWatchlist", http.StatusSeeOther)
			return nil
		}
		for _, name := range r.PostForm["titles"] {
			t, err := s.titles.Parse(name)
			if err != nil {
				return wiki.Errorf(wiki.KindInvalid, "%q is not a title: %s", sanitizeLine(name), wiki.Message(err))
			}
			remove = append(remove, wiki.WatchPair(t)...)
		}
		if len(remove) > wiki.MaxWatchlist*2 {
			return wiki.Errorf(wiki.KindInvalid, "too many titles in one request; remove at most %d at a time", wiki.MaxWatchlist)
		}
		if len(remove) > 0 {
			if err := s.store.UnwatchTitles(ctx, v.User.ID, remove); err != nil {
				return err
			}
			s.watchChanged(ctx, v.User.ID)
		}
		redirect(w, r, "/wiki/Special:EditWatchlist", http.StatusSeeOther)
		return nil
	}
	rq := httpx.From(r)
	limit := int(rq.Int("limit", 500))
	now := s.now()
	ws, err := s.store.Watchlist(ctx, v.User.ID, rq.Title("from"), limit+1, now)
	if err != nil {
		return err
	}
	d := editWatchlistData{Count: v.State.pages(now)}
	if len(ws) > limit {
		d.Next = rq.Link("/wiki/Special:EditWatchlist", "from", ws[limit].Title.Key(), "limit", strconv.Itoa(limit))
		ws = ws[:limit]
	}
	for _, x := range ws {
		// A talk page is listed with its subject page, as one entry.
		if x.Title.IsTalk() && v.State.Has(x.Title.Subject(), now) {
			continue
		}
		d.Titles = append(d.Titles, x)
	}
	p := s.formPage(r, "Edit watchlist")
	p.Data = d
	s.writePage(w, r, http.StatusOK, "editwatchlist", p)
	return nil
}

// watchlistFeed answers Special:Watchlist?feed=atom&wlowner=NAME&wltoken=T:
// the feed of NAME's watchlist, for a feed reader that has no session,
// read with the token NAME made in the preferences (MediaWiki's
// feedwatchlist). It is private: never stored by a cache.
func (s *Server) watchlistFeed(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	rq := httpx.From(r)
	if feedFormat(r) == "" {
		return wiki.Errorf(wiki.KindInvalid, "wlowner and wltoken are for the watchlist feed: add feed=atom or feed=rss")
	}
	bad := wiki.Errorf(wiki.KindForbidden, "the watchlist feed link is wrong or was revoked; make a new one on Special:Preferences")
	u, err := s.store.FindUserByName(ctx, rq.Get("wlowner"))
	if errors.Is(err, wiki.ErrNotFound) {
		return bad
	}
	if err != nil {
		return err
	}
	hash, err := s.store.WatchlistToken(ctx, u.ID)
	if err != nil {
		return err
	}
	if hash == "" || subtle.ConstantTimeCompare([]byte(hash), []byte(auth.HashToken(rq.Get("wltoken")))) != 1 {
		return bad
	}
	// The token reads as its owner: only while the owner may read the wiki.
	if !u.Group.AtLeast(s.cfg.ReadGroup) {
		return bad
	}
	var q wiki.ChangeQuery
	var d changesData
	s.changeFilters(r, &q, &d, "7", u.Name)
	changesCursor(r, &q)
	cs, err := s.store.WatchedChanges(ctx, u.ID, q, s.now())
	if err != nil {
		return err
	}
	return s.writeChangesFeed(w, r, "Watchlist of "+u.Name, "Changes to the pages "+u.Name+" watches", cs, true)
}
