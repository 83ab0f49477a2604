package web

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/edge"
	"github.com/wikid/wikid/internal/front"
	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/purge"
	"github.com/wikid/wikid/internal/view"
	"github.com/wikid/wikid/internal/wiki"
)

// How responses are cached (DESIGN.md, "the request path"):
//
//   - Every route parses its request into an httpx.Request; serve (server.go)
//     sends anonymous GET/HEAD requests for canonical targets through the edge
//     cache under the request's key. httpx.Write stores public responses,
//     tagged with the titles they show (tagsOf), so that a purge of a title
//     drops every response that showed it.
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

// tagSet is what a handler records about its response for the edge: the
// tags of what it shows, and, for an article view, the splice note (the
// title and existence the page tabs are drawn for).
type tagSet struct {
	tags   []string
	splice string
	until  time.Time // the response changes by itself then (expireWith)
}

// expireWith records that r's response shows a state that ends by itself
// at t (a protection's expiry): shared caches and the edge keep it no
// longer, so the first view after t is drawn anew without anyone purging.
// A zero t changes nothing.
func expireWith(r *http.Request, t time.Time) {
	if ts, ok := r.Context().Value(tagsKey).(*tagSet); ok && !t.IsZero() && (ts.until.IsZero() || t.Before(ts.until)) {
		ts.until = t
	}
}

// untilOf returns the time recorded by expireWith, or zero.
func untilOf(r *http.Request) time.Time {
	if ts, ok := r.Context().Value(tagsKey).(*tagSet); ok {
		return ts.until
	}
	return time.Time{}
}

// setSpliceNote records, for an article view, what a logged-in view spliced
// from this response must draw its tabs for: the page shown (a followed
// redirect's target) and whether it exists (a category page with members
// but no text does not).
func setSpliceNote(r *http.Request, t wiki.Title, exists bool) {
	if ts, ok := r.Context().Value(tagsKey).(*tagSet); ok {
		e := "0"
		if exists {
			e = "1"
		}
		ts.splice = e + string(t)
	}
}

// spliceNote reads a note set by setSpliceNote; ok is false when the
// response recorded none (it is not spliced).
func spliceNote(note string) (t wiki.Title, exists, ok bool) {
	if len(note) < 2 || (note[0] != '0' && note[0] != '1') {
		return "", false, false
	}
	return wiki.Title(note[1:]), note[0] == '1', true
}

func spliceNoteOf(r *http.Request) string {
	if ts, ok := r.Context().Value(tagsKey).(*tagSet); ok {
		return ts.splice
	}
	return ""
}

const tagsKey ctxKey = 3

// withTags returns r carrying a tag set that starts with the titles' tags.
func withTags(r *http.Request, titles ...wiki.Title) *http.Request {
	ts := &tagSet{}
	for _, t := range titles {
		ts.tags = append(ts.tags, purge.TitleTag(t))
	}
	return r.WithContext(context.WithValue(r.Context(), tagsKey, ts))
}

// addTag records that the response depends on t (for example the target of
// a redirect that was followed).
func addTag(r *http.Request, t wiki.Title) {
	if ts, ok := r.Context().Value(tagsKey).(*tagSet); ok {
		ts.tags = append(ts.tags, purge.TitleTag(t))
	}
}

// tagsOf returns the tags recorded for r's response.
func tagsOf(r *http.Request) []string {
	if ts, ok := r.Context().Value(tagsKey).(*tagSet); ok {
		return append([]string(nil), ts.tags...)
	}
	return nil
}

