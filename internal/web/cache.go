package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/edge"
	"github.com/wikid/wikid/internal/front"
	"github.com/wikid/wikid/internal/purge"
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

// Markers around the per-user parts of the layout.
var (
	markUserOpen  = []byte("<!--wikid:user-->")
	markUserClose = []byte("<!--/wikid:user-->")
	markTabsOpen  = []byte("<!--wikid:tabs-->")
	markTabsClose = []byte("<!--/wikid:tabs-->")
)

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
	t, ok := splicedTitle(r.URL.Path, r.URL.EscapedPath())
	if !ok {
		return false
	}
	v, ok := s.edge.Lookup(key, 0)
	if !ok {
		s.fillAnonymous(r, key, next)
		if v, ok = s.edge.Lookup(key, 0); !ok {
			return false
		}
	}
	viewer := viewerOf(r)
	sp, ok := s.splice(viewer, t, key, v, r.Header.Get("If-None-Match"))
	if !ok {
		return false
	}
	h := w.Header()
	setSecurityHeaders(h)
	for _, f := range splicedFields {
		h[f[0]] = []string{f[1]}
	}
	h.Set("ETag", sp.etag)
	if sp.lastMod != "" {
		h.Set("Last-Modified", sp.lastMod)
	}
	if sp.status == http.StatusNotModified {
		w.WriteHeader(http.StatusNotModified)
		return true
	}
	pieces, n := sp.parts[:], sp.length
	if edge.ParseAcceptEncoding(r.Header.Get("Accept-Encoding"))&edge.AcceptGzip != 0 {
		pieces, n = gzipPieces(&sp, s.userBarGz(viewer), make([][]byte, 0, 8))
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(n))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return true
	}
	// One Write: net/http then sends the page in as few system calls as it can.
	bp := splicePool.Get().(*[]byte)
	out := (*bp)[:0]
	for _, part := range pieces {
		out = append(out, part...)
	}
	w.Write(out)
	*bp = out
	splicePool.Put(bp)
	return true
}

var splicePool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// splicedFields are the headers of every spliced view besides the security
// headers, ETag, Last-Modified and Content-Length.
var splicedFields = [][2]string{
	{"Content-Type", "text/html; charset=utf-8"},
	{"Cache-Control", "private, no-cache"},
	{"Vary", "Accept-Encoding, Cookie"},
	{"X-Cache", "SPLICE"},
	{"Server-Timing", "cache;desc=splice"},
}

// splicedWire is splicedFields and the security headers as header lines,
// for the front server.
var splicedWire = func() []byte {
	h := http.Header{}
	setSecurityHeaders(h)
	for _, f := range splicedFields {
		h.Set(f[0], f[1])
	}
	var b bytes.Buffer
	h.Write(&b)
	return b.Bytes()
}()

// splicedTitle returns the title of a plain article URL, if path is one in
// canonical form (escaped is the path as sent).
func splicedTitle(path, escaped string) (wiki.Title, bool) {
	name, ok := strings.CutPrefix(path, "/wiki/")
	if !ok {
		return "", false
	}
	t, err := wiki.ParseTitle(name)
	if err != nil || t.IsSpecial() || escaped != t.URL() {
		return "", false
	}
	return t, true
}

// spliced is a logged-in view assembled from a cached anonymous page.
type spliced struct {
	status        int // 200, or 304 when inm matched
	etag, lastMod string
	baseETag      string   // the cached anonymous page's
	shared        *gzEntry // what views of this page version share
	tabs          *gzTabs
	parts         [5][]byte // page bytes around the user bar and the tabs
	length        int
}

// splice cuts the anonymous page at its markers and puts the viewer's user
// bar and tabs in. The parts alias cached, immutable bytes.
func (s *Server) splice(viewer Viewer, t wiki.Title, key string, v *edge.Variant, inm string) (spliced, bool) {
	if v.Status != http.StatusOK || v.Encoding != edge.Identity {
		return spliced{}, false
	}
	body := v.Body
	u0, u1 := bytes.Index(body, markUserOpen), bytes.Index(body, markUserClose)
	t0, t1 := bytes.Index(body, markTabsOpen), bytes.Index(body, markTabsClose)
	if u0 < 0 || u1 < u0 || t0 < u1 || t1 < t0 {
		return spliced{}, false
	}
	user := s.userBar(viewer)
	shared := s.gz.entry(key, v.ETag())
	tabs := shared.tabsFor(viewer.Group().Rank(), func() []byte { return s.tabsHTML(viewer, t, true) })
	sp := spliced{status: http.StatusOK, etag: spliceETag(v.ETag(), user, tabs.html), lastMod: v.LastModified(),
		baseETag: v.ETag(), shared: shared, tabs: tabs}
	if match(inm, sp.etag) {
		sp.status = http.StatusNotModified
		return sp, true
	}
	sp.parts = [5][]byte{body[:u0+len(markUserOpen)], user, body[u1 : t0+len(markTabsOpen)], tabs.html, body[t1:]}
	for _, p := range sp.parts {
		sp.length += len(p)
	}
	return sp, true
}

