// Package app is the composition root: it opens the store, builds the
// caches, the engine and the HTTP server, and owns start and stop order.
// Nothing imports it but main and tests.
package app

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/cores"
	"github.com/wikid/wikid/internal/edge"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/front"
	"github.com/wikid/wikid/internal/jobs"
	"github.com/wikid/wikid/internal/metrics"
	"github.com/wikid/wikid/internal/purge"
	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/store/backend"
	"github.com/wikid/wikid/internal/view"
	"github.com/wikid/wikid/internal/web"
	"github.com/wikid/wikid/internal/wiki"
)

// App is a running wiki.
// loopProcs raises GOMAXPROCS once per process for the front's event loops.
var loopProcs sync.Once

type App struct {
	Config  config.Config
	Store   wiki.Store // the embedded SQLite database or PostgreSQL (store/backend)
	Engine  *engine.Engine
	Web     *web.Server
	Edge    *edge.Cache
	Metrics *metrics.Metrics
	Access  *metrics.AccessLog
	Log     *slog.Logger
	// Purge owns invalidation: this process's caches, and the purge log
	// that the other processes on the database follow.
	Purge   *purge.Node
	handler http.Handler

	stopFollow context.CancelFunc // ends Purge.Follow
	followed   chan struct{}      // closed when it has

	srv *http.Server
	ln  net.Listener
	ops opsServer                    // the ops_addr listener (ops.go)
	fs  atomic.Pointer[front.Server] // while Serve runs (ConnStats)

	jobs atomic.Pointer[jobs.Runner] // job workers (jobs.go)
}

