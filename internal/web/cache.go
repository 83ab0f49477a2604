package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wikid/wikid/internal/edge"
	"github.com/wikid/wikid/internal/view"
	"github.com/wikid/wikid/internal/wiki"
)

// How responses are cached (DESIGN.md, "the request path"):
//
//   - Anonymous GET/HEAD requests go through the edge cache, keyed by the
//     normalized URL; encodings are variants inside an entry. Handlers mark
//     what may be stored (writeBody does, for public pages) and tag it with the
//     titles it depends on, so that a purge of a title drops every response
//     that showed it.
//   - A request with a valid session never reads or fills an anonymous entry
//     as such. For plain article views it reuses the anonymous entry's bytes
//     and splices in the per-user parts (user bar, page tabs) between markers
//     the layout leaves around them: no template, no markup, no query.
//   - Everything else (forms, POST results, errors) is no-store.

// ListsTag is carried by responses that list pages (RecentChanges,
// AllPages, macros); every change purges it.
const ListsTag = "~lists"

// Markers around the per-user parts of the layout.
var (
	markUserOpen  = []byte("<!--wikid:user-->")
	markUserClose = []byte("<!--/wikid:user-->")
	markTabsOpen  = []byte("<!--wikid:tabs-->")
	markTabsClose = []byte("<!--/wikid:tabs-->")
)

// TagsFor returns the edge tags of a title.
func TagsFor(titles ...wiki.Title) []string {
	out := make([]string, 0, len(titles)+1)
	for _, t := range titles {
		out = append(out, string(t))
	}
	return append(out, ListsTag)
}

type tagSet struct{ tags []string }

const tagsKey ctxKey = 3

// addTag records that the response depends on t (for example the target of
// a redirect that was followed).
func addTag(r *http.Request, t wiki.Title) {
	if ts, ok := r.Context().Value(tagsKey).(*tagSet); ok {
		ts.tags = append(ts.tags, string(t))
	}
}

// cacheLayer routes GET and HEAD through the edge cache (anonymous) or the
// splice path (logged-in article views).
func (s *Server) cacheLayer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.edge == nil || !cachedPath(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		key, ok := edge.Key(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		v := viewerOf(r)
		if !v.LoggedIn {
			if !s.canRead(v) {
				next.ServeHTTP(w, r) // nothing public to cache
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), tagsKey, &tagSet{}))
			s.edge.Serve(w, r, key, next)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/static/") {
			s.edge.Serve(w, r, key, next) // assets are the same for everyone
			return
		}
		if r.URL.RawQuery == "" && s.canRead(Viewer{}) && s.serveSpliced(w, r, key, next) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

func cachedPath(p string) bool {
	return strings.HasPrefix(p, "/wiki/") || strings.HasPrefix(p, "/w/macro/") || strings.HasPrefix(p, "/static/")
}

// serveSpliced answers a logged-in view from the anonymous entry of the same
// URL, filling it first if needed. It reports false when there is no entry
// to splice (the page is missing, or the response was not cacheable).
func (s *Server) serveSpliced(w http.ResponseWriter, r *http.Request, key string, next http.Handler) bool {
	// Before routing: the title comes from the path itself.
	t, err := wiki.ParseTitle(strings.TrimPrefix(r.URL.Path, "/wiki/"))
	if err != nil || t.IsSpecial() || r.URL.EscapedPath() != t.URL() {
		return false
	}
	v, ok := s.edge.Lookup(key, 0)
	if !ok {
		s.fillAnonymous(r, key, next)
		if v, ok = s.edge.Lookup(key, 0); !ok {
			return false
		}
	}
	if v.Status != http.StatusOK {
		return false
	}
	body := v.Body
	u0, u1 := bytes.Index(body, markUserOpen), bytes.Index(body, markUserClose)
	t0, t1 := bytes.Index(body, markTabsOpen), bytes.Index(body, markTabsClose)
	if u0 < 0 || u1 < u0 || t0 < u1 || t1 < t0 {
		return false
	}
	user := s.userBar(r)
	tabs := s.tabsHTML(r, t, true)
	etag := spliceETag(v.ETag(), user, tabs)
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	setSecurityHeaders(h)
	h.Set("Cache-Control", "private, no-cache")
	h.Set("Vary", "Accept-Encoding, Cookie")
	h.Set("ETag", etag)
	if lm := v.LastModified(); lm != "" {
		h.Set("Last-Modified", lm)
	}
	h.Set("X-Cache", "SPLICE")
	h.Set("Server-Timing", "cache;desc=splice")
	if match(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return true
	}
	n := len(body) - (u1 - u0 - len(markUserOpen)) - (t1 - t0 - len(markTabsOpen)) + len(user) + len(tabs)
	h.Set("Content-Length", strconv.Itoa(n))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return true
	}
	w.Write(body[:u0+len(markUserOpen)])
	w.Write(user)
	w.Write(body[u1 : t0+len(markTabsOpen)])
	w.Write(tabs)
	w.Write(body[t1:])
	return true
}

func spliceETag(base string, parts ...[]byte) string {
	h := sha256.New()
	h.Write([]byte(base))
	for _, p := range parts {
		h.Write(p)
	}
	return `"` + hex.EncodeToString(h.Sum(nil)[:12]) + `"`
}

// fillAnonymous renders the anonymous response for key into the edge
// cache, as an anonymous request for the same URL would.
func (s *Server) fillAnonymous(r *http.Request, key string, next http.Handler) {
	ar := r.Clone(context.WithValue(context.WithValue(r.Context(), viewerKey, Viewer{}), tagsKey, &tagSet{}))
	ar.Method = http.MethodGet
	ar.Header = http.Header{}
	s.edge.Serve(discard{h: http.Header{}}, ar, key, next)
}

type discard struct{ h http.Header }

func (d discard) Header() http.Header         { return d.h }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}

// userBar is the logged-in user bar, cached per session: it holds the
// session's CSRF token for the logout form.
func (s *Server) userBar(r *http.Request) []byte {
	v := viewerOf(r)
	if b := s.sessions.userBar(v.Session.ID); b != nil {
		return b
	}
	var buf bytes.Buffer
	p := &Page{Viewer: v, CSRF: s.csrfToken(r), AllowRegistration: s.cfg.AllowRegistration}
	if err := s.views.Fragment(&buf, "userbar", p); err != nil {
		s.log.Error("render user bar", "err", err)
		return nil
	}
	b := buf.Bytes()
	s.sessions.setUserBar(v.Session.ID, b)
	return b
}

// tabsHTML renders the page tabs for the viewer, as the layout does.
func (s *Server) tabsHTML(r *http.Request, t wiki.Title, exists bool) []byte {
	var b bytes.Buffer
	view.WriteTabs(&b, s.titleTabs(r, t, "view", exists))
	return b.Bytes()
}

// markForEdge asks the edge to store a public response, tagged with the
// titles it depends on.
func (s *Server) markForEdge(w http.ResponseWriter, r *http.Request, mode cacheMode) {
	if s.edge == nil {
		return
	}
	ts, _ := r.Context().Value(tagsKey).(*tagSet)
	if ts == nil {
		return
	}
	tags := append([]string(nil), ts.tags...)
	if t, err := titleFromPath(r); err == nil && r.PathValue("title") != "" {
		tags = append(tags, string(t))
	}
	ttl := time.Duration(0)
	if mode == cacheShort {
		ttl = time.Duration(s.cfg.ListTTL)
		tags = append(tags, ListsTag)
	}
	edge.Mark(w, edge.Directive{Tags: tags, TTL: ttl})
}
