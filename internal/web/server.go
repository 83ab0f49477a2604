// Package web is Wikid's HTTP layer: routes, handlers, sessions, CSRF and
// cache headers. It sees storage only through the engine and wiki interfaces.
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
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
	cfg       config.Config
	eng       *engine.Engine
	store     wiki.Store
	views     *view.Views
	log       *slog.Logger
	secret    []byte
	now       func() time.Time
	mainPage  wiki.Title
	titles    wiki.TitleRules // the wiki's (capital_links): every title read from a request
	handler   http.Handler
	reqID     atomic.Uint64
	edge      *edge.Cache // nil: no in-process cache
	sessions  *sessionCache
	watches   *watchCache       // users' watchlists and notification counts, for logged-in views (watches.go)
	others    Others            // nil: no other processes to tell
	gz        *gzCache          // deflated static parts of spliced pages
	throttle  *session.Throttle // failed logins per (address, account), address and device (special.go)
	signups   *session.Throttle // account creations per address (special.go)
	devices   session.Devices   // device cookies: who logged in from this browser before (session.go)
	hashing   *session.Gate     // bounds the argon2 hashes running at once (hashing.go)
	purges    *rateLimit        // action=purge per user or address (page.go)
	rollbacks *rateLimit        // action=rollback per user (undo.go)
	thanks    *rateLimit        // action=thank per user (thank.go)
	uploads   *rateLimit        // uploads per user (uploads.go)
	// uploadSlots holds a token per upload being read, uploading the
	// uploaders reading one (uploads.go).
	uploadSlots chan struct{}
	uploading   sync.Map
	thumbs      *rateLimit    // thumbnails of non-standard widths made per client (media.go)
	apiWrites   *rateLimit    // Action API changes per user or address (actionapi.go)
	parses      *rateLimit    // previews and Action API parses of a text per user or address (preview, actionapi.go)
	exports     *rateLimit    // Special:Export dumps of a list or a category per user or address (dumps.go)
	conversions *rateLimit    // ?action=editmodel conversions of a page's text per user (editmodel.go)
	action      http.Handler  // the Action API's modules but opensearch (internal/actionapi)
	proxies     httpx.Proxies // who may name the client (session.go)
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
	Secret []byte // signs anonymous CSRF tokens and device cookies; stable across restarts
	Now    func() time.Time
	Edge   *edge.Cache // optional in-process response cache
	// Others tells the other processes on the database that accounts
	// changed or sessions ended, so that they drop the sessions they hold
	// in memory (purge.Node); nil for none.
	Others Others
}

// Others is how the server tells the other processes what changed in
// accounts and sessions (purge.Node).
type Others interface {
	AccountsChanged(ctx context.Context, userIDs []int64, titles ...wiki.Title)
	SessionsEnded(ctx context.Context, sessionIDs ...string)
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
	titles := o.Config.TitleRules()
	if titles != o.Engine.TitleRules() {
		// The pages' links are resolved by the engine's rules and the
		// requests by these: the two must agree, or links lead astray.
		return nil, fmt.Errorf("web: capital_links is %v in the configuration but %v in the engine's renderer; build the renderer with render.WithTitleRules(config.TitleRules())",
			titles.CapitalLinks(), o.Engine.TitleRules().CapitalLinks())
	}
	mp, err := titles.Parse(o.Config.MainPage)
	if err != nil {
		return nil, fmt.Errorf("web: main page: %w", err)
	}
	trusted, err := o.Config.TrustedPrefixes()
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	s := &Server{cfg: o.Config, eng: o.Engine, store: o.Engine.Store(), views: o.Views, log: o.Logger,
		secret: o.Secret, now: o.Now, mainPage: mp, titles: titles, edge: o.Edge, sessions: newSessionCache(o.Now), watches: &watchCache{}, gz: newGzCache(),
		throttle: session.NewThrottle(session.DefaultPolicy(), o.Now), signups: session.NewThrottle(session.RegistrationPolicy(), o.Now),
		devices: session.NewDevices(o.Secret), hashing: session.DefaultGate(), proxies: httpx.NewProxies(trusted, o.Config.ClientIPHeader),
		purges: newRateLimit(30, time.Minute, o.Now), rollbacks: newRateLimit(rollbacksPerMinute, time.Minute, o.Now),
		thanks: newRateLimit(thanksPerMinute, time.Minute, o.Now), uploads: newRateLimit(uploadsPerMinute, time.Minute, o.Now), uploadSlots: make(chan struct{}, uploadSlots),
		thumbs: newRateLimit(thumbsPerMinute, time.Minute, o.Now), others: o.Others,
		apiWrites: newRateLimit(apiWritesPerMinute, time.Minute, o.Now), parses: newRateLimit(parsesPerMinute, time.Minute, o.Now),
		exports: newRateLimit(exportsPerMinute, time.Minute, o.Now), conversions: newRateLimit(conversionsPerMinute, time.Minute, o.Now)}
	s.action = newActionAPI(s)
	s.handler = s.routes()
	return s, nil
}

