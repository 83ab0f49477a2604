package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"

	"github.com/wikid/wikid/internal/metrics"
)

// The operator's endpoints, /metrics and /debug/pprof/, are served on two
// listeners: on addr to logged-in administrators only (routes in app.go),
// and on ops_addr, when set, to whoever can reach it: a port the operator
// keeps off the public network (loopback, a management interface) for
// Prometheus and for profiling. Who may use them is never decided by the
// client's address on the main listener: behind Varnish or nginx on the
// same host every client would look local.

// opsServer is the ops_addr listener and its server.
type opsServer struct {
	ln  net.Listener
	srv *http.Server
}

// opsRoutes serves /metrics and /debug/pprof/ to anyone who reaches it;
// the callers guard and mark it no-store.
func opsRoutes(m *metrics.Metrics) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// noStore marks every response of h, errors and redirects included, as
// not to be kept by any cache.
func noStore(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// listenOps binds ops_addr, if set.
func (a *App) listenOps() error {
	if a.Config.OpsAddr == "" || a.ops.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", a.Config.OpsAddr)
	if err != nil {
		return fmt.Errorf("app: listen on ops_addr %s: %w (choose another ops_addr, or leave it empty to serve /metrics to administrators on addr only)", a.Config.OpsAddr, err)
	}
	a.ops.ln = ln
	return nil
}

// OpsAddr is the ops listener's bound address after Listen, or "" when
// ops_addr is not set.
func (a *App) OpsAddr() string {
	if a.ops.ln == nil {
		return ""
	}
	return a.ops.ln.Addr().String()
}

// serveOps starts serving the ops listener, if any. It has no read or
// write timeout once the headers are in, so that a CPU profile or trace may
// run as long as asked (a read deadline would cancel the request's context).
func (a *App) serveOps() {
	if a.ops.ln == nil {
		return
	}
	a.ops.srv = &http.Server{
		Handler:           noStore(opsRoutes(a.Metrics)),
		ReadHeaderTimeout: a.Config.ReadHeaderTimeout,
		IdleTimeout:       a.Config.IdleTimeout,
		MaxHeaderBytes:    a.Config.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(a.Log.Handler(), slog.LevelWarn),
	}
	srv, ln := a.ops.srv, a.ops.ln
	a.Log.Info("operator endpoints serving", "addr", "http://"+a.OpsAddr()+"/metrics")
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.Log.Error("operator endpoints stopped; /metrics and /debug/pprof/ remain on addr for administrators", "addr", ln.Addr().String(), "err", err)
		}
	}()
}

// shutdownOps stops the ops server: requests in flight get until ctx
// ends, then their connections are closed. The channel closes when done.
func (a *App) shutdownOps(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	srv := a.ops.srv
	if srv == nil {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		if err := srv.Shutdown(ctx); err != nil {
			srv.Close()
		}
	}()
	return done
}

// closeUnservedOps closes the ops listener when Listen bound it but Serve
// never ran (Serve's shutdown closes it otherwise).
func (a *App) closeUnservedOps() {
	if a.ops.ln != nil && a.ops.srv == nil {
		a.ops.ln.Close()
	}
}
