package app_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/app"
	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/race"
	"github.com/wikid/wikid/internal/view"
	"github.com/wikid/wikid/internal/web"
	"github.com/wikid/wikid/internal/wiki"
)

// The differential test of the cache boundary: every request is sent to the
// real server (front server and edge cache in front of the handlers) and to
// the same handlers over the same database with no cache at all; the two
// answers must be the same, and no request may change what a later plain
// view of a page returns. The requests come from a generator of URLs with
// the parameters the routes read (and others), repeated, empty, re-escaped
// and reordered; the fuzz target mutates them further.

type diffWorld struct {
	a        *app.App
	addr     string // the real server (front, edge, handlers)
	bare     string // the handlers with no cache
	rev1     int64
	rev2     int64
	baseline map[string]string // plain views of the watched pages
}

var (
	diffOnce sync.Once
	diffW    *diffWorld
	diffErr  error
)

// watched are the pages whose plain views no request may change.
var watched = []string{"/wiki/Poison_target", "/wiki/Main_Page", "/wiki/Special:RecentChanges", "/w/rest.php/v1/page/Poison_target"}

func newDiffWorld(t testing.TB) *diffWorld {
	a, base := apptest.Serve(t)
	w := &diffWorld{a: a, addr: strings.TrimPrefix(base, "http://")}
	w.rev1, w.rev2 = saveTwice(t, a, "Poison target")
	// The saves' jobs purge as they run: a fill that races a purge is
	// answered "private, no-cache" (edge.racedCacheControl), which is
	// right but differs from the uncached server. They are done first.
	settleJobs(t, a)
	views, err := view.Parse(a.Config.TitleRules())
	if err != nil {
		t.Fatal(err)
	}
	secret, err := os.ReadFile(filepath.Join(a.Config.DataDir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	bare, err := web.New(web.Options{Config: a.Config, Engine: a.Engine, Views: views, Secret: secret,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(bare)
	t.Cleanup(srv.Close)
	w.bare = strings.TrimPrefix(srv.URL, "http://")
	w.baseline = map[string]string{}
	for _, p := range watched {
		w.baseline[p] = normalizeBody(decoded(t, rawGet(t, w.addr, "GET", p)))
	}
	return w
}

// settleJobs waits until a's job queue has nothing queued or running.
func settleJobs(t testing.TB, a *app.App) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := a.Store.JobStats(context.Background())
		if err == nil && st.Counts[wiki.JobQueued] == 0 && st.Counts[wiki.JobRunning] == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job queue did not settle: %+v, %v", st, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="[^"]*"`)

// normalizeBody removes what legitimately differs between two renders of
// one response: the anonymous form token carries the second it was made.
func normalizeBody(s string) string { return csrfRE.ReplaceAllString(s, `name="csrf" value=""`) }

// ignoredHeaders differ between any two answers (time of serving, the
// connection, how the answer was made).
var ignoredHeaders = map[string]bool{"Date": true, "Server-Timing": true, "X-Cache": true, "Connection": true}

// compare sends one request to both servers and reports how the answers
// differ ("" when they do not).
func (w *diffWorld) compare(t *testing.T, method, target string, header ...string) string {
	got := rawGet(t, w.addr, method, target, header...)
	want := rawGet(t, w.bare, method, target, header...)
	if got.status != want.status {
		return fmt.Sprintf("status %d, uncached %d", got.status, want.status)
	}
	sameCoding := got.header.Get("Content-Encoding") == want.header.Get("Content-Encoding")
	for k := range union(got.header, want.header) {
		if ignoredHeaders[k] {
			continue
		}
		g, u := strings.Join(got.header[k], "|"), strings.Join(want.header[k], "|")
		if !sameCoding {
			// The uncached server does not make brotli; the validators
			// then name different codings of the same bytes.
			switch k {
			case "Content-Encoding", "Content-Length":
				continue
			case "Etag":
				g, u = baseETag(g), baseETag(u)
			}
		}
		if g != u {
			return fmt.Sprintf("%s: %q, uncached %q", k, g, u)
		}
	}
	if gb, ub := normalizeBody(decoded(t, got)), normalizeBody(decoded(t, want)); gb != ub {
		return fmt.Sprintf("bodies differ:\n%.300s\nuncached:\n%.300s", gb, ub)
	}
	return ""
}

func union(a, b http.Header) map[string]bool {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}

func baseETag(e string) string {
	return strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(e, `-gz"`), `-br"`), `"`) + `"`
}

// watchedUnchanged checks the plain views of the watched pages.
func (w *diffWorld) watchedUnchanged(t *testing.T, after string) {
	for _, p := range watched {
		for _, enc := range []string{"", "Accept-Encoding: gzip", "Accept-Encoding: br"} {
			res := rawGet(t, w.addr, "GET", p, enc)
			if got := normalizeBody(decoded(t, res)); res.status != http.StatusOK || got != w.baseline[p] {
				t.Fatalf("after %s, GET %s (%s) changed: %d\n%.400s", after, p, enc, res.status, got)
			}
		}
	}
}

// check runs one generated request (all methods and header variants) and
// fails the test on any difference or change of a watched page.
func (w *diffWorld) check(t *testing.T, target string, hdr string) {
	if !validTarget(target) {
		return
	}
	for _, method := range []string{"GET", "HEAD"} {
		var header []string
		if hdr != "" {
			header = []string{hdr}
		}
		if d := w.compare(t, method, target, header...); d != "" {
			t.Fatalf("%s %s (%s): %s", method, target, hdr, d)
		}
		w.watchedUnchanged(t, method+" "+target+" "+hdr)
		// Once more on an empty cache, where this request is the fill.
		w.a.Edge.PurgeAll()
		if d := w.compare(t, method, target, header...); d != "" {
			t.Fatalf("%s %s (%s) on an empty cache: %s", method, target, hdr, d)
		}
		w.watchedUnchanged(t, method+" "+target+" "+hdr+" on an empty cache")
	}
}

// validTarget reports whether s can be sent as a request target at all.
func validTarget(s string) bool {
	if s == "" || s[0] != '/' && !strings.HasPrefix(s, "http://") || len(s) > 2000 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// genTarget builds a URL from the routes' own vocabulary, with the
// spellings that once split the cache key from what handlers read.
func (w *diffWorld) genTarget(r *rand.Rand) string {
	paths := []string{"/wiki/Poison_target", "/wiki/poison_target", "/wiki/Poison%5Ftarget", "/wiki/Main_Page",
		"/wiki/Help:Syntax", "/wiki/Category:Nothing", "/wiki/Missing_page", "/wiki/Special:RecentChanges",
		"/wiki/Special:recentchanges", "/wiki/Special:AllPages", "/wiki/Special:PrefixIndex/Poi", "/wiki/Special:Search",
		"/wiki/Special:WhatLinksHere/Main_Page", "/wiki/Special:Contributions/127.0.0.1", "/wiki/Special:SpecialPages",
		"/w/index.php", "/w/macro/recentchanges", "/w/macro/allpages", "/w/macro/pagecount",
		"/w/rest.php/v1/page/Poison_target", "/w/rest.php/v1/page/Poison_target/html", "/w/rest.php/v1/page/Poison_target/history",
		"/w/rest.php/v1/page/poison_target/bare", "/w/rest.php/v1/search/page", fmt.Sprintf("/w/rest.php/v1/revision/%d", w.rev1),
		fmt.Sprintf("/w/rest.php/v1/revision/%d/compare/%d", w.rev1, w.rev2), "/", "/healthz", "/nowhere"}
	names := []string{"action", "diff", "oldid", "redirect", "from", "offset", "limit", "q", "search", "go", "prefix",
		"title", "target", "returnto", "older_than", "namespace", "utm_source", "Action", "%61ction", "action%3Dhistory", ""}
	values := []string{"", "history", "raw", "edit", "view", "purge", "nonsense", "prev", "cur", "no", "0", "-1", "50", "10",
		"99999", fmt.Sprint(w.rev1), fmt.Sprint(w.rev2), "007", "Poison_target", "Poison+target", "Poison%20target",
		"Main%20Page", "hist%6Fry", "%zz", "%00", "a*b", "a%2Ab", "%E2%9C%93", "1e3", "1", "00", "+1", "%2B1", "all", "8", "abc"}
	target := paths[r.IntN(len(paths))]
	if r.IntN(8) == 0 {
		return target
	}
	n := r.IntN(4)
	var parts []string
	for i := 0; i <= n; i++ {
		name := names[r.IntN(len(names))]
		switch r.IntN(6) {
		case 0:
			parts = append(parts, name) // no '='
		case 1:
			parts = append(parts, "") // an empty part: "&&"
		default:
			parts = append(parts, name+"="+values[r.IntN(len(values))])
		}
	}
	return target + "?" + strings.Join(parts, "&")
}

var genHeaders = []string{"", "Accept-Encoding: gzip", "Accept-Encoding: br, gzip", "If-None-Match: *",
	"If-Modified-Since: Mon, 01 Jan 2024 00:00:00 GMT", "Cookie: _ga=1; theme=dark", "Range: bytes=0-10"}

func diffWorldFor(t testing.TB) *diffWorld {
	// One world per test binary: the fuzz target calls this for every input.
	diffOnce.Do(func() {
		defer func() {
			if v := recover(); v != nil {
				diffErr = fmt.Errorf("setup: %v", v)
			}
		}()
		diffW = newDiffWorld(&keepAlive{})
	})
	if diffErr != nil {
		t.Fatal(diffErr)
	}
	return diffW
}

// TestCacheDifferential runs generated requests (a fixed seed, so that a
// failure is reproducible) through both servers.
func TestCacheDifferential(t *testing.T) {
	w := diffWorldFor(t)
	r := rand.New(rand.NewPCG(1, 2))
	n := 300
	switch {
	case testing.Short():
		n = 60
	case race.Enabled:
		// The first hundred of the same sequence: .ci/run sends all 300
		// without the detector, on each front path.
		n = 100
	}
	for i := 0; i < n; i++ {
		w.check(t, w.genTarget(r), genHeaders[r.IntN(len(genHeaders))])
	}
}

// FuzzCacheDifferential mutates request targets beyond the generator.
func FuzzCacheDifferential(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	w := diffWorldFor(f)
	for i := 0; i < 40; i++ {
		f.Add(w.genTarget(r), uint8(r.IntN(len(genHeaders))))
	}
	f.Fuzz(func(t *testing.T, target string, h uint8) {
		w.check(t, target, genHeaders[int(h)%len(genHeaders)])
	})
}

// keepAlive is the testing.TB of the shared world: it lives for the whole
// test binary, so its cleanups never run, and a failure during setup panics
// (diffWorldFor reports it to the test that asked).
type keepAlive struct{ testing.TB }

func (*keepAlive) Helper()        {}
func (*keepAlive) Cleanup(func()) {}
func (*keepAlive) TempDir() string {
	d, err := os.MkdirTemp("", "wikid-diff-*")
	if err != nil {
		panic(err)
	}
	diffDirs = append(diffDirs, d)
	return d
}

// diffDirs are the shared world's directories, removed by TestMain.
var diffDirs []string

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range diffDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}
func (*keepAlive) Fatal(args ...any)         { panic(fmt.Sprint(args...)) }
func (*keepAlive) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
func (*keepAlive) Errorf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
func (*keepAlive) Error(args ...any)         { panic(fmt.Sprint(args...)) }
func (*keepAlive) Log(...any)                {}
func (*keepAlive) Logf(string, ...any)       {}
func (*keepAlive) Name() string              { return "differential" }

// TestSplicedViewsEqualTheHandlers: a logged-in view assembled from the
// cached anonymous page (through the front server and net/http) is the
// page the handlers would render for that user: for an article, a redirect
// followed to its target, and a category page that has members but no text.
func TestSplicedViewsEqualTheHandlers(t *testing.T) {
	t.Parallel()
	w := newDiffWorld(t) // its own: it adds pages, which the shared world's RecentChanges would show
	ctx := context.Background()
	ed := engine.Editor{UserName: "127.0.0.1"}
	for title, text := range map[string]string{
		"Splice redirect": "#REDIRECT [[Poison target]]\n",
		"Splice member":   "A page in a category without text. [[Category:Splice members]]\n",
	} {
		if _, err := w.a.Engine.Save(ctx, engine.Edit{Title: wiki.MustTitle(title), Text: text, Editor: ed}); err != nil {
			t.Fatal(err)
		}
	}
	cookie := loginCookie(t, w.a, "http://"+w.addr, "Splicer")
	for _, path := range []string{"/wiki/Poison_target", "/wiki/Splice_redirect", "/wiki/Category:Splice_members", "/wiki/Main_Page"} {
		want := rawGet(t, w.bare, "GET", path, "Cookie: "+cookie)
		rawGet(t, w.addr, "GET", path) // the anonymous entry
		for i, enc := range []string{"", "Accept-Encoding: gzip", "", "Accept-Encoding: gzip"} {
			got := rawGet(t, w.addr, "GET", path, "Cookie: "+cookie, enc)
			if i >= 2 && got.header.Get("X-Cache") != "SPLICE" {
				t.Errorf("%s (%s): X-Cache %q, want SPLICE", path, enc, got.header.Get("X-Cache"))
			}
			if got.status != want.status || decoded(t, got) != decoded(t, want) {
				t.Errorf("%s (%s): the spliced view (%d) differs from the handler's (%d):\n%s", path, enc, got.status, want.status,
					firstDiff(decoded(t, got), decoded(t, want)))
			}
			for _, k := range []string{"Content-Type", "Cache-Control", "Vary"} {
				if got.header.Get(k) != want.header.Get(k) {
					t.Errorf("%s (%s): %s %q, the handler's %q", path, enc, k, got.header.Get(k), want.header.Get(k))
				}
			}
		}
	}
}

// firstDiff shows where two texts part.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-80)
	return fmt.Sprintf("…%s\n   vs\n…%s", a[lo:min(len(a), i+80)], b[lo:min(len(b), i+80)])
}
