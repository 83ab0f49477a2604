package web_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/andybalholm/brotli"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/edge"
	"github.com/wikid/wikid/internal/race"
	"github.com/wikid/wikid/internal/wiki"
)

// get sends a GET for path with extra headers ("Name: value").
func get(t *testing.T, c *apptest.Client, path string, headers ...string) *apptest.Response {
	t.Helper()
	r := c.NewRequest(http.MethodGet, path, nil)
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		r.Header.Set(k, v)
	}
	return c.Do(r)
}

func xcache(res *apptest.Response) string { return res.Header.Get("X-Cache") }

func TestEdgeCache(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Carol", wiki.GroupUser)
	carol := w.Login(t, "Carol", pw)
	carol.Edit("Cached page", "Text with a [[Missing target]].")
	anon := w.Client(t)

	t.Run("an anonymous read is a miss, then a hit without an Age", func(t *testing.T) {
		r1 := get(t, anon, "/wiki/Cached_page")
		r2 := get(t, anon, "/wiki/Cached_page")
		if xcache(r1) != "MISS" || xcache(r2) != "HIT" {
			t.Fatalf("X-Cache: %q then %q, want MISS then HIT", xcache(r1), xcache(r2))
		}
		if r2.Header["Age"] != nil || r1.Body != r2.Body {
			t.Errorf("hit: Age %q (a cache in front would count it against s-maxage), same body %v", r2.Header.Get("Age"), r1.Body == r2.Body)
		}
		if cc := r2.Header.Get("Cache-Control"); cc != "public, max-age=0, s-maxage=300" {
			t.Errorf("Cache-Control %q", cc)
		}
	})

	t.Run("cookies other than the session never split the cache", func(t *testing.T) {
		for _, cookie := range []string{"_ga=GA1.2.3; consent=yes", "theme=dark", "wikid_session=forged-not-a-real-session-token"} {
			res := get(t, anon, "/wiki/Cached_page", "Cookie: "+cookie)
			if xcache(res) != "HIT" {
				t.Errorf("Cookie %q: X-Cache %q, want HIT", cookie, xcache(res))
			}
			if strings.Contains(res.Body, "Log out") {
				t.Errorf("Cookie %q: anonymous page shows a user bar", cookie)
			}
		}
	})

	t.Run("a logged-in view is spliced, private, and never fills the anonymous entry", func(t *testing.T) {
		carol.Edit("Private check", "Fresh page.")
		res := carol.Get("/wiki/Private_check")
		if xcache(res) != "SPLICE" || res.Header.Get("Cache-Control") != "private, no-cache" {
			t.Fatalf("logged in: X-Cache %q, Cache-Control %q", xcache(res), res.Header.Get("Cache-Control"))
		}
		if !strings.Contains(res.Body, "Carol") || !strings.Contains(res.Body, "Log out") || !strings.Contains(res.Body, "?action=move") {
			t.Error("logged-in view lacks the user bar or the Move tab")
		}
		a := get(t, anon, "/wiki/Private_check")
		if strings.Contains(a.Body, `class="me"`) || strings.Contains(a.Body, "Log out") || strings.Contains(a.Body, "name=\"csrf\"") {
			t.Error("anonymous view carries the logged-in user's parts")
		}
		if a.Header.Get("ETag") == res.Header.Get("ETag") {
			t.Error("logged-in and anonymous views share an ETag")
		}
	})

	t.Run("anonymous responses set no cookie", func(t *testing.T) {
		for _, p := range []string{"/wiki/Cached_page", "/wiki/Special:UserLogin", "/wiki/Special:CreateAccount",
			"/wiki/Special:RecentChanges", "/wiki/Special:AllPages", "/wiki/Special:Search?q=text", "/wiki/No_such_page",
			"/wiki/Cached_page?action=history", "/wiki/Cached_page?action=edit", "/w/macro/pagecount", "/"} {
			if sc := get(t, anon, p).Header.Values("Set-Cookie"); len(sc) > 0 {
				t.Errorf("GET %s set a cookie: %q", p, sc)
			}
		}
	})

	t.Run("conditional GET answers 304 for anonymous and logged-in readers", func(t *testing.T) {
		for name, c := range map[string]*apptest.Client{"anonymous": anon, "logged in": carol} {
			r := c.Get("/wiki/Cached_page")
			etag, lm := r.Header.Get("ETag"), r.Header.Get("Last-Modified")
			if etag == "" || lm == "" {
				t.Fatalf("%s: ETag %q Last-Modified %q", name, etag, lm)
			}
			if res := get(t, c, "/wiki/Cached_page", "If-None-Match: "+etag); res.StatusCode != 304 || res.Body != "" {
				t.Errorf("%s If-None-Match: %d with %d bytes", name, res.StatusCode, len(res.Body))
			}
			if name == "anonymous" {
				if res := get(t, c, "/wiki/Cached_page", "If-Modified-Since: "+lm); res.StatusCode != 304 {
					t.Errorf("%s If-Modified-Since: %d", name, res.StatusCode)
				}
			}
			if res := get(t, c, "/wiki/Cached_page", `If-None-Match: "other"`); res.StatusCode != 200 {
				t.Errorf("%s non-matching ETag: %d", name, res.StatusCode)
			}
		}
	})

	t.Run("HEAD has the headers of GET and no body", func(t *testing.T) {
		g := get(t, anon, "/wiki/Cached_page", "Accept-Encoding: identity")
		h := anon.Do(anon.NewRequest(http.MethodHead, "/wiki/Cached_page", nil))
		if h.StatusCode != 200 || h.Body != "" || h.Header.Get("ETag") != g.Header.Get("ETag") || h.ContentLength != int64(len(g.Body)) {
			t.Errorf("HEAD: %d, body %d bytes, ETag %q vs %q, length %d vs %d", h.StatusCode, len(h.Body),
				h.Header.Get("ETag"), g.Header.Get("ETag"), h.ContentLength, len(g.Body))
		}
	})

	t.Run("identity, gzip and brotli variants carry the same page", func(t *testing.T) {
		want := get(t, anon, "/wiki/Help:Syntax").Body
		for _, enc := range []string{"gzip", "br"} {
			r := anon.NewRequest(http.MethodGet, "/wiki/Help:Syntax", nil)
			r.Header.Set("Accept-Encoding", enc)
			res, err := anon.HTTP.Transport.RoundTrip(withHost(r, w.URL))
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.Header.Get("Content-Encoding") != enc {
				t.Fatalf("%s: Content-Encoding %q", enc, res.Header.Get("Content-Encoding"))
			}
			var rd io.Reader
			if enc == "gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(raw))
				if err != nil {
					t.Fatal(err)
				}
				rd = zr
			} else {
				rd = brotli.NewReader(bytes.NewReader(raw))
			}
			got, err := io.ReadAll(rd)
			if err != nil || string(got) != want {
				t.Errorf("%s variant decodes to %d bytes (err %v), want %d", enc, len(got), err, len(want))
			}
		}
	})

	t.Run("a listing's and a search's entries have no brotli variant, a page's has", func(t *testing.T) {
		for path, seldom := range map[string]bool{"/wiki/Help:Syntax": false, "/wiki/Special:RecentChanges": true, "/wiki/Special:Search?q=text": true} {
			want := get(t, anon, path, "Accept-Encoding: identity").Body
			r := anon.NewRequest(http.MethodGet, path, nil)
			r.Header.Set("Accept-Encoding", "br, gzip")
			res, err := anon.HTTP.Transport.RoundTrip(withHost(r, w.URL))
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(res.Body)
			res.Body.Close()
			enc, wantEnc := res.Header.Get("Content-Encoding"), "br"
			if seldom {
				wantEnc = "gzip"
			}
			if res.Header.Get("X-Cache") != "HIT" || enc != wantEnc {
				t.Fatalf("%s: X-Cache %q, Content-Encoding %q, want a hit in %s", path, res.Header.Get("X-Cache"), enc, wantEnc)
			}
			if seldom && !bytes.Equal(raw, edge.GzipBytes([]byte(want))) {
				t.Errorf("%s: the gzip variant is not GzipBytes of the page", path)
			}
		}
	})

	t.Run("a red link turns blue when its target is created, without editing the linking page, and readers get hits", func(t *testing.T) {
		// The red link (the page's tabs may hold others, to its talk page).
		const redLink = `href="/wiki/Missing_target?action=edit&amp;redlink=1" class="new"`
		before := get(t, anon, "/wiki/Cached_page")
		if !strings.Contains(before.Body, redLink) {
			t.Fatal("link to a missing page is not red")
		}
		get(t, anon, "/wiki/Cached_page?action=raw")
		if res := get(t, anon, "/wiki/Cached_page?action=raw"); xcache(res) != "HIT" {
			t.Fatalf("raw text not cached: X-Cache %q", xcache(res))
		}
		carol.Edit("Missing target", "Now it exists.")
		// Only the view is rendered again in place; the page's other
		// cached responses are purged, for their next reader to render.
		if res := get(t, anon, "/wiki/Cached_page?action=raw"); xcache(res) != "MISS" {
			t.Errorf("raw text after the refresh: X-Cache %q, want MISS (purged, not refreshed)", xcache(res))
		}
		after := get(t, anon, "/wiki/Cached_page")
		if xcache(after) != "HIT" || strings.Contains(after.Body, redLink) {
			t.Errorf("after creating the target: X-Cache %q, still red: %v", xcache(after), strings.Contains(after.Body, redLink))
		}
		if after.Header.Get("ETag") == before.Header.Get("ETag") {
			t.Error("ETag did not change with the link colour")
		}
	})

	t.Run("pages with live macros stay hits while the macro data changes", func(t *testing.T) {
		carol.Edit("Dashboard", "Latest:\n\n{{RecentChanges}}\n\nPages: {{PageCount}}")
		get(t, anon, "/wiki/Dashboard")
		before := get(t, anon, "/w/macro/recentchanges")
		carol.Edit("Another page", "Something new.")
		if res := get(t, anon, "/wiki/Dashboard"); xcache(res) != "HIT" {
			t.Errorf("macro page after an unrelated edit: X-Cache %q, want HIT", xcache(res))
		}
		after := get(t, anon, "/w/macro/recentchanges")
		if !strings.Contains(after.Body, "Another page") || before.Body == after.Body {
			t.Errorf("macro data did not change after an edit: %s", after.Body)
		}
	})
}