// ServeHTTP makes Server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", s.root)
	mux.HandleFunc("/wiki/{title...}", s.wikiPage)
	mux.HandleFunc("/w/index.php", s.indexPHP)
	mux.HandleFunc("/static/{name}", s.asset)
	mux.HandleFunc(wiki.MediaPrefix+"{sha}/{name}", s.media)
	mux.HandleFunc("/w/macro/{name}", s.macro)
	mux.HandleFunc("/healthz", s.healthz)
	mux.Handle("/w/rest.php/", s.apiRoutes())
	mux.HandleFunc("/w/api.php", s.actionAPI)
	mux.HandleFunc("/w/opensearch_desc.php", s.openSearchDescription)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		httpx.SetRoute(r, "other")
		s.writeError(w, r, wiki.Errorf(wiki.KindNotFound, "there is nothing at %s; wiki pages live under /wiki/", sanitizeLine(r.URL.Path)))
	})
	return s.recoverer(s.limits(s.withViewer(mux)))
}

// handlerFunc is a handler that returns its error instead of writing it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// routeOpts says how serve treats a route's requests.
type routeOpts struct {
	// noRedirect answers a non-canonical target uncached instead of
	// redirecting it (API clients may not follow redirects).
	noRedirect bool
	// splice lets a logged-in view be assembled from the anonymous page
	// cached for the same URL (plain article views).
	splice wiki.Title
	// onError writes errors (default: an HTML error page).
	onError func(http.ResponseWriter, *http.Request, error)
	// noEdge keeps the request away from the edge cache: its answer
	// depends on more than its key (a feed's URLs built from the Host).
	noEdge bool
}

// serve runs h for the parsed request q, the one path every route takes
// after its parse (DESIGN.md, "the cache boundary"):
//
//   - a GET or HEAD whose target is not q's canonical form is redirected to
//     it, or answered uncached (NoStore is then forced by httpx.Write);
//   - an anonymous GET or HEAD of a canonical target, on a wiki anyone may
//     read, goes through the edge cache under q.Key(), so that what is
//     stored under a key is what the handler made of exactly that key;
//   - a logged-in view of a plain article is spliced from the anonymous
//     page cached under the same key;
//   - anything else goes to h directly.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, q *httpx.Request, o routeOpts, h handlerFunc) {
	httpx.SetRoute(r, q.Spec.Name)
	onError := o.onError
	if onError == nil {
		onError = s.writeError
	}
	get := r.Method == http.MethodGet || r.Method == http.MethodHead
	if get && q.Moved && !o.noRedirect {
		httpx.Redirect(w, r, q.Key(), http.StatusMovedPermanently, httpx.NoStore, 0)
		return
	}
	v := viewerOf(r)
	q.Shared = !v.LoggedIn && s.canRead(Viewer{})
	r = httpx.With(r, q)
	run := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			onError(w, r, err)
		}
	})
	if rr, ok := r.Context().Value(refreshKey).(*refreshReq); ok {
		// Refresh's own request: it renders the stored response again
		// (when it is not handed to the edge, Refresh purges the key).
		if get && q.Shared && q.AsSent && s.edge != nil {
			rr.handled = true
			s.edge.Refresh(w, r, q.Key(), rr.seq, run)
		}
		return
	}
	// Credentials other than the session cookie never share a response.
	// (A Range header does not matter: every response is sent whole, which
	// HTTP allows, so it costs no render.)
	if get && s.edge != nil && !o.noEdge && len(r.Header["Authorization"]) == 0 {
		switch {
		case q.Shared && q.AsSent:
			s.edge.Serve(w, r, q.Key(), run)
			return
		case q.Shared && s.edge.ServeStored(w, r, q.Key(), noStore):
			// Another spelling of a canonical target that a redirect
			// cannot fix (absolute form, or a route that does not
			// redirect): the handler would read exactly q, so the stored
			// answer is its answer; it is not stored under this spelling.
			return
		case q.AsSent && o.splice != "" && v.LoggedIn && !v.Token && s.canRead(Viewer{}) && s.serveSpliced(w, r, q.Key(), o.splice, run):
			return
		}
	}
	run(w, r)
}

