// Package apptest boots a real Wikid (SQLite file in a temporary directory,
// the real handler chain) behind httptest.Server for HTTP-level tests, with
// clients that keep cookies, log in through the real form and scrape CSRF
// tokens. Every response is recorded: a test fails if any was a 5xx that the
// test did not announce with AllowServerErrors.
package apptest

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/app"
	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/wiki"
)

// Wiki is a running wiki under test.
type Wiki struct {
	App    *app.App
	Server *httptest.Server
	URL    string // base URL, no trailing slash
	Logs   *SyncBuffer

	closeOnce sync.Once
	closeErr  error

	mu          sync.Mutex
	serverError []string // "METHOD URL → status" of every 5xx answer
	allow5xx    bool

	// AsyncJobs stops clients from settling the job queue after each
	// request that is not a GET or HEAD (see Settle): for tests of what is
	// visible while jobs are pending.
	AsyncJobs bool
}

// Config is config.Default for tests, with the front server's path chosen
// by WIKID_TEST_FRONT: "false" (net/http answers every request, as with
// "front": false), "goroutines" (a goroutine per fast-path connection, as
// with "front_loops": -1), or unset (the defaults). .ci/run runs the app
// tests each way.
//
// The access log goes nowhere (New sends it to Wiki.Logs), not to the test
// binary's standard error.
func Config() config.Config {
	cfg := config.Default()
	cfg.LogOutput = io.Discard
	switch os.Getenv("WIKID_TEST_FRONT") {
	case "false":
		cfg.Front = false
	case "goroutines":
		cfg.FrontLoops = -1
	}
	return cfg
}

// New boots a wiki on a fresh data directory. Options edit the
// configuration (config.Default with DataDir set) before Open.
func New(tb testing.TB, opts ...func(*config.Config)) *Wiki {
	tb.Helper()
	cfg := Config()
	cfg.DataDir = tb.TempDir()
	cfg.Addr = "127.0.0.1:0"
	for _, o := range opts {
		o(&cfg)
	}
	logs := &SyncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if cfg.LogOutput == io.Discard {
		cfg.LogOutput = logs // the access log too
	}
	a, err := app.Open(context.Background(), cfg, log)
	if err != nil {
		tb.Fatalf("app.Open: %v", err)
	}
	w := &Wiki{App: a, Logs: logs}
	w.Server = httptest.NewServer(a.Handler())
	w.URL = w.Server.URL
	tb.Cleanup(func() {
		if err := w.Close(); err != nil {
			tb.Errorf("close app: %v", err)
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if len(w.serverError) > 0 && !w.allow5xx {
			tb.Errorf("server answered with 5xx (no user input may):\n  %s\nlogs:\n%s",
				strings.Join(w.serverError, "\n  "), logs.String())
		}
	})
	return w
}

// Close stops the server and closes the store (as a restart would);
// it is also done when the test ends.
func (w *Wiki) Close() error {
	w.closeOnce.Do(func() {
		w.Server.Close()
		w.closeErr = w.App.Close()
	})
	return w.closeErr
}

// Settle waits until the job queue has nothing queued or running, so that
// every effect of the changes made so far is visible (links recoloured,
// search index updated). Clients do it after every request that is not a
// GET or HEAD, unless AsyncJobs is set.
func (w *Wiki) Settle(tb testing.TB) {
	tb.Helper()
	SettleJobs(tb, w.App)
}

// SettleJobs waits until a's job queue holds no queued or running job, and
// fails tb after 30 s: for tests whose next step must not race a job's
// purges.
func SettleJobs(tb testing.TB, a *app.App) {
	tb.Helper()
	if !settle(a, 30*time.Second) {
		st, err := a.Store.JobStats(context.Background())
		tb.Fatalf("the job queue did not settle: %+v, %v", st, err)
	}
}

func settle(a *app.App, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		st, err := a.Store.JobStats(context.Background())
		if err == nil && st.Counts[wiki.JobQueued] == 0 && st.Counts[wiki.JobRunning] == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// AllowServerErrors tells the 5xx check that this wiki's test provokes them.
func (w *Wiki) AllowServerErrors() {
	w.mu.Lock()
	w.allow5xx = true
	w.mu.Unlock()
}

// CreateUser stores an account directly (argon2 hashing is slow: create few
// users and reuse them) and returns its password.
func (w *Wiki) CreateUser(tb testing.TB, name string, group wiki.Group) (wiki.User, string) {
	tb.Helper()
	password := "pw-" + strings.ToLower(strings.ReplaceAll(name, " ", "-")) + "-secret"
	hash, err := auth.HashPassword(password)
	if err != nil {
		tb.Fatal(err)
	}
	u, err := w.App.Store.CreateUser(context.Background(), wiki.User{Name: name, PasswordHash: hash, Group: group, Created: time.Now()})
	if err != nil {
		tb.Fatalf("create user %q: %v", name, err)
	}
	return u, password
}

// Serve starts the whole app, front server included, on a free loopback
// port with the configuration edited by opts, and stops it at cleanup. It
// returns the app and its base URL. (New serves the handler through
// httptest, without the front server.)
func Serve(tb testing.TB, opts ...func(*config.Config)) (*app.App, string) {
	tb.Helper()
	cfg := Config()
	cfg.DataDir = tb.TempDir()
	cfg.Addr = "127.0.0.1:0"
	for _, o := range opts {
		o(&cfg)
	}
	a, err := app.Open(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		tb.Fatal(err)
	}
	if err := a.Listen(); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx) }()
	tb.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			tb.Error("Serve did not return")
		}
	})
	return a, "http://" + a.Addr()
}