// serveSpliced answers a logged-in view of article t from the anonymous
// entry of the same key, filling it first if needed. It reports false when
// there is no entry to splice (the page is missing, or the response was not
// cacheable).
func (s *Server) serveSpliced(w http.ResponseWriter, r *http.Request, key string, t wiki.Title, next http.Handler) bool {
	v, ok := s.edge.Lookup(key, 0)
	if !ok {
		s.fillAnonymous(r, key, t, next)
		if v, ok = s.edge.Lookup(key, 0); !ok {
			return false
		}
	}
	viewer := viewerOf(r)
	var acc edge.Accepted
	for _, ae := range r.Header["Accept-Encoding"] {
		acc |= edge.ParseAcceptEncoding(ae)
	}
	gz := acc&edge.AcceptGzip != 0
	sp, ok := s.splice(viewer, key, v, gz, r.Header.Get("If-None-Match"), r.Header.Get("If-Modified-Since"))
	if !ok {
		return false
	}
	h := w.Header()
	httpx.SetSecurity(h)
	for _, f := range splicedFields {
		h[f[0]] = []string{f[1]}
	}
	h.Set("ETag", sp.etag)
	h.Set("Last-Modified", sp.lastMod)
	if sp.status == http.StatusNotModified {
		w.WriteHeader(http.StatusNotModified)
		return true
	}
	pieces, n := sp.parts[:], sp.length
	if gz {
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
	httpx.SetSecurity(h)
	for _, f := range splicedFields {
		h.Set(f[0], f[1])
	}
	var b bytes.Buffer
	h.Write(&b)
	return b.Bytes()
}()

// markers returns the offsets of the user bar's and the tabs' markers in
// body, found once per page version (shared) and checked on every use.
func markers(shared *gzEntry, body []byte) (u0, u1, t0, t1 int, ok bool) {
	if m := shared.marks.Load(); m != nil {
		u0, u1, t0, t1 = m[0], m[1], m[2], m[3]
		if t1+len(markTabsClose) <= len(body) && bytes.HasPrefix(body[u0:], markUserOpen) && bytes.HasPrefix(body[u1:], markUserClose) &&
			bytes.HasPrefix(body[t0:], markTabsOpen) && bytes.HasPrefix(body[t1:], markTabsClose) {
			return u0, u1, t0, t1, true
		}
	}
	u0, u1 = bytes.Index(body, markUserOpen), bytes.Index(body, markUserClose)
	t0, t1 = bytes.Index(body, markTabsOpen), bytes.Index(body, markTabsClose)
	if u0 < 0 || u1 < u0 || t0 < u1 || t1 < t0 {
		return 0, 0, 0, 0, false
	}
	shared.marks.Store(&[4]int{u0, u1, t0, t1})
	return u0, u1, t0, t1, true
}

// spliced is a logged-in view assembled from a cached anonymous page.
type spliced struct {
	status        int // 200, or 304 when the request's validators matched
	etag, lastMod string
	baseETag      string   // the cached anonymous page's
	shared        *gzEntry // what views of this page version share
	tabs          *gzTabs
	parts         [5][]byte // page bytes around the user bar and the tabs
	length        int
}

// splice cuts the anonymous page at its markers and puts the viewer's user
// bar and tabs in. The parts alias cached, immutable bytes.
//
// Validators: the ETag covers the page, the user bar and the tabs, one per
// content coding (gz). Last-Modified is the page's, or the session's start
// when later, so that a copy a browser kept from before this login (the
// anonymous page, another account's view) never validates.
func (s *Server) splice(viewer Viewer, key string, v *edge.Variant, gz bool, inm, ims string) (spliced, bool) {
	if v.Status != http.StatusOK || v.Encoding != edge.Identity {
		return spliced{}, false
	}
	// The tabs are drawn as the handler drew them for this page.
	t, exists, ok := spliceNote(v.Note())
	if !ok {
		return spliced{}, false
	}
	body := v.Body
	base := v.BaseETag()
	shared := s.gz.entry(key, base)
	u0, u1, t0, t1, ok := markers(shared, body)
	if !ok {
		return spliced{}, false
	}
	user := s.userBar(viewer)
	watched := viewer.Watching(t, s.now())
	tabs := shared.tabsFor(tabsVariant(viewer.Group().Rank(), watched), func() []byte { return s.tabsHTML(viewer, t, exists, watched) })
	etag := httpx.ETagOf([]byte(base), user, tabs.html)
	if gz {
		etag = edge.VariantETag(etag, edge.Gzip)
	}
	// The session's start is rounded up to the next second (HTTP dates have
	// seconds): a page last changed in the second of the login still gets
	// a later Last-Modified than any copy made before the login.
	lastMod, lastModStr := v.LastModifiedTime(), v.LastModified()
	if started := viewer.Session.Created.UTC().Truncate(time.Second).Add(time.Second); !lastMod.After(started) {
		lastMod, lastModStr = started, started.Format(http.TimeFormat)
	}
	sp := spliced{status: http.StatusOK, etag: etag, lastMod: lastModStr,
		baseETag: base, shared: shared, tabs: tabs}
	if (inm != "" || ims != "") && edge.NotModified(inm, ims, sp.etag, lastMod) {
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
	// sessionCacheTTL, so that the connection stays on the fast path; an
	// event loop (NoWait) must not wait for it, so it leaves such a
	// request to net/http, which looks the session up and remembers it.
	var viewer Viewer
	var ok bool
	if p.NoWait {
		var stale bool
		id := auth.HashToken(token)
		if viewer, stale, ok = s.sessions.getStale(id); stale {
			s.refreshSession(id)
		}
		if !ok && p.Later != nil {
			// Not seen lately: read it in the background and be asked
			// again, rather than leave the connection to net/http.
			p.Pending = true
			later := p.Later
			go func() {
				defer later()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				s.sessionViewer(ctx, id, false)
			}()
			return false
		}
	} else {
		viewer, ok = s.sessionViewer(context.Background(), auth.HashToken(token), false)
	}
	if !ok {
		return false
	}
	path := p.Target
	if strings.IndexByte(path, '?') >= 0 {
		return false
	}
	if !strings.HasPrefix(path, "/wiki/") {
		return false
	}
	// Entries are stored only under the canonical targets that produced
	// them, so the target as sent is the key; only article views carry a
	// splice note.
	v, ok := s.edge.Lookup(path, 0)
	if !ok {
		return false
	}
	sp, ok := s.splice(viewer, path, v, p.Accepted&edge.AcceptGzip != 0, p.IfNoneMatch, p.IfModifiedSince)
	if !ok {
		return false
	}
	h := append(p.Header, splicedWire...)
	h = append(h, "Etag: "...)
	h = append(h, sp.etag...)
	h = append(h, "\r\n"...)
	h = append(h, "Last-Modified: "...)
	h = append(h, sp.lastMod...)
	h = append(h, "\r\n"...)
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

// refreshSession reads session id from the store again in the background,
// once at a time per session, so that an event loop answering from a
// stale entry never waits for it. A session gone from the store leaves
// the cache.
func (s *Server) refreshSession(id string) {
	if _, busy := s.sessions.refreshing.LoadOrStore(id, struct{}{}); busy {
		return
	}
	go func() {
		defer s.sessions.refreshing.Delete(id)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, ok := s.sessionViewer(ctx, id, true); !ok {
			s.sessions.delete(id)
		}
	}()
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

// fillAnonymous renders the anonymous response for key (the article t)
// into the edge cache, as an anonymous request for the same URL would.
func (s *Server) fillAnonymous(r *http.Request, key string, t wiki.Title, next http.Handler) {
	aq := *httpx.From(r)
	aq.Shared = true
	ar := r.Clone(context.WithValue(r.Context(), viewerKey, Viewer{}))
	ar.Method = http.MethodGet
	ar.Header = http.Header{}
	ar = withTags(httpx.With(ar, &aq), t)
	s.edge.Serve(discard{h: http.Header{}}, ar, key, next)
}

// refreshKey marks Refresh's requests; its value is a *refreshReq.
const refreshKey ctxKey = 4

// refreshReq is what a Refresh request carries through the handlers.
type refreshReq struct {
	seq     uint64 // BeginRefresh's
	handled bool   // serve handed it to the edge
}

// Refresh renders again the anonymous article views stored under keys,
// which the edge's BeginRefresh returned with seq, and swaps each new
// response in for the old one (edge.Cache.Refresh): readers keep getting
// the old one meanwhile instead of waiting for a render. Each view is
// requested as an anonymous GET of exactly that target through the whole
// route table, as a reader's first request would be. The other keys (raw
// text, history, diffs, old revisions, API answers) are purged instead:
// they are read far less often than views, and most do not show link
// colours at all. So are the keys not refreshed when ctx ends, and any
// request that did not reach the edge: the next reader renders them.
func (s *Server) Refresh(ctx context.Context, seq uint64, keys ...string) {
	if s.edge == nil {
		return
	}
	var purge []string
	for _, k := range keys {
		if !isArticleView(k) || ctx.Err() != nil {
			purge = append(purge, k)
			continue
		}
		rr := &refreshReq{seq: seq}
		r, err := http.NewRequestWithContext(context.WithValue(ctx, refreshKey, rr), http.MethodGet, k, nil)
		if err != nil {
			purge = append(purge, k)
			continue
		}
		r.RequestURI, r.RemoteAddr, r.Host = k, "127.0.0.1:0", "localhost"
		s.handler.ServeHTTP(discard{h: http.Header{}}, r)
		if !rr.handled {
			purge = append(purge, k)
		}
	}
	s.edge.PurgeKey(purge...)
}

// isArticleView reports whether key is the plain view of a page.
func isArticleView(key string) bool {
	return strings.HasPrefix(key, "/wiki/") && !strings.ContainsAny(key, "?#")
}

type discard struct{ h http.Header }

func (d discard) Header() http.Header         { return d.h }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}

// userBar is the logged-in user bar, cached per session: it holds the
// session's CSRF token for the logout form.
func (s *Server) userBar(v Viewer) []byte {
	if b := s.sessions.userBar(v.Session.ID, v.State); b != nil {
		return b
	}
	var buf bytes.Buffer
	p := &Page{Viewer: v, CSRF: v.Session.CSRF, AllowRegistration: s.cfg.AllowRegistration}
	if err := s.views.Fragment(&buf, "userbar", p); err != nil {
		s.log.Error("render user bar", "err", err)
		return nil
	}
	b := buf.Bytes()
	s.sessions.setUserBar(v.Session.ID, b, v.State)
	return b
}

// userBarGz is the user bar deflated for gzip splicing, cached per session.
func (s *Server) userBarGz(v Viewer) gzUser {
	if u, ok := s.sessions.userBarGz(v.Session.ID, v.State); ok {
		return u
	}
	u := gzUser{gz: deflateFlushed(s.userBar(v))}
	s.sessions.setUserBarGz(v.Session.ID, u, v.State)
	return u
}

// tabsHTML renders the page tabs for the viewer, as the layout does.
func (s *Server) tabsHTML(v Viewer, t wiki.Title, exists, watched bool) []byte {
	var b bytes.Buffer
	view.WriteTabs(&b, s.pageTabs(v, t, "view", exists, watched))
	return b.Bytes()
}
