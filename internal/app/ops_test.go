package app_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/app"
	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/wiki"
)

var opsPaths = []string{"/metrics", "/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/goroutine?debug=1", "/debug/pprof"}

// get sends one request with extra header lines ("Name: value") and reads
// the body; redirects are not followed.
func get(t *testing.T, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range header {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Add(k, strings.TrimSpace(v))
	}
	c := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// served reports whether res answers path: 200, or for /debug/pprof the
// redirect to /debug/pprof/.
func served(res *http.Response, path string) bool {
	if path == "/debug/pprof" {
		return res.StatusCode/100 == 3 && res.Header.Get("Location") == "/debug/pprof/"
	}
	return res.StatusCode == http.StatusOK
}

// TestOpsEndpointsOnMainListener: /metrics and /debug/pprof/ answer
// administrators only, whoever seems to be asking and from wherever; every
// answer is no-store.
func TestOpsEndpointsOnMainListener(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opt  func(*config.Config)
	}{
		{"with no trusted proxy", func(*config.Config) {}},
		{"behind a trusted proxy on loopback", func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1", "::1"} }},
		{"with trust_proxy", func(c *config.Config) { c.TrustProxy = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := apptest.New(t, tc.opt)
			admin, apw := w.CreateUser(t, "Opsadmin", wiki.GroupAdmin)
			_, upw := w.CreateUser(t, "Opsuser", wiki.GroupUser)
			adminCookie := "Cookie: wikid_session=" + w.Login(t, "Opsadmin", apw).SessionCookie()
			userCookie := "Cookie: wikid_session=" + w.Login(t, "Opsuser", upw).SessionCookie()
			token := "wkd_" + auth.NewSecret(32)
			if err := w.App.Store.CreateToken(context.Background(), wiki.Token{ID: auth.HashToken(token), UserID: admin.ID, Name: "ops", Created: time.Now()}); err != nil {
				t.Fatal(err)
			}
			// The test client is on loopback: these are the requests that
			// used to pass as local.
			refused := map[string][]string{
				"anonymous":                    nil,
				"anonymous with loopback XFF":  {"X-Forwarded-For: 127.0.0.1"},
				"anonymous with a Forwarded":   {"Forwarded: for=127.0.0.1"},
				"anonymous with a Via":         {"Via: 1.1 varnish"},
				"anonymous with all of them":   {"X-Forwarded-For: ::1, 127.0.0.1", "Forwarded: for=\"[::1]\"", "Via: 1.1 localhost"},
				"a user":                       {userCookie},
				"a user with loopback XFF":     {userCookie, "X-Forwarded-For: 127.0.0.1"},
				"a forged session cookie":      {"Cookie: wikid_session=" + strings.Repeat("x", 43)},
				"an administrator's name only": {"X-Remote-User: Opsadmin"},
			}
			for who, header := range refused {
				for _, path := range opsPaths {
					res, body := get(t, w.URL+path, header...)
					if res.StatusCode != http.StatusForbidden || res.Header.Get("Cache-Control") != "no-store" {
						t.Errorf("%s, GET %s: %d, Cache-Control %q, want 403 no-store", who, path, res.StatusCode, res.Header.Get("Cache-Control"))
					}
					if strings.Contains(body, "wikid_") || strings.Contains(body, "goroutine") {
						t.Errorf("%s, GET %s: the 403 leaks data:\n%s", who, path, body)
					}
				}
			}
			// A wrong token is refused too (by the bearer check), no-store.
			res, _ := get(t, w.URL+"/metrics", "Authorization: Bearer wkd_wrong")
			if res.StatusCode != http.StatusUnauthorized || res.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("a wrong token: %d, Cache-Control %q, want 401 no-store", res.StatusCode, res.Header.Get("Cache-Control"))
			}
			for who, header := range map[string][]string{
				"an administrator":          {adminCookie},
				"an administrator's token":  {"Authorization: Bearer " + token},
				"an administrator with XFF": {adminCookie, "X-Forwarded-For: 203.0.113.7", "Via: 1.1 varnish"},
			} {
				for _, path := range opsPaths {
					res, body := get(t, w.URL+path, header...)
					if !served(res, path) || res.Header.Get("Cache-Control") != "no-store" {
						t.Errorf("%s, GET %s: %d, Cache-Control %q, want it served, no-store", who, path, res.StatusCode, res.Header.Get("Cache-Control"))
					}
					if path == "/metrics" && !strings.Contains(body, "wikid_edge_entries") {
						t.Errorf("%s: /metrics lacks wikid_edge_entries", who)
					}
				}
			}
		})
	}
}

