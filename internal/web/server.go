// Package web is Wikid's HTTP layer: routes, handlers, sessions, CSRF and
// cache headers. It sees storage only through the engine and wiki interfaces.
package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/edge"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/purge"
	"github.com/wikid/wikid/internal/session"
	"github.com/wikid/wikid/internal/view"
	"github.com/wikid/wikid/internal/wiki"
)

// Server holds what handlers need. Build it with New.
type Server struct {
	cfg      config.Config
	eng      *engine.Engine
	store    wiki.Store
	views    *view.Views
	log      *slog.Logger
	secret   []byte
	now      func() time.Time
	mainPage wiki.Title
	handler  http.Handler
	reqID    atomic.Uint64
	edge     *edge.Cache // nil: no in-process cache
	sessions *sessionCache
	gz       *gzCache          // deflated static parts of spliced pages
	throttle *session.Throttle // failed logins per (address, account) and address (special.go)
	proxies  httpx.Proxies     // who may name the client (session.go)
	// proxyWarned is set once the warning about forwarding headers from an
	// unconfigured proxy on this host was logged (session.go).
	proxyWarned atomic.Bool
}

// Options configures New.
type Options struct {
	Config config.Config
	Engine *engine.Engine
	Views  *view.Views
	Logger *slog.Logger
	Secret []byte // signs anonymous CSRF tokens; stable across restarts
	Now    func() time.Time
	Edge   *edge.Cache // optional in-process response cache
}

// New builds the server and its routes.
func New(o Options) (*Server, error) {
	if len(o.Secret) < 32 {
		return nil, errors.New("web: secret must be at least 32 bytes")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	mp, err := wiki.ParseTitle(o.Config.MainPage)
	if err != nil {
		return nil, fmt.Errorf("web: main page: %w", err)
	}
	trusted, err := o.Config.TrustedPrefixes()
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	s := &Server{cfg: o.Config, eng: o.Engine, store: o.Engine.Store(), views: o.Views, log: o.Logger,
		secret: o.Secret, now: o.Now, mainPage: mp, edge: o.Edge, sessions: newSessionCache(o.Now), gz: newGzCache(),
		throttle: session.NewThrottle(session.DefaultPolicy(), o.Now), proxies: httpx.NewProxies(trusted, o.Config.ClientIPHeader)}
	s.handler = s.routes()
	return s, nil
}

// ServeHTTP makes Server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", s.handle(s.root))
	mux.HandleFunc("/wiki/{title...}", s.handle(s.wikiPage))
	mux.HandleFunc("/w/index.php", s.handle(s.indexPHP))
	mux.HandleFunc("GET /static/{name}", s.asset)
	mux.HandleFunc("GET /w/macro/{name}", s.handle(s.macro))
	mux.HandleFunc("/healthz", s.handle(func(w http.ResponseWriter, r *http.Request) error {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return methodNotAllowed(w, "GET, HEAD")
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Write([]byte("ok\n"))
		return nil
	}))
	mux.Handle("/w/rest.php/v1/", s.apiRoutes())
	mux.HandleFunc("/", s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return wiki.Errorf(wiki.KindNotFound, "there is nothing at %s; wiki pages live under /wiki/", r.URL.Path)
	}))
	return s.recoverer(s.limits(s.withViewer(s.cacheLayer(mux))))
}

// handlerFunc is a handler that returns its error instead of writing it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle turns errors into pages: the status from the error's kind, a
// message the user can act on, and a log line for internal errors.
func (s *Server) handle(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	}
}

func statusOf(err error) int {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return http.StatusRequestEntityTooLarge
	}
	if errors.Is(err, errMethod) {
		return http.StatusMethodNotAllowed
	}
	switch wiki.KindOf(err) {
	case wiki.KindInvalid:
		return http.StatusBadRequest
	case wiki.KindUnauthorized:
		return http.StatusUnauthorized
	case wiki.KindForbidden:
		return http.StatusForbidden
	case wiki.KindNotFound:
		return http.StatusNotFound
	case wiki.KindConflict:
		return http.StatusConflict
	case wiki.KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case wiki.KindTooMany:
		return http.StatusTooManyRequests
	}
	if errors.Is(err, context.Canceled) {
		return 499
	}
	return http.StatusInternalServerError
}

