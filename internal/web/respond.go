package web

import (
	"net/http"
	"time"

	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/purge"
	"github.com/wikid/wikid/internal/view"
	"github.com/wikid/wikid/internal/wiki"
)

// Page is the data every template gets: the chrome and the page's own Data.
type Page struct {
	SiteName          string
	HeadTitle         string
	Viewer            Viewer
	CSRF              string
	AllowRegistration bool
	ReturnTo          string // "?returnto=Title" for the login links, or ""
	SearchQuery       string
	Tabs              []Tab
	NSTabs            []Tab // the page's and its discussion's (namespaceTabs)
	Flash             string
	NoIndex           bool
	Feeds             []FeedLink // offered in the head (<link rel="alternate">)
	Data              any
	// zone and layout are how Date and Clock show times: the viewer's
	// preferences on pages drawn for one logged-in viewer (never stored
	// in a shared cache), UTC and the default format otherwise.
	zone   *time.Location
	layout string
}

// Date shows t in the viewer's zone and date format.
func (p *Page) Date(t time.Time) string { return t.In(p.loc()).Format(p.layoutOr()) }

// Clock shows the time of day of t in the viewer's zone.
func (p *Page) Clock(t time.Time) string { return t.In(p.loc()).Format("15:04") }

// Day shows the day of t in the viewer's zone.
func (p *Page) Day(t time.Time) string { return t.In(p.loc()).Format("2 January 2006") }

func (p *Page) loc() *time.Location {
	if p.zone == nil {
		return time.UTC
	}
	return p.zone
}

func (p *Page) layoutOr() string {
	if p.layout == "" {
		return wiki.DateFormats[0].Layout
	}
	return p.layout
}

// Tab is one of the page actions above the content.
type Tab = view.Tab

func (s *Server) page(r *http.Request, headTitle string) *Page {
	v := viewerOf(r)
	p := &Page{SiteName: s.cfg.SiteName, HeadTitle: headTitle, Viewer: v,
		AllowRegistration: s.cfg.AllowRegistration}
	if v.LoggedIn {
		p.CSRF = s.csrfToken(r)
		// A logged-in viewer's pages are never stored for others (the
		// edge key has the session bit, httpx.Write makes them private,
		// and spliced article views reuse the anonymous bytes, which
		// never call Date), so they may show the viewer's own zone.
		if z, err := loadZone(v.User.Prefs.TimeZone); err == nil {
			p.zone = z
		}
		p.layout = wiki.DateLayout(v.User.Prefs.DateFormat)
	}
	return p
}

// formPage is page for responses that hold a form: they are never cached,
// so they may carry an anonymous CSRF token.
func (s *Server) formPage(r *http.Request, headTitle string) *Page {
	p := s.page(r, headTitle)
	p.CSRF = s.csrfToken(r)
	p.NoIndex = true
	return p
}

func (s *Server) titleTabs(r *http.Request, t wiki.Title, active string, exists bool) []Tab {
	return s.tabsFor(viewerOf(r), t, active, exists)
}

// setTabs gives p the tabs of page t (exists says whether it does): its
// actions, with active the one shown, and its namespace tabs.
func (s *Server) setTabs(p *Page, r *http.Request, t wiki.Title, active string, exists bool) error {
	p.Tabs = s.titleTabs(r, t, active, exists)
	ns, err := s.namespaceTabs(r, t, exists)
	p.NSTabs = ns
	return err
}

// namespaceTabs returns the tabs of t's subject page and talk page, as
// MediaWiki draws them: "Page" (or "User page", "Template"…) and
// "Discussion", t's own marked active, one naming a page that does not
// exist red and leading to its edit form. It reads whether the other page
// exists, so a cached response showing them carries t's tag and the
// engine purges t when the other page is created or deleted.
func (s *Server) namespaceTabs(r *http.Request, t wiki.Title, exists bool) ([]Tab, error) {
	pair, ok := t.Pair()
	if !ok {
		return nil, nil
	}
	found, err := s.store.ExistingTitles(r.Context(), []wiki.Title{pair})
	if err != nil {
		return nil, err
	}
	tab := func(u wiki.Title, exists bool) Tab {
		label := "Discussion"
		if !u.IsTalk() {
			label = subjectTabLabels[u.Namespace()]
		}
		tb := Tab{Label: label, URL: u.URL(), Active: u == t, New: !exists}
		if !exists {
			tb.URL += "?action=edit&redlink=1"
		}
		return tb
	}
	subject, talk := tab(t, exists), tab(pair, found[pair])
	if t.IsTalk() {
		subject, talk = talk, subject
	}
	return []Tab{subject, talk}, nil
}