// Open builds the app on cfg's data directory, creating and seeding the
// database on first use. It does not listen yet.
func Open(ctx context.Context, cfg config.Config, log *slog.Logger) (*App, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	if cfg.TrustProxy {
		log.Warn("trust_proxy is deprecated: it trusts every loopback peer's X-Forwarded-For; " +
			"set trusted_proxies to your proxies' addresses instead (e.g. [\"127.0.0.1\", \"::1\"]) and remove trust_proxy")
	}
	if cfg.ClientIPHeader == "Forwarded" {
		// Wikid reads the rightmost hops of Forwarded, trusting each trusted
		// proxy to have written its own; a proxy that passes the client's
		// Forwarded through and adds nothing (Varnish does) lets the client
		// choose its address.
		log.Warn("client_ip_header is Forwarded: every proxy in trusted_proxies must set or overwrite Forwarded (or append its own element), " +
			"else clients choose their own address; Varnish passes the client's Forwarded through and appends to X-Forwarded-For only, " +
			"so behind Varnish keep client_ip_header X-Forwarded-For")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return nil, fmt.Errorf("app: create data directory %s: %w", cfg.DataDir, err)
	}
	secret, err := loadSecret(filepath.Join(cfg.DataDir, "secret.key"))
	if err != nil {
		return nil, err
	}
	db, err := backend.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// An import's writer (SQLite's one) keeps a core; its parses, the
	// search segments and merges share the others.
	gate := cores.New(runtime.GOMAXPROCS(0))
	if s, ok := db.(interface{ ShareCores(*cores.Gate) }); ok {
		s.ShareCores(gate)
	}
	views, err := view.Parse(cfg.TitleRules())
	if err != nil {
		db.Close()
		return nil, err
	}
	a := &App{Config: cfg, Store: db, Log: log, Edge: edge.New(edge.Config{MaxBytes: cfg.CacheMaxBytes})}
	if cfg.AccessLog && log.Enabled(ctx, slog.LevelInfo) {
		out := cfg.LogOutput
		if out == nil {
			out = os.Stderr
		}
		a.Access = metrics.NewAccessLog(out, 8192)
	}
	a.Metrics = metrics.New(a.Edge, a.Access) // before the engine: the CDN purger registers on it
	// The owner of invalidation in this process. Its hooks reach the
	// engine and the web server, made next, only once it runs.
	a.Purge = purge.NewNode(purge.NodeOptions{
		Edge:           a.Edge,
		Refresh:        func(ctx context.Context, seq uint64, keys ...string) { a.Web.Refresh(ctx, seq, keys...) },
		Log:            db,
		Invalidate:     func(ids ...int64) { a.Engine.Invalidate(ids...) },
		Forget:         func(ctx context.Context, ids ...int64) { a.Engine.Forget(ctx, ids...) },
		ForgetAll:      func() { a.Engine.ForgetAll() },
		ForgetUsers:    func(ids ...int64) { a.Web.ForgetUsers(ids...) },
		ForgetSessions: func(ids ...string) { a.Web.ForgetSessions(ids...) },
		Logger:         log,
	})
	a.Metrics.RegisterPurges(func() metrics.PurgeCounts {
		st := a.Purge.Stats()
		return metrics.PurgeCounts{Published: st.Published, PublishFailed: st.PublishFailed, Applied: st.Applied, Gaps: st.Gaps, ReadFailed: st.ReadFailed}
	})
	a.Metrics.RegisterConns(func() metrics.ConnCounts {
		st := a.ConnStats()
		return metrics.ConnCounts{Open: st.Open, Max: st.Max, Refused: st.Refused, IdleEvicted: st.IdleEvicted, SlowHeadEvicted: st.SlowHeadEvicted}
	})
	wt := newWikitext(cfg)
	a.Engine = engine.New(engine.Options{
		Store: store.Timed{Store: db}, Logger: log, Cores: gate,
		// The title rules (capital_links) go with the renderer: the engine
		// expands templates and keys stored renders by them.
		Renderer:     render.New(render.WithTimeout(time.Duration(cfg.RenderTimeout)), render.WithTitleRules(cfg.TitleRules())),
		Markups:      markups(wt),
		DefaultModel: cfg.DefaultContentModel,
		MaxPageBytes: cfg.MaxPageBytes, NoRenderCache: cfg.NoRenderCache, SiteName: cfg.SiteName,
		RenderLimits: engine.RenderLimits{Concurrency: cfg.RenderConcurrency, Queue: cfg.RenderQueue, Wait: time.Duration(cfg.RenderWait)},
		Purger:       a.Purge, CDN: a.cdnPurger(),
		JobsQueued: a.wakeJobs, KeepChanges: time.Duration(cfg.RCMaxAge), // jobs.go
		Files: engine.FileOptions{Allowed: cfg.UploadTypes, StripGPS: cfg.StripGPS},
		// wikitext's converter, for changes of a page's model to Markdown.
		WikitextToMarkdown: wt.ToMarkdown,
	})
	a.Metrics.RegisterRenders(func() metrics.RenderCounts {
		st := a.Engine.RenderStats()
		return metrics.RenderCounts{Running: st.Running, Waiting: st.Waiting, Refused: st.Refused}
	})
	webEdge := a.Edge
	if cfg.NoEdgeCache {
		webEdge = nil // the front server still owns the (empty) cache
	}
	a.Web, err = web.New(web.Options{Config: cfg, Engine: a.Engine, Views: views, Logger: log, Secret: secret, Edge: webEdge,
		Others: a.Purge})
	if err != nil {
		a.Close()
		return nil, err
	}
	if err := Seed(ctx, a.Engine, cfg); err != nil {
		a.Close()
		return nil, err
	}
	a.handler = a.routes()
	if err := a.Purge.Begin(ctx); err != nil {
		a.Close()
		return nil, err
	}
	followCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	a.stopFollow = stop
	a.followed = make(chan struct{})
	go func() {
		defer close(a.followed)
		a.Purge.Follow(followCtx)
	}()
	a.startJobs() // jobs.go: job workers start last
	return a, nil
}

// routes puts the operator's endpoints beside the wiki: on this listener
// /metrics and /debug/pprof/ answer logged-in administrators only (ops.go
// serves them to anyone on ops_addr).
func (a *App) routes() http.Handler {
	mux := http.NewServeMux()
	ops := noStore(a.Web.AdminOnly(opsRoutes(a.Metrics)))
	mux.Handle("/metrics", ops)
	mux.Handle("/debug/pprof", ops)
	mux.Handle("/debug/pprof/", ops)
	mux.Handle("/", a.Web)
	return a.Metrics.Middleware(mux)
}

// cdnPurger purges the caches in front (cdn_purge) from cdnpurge jobs; nil
// (no external purge) when there are none.
func (a *App) cdnPurger() engine.ExternalPurger {
	if len(a.Config.CDNPurge) == 0 {
		return nil
	}
	return purge.NewCDN(a.Config.CDNPurge, nil, a.Metrics.Registry, a.Log)
}