// Personal answers a request with a session cookie for the front server
// from a cached page. Anything else (an unknown session, a page not cached,
// a query) declines, and net/http serves the request.
func (s *Server) Personal(p *front.Personal) bool {
	if s.edge == nil || !s.canRead(Viewer{}) {
		return false
	}
	token := sessionFromHeader(p.Cookie)
	if token == "" {
		return false
	}
	// A session not seen lately costs one indexed lookup, once per
	// sessionCacheTTL, so that the connection stays on the fast path.
	viewer, ok := s.sessionViewer(context.Background(), auth.HashToken(token))
	if !ok {
		return false
	}
	path := p.Target
	if strings.IndexByte(path, '?') >= 0 {
		return false
	}
	unescaped, err := url.PathUnescape(path)
	if err != nil {
		return false
	}
	t, ok := splicedTitle(unescaped, path)
	if !ok {
		return false
	}
	key, ok := edge.KeyOf(http.MethodGet, path)
	if !ok {
		return false
	}
	v, ok := s.edge.Lookup(key, 0)
	if !ok {
		return false
	}
	sp, ok := s.splice(viewer, t, key, v, p.IfNoneMatch)
	if !ok {
		return false
	}
	h := append(p.Header, splicedWire...)
	h = append(h, "Etag: "...)
	h = append(h, sp.etag...)
	h = append(h, "\r\n"...)
	if sp.lastMod != "" {
		h = append(h, "Last-Modified: "...)
		h = append(h, sp.lastMod...)
		h = append(h, "\r\n"...)
	}
	p.Status = sp.status
	if sp.status == http.StatusOK {
		n := sp.length
		if p.Accepted&edge.AcceptGzip != 0 {
			p.Body, n = gzipPieces(&sp, s.userBarGz(viewer), p.Body)
			h = append(h, "Content-Encoding: gzip\r\n"...)
		} else {
			p.Body = append(p.Body[:0], sp.parts[:]...)
		}
		h = append(h, "Content-Length: "...)
		h = strconv.AppendInt(h, int64(n), 10)
		h = append(h, "\r\n"...)
	}
	p.Header = h
	return true
}

// sessionFromHeader finds the session token in a Cookie header as
// sessionCookie does: exactly one wikid_session, of a plausible form.
func sessionFromHeader(h string) string {
	var val string
	n := 0
	for h != "" {
		var part string
		part, h, _ = strings.Cut(h, ";")
		name, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok && name == SessionCookie {
			val, n = v, n+1
		}
	}
	if n != 1 || len(val) < 20 || len(val) > 100 {
		return ""
	}
	for i := 0; i < len(val); i++ {
		c := val[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return ""
		}
	}
	return val
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
func (s *Server) userBar(v Viewer) []byte {
	if b := s.sessions.userBar(v.Session.ID); b != nil {
		return b
	}
	var buf bytes.Buffer
	p := &Page{Viewer: v, CSRF: v.Session.CSRF, AllowRegistration: s.cfg.AllowRegistration}
	if err := s.views.Fragment(&buf, "userbar", p); err != nil {
		s.log.Error("render user bar", "err", err)
		return nil
	}
	b := buf.Bytes()
	s.sessions.setUserBar(v.Session.ID, b)
	return b
}

// userBarGz is the user bar deflated for gzip splicing, cached per session.
func (s *Server) userBarGz(v Viewer) gzUser {
	if u, ok := s.sessions.userBarGz(v.Session.ID); ok {
		return u
	}
	u := gzUser{gz: deflateFlushed(s.userBar(v))}
	s.sessions.setUserBarGz(v.Session.ID, u)
	return u
}

// tabsHTML renders the page tabs for the viewer, as the layout does.
func (s *Server) tabsHTML(v Viewer, t wiki.Title, exists bool) []byte {
	var b bytes.Buffer
	view.WriteTabs(&b, s.tabsFor(v, t, "view", exists))
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
		tags = append(tags, purge.ListsTag)
	}
	w.Header().Set("Surrogate-Key", purge.SurrogateKeys(tags))
	edge.Mark(w, edge.Directive{Tags: tags, TTL: ttl})
}