// subjectTabLabels name the tab of a subject page by its namespace, as
// MediaWiki's do (nstab-main, nstab-user…).
var subjectTabLabels = map[string]string{
	wiki.NSMain:     "Page",
	wiki.NSUser:     "User page",
	wiki.NSProject:  "Project page",
	wiki.NSFile:     "File",
	wiki.NSTemplate: "Template",
	wiki.NSHelp:     "Help page",
	wiki.NSCategory: "Category",
}

func (s *Server) tabsFor(v Viewer, t wiki.Title, active string, exists bool) []Tab {
	return s.pageTabs(v, t, active, exists, v.Watching(t, s.now()))
}

// pageTabs returns the tabs of tabsFor, with the watch star as watched
// says (a logged-in viewer's).
func (s *Server) pageTabs(v Viewer, t wiki.Title, active string, exists, watched bool) []Tab {
	tabs := []Tab{{Label: "Read", URL: t.URL(), Active: active == "view"}}
	if s.canEdit(v) || !v.LoggedIn {
		label := "Edit"
		if !exists {
			label = "Create"
		}
		tabs = append(tabs, Tab{Label: label, URL: t.URL() + "?action=edit", Active: active == "edit"})
		if t.IsTalk() {
			// A new section at the end of a discussion, as MediaWiki's.
			tabs = append(tabs, Tab{Label: "Add topic", URL: t.URL() + "?action=edit&section=new", Active: active == "addtopic"})
		}
	}
	tabs = append(tabs, Tab{Label: "History", URL: t.URL() + "?action=history", Active: active == "history"})
	if exists && s.canEdit(v) && v.LoggedIn {
		tabs = append(tabs, Tab{Label: "Move", URL: t.URL() + "?action=move", Active: active == "move"})
		tabs = append(tabs, Tab{Label: "Change model", URL: t.URL() + "?action=editmodel", Active: active == "editmodel"})
	}
	if v.IsAdmin() && exists {
		tabs = append(tabs, Tab{Label: "Delete", URL: t.URL() + "?action=delete", Active: active == "delete"})
	}
	if v.IsAdmin() {
		tabs = append(tabs, Tab{Label: "Protect", URL: t.URL() + "?action=protect", Active: active == "protect"})
	}
	if v.IsAdmin() && exists && t.Namespace() == wiki.NSFile {
		// The file's page is shared by every reader: the revert of its
		// versions is a form of its own, reached from the admins' tabs.
		tabs = append(tabs, Tab{Label: "Revert file", URL: t.URL() + "?action=filerevert", Active: active == "filerevert"})
	}
	if v.LoggedIn && !v.Token {
		if watched {
			tabs = append(tabs, Tab{Label: "Unwatch", URL: t.URL() + "?action=unwatch", Active: active == "unwatch", Class: "watch watched"})
		} else {
			tabs = append(tabs, Tab{Label: "Watch", URL: t.URL() + "?action=watch", Active: active == "watch", Class: "watch"})
		}
	}
	return tabs
}

// cacheMode says who may keep a response; httpx.Write turns it into
// Cache-Control (and makes anything a logged-in viewer gets private).
type cacheMode int

const (
	cacheNone   cacheMode = iota // no-store: forms, previews, POST results, errors
	cachePublic                  // anonymous reads: shared caches may keep it for s-maxage
	cacheShort                   // anonymous lists: a short shared lifetime
	cacheBrief                   // a page as cachePublic, for a short lifetime: its render was cut short by time
)