// Handler is the app's root HTTP handler.
func (a *App) Handler() http.Handler { return a.handler }

// Listen binds cfg.Addr (":0" picks a free port; Addr() tells which) and
// ops_addr when set (OpsAddr() tells which).
func (a *App) Listen() error {
	ln, err := net.Listen("tcp", a.Config.Addr)
	if err != nil {
		return fmt.Errorf("app: listen on %s: %w (is another wikid running? choose another --addr)", a.Config.Addr, err)
	}
	if err := a.listenOps(); err != nil { // ops.go
		ln.Close()
		return err
	}
	a.ln = ln
	return nil
}

// Addr is the bound address after Listen.
func (a *App) Addr() string { return a.ln.Addr().String() }

// Serve serves until ctx is cancelled, then shuts down gracefully: in-flight
// requests get cfg.ShutdownGrace to finish, then the store closes.
func (a *App) Serve(ctx context.Context) error {
	if a.ln == nil {
		if err := a.Listen(); err != nil {
			return err
		}
	}
	a.srv = &http.Server{
		Handler:           a.Handler(),
		ReadHeaderTimeout: a.Config.ReadHeaderTimeout,
		ReadTimeout:       a.Config.ReadTimeout,
		WriteTimeout:      a.Config.WriteTimeout,
		IdleTimeout:       a.Config.IdleTimeout,
		MaxHeaderBytes:    a.Config.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(a.Log.Handler(), slog.LevelWarn),
	}
	// The front server answers anonymous edge hits itself and hands every
	// other connection to a.srv (internal/front). It caps the client
	// connections of both (max_conns; 0 derives the cap from the
	// descriptor limit) and sets a.srv.ConnState to count net/http's.
	fs := front.New(front.Options{Cache: a.Edge, HTTP: a.srv, Personal: a.Web.Personal, MaxConns: a.Config.MaxConns, NoFastPath: !a.Config.Front, Loops: a.Config.FrontLoops, OnHit: func(h front.Hit) {
		if a.Metrics != nil {
			a.Metrics.FastHit(h.Method, h.Target, h.RemoteAddr, h.Personal, h.Status, h.Bytes, h.Duration)
		}
	}})
	a.fs.Store(fs)
	// Each event loop is a thread that needs a processor the moment
	// epoll_wait returns; with GOMAXPROCS at the CPU count, jobs and the
	// garbage collector can hold every processor and leave a loop waiting
	// for one (milliseconds, at the scheduler's time slice). So each loop
	// gets a processor of its own, unless GOMAXPROCS was set by hand; the
	// kernel then shares the CPUs among the threads.
	if n := fs.Loops(); n > 0 && os.Getenv("GOMAXPROCS") == "" {
		loopProcs.Do(func() { runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + n) })
	}
	errc := make(chan error, 1)
	go func() { errc <- fs.Serve(a.ln) }()
	a.serveOps() // ops.go
	a.Log.Info("wikid serving", "addr", "http://"+a.Addr(), "data", a.Config.DataDir, "max_conns", fs.ConnStats().Max)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	a.Log.Info("shutting down", "grace", a.Config.ShutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), a.Config.ShutdownGrace)
	defer cancel()
	opsDone := a.shutdownOps(sctx)
	err := fs.Shutdown(sctx) // then a.srv.Shutdown: both drain
	<-opsDone
	if cerr := a.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// ConnStats reports the front server's client connections and what its
// cap did to them; zero before Serve.
func (a *App) ConnStats() front.ConnStats {
	if fs := a.fs.Load(); fs != nil {
		return fs.ConnStats()
	}
	return front.ConnStats{}
}

// Close stops the access log and closes the store.
func (a *App) Close() error {
	a.stopJobs() // jobs.go: drain the job workers before the store closes
	if a.stopFollow != nil {
		a.stopFollow()
		<-a.followed
	}
	a.closeUnservedOps()
	if a.Access != nil {
		a.Access.Close()
	}
	return a.Store.Close()
}

// loadSecret reads the server secret, creating it on first start.
func loadSecret(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil && len(b) >= 32 {
		return b, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("app: read %s: %w", path, err)
	}
	b = make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, fmt.Errorf("app: write %s: %w", path, err)
	}
	return b, nil
}