// Client is a browser: a cookie jar, and redirects are not followed so
// that tests see the 30x.
type Client struct {
	tb   testing.TB
	w    *Wiki
	HTTP *http.Client
	Jar  http.CookieJar
}

// Client returns a new anonymous browser.
func (w *Wiki) Client(tb testing.TB) *Client {
	tb.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return &Client{tb: tb, w: w, Jar: jar, HTTP: &http.Client{
		Jar:           jar,
		Transport:     &recorder{w: w, next: w.Server.Client().Transport},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       30 * time.Second,
	}}
}

// Login returns a browser logged in through the real login form.
func (w *Wiki) Login(tb testing.TB, name, password string) *Client {
	tb.Helper()
	c := w.Client(tb)
	res := c.PostForm("/wiki/Special:UserLogin", url.Values{
		"csrf": {c.CSRF("/wiki/Special:UserLogin")}, "username": {name}, "password": {password}})
	if res.StatusCode != http.StatusSeeOther {
		tb.Fatalf("login as %q: status %d, want 303\n%s", name, res.StatusCode, res.Body)
	}
	if c.SessionCookie() == "" {
		tb.Fatalf("login as %q: no session cookie", name)
	}
	return c
}

// recorder notes every 5xx answer.
type recorder struct {
	w    *Wiki
	next http.RoundTripper
}

func (rt *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := rt.next.RoundTrip(r)
	if err == nil && r.Method != http.MethodGet && r.Method != http.MethodHead {
		rt.w.mu.Lock()
		async := rt.w.AsyncJobs
		rt.w.mu.Unlock()
		if !async {
			settle(rt.w.App, 10*time.Second)
		}
	}
	if err == nil && res.StatusCode >= 500 {
		rt.w.mu.Lock()
		rt.w.serverError = append(rt.w.serverError, r.Method+" "+r.URL.String()+" → "+res.Status)
		rt.w.mu.Unlock()
	}
	return res, err
}

// Response is a response with its body read.
type Response struct {
	*http.Response
	Body string
}