// writePage renders a page template that is never stored (forms, errors).
func (s *Server) writePage(w http.ResponseWriter, r *http.Request, status int, tmpl string, p *Page) {
	body, err := s.views.RenderBytes(tmpl, p)
	if err != nil {
		s.templateFailed(w, r, tmpl, err)
		return
	}
	s.writeBody(w, r, status, "text/html; charset=utf-8", body, cacheNone, time.Time{})
}

// writeBodyPage renders a 200 page whose content last changed at modified.
func (s *Server) writeBodyPage(w http.ResponseWriter, r *http.Request, p *Page, tmpl string, mode cacheMode, modified time.Time) {
	body, err := s.views.RenderBytes(tmpl, p)
	if err != nil {
		s.templateFailed(w, r, tmpl, err)
		return
	}
	s.writeBody(w, r, http.StatusOK, "text/html; charset=utf-8", body, mode, modified)
}

func (s *Server) templateFailed(w http.ResponseWriter, r *http.Request, tmpl string, err error) {
	s.log.Error("render template", "template", tmpl, "err", err)
	httpx.Write(w, r, &httpx.Response{Status: http.StatusInternalServerError, Type: "text/plain; charset=utf-8",
		Body: []byte("Internal server error: a page template failed; the error was logged.\n")})
}

// writeBody sends a response through the one builder, with the tags of
// what it shows (the route's title and those added by addTag).
func (s *Server) writeBody(w http.ResponseWriter, r *http.Request, status int, ctype string, body []byte, mode cacheMode, modified time.Time) {
	resp := &httpx.Response{Status: status, Type: ctype, Body: body, Modified: modified, Header: takeHeader(w)}
	switch mode {
	case cachePublic, cacheBrief:
		resp.Cache, resp.SMaxAge, resp.Tags = httpx.Public, s.cfg.SMaxAge, tagsOf(r)
		resp.EdgeNote = spliceNoteOf(r)
		if mode == cacheBrief {
			ttl := time.Duration(s.cfg.ListTTL)
			resp.SMaxAge, resp.EdgeTTL = int(ttl.Seconds()), ttl
		}
		if until := untilOf(r); !until.IsZero() {
			// Whole seconds, rounded up: the entry outlives the state it
			// shows by less than a second.
			left := max(until.Sub(s.now()), 0)
			secs := int((left + time.Second - 1) / time.Second)
			resp.SMaxAge, resp.EdgeTTL = min(resp.SMaxAge, secs), time.Duration(max(secs, 1))*time.Second
		}
	case cacheShort:
		ttl := time.Duration(s.cfg.ListTTL)
		resp.Cache, resp.SMaxAge, resp.EdgeTTL = httpx.Public, int(ttl.Seconds()), ttl
		resp.Tags = append(tagsOf(r), purge.ListsTag)
		resp.Seldom = true // refilled every few seconds: no brotli variant
	}
	httpx.Write(w, r, resp)
}

// takeHeader returns the fields a handler set on w before writing (Allow,
// Retry-After, Content-Disposition), for the builder to send.
func takeHeader(w http.ResponseWriter) http.Header {
	h := w.Header()
	if len(h) == 0 {
		return nil
	}
	return h.Clone()
}

// redirect answers a POST with 303 See Other (never cached), or sends a
// GET elsewhere without caching the redirect.
func redirect(w http.ResponseWriter, r *http.Request, to string, status int) {
	httpx.Redirect(w, r, to, status, httpx.NoStore, 0)
}

// returnTo reads a returnto value and keeps it only if it is a valid title.
func (s *Server) returnTo(v string) (wiki.Title, bool) {
	if v == "" {
		return "", false
	}
	t, err := s.titles.Parse(v)
	if err != nil || t.IsSpecial() && (t == "Special:UserLogin" || t == "Special:UserLogout" || t == "Special:CreateAccount") {
		return "", false
	}
	return t, true
}

func returnToQuery(t wiki.Title) string {
	if t == "" {
		return ""
	}
	return "?returnto=" + httpx.QueryEscape(t.Key())
}