// TestOpsEndpointsRefuseCrossSite: an administrator's session cookie rides
// top-level navigations from other sites (SameSite=Lax), so a link elsewhere
// must not start a profile or a trace: requests the browser marks as
// cross-site or same-site are refused when the cookie authenticates them.
// A bearer token, which no browser sends on its own, is not affected.
func TestOpsEndpointsRefuseCrossSite(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	admin, apw := w.CreateUser(t, "Siteadmin", wiki.GroupAdmin)
	adminCookie := "Cookie: wikid_session=" + w.Login(t, "Siteadmin", apw).SessionCookie()
	token := "wkd_" + auth.NewSecret(32)
	if err := w.App.Store.CreateToken(context.Background(), wiki.Token{ID: auth.HashToken(token), UserID: admin.ID, Name: "ops", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	paths := append([]string{"/debug/pprof/trace?seconds=1", "/debug/pprof/profile?seconds=1"}, opsPaths...)
	for _, site := range []string{"cross-site", "same-site"} {
		for _, path := range paths {
			res, body := get(t, w.URL+path, adminCookie, "Sec-Fetch-Site: "+site)
			if res.StatusCode != http.StatusForbidden || res.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("an administrator's cookie, Sec-Fetch-Site %s, GET %s: %d, Cache-Control %q, want 403 no-store",
					site, path, res.StatusCode, res.Header.Get("Cache-Control"))
			}
			if !strings.Contains(body, "requests started by another site") || strings.Contains(body, "goroutine") {
				t.Errorf("Sec-Fetch-Site %s, GET %s: the 403 does not say why, or leaks data:\n%s", site, path, body)
			}
		}
	}
	for who, header := range map[string][]string{
		"an administrator's cookie, same-origin":       {adminCookie, "Sec-Fetch-Site: same-origin"},
		"an administrator's cookie, typed in (none)":   {adminCookie, "Sec-Fetch-Site: none"},
		"an administrator's cookie, no Sec-Fetch-Site": {adminCookie},
		"an administrator's token, cross-site":         {"Authorization: Bearer " + token, "Sec-Fetch-Site: cross-site"},
		"an administrator's token, same-site":          {"Authorization: Bearer " + token, "Sec-Fetch-Site: same-site"},
	} {
		for _, path := range opsPaths {
			if res, _ := get(t, w.URL+path, header...); !served(res, path) || res.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("%s, GET %s: %d, Cache-Control %q, want it served, no-store", who, path, res.StatusCode, res.Header.Get("Cache-Control"))
			}
		}
	}
}

// TestOpsListener: ops_addr serves /metrics and /debug/pprof/ to whoever
// reaches it, no-store, and stops with the app.
func TestOpsListener(t *testing.T) {
	t.Parallel()
	cfg := apptest.Config()
	cfg.DataDir = t.TempDir()
	cfg.Addr = "127.0.0.1:0"
	cfg.OpsAddr = "127.0.0.1:0"
	a, err := app.Open(context.Background(), cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Listen(); err != nil {
		t.Fatal(err)
	}
	if a.OpsAddr() == "" || a.OpsAddr() == a.Addr() {
		t.Fatalf("ops address %q (main %q)", a.OpsAddr(), a.Addr())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx) }()
	ops, main := "http://"+a.OpsAddr(), "http://"+a.Addr()

	t.Run("anyone who reaches it gets the endpoints, no-store", func(t *testing.T) {
		for _, path := range opsPaths {
			res, body := get(t, ops+path)
			if !served(res, path) || res.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("GET %s: %d, Cache-Control %q, want it served, no-store", path, res.StatusCode, res.Header.Get("Cache-Control"))
			}
			if path == "/metrics" && !strings.Contains(body, "wikid_edge_entries") {
				t.Error("/metrics lacks wikid_edge_entries")
			}
		}
		res, _ := get(t, ops+"/wiki/Main_Page")
		if res.StatusCode != http.StatusNotFound || res.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("a wiki page on the ops listener: %d, Cache-Control %q, want 404 no-store", res.StatusCode, res.Header.Get("Cache-Control"))
		}
	})

	t.Run("the main listener still refuses anonymous clients", func(t *testing.T) {
		for _, path := range opsPaths {
			res, _ := get(t, main+path, "X-Forwarded-For: 127.0.0.1")
			if res.StatusCode != http.StatusForbidden || res.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("GET %s on addr: %d, Cache-Control %q", path, res.StatusCode, res.Header.Get("Cache-Control"))
			}
		}
		if res, _ := get(t, main+"/healthz"); res.StatusCode != http.StatusOK {
			t.Errorf("healthz on addr: %d", res.StatusCode)
		}
	})

	t.Run("it stops with the app", func(t *testing.T) {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve returned %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("Serve did not return after cancel")
		}
		if c, err := net.DialTimeout("tcp", a.OpsAddr(), time.Second); err == nil {
			c.Close()
			t.Error("the ops listener still accepts connections after shutdown")
		}
	})
}

// TestNoOpsListenerByDefault: with ops_addr empty nothing more listens.
func TestNoOpsListenerByDefault(t *testing.T) {
	t.Parallel()
	a, base := apptest.Serve(t)
	if a.OpsAddr() != "" {
		t.Errorf("OpsAddr() = %q with ops_addr empty", a.OpsAddr())
	}
	if res, _ := get(t, base+"/metrics"); res.StatusCode != http.StatusForbidden {
		t.Errorf("/metrics on addr: %d, want 403", res.StatusCode)
	}
}

// TestOpsAddrInUse: an ops_addr that cannot be bound fails Listen with
// advice, and leaves the main address free.
func TestOpsAddrInUse(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	w := apptest.New(t, func(c *config.Config) { c.OpsAddr = busy.Addr().String() })
	err = w.App.Listen()
	if err == nil || !strings.Contains(err.Error(), "ops_addr") {
		t.Fatalf("Listen with ops_addr in use: %v", err)
	}
	if w.App.OpsAddr() != "" {
		t.Errorf("OpsAddr() = %q after a failed Listen", w.App.OpsAddr())
	}
}