func withHost(r *http.Request, base string) *http.Request {
	r.URL.Scheme = "http"
	r.URL.Host = strings.TrimPrefix(base, "http://")
	r.Host = r.URL.Host
	return r
}

// TestPurgeOnEdit is the writer-reads-its-write guarantee: every read after
// an acknowledged edit shows that edit, anonymous or logged in.
func TestPurgeOnEdit(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	u, _ := w.CreateUser(t, "Dave", wiki.GroupUser)
	token := apiToken(t, w, u)
	c := w.Client(t)
	res := c.JSON(http.MethodPost, "/w/rest.php/v1/page", token, `{"title":"Counter","source":"round 0"}`)
	mustStatus(t, res, http.StatusCreated)
	latest := decode[struct {
		Latest struct{ ID int64 } `json:"latest"`
	}](t, res).Latest.ID
	rounds := 1000
	switch {
	case testing.Short():
		rounds = 100
	case race.Enabled:
		rounds = 150 // a sample: .ci/run runs the 1,000 without the race detector
	}
	stale := 0
	for i := 1; i <= rounds; i++ {
		body := fmt.Sprintf(`{"source":"round %d","comment":"r","latest":{"id":%d}}`, i, latest)
		res := c.JSON(http.MethodPut, "/w/rest.php/v1/page/Counter", token, body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("round %d: PUT %d %s", i, res.StatusCode, res.Body)
		}
		latest = decode[struct {
			Latest struct{ ID int64 } `json:"latest"`
		}](t, res).Latest.ID
		page := c.Get("/wiki/Counter")
		if !strings.Contains(page.Body, fmt.Sprintf("round %d</p>", i)) {
			stale++
		}
	}
	if stale != 0 {
		t.Errorf("%d of %d reads after an edit were stale", stale, rounds)
	}
}

// TestCoalescing: concurrent misses for one page run one render.
func TestCoalescing(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Erin", wiki.GroupUser)
	w.Login(t, "Erin", pw).Edit("Popular", strings.Repeat("Some [[text]] here.\n\n", 500))
	before := w.App.Engine.Renders.Load()
	const n = 50
	var wg sync.WaitGroup
	bodies := make([]string, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := w.Client(t)
			<-start
			bodies[i] = c.Get("/wiki/Popular").Body
		}()
	}
	close(start)
	wg.Wait()
	if got := w.App.Engine.Renders.Load() - before; got != 1 {
		t.Errorf("%d concurrent misses ran %d renders, want 1", n, got)
	}
	for i := range bodies {
		if bodies[i] != bodies[0] || !strings.Contains(bodies[i], "Some") {
			t.Fatalf("reader %d got a different or empty page", i)
		}
	}
}