// Do sends r (a path relative to the wiki is resolved) and reads the body.
func (c *Client) Do(r *http.Request) *Response {
	c.tb.Helper()
	if r.URL.Host == "" {
		u, err := url.Parse(c.w.URL)
		if err != nil {
			c.tb.Fatal(err)
		}
		r.URL.Scheme, r.URL.Host = u.Scheme, u.Host
		r.Host = u.Host
	}
	res, err := c.HTTP.Do(r)
	if err != nil {
		c.tb.Fatalf("%s %s: %v", r.Method, r.URL, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.tb.Fatalf("%s %s: read body: %v", r.Method, r.URL, err)
	}
	return &Response{Response: res, Body: string(b)}
}

// NewRequest builds a request for path (which may hold raw, unescaped
// bytes: it is set as the URL's opaque path unchanged).
func (c *Client) NewRequest(method, path string, body io.Reader) *http.Request {
	c.tb.Helper()
	r, err := http.NewRequest(method, c.w.URL+"/", body)
	if err != nil {
		c.tb.Fatal(err)
	}
	p, q, _ := strings.Cut(path, "?")
	r.URL.Opaque = p
	r.URL.RawQuery = q
	return r
}

// Get fetches path.
func (c *Client) Get(path string) *Response {
	c.tb.Helper()
	return c.Do(c.NewRequest(http.MethodGet, path, nil))
}

// PostForm posts form values to path.
func (c *Client) PostForm(path string, v url.Values) *Response {
	c.tb.Helper()
	r := c.NewRequest(http.MethodPost, path, strings.NewReader(v.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.Do(r)
}

// JSON sends a JSON body (with an optional bearer token) to path.
func (c *Client) JSON(method, path, token string, body string) *Response {
	c.tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := c.NewRequest(method, path, rd)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return c.Do(r)
}

// Multipart posts fields and a file (the part "file", named fileName) to
// path as multipart/form-data, with header's fields.
func (c *Client) Multipart(path string, fields map[string]string, fileName string, data []byte, header http.Header) *Response {
	c.tb.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			c.tb.Fatal(err)
		}
	}
	if data != nil {
		fw, err := mw.CreateFormFile("file", fileName)
		if err != nil {
			c.tb.Fatal(err)
		}
		fw.Write(data)
	}
	mw.Close()
	r := c.NewRequest(http.MethodPost, path, &body)
	for k, vs := range header {
		r.Header[k] = vs
	}
	r.Header.Set("Content-Type", mw.FormDataContentType())
	return c.Do(r)
}

// Upload uploads data as File:name through Special:Upload's form, as a
// browser without scripts does, and fails the test unless it is stored.
func (c *Client) Upload(name string, data []byte, comment string) *Response {
	c.tb.Helper()
	csrf := c.CSRF("/wiki/Special:Upload")
	res := c.Multipart("/wiki/Special:Upload", map[string]string{"csrf": csrf, "wpDestFile": name, "wpUploadDescription": comment}, name, data, nil)
	if res.StatusCode != http.StatusSeeOther {
		c.tb.Fatalf("upload %q: status %d\n%s", name, res.StatusCode, res.Body)
	}
	return res
}

var (
	csrfRE    = regexp.MustCompile(`name="csrf" value="([^"]*)"`)
	baserevRE = regexp.MustCompile(`name="baserev" value="(\d+)"`)
)

// CSRF fetches the form at path and returns its csrf field.
func (c *Client) CSRF(path string) string {
	c.tb.Helper()
	res := c.Get(path)
	m := csrfRE.FindStringSubmatch(res.Body)
	if m == nil {
		c.tb.Fatalf("GET %s (%d): no csrf field in\n%s", path, res.StatusCode, res.Body)
	}
	return m[1]
}

// EditForm opens title's edit form and returns its csrf token and base revision.
func (c *Client) EditForm(title string) (csrf, baserev string) {
	c.tb.Helper()
	res := c.Get(c.titleURL(title) + "?action=edit")
	if res.StatusCode != http.StatusOK {
		c.tb.Fatalf("edit form of %q: status %d\n%s", title, res.StatusCode, res.Body)
	}
	m, b := csrfRE.FindStringSubmatch(res.Body), baserevRE.FindStringSubmatch(res.Body)
	if m == nil || b == nil {
		c.tb.Fatalf("edit form of %q: no csrf or baserev field", title)
	}
	return m[1], b[1]
}

// titleURL is the URL of title by the wiki's title rules (capital_links).
func (c *Client) titleURL(title string) string {
	c.tb.Helper()
	t, err := c.w.App.Config.TitleRules().Parse(title)
	if err != nil {
		c.tb.Fatalf("title %q: %v", title, err)
	}
	return t.URL()
}

// Submit posts an edit made from the given form state.
func (c *Client) Submit(title, csrf, baserev, text string) *Response {
	c.tb.Helper()
	return c.PostForm(c.titleURL(title)+"?action=submit", url.Values{
		"csrf": {csrf}, "baserev": {baserev}, "text": {text}, "summary": {"test edit"}})
}

// Edit opens the edit form and saves text; it fails the test unless the
// wiki answers 303.
func (c *Client) Edit(title, text string) {
	c.tb.Helper()
	csrf, base := c.EditForm(title)
	res := c.Submit(title, csrf, base, text)
	if res.StatusCode != http.StatusSeeOther {
		c.tb.Fatalf("save %q: status %d, want 303\n%s", title, res.StatusCode, res.Body)
	}
}

// SessionCookie returns the session cookie's value in the jar, or "".
func (c *Client) SessionCookie() string {
	u, _ := url.Parse(c.w.URL)
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == "wikid_session" {
			return ck.Value
		}
	}
	return ""
}

// SetSessionCookie puts a session token in the jar.
func (c *Client) SetSessionCookie(token string) {
	u, _ := url.Parse(c.w.URL)
	c.Jar.SetCookies(u, []*http.Cookie{{Name: "wikid_session", Value: token, Path: "/"}})
}

// SyncBuffer is a bytes.Buffer safe for a logger and a test to share.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
