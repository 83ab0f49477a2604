package httpx

import (
	"crypto/sha256"
	"encoding/hex"
	"html"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wikid/wikid/internal/edge"
	"github.com/wikid/wikid/internal/purge"
	"github.com/wikid/wikid/internal/timing"
)

// Cache says who may keep a response.
type Cache uint8

// The cacheability of a response, stated on every response.
const (
	// NoStore: forms, previews, POST results, errors, operator endpoints.
	NoStore Cache = iota
	// Private: the browser may keep it and revalidates every time
	// (logged-in views).
	Private
	// Public: every reader gets the same bytes; caches in front keep it for
	// SMaxAge seconds, and the edge cache until purged (or EdgeTTL).
	Public
	// Immutable: content-hashed assets, kept for a year by everyone.
	Immutable
	// PrivateImmutable: content-hashed bytes that only this reader may
	// see (a file of a wiki anonymous readers may not read), kept for a
	// year by the browser and by no shared cache.
	PrivateImmutable
)

// Response is everything Write needs to send one answer.
type Response struct {
	Status int
	Type   string // Content-Type
	Body   []byte
	Cache  Cache
	// SMaxAge is the shared caches' lifetime of a Public response, in
	// seconds; MaxAge the browsers' (usually 0: revalidate).
	SMaxAge, MaxAge int
	// EdgeTTL bounds the edge cache's lifetime of a Public response (0: until
	// purged); listings use a few seconds.
	EdgeTTL time.Duration
	// ETag is the strong validator of the identity Body; when empty, Write
	// computes one from the body for cacheable 200 responses.
	ETag     string
	Modified time.Time // Last-Modified; zero when unknown
	// Tags name what a Public response shows (purge.Tags): a purge of any of
	// them drops it from the edge and from caches in front.
	Tags []string
	// EdgeNote is kept with the edge cache's entry of a Public response
	// (edge.Variant.Note), for code that reuses the entry.
	EdgeNote string
	// Seldom: a Public response that lives seconds or that few readers
	// ask for (a listing, a search's results): the edge stores no brotli
	// variant of it (edge.Directive.Seldom).
	Seldom bool
	// Header holds the response's other fields (Location, Allow,
	// Retry-After, Content-Disposition); they override the defaults.
	Header http.Header
}

// DefaultSecurity are the security fields of every response; Response.Header
// may override them (the REST HTML endpoint has its own policy).
var DefaultSecurity = [][2]string{
	{"Content-Security-Policy", "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"},
	{"X-Content-Type-Options", "nosniff"},
	{"Referrer-Policy", "strict-origin-when-cross-origin"},
	{"X-Frame-Options", "DENY"},
}

// SetSecurity sets DefaultSecurity on h.
func SetSecurity(h http.Header) {
	for _, f := range DefaultSecurity {
		h[f[0]] = []string{f[1]}
	}
}

// minCompress is the smallest body worth compressing.
const minCompress = 1024

