package web

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/wikid/wikid/internal/timing"
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
	Flash             string
	NoIndex           bool
	Data              any
}

// Tab is one of the page actions above the content.
type Tab = view.Tab

func (s *Server) page(r *http.Request, headTitle string) *Page {
	v := viewerOf(r)
	p := &Page{SiteName: s.cfg.SiteName, HeadTitle: headTitle, Viewer: v,
		AllowRegistration: s.cfg.AllowRegistration}
	if v.LoggedIn {
		p.CSRF = s.csrfToken(r)
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

func (s *Server) tabsFor(v Viewer, t wiki.Title, active string, exists bool) []Tab {
	tabs := []Tab{{Label: "Read", URL: t.URL(), Active: active == "view"}}
	if s.canEdit(v) || !v.LoggedIn {
		label := "Edit"
		if !exists {
			label = "Create"
		}
		tabs = append(tabs, Tab{Label: label, URL: t.URL() + "?action=edit", Active: active == "edit"})
	}
	tabs = append(tabs, Tab{Label: "History", URL: t.URL() + "?action=history", Active: active == "history"})
	if exists && s.canEdit(v) && v.LoggedIn {
		tabs = append(tabs, Tab{Label: "Move", URL: t.URL() + "?action=move", Active: active == "move"})
	}
	if v.IsAdmin() && exists {
		tabs = append(tabs, Tab{Label: "Delete", URL: t.URL() + "?action=delete", Active: active == "delete"})
	}
	return tabs
}

// cacheMode says who may keep a response.
type cacheMode int

const (
	cacheNone   cacheMode = iota // no-store: forms, previews, POST results, errors
	cachePublic                  // anonymous reads: shared caches may keep it for s-maxage
	cacheShort                   // anonymous lists: a short shared lifetime
)

// writePage renders a page template and writes it with validators and
// cache headers. Logged-in responses are always private.
func (s *Server) writePage(w http.ResponseWriter, r *http.Request, status int, tmpl string, p *Page, mode cacheMode) {
	body, err := s.views.RenderBytes(tmpl, p)
	if err != nil {
		s.log.Error("render template", "template", tmpl, "err", err)
		http.Error(w, "Internal server error: a page template failed; the error was logged.", http.StatusInternalServerError)
		return
	}
	s.writeBody(w, r, status, "text/html; charset=utf-8", body, mode, time.Time{})
}

func (s *Server) writeBody(w http.ResponseWriter, r *http.Request, status int, ctype string, body []byte, mode cacheMode, modified time.Time) {
	h := w.Header()
	h.Set("Content-Type", ctype)
	setSecurityHeaders(h)
	v := viewerOf(r)
	cacheable := status == http.StatusOK && (r.Method == http.MethodGet || r.Method == http.MethodHead) && mode != cacheNone
	switch {
	case !cacheable:
		h.Set("Cache-Control", "no-store")
	case v.LoggedIn || !s.canRead(Viewer{}):
		h.Set("Cache-Control", "private, no-cache")
	case mode == cacheShort:
		h.Set("Cache-Control", "public, max-age=0, s-maxage="+strconv.Itoa(int(time.Duration(s.cfg.ListTTL).Seconds())))
	default:
		h.Set("Cache-Control", "public, max-age=0, s-maxage="+strconv.Itoa(s.cfg.SMaxAge))
	}
	if cacheable {
		if !v.LoggedIn {
			s.markForEdge(w, r, mode)
		}
		h.Set("Vary", "Accept-Encoding, Cookie")
		etag := etagOf([]byte(s.views.Version), body)
		h.Set("ETag", etag)
		if !modified.IsZero() {
			h.Set("Last-Modified", modified.UTC().Format(http.TimeFormat))
		}
		if notModified(r, etag, modified) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Server-Timing", timing.From(r.Context()).Header(cacheStatus(r, v), time.Now()))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// cacheStatus names how the edge treated r, for Server-Timing.
func cacheStatus(r *http.Request, v Viewer) string {
	switch {
	case v.LoggedIn:
		return "bypass"
	case r.Context().Value(tagsKey) != nil:
		return "miss"
	}
	return "none"
}

// notModified applies RFC 9110: If-None-Match wins over If-Modified-Since.
func notModified(r *http.Request, etag string, modified time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		return match(inm, etag)
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" && !modified.IsZero() {
		t, err := http.ParseTime(ims)
		return err == nil && !modified.Truncate(time.Second).After(t)
	}
	return false
}

func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
	h.Set("X-Frame-Options", "DENY")
}

// redirect answers a POST with 303 See Other (never cached).
func redirect(w http.ResponseWriter, r *http.Request, to string, status int) {
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, to, status)
}

// returnTo reads a returnto value and keeps it only if it is a valid title.
func returnTo(v string) (wiki.Title, bool) {
	if v == "" {
		return "", false
	}
	t, err := wiki.ParseTitle(v)
	if err != nil || t.IsSpecial() && (t == "Special:UserLogin" || t == "Special:UserLogout" || t == "Special:CreateAccount") {
		return "", false
	}
	return t, true
}

func returnToQuery(t wiki.Title) string {
	if t == "" {
		return ""
	}
	return "?returnto=" + url.QueryEscape(t.Key())
}