var noStore = []string{"no-store"}

// serveRead parses r by spec (path is its canonical path) and serves it
// with h, for routes that answer only GET and HEAD.
func (s *Server) serveRead(w http.ResponseWriter, r *http.Request, spec *httpx.Spec, path string, o routeOpts, h handlerFunc) {
	q, err := httpx.Parse(r, spec, path, s.titles)
	if err != nil {
		httpx.SetRoute(r, spec.Name)
		s.writeError(w, r, err)
		return
	}
	s.serve(w, r, q, o, func(w http.ResponseWriter, r *http.Request) error {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return methodNotAllowed(w, "GET, HEAD")
		}
		return h(w, r)
	})
}

// healthz answers load balancers.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	s.serveRead(w, r, healthSpec, "/healthz", routeOpts{noRedirect: true}, func(w http.ResponseWriter, r *http.Request) error {
		httpx.Write(w, r, &httpx.Response{Type: "text/plain; charset=utf-8", Body: []byte("ok\n"), Cache: httpx.NoStore})
		return nil
	})
}

var healthSpec = &httpx.Spec{Name: "healthz"}

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
	case wiki.KindUnavailable:
		return http.StatusServiceUnavailable
	case wiki.KindUnsupported:
		return http.StatusUnsupportedMediaType
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

// setRetryAfter sends Retry-After when err says when to try again.
func setRetryAfter(w http.ResponseWriter, err error) {
	var e *wiki.Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((e.RetryAfter+time.Second-1)/time.Second)))
	}
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	if status == 499 {
		return // the client went away
	}
	setRetryAfter(w, err)
	if status == http.StatusServiceUnavailable {
		s.log.Warn("request refused: busy", "path", r.URL.Path, "err", err, "req", requestID(r))
	} else if status >= 500 {
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
	s.writePage(w, r, status, "error", p)
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
				httpx.Write(w, r, &httpx.Response{Status: http.StatusInternalServerError, Type: "text/plain; charset=utf-8",
					Body: []byte("Internal server error: the error was logged; try again in a moment.\n")})
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
			s.writeError(w, r, methodNotAllowed(w, "GET, HEAD, POST, PUT, DELETE, OPTIONS"))
			return
		}
		limit := s.cfg.BodyLimit()
		upload := r.Method == http.MethodPost && isUploadPath(r.URL.Path)
		if upload {
			limit = s.cfg.UploadBodyLimit()
			if r.URL.Path == importPath {
				limit = s.cfg.ImportLimit() + 256<<10
			}
		}
		if r.ContentLength > limit {
			if upload {
				var err error = s.tooLargeUpload()
				if r.URL.Path == importPath {
					err = s.tooLargeImport()
				}
				if strings.HasPrefix(r.URL.Path, restBase) {
					s.writeAPIError(w, r, err)
				} else {
					s.writeError(w, r, err)
				}
				return
			}
			if strings.HasPrefix(r.URL.Path, restBase) {
				s.writeAPIError(w, r, &http.MaxBytesError{Limit: limit})
			} else {
				s.writeError(w, r, &http.MaxBytesError{Limit: limit})
			}
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
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
	name := r.PathValue("name")
	a, ok := s.views.Asset(name)
	if !ok {
		httpx.SetRoute(r, "static")
		s.writeError(w, r, wiki.Errorf(wiki.KindNotFound, "there is no asset %q; asset names change with their content, so reload the page that linked it", sanitizeLine(name)))
		return
	}
	s.serveRead(w, r, assetSpec, "/static/"+url.PathEscape(name), routeOpts{}, func(w http.ResponseWriter, r *http.Request) error {
		httpx.Write(w, r, &httpx.Response{Type: a.ContentType, Body: a.Body, Cache: httpx.Immutable, ETag: a.ETag,
			Tags: []string{purge.StaticTag}})
		return nil
	})
}

var assetSpec = &httpx.Spec{Name: "static"}