func messageOf(err error) string {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return fmt.Sprintf("The request body is larger than the limit of %d bytes. Shorten the text or split the page.", mbe.Limit)
	}
	return wiki.Message(err)
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	if status == 499 {
		return // the client went away
	}
	if status >= 500 {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err, "req", requestID(r))
	} else {
		s.log.Debug("request refused", "status", status, "path", r.URL.Path, "err", err)
	}
	if status == http.StatusMethodNotAllowed && w.Header().Get("Allow") == "" {
		w.Header().Set("Allow", "GET, HEAD, POST")
	}
	heading := http.StatusText(status)
	if status == http.StatusNotFound {
		heading = "Not found"
	}
	p := s.page(r, heading)
	p.NoIndex = true
	p.Data = errorData{Heading: heading, Message: messageOf(err), Back: safeReferer(r)}
	s.writePage(w, r, status, "error", p, cacheNone)
}

type errorData struct {
	Heading string
	Message string
	Back    string
}

func safeReferer(r *http.Request) string {
	ref := r.Referer()
	if ref == "" {
		return ""
	}
	// Only same-site relative paths.
	if i := strings.Index(ref, r.Host); i >= 0 && r.Host != "" {
		ref = ref[i+len(r.Host):]
	}
	if !strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, "//") || strings.HasPrefix(ref, "/\\") {
		return ""
	}
	return ref
}

// recoverer answers a panicking handler with 500 and keeps serving.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic in handler", "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				http.Error(w, "Internal server error: the error was logged; try again in a moment.", http.StatusInternalServerError)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// limits bounds request bodies and rejects what no handler can serve.
func (s *Server) limits(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodOptions:
		default:
			w.Header().Set("Allow", "GET, HEAD, POST, PUT, DELETE, OPTIONS")
			http.Error(w, "Method "+sanitizeLine(r.Method)+" is not allowed.", http.StatusMethodNotAllowed)
			return
		}
		if r.ContentLength > s.cfg.MaxBodyBytes {
			s.writeError(w, r, &http.MaxBytesError{Limit: s.cfg.MaxBodyBytes})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

func sanitizeLine(s string) string {
	if len(s) > 32 {
		s = s[:32]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

type ctxKey int

const reqIDKey ctxKey = 1

func requestID(r *http.Request) uint64 {
	v, _ := r.Context().Value(reqIDKey).(uint64)
	return v
}

// asset serves an embedded static file under its content-hashed name.
func (s *Server) asset(w http.ResponseWriter, r *http.Request) {
	a, ok := s.views.Asset(r.PathValue("name"))
	if !ok {
		http.Error(w, "No such asset.", http.StatusNotFound)
		return
	}
	// Through the edge: the gzip and brotli variants are computed once.
	if s.edge != nil {
		edge.Mark(w, edge.Directive{Tags: []string{purge.StaticTag}})
	}
	h := w.Header()
	h.Set("Content-Type", a.ContentType)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("X-Content-Type-Options", "nosniff") // a stylesheet or script only as its own type
	h.Set("ETag", a.ETag)
	if match(r.Header.Get("If-None-Match"), a.ETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", fmt.Sprint(len(a.Body)))
	if r.Method != http.MethodHead {
		w.Write(a.Body)
	}
}

// etagOf is a strong validator of the exact bytes sent.
func etagOf(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
		h.Write([]byte{0})
	}
	return `"` + hex.EncodeToString(h.Sum(nil)[:12]) + `"`
}

// match reports whether an If-None-Match header matches etag.
func match(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, part := range strings.Split(header, ",") {
		part = strings.TrimSpace(part)
		if part == "*" || strings.TrimPrefix(part, "W/") == etag {
			return true
		}
	}
	return false
}