// Write sends resp as the answer to r. It is the one place that states
// cacheability, sets validators and Vary, answers conditional requests with
// 304, drops the body of HEAD and picks the content coding:
//
//   - Public is kept only for a request the handler layer marked Shared
//     (otherwise it becomes Private), and any response to a request whose
//     target is not canonical, or that is not a GET or HEAD, is NoStore.
//   - A Public response being filled into the edge cache is handed to it in
//     identity coding (the edge compresses each variant once); any other
//     compressible response of a client that accepts gzip is gzipped here,
//     with the same bytes and validator the edge's gzip variant would have.
func Write(w http.ResponseWriter, r *http.Request, resp *Response) {
	h := w.Header()
	SetSecurity(h)
	for k, vs := range resp.Header {
		h[k] = vs
	}
	if resp.Type != "" {
		h.Set("Content-Type", resp.Type)
	}
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	get := r.Method == http.MethodGet || r.Method == http.MethodHead
	// kind is what the answer is (it keeps its validators and Vary); cache
	// is who may store it: nobody, when the target was spelled otherwise
	// than its key (the same answer, served under another name).
	kind := resp.Cache
	q := From(r)
	switch {
	case !get:
		kind = NoStore
	case kind == Public && (q == nil || !q.Shared):
		kind = Private
	}
	cache := kind
	if q != nil && !q.AsSent {
		cache = NoStore
	}
	h.Set("Cache-Control", cacheControl(cache, resp))
	if (kind == Public || kind == Immutable) && len(resp.Tags) > 0 {
		h.Set("Surrogate-Key", purge.SurrogateKeys(resp.Tags))
	}

	// Into the edge: identity bytes, tagged; the edge answers this request
	// and later ones (304, HEAD and encodings included).
	stored := false
	if cache == Public || cache == Immutable {
		stored = edge.Mark(w, edge.Directive{Tags: resp.Tags, TTL: resp.EdgeTTL, Note: resp.EdgeNote, Seldom: resp.Seldom})
	}

	body := resp.Body
	enc := edge.Identity
	if !stored && len(body) >= minCompress && compressible(h.Get("Content-Type")) &&
		acceptsGzip(r.Header) && len(h["Content-Encoding"]) == 0 {
		enc = edge.Gzip
	}
	validated := status == http.StatusOK && kind != NoStore
	switch {
	case validated:
		h.Set("Vary", varyOf(kind))
		etag := resp.ETag
		if etag == "" {
			etag = ETagOf(body)
		}
		if stored {
			h.Set("ETag", etag) // the edge derives each variant's own
		} else {
			h.Set("ETag", edge.VariantETag(etag, enc))
		}
		if !resp.Modified.IsZero() {
			h.Set("Last-Modified", resp.Modified.UTC().Format(http.TimeFormat))
		}
		if !stored && edge.NotModified(r.Header.Get("If-None-Match"), r.Header.Get("If-Modified-Since"), h.Get("ETag"), resp.Modified) {
			h.Del("Content-Type")
			h.Set("Server-Timing", serverTiming(r, kind, stored))
			w.WriteHeader(http.StatusNotModified)
			return
		}
	case kind != NoStore:
		h.Set("Vary", varyOf(kind))
	case enc != edge.Identity:
		h.Set("Vary", "Accept-Encoding")
	}
	if enc == edge.Gzip {
		body = edge.GzipBytes(body)
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Server-Timing", serverTiming(r, kind, stored))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

func cacheControl(c Cache, resp *Response) string {
	switch c {
	case Private:
		return "private, no-cache"
	case Public:
		cc := "public, max-age=" + strconv.Itoa(resp.MaxAge)
		if resp.SMaxAge > 0 {
			cc += ", s-maxage=" + strconv.Itoa(resp.SMaxAge)
		}
		return cc
	case Immutable:
		return "public, max-age=31536000, immutable"
	case PrivateImmutable:
		return "private, max-age=31536000, immutable"
	}
	return "no-store"
}

// varyOf is the Vary of a cacheable response: a page differs by encoding and
// by whether the request carries a session (the Cookie); an asset only by
// encoding.
func varyOf(c Cache) string {
	if c == Immutable || c == PrivateImmutable {
		return "Accept-Encoding"
	}
	return "Accept-Encoding, Cookie"
}

func serverTiming(r *http.Request, c Cache, stored bool) string {
	status := "none"
	switch {
	case stored:
		status = "miss"
	case c == Private:
		status = "bypass"
	}
	return timing.From(r.Context()).Header(status, time.Now())
}

func acceptsGzip(h http.Header) bool {
	for _, v := range h["Accept-Encoding"] {
		if edge.ParseAcceptEncoding(v)&edge.AcceptGzip != 0 {
			return true
		}
	}
	return false
}

func compressible(ct string) bool {
	ct, _, _ = strings.Cut(ct, ";")
	ct = strings.TrimSpace(strings.ToLower(ct))
	return strings.HasPrefix(ct, "text/") || strings.HasSuffix(ct, "/json") || strings.HasSuffix(ct, "+json") ||
		strings.HasSuffix(ct, "/xml") || strings.HasSuffix(ct, "+xml") || strings.HasSuffix(ct, "javascript")
}

// WriteContent answers r with content, size bytes read in ranges: the
// response Write would send with resp's headers (its Body unused), but
// with Range requests answered 206 (If-Range honoured) and the bytes
// never all in memory, for large files. resp.ETag is required.
func WriteContent(w http.ResponseWriter, r *http.Request, resp *Response, content io.ReadSeeker) {
	h := w.Header()
	SetSecurity(h)
	for k, vs := range resp.Header {
		h[k] = vs
	}
	h.Set("Content-Type", resp.Type)
	kind := resp.Cache
	q := From(r)
	switch {
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		kind = NoStore
	case kind == Public && (q == nil || !q.Shared):
		kind = Private
	}
	if q != nil && !q.AsSent {
		kind = NoStore
	}
	h.Set("Cache-Control", cacheControl(kind, resp))
	if (kind == Public || kind == Immutable) && len(resp.Tags) > 0 {
		h.Set("Surrogate-Key", purge.SurrogateKeys(resp.Tags))
	}
	if kind != NoStore {
		h.Set("Vary", varyOf(kind))
		h.Set("ETag", resp.ETag)
	}
	h.Set("Server-Timing", serverTiming(r, kind, false))
	// ServeContent answers conditional and range requests from the ETag
	// and modification time; it sets Accept-Ranges and Content-Length.
	http.ServeContent(contentErrors{w}, r, "", resp.Modified, content)
}

// contentErrors makes the errors http.ServeContent writes itself state
// their cacheability as every error does: no-store. It sends a failed
// If-Match (412) with every field set for the content, public and tagged
// as it is; a range outside the content (416) without Cache-Control but
// with the Surrogate-Key and the Content-Disposition (its error text
// offered under the file's name). Those two go as well.
type contentErrors struct{ http.ResponseWriter }

func (w contentErrors) WriteHeader(code int) {
	if code >= http.StatusBadRequest {
		h := w.Header()
		h.Set("Cache-Control", cacheControl(NoStore, nil))
		h.Del("Surrogate-Key")
		h.Del("Content-Disposition")
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w contentErrors) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ETagOf is a strong validator of the given bytes.
func ETagOf(parts ...[]byte) string {
	s := sha256.New()
	for _, p := range parts {
		s.Write(p)
		s.Write([]byte{0})
	}
	return `"` + hex.EncodeToString(s.Sum(nil)[:12]) + `"`
}

// Redirect answers with a redirect to to (a path this server built). Status
// is 301, 302, 303 or 308; cache says who may keep it.
func Redirect(w http.ResponseWriter, r *http.Request, to string, status int, cache Cache, maxAge int) {
	hdr := http.Header{"Location": {to}}
	var body []byte
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		body = []byte(`<a href="` + html.EscapeString(to) + `">` + http.StatusText(status) + "</a>.\n")
	}
	Write(w, r, &Response{Status: status, Type: "text/html; charset=utf-8", Body: body, Cache: cache, MaxAge: maxAge, Header: hdr})
}

// WriteStream answers r with a body written by body as it is made (a
// dump of many pages), never held whole in memory: resp's status, type
// and headers, Cache-Control no-store whatever resp.Cache says (a stream
// has no validator to revalidate it by), identity coding, no
// Content-Length. An error of body after the first bytes can only cut
// the answer short: it is returned for the caller to log.
func WriteStream(w http.ResponseWriter, r *http.Request, resp *Response, body func(io.Writer) error) error {
	h := w.Header()
	SetSecurity(h)
	for k, vs := range resp.Header {
		h[k] = vs
	}
	if resp.Type != "" {
		h.Set("Content-Type", resp.Type)
	}
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	h.Set("Cache-Control", cacheControl(NoStore, resp))
	h.Set("Server-Timing", serverTiming(r, NoStore, false))
	h.Del("Content-Length")
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return nil
	}
	return body(w)
}
