package edge

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
)

// fakeClock is a settable clock for TTL and Age tests.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

var pageBody = strings.Repeat("<p>The quick brown fox jumps over the lazy dog.</p>\n", 200)

const (
	pageETag    = `"rev-42"`
	pageLastMod = "Wed, 01 Jan 2025 00:00:00 GMT"
)

// page is a handler like a wiki article view; it counts its renders.
type page struct {
	renders atomic.Int64
	body    string
	tags    []string
	ttl     time.Duration
	status  int
	mark    bool
	cookie  bool
}

func newPage() *page {
	return &page{body: pageBody, tags: []string{"Main Page"}, status: 200, mark: true}
}

func (p *page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.renders.Add(1)
	if p.mark {
		Mark(w, Directive{Tags: p.tags, TTL: p.ttl})
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("ETag", pageETag)
	h.Set("Last-Modified", pageLastMod)
	h.Set("Cache-Control", "public, s-maxage=60")
	h.Set("X-Content-Type-Options", "nosniff")
	if p.cookie {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "x"})
	}
	w.WriteHeader(p.status)
	io.WriteString(w, p.body)
}

func newCache(t testing.TB, cfg Config) *Cache {
	t.Helper()
	return New(cfg)
}

// get sends one request through c in front of h; hdr is name, value pairs.
func get(t testing.TB, c *Cache, h http.Handler, method, target string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	c.Serve(w, r, r.URL.RequestURI(), h)
	return w
}

func decode(t *testing.T, enc string, b []byte) string {
	t.Helper()
	switch enc {
	case "":
		return string(b)
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	case "br":
		out, err := io.ReadAll(brotli.NewReader(bytes.NewReader(b)))
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	t.Fatalf("unexpected Content-Encoding %q", enc)
	return ""
}

func TestVariantsDecodeToTheSameBytes(t *testing.T) {
	c := newCache(t, Config{})
	p := newPage()
	get(t, c, p, "GET", "/wiki/Main_Page") // fill
	for _, tc := range []struct{ accept, enc string }{
		{"", ""},
		{"identity", ""},
		{"gzip", "gzip"},
		{"gzip, deflate, br", "br"},
		{"br;q=0, gzip", "gzip"},
		{"*", "br"},
		{"*, br;q=0", "gzip"},
		{"gzip;q=0, br;q=0", ""},
	} {
		t.Run("Accept-Encoding "+tc.accept+" is served "+tc.enc, func(t *testing.T) {
			w := get(t, c, p, "GET", "/wiki/Main_Page", "Accept-Encoding", tc.accept)
			if w.Code != 200 {
				t.Fatalf("status %d", w.Code)
			}
			if got := w.Header().Get("Content-Encoding"); got != tc.enc {
				t.Fatalf("Content-Encoding %q, want %q", got, tc.enc)
			}
			if got := w.Header().Get("Content-Length"); got != strconv.Itoa(w.Body.Len()) {
				t.Fatalf("Content-Length %s for %d bytes", got, w.Body.Len())
			}
			if tc.enc != "" && w.Body.Len() >= len(pageBody) {
				t.Fatalf("%s variant is not smaller: %d", tc.enc, w.Body.Len())
			}
			if got := decode(t, tc.enc, w.Body.Bytes()); got != pageBody {
				t.Fatal("decoded body differs from the original")
			}
			if got := w.Header().Get("Vary"); got != "Accept-Encoding" {
				t.Fatalf("Vary %q", got)
			}
			etag := pageETag
			if tc.enc != "" {
				etag = pageETag[:len(pageETag)-1] + map[string]string{"gzip": "-gz", "br": "-br"}[tc.enc] + `"`
			}
			for k, want := range map[string]string{"X-Cache": "HIT", "Server-Timing": "cache;desc=hit", "Etag": etag,
				"Content-Type": "text/html; charset=utf-8", "X-Content-Type-Options": "nosniff"} {
				if got := w.Header().Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			if _, ok := w.Header()["Age"]; ok {
				t.Error("a response of the origin's own cache carries Age; a cache in front would count it against s-maxage")
			}
		})
	}
	if n := p.renders.Load(); n != 1 {
		t.Fatalf("%d renders, want 1", n)
	}
}

func TestSmallOrIncompressibleBodiesHaveOnlyIdentity(t *testing.T) {
	c := newCache(t, Config{})
	p := newPage()
	p.body = "<p>short</p>"
	get(t, c, p, "GET", "/small")
	w := get(t, c, p, "GET", "/small", "Accept-Encoding", "br, gzip")
	if w.Header().Get("Content-Encoding") != "" || w.Body.String() != p.body || w.Header().Get("X-Cache") != "HIT" {
		t.Fatalf("got %q %q", w.Header().Get("Content-Encoding"), w.Body.String())
	}

	rnd := make([]byte, 4096)
	for i := range rnd {
		rnd[i] = byte(rand.Uint32())
	}
	p2 := newPage()
	p2.body = string(rnd)
	get(t, c, p2, "GET", "/random")
	w = get(t, c, p2, "GET", "/random", "Accept-Encoding", "br, gzip")
	if w.Header().Get("Content-Encoding") != "" || w.Body.String() != p2.body {
		t.Fatalf("incompressible body was served with %q", w.Header().Get("Content-Encoding"))
	}
}

func TestFirstRequestIsAMissAndIsServedFromTheEntry(t *testing.T) {
	c := newCache(t, Config{})
	p := newPage()
	w := get(t, c, p, "GET", "/wiki/Main_Page", "Accept-Encoding", "gzip")
	if w.Header().Get("X-Cache") != "MISS" || w.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("miss: X-Cache %q, encoding %q", w.Header().Get("X-Cache"), w.Header().Get("Content-Encoding"))
	}
	if decode(t, "gzip", w.Body.Bytes()) != pageBody {
		t.Fatal("miss body differs")
	}
	st := c.Stats()
	if st.Misses != 1 || st.Stores != 1 || st.Entries != 1 || st.Bytes <= int64(len(pageBody)) {
		t.Fatalf("stats %+v", st)
	}
}

func TestConditionalRequests(t *testing.T) {
	c := newCache(t, Config{})
	p := newPage()
	get(t, c, p, "GET", "/p")
	for _, tc := range []struct {
		name string
		hdr  []string
		want int
	}{
		{"matching strong ETag of the gzip variant is 304", []string{"If-None-Match", `"rev-42-gz"`}, 304},
		{"weak form of the ETag is 304", []string{"If-None-Match", `W/"rev-42-gz"`}, 304},
		{"ETag in a list is 304", []string{"If-None-Match", `"a", W/"b",` + `"rev-42-gz"`}, 304},
		{"the identity variant's ETag does not validate the gzip variant", []string{"If-None-Match", pageETag}, 200},
		{"star is 304", []string{"If-None-Match", "*"}, 304},
		{"other ETag is 200", []string{"If-None-Match", `"rev-41"`}, 200},
		{"unquoted garbage is 200", []string{"If-None-Match", `rev-42`}, 200},
		{"If-Modified-Since equal to Last-Modified is 304", []string{"If-Modified-Since", pageLastMod}, 304},
		{"If-Modified-Since later is 304", []string{"If-Modified-Since", "Thu, 02 Jan 2025 00:00:00 GMT"}, 304},
		{"If-Modified-Since earlier is 200", []string{"If-Modified-Since", "Tue, 31 Dec 2024 23:59:59 GMT"}, 200},
		{"If-Modified-Since unparsable is 200", []string{"If-Modified-Since", "yesterday"}, 200},
		{"non-matching If-None-Match wins over IMS", []string{"If-None-Match", `"x"`, "If-Modified-Since", pageLastMod}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, method := range []string{"GET", "HEAD"} {
				w := get(t, c, p, method, "/p", append([]string{"Accept-Encoding", "gzip"}, tc.hdr...)...)
				if w.Code != tc.want {
					t.Fatalf("%s: status %d, want %d", method, w.Code, tc.want)
				}
				if tc.want == 304 {
					if w.Body.Len() != 0 {
						t.Fatalf("304 with a body")
					}
					for _, k := range []string{"Etag", "Cache-Control", "Last-Modified", "Vary"} {
						if w.Header().Get(k) == "" {
							t.Errorf("304 lacks %s", k)
						}
					}
					for _, k := range []string{"Content-Length", "Content-Encoding", "Content-Type"} {
						if w.Header().Get(k) != "" {
							t.Errorf("304 has %s", k)
						}
					}
				}
			}
		})
	}
	if n := p.renders.Load(); n != 1 {
		t.Fatalf("%d renders, want 1", n)
	}
}

func TestConditionalMissStoresTheFullResponse(t *testing.T) {
	c := newCache(t, Config{})
	var seen atomic.Value
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.Method + " " + r.Header.Get("If-None-Match"))
		newPage().ServeHTTP(w, r)
	})
	w := get(t, c, h, "HEAD", "/p", "If-None-Match", pageETag)
	if w.Code != 304 {
		t.Fatalf("status %d", w.Code)
	}
	if got := seen.Load(); got != "GET " {
		t.Fatalf("fill saw %q, want a plain GET", got)
	}
	w = get(t, c, h, "GET", "/p")
	if w.Code != 200 || w.Body.String() != pageBody || w.Header().Get("X-Cache") != "HIT" {
		t.Fatalf("after a conditional HEAD miss: %d %q", w.Code, w.Header().Get("X-Cache"))
	}
}

func TestHEADGetsHeadersAndNoBody(t *testing.T) {
	c := newCache(t, Config{})
	p := newPage()
	for _, state := range []string{"MISS", "HIT"} {
		w := get(t, c, p, "HEAD", "/p", "Accept-Encoding", "br")
		if w.Header().Get("X-Cache") != state || w.Body.Len() != 0 || w.Code != 200 {
			t.Fatalf("%s: %d, %d bytes", state, w.Code, w.Body.Len())
		}
		n, _ := strconv.Atoi(w.Header().Get("Content-Length"))
		if n == 0 || n >= len(pageBody) || w.Header().Get("Content-Encoding") != "br" {
			t.Fatalf("%s: Content-Length %d, encoding %q", state, n, w.Header().Get("Content-Encoding"))
		}
	}
	w := get(t, c, p, "GET", "/p")
	if w.Body.String() != pageBody {
		t.Fatal("GET after HEAD fill has the wrong body")
	}
}

func TestTTLFollowsTheClockWithoutAge(t *testing.T) {
	clk := newFakeClock()
	c := newCache(t, Config{Now: clk.Now, DefaultTTL: time.Hour})
	p := newPage()
	p.ttl = 10 * time.Second
	get(t, c, p, "GET", "/recent")
	clk.Advance(9500 * time.Millisecond)
	w := get(t, c, p, "GET", "/recent")
	if w.Header().Get("X-Cache") != "HIT" || w.Header()["Age"] != nil {
		t.Fatalf("before expiry: X-Cache %q Age %q", w.Header().Get("X-Cache"), w.Header().Get("Age"))
	}
	clk.Advance(time.Second)
	w = get(t, c, p, "GET", "/recent")
	if w.Header().Get("X-Cache") != "MISS" || p.renders.Load() != 2 {
		t.Fatalf("after expiry: X-Cache %q, %d renders", w.Header().Get("X-Cache"), p.renders.Load())
	}

	p2 := newPage() // no TTL: DefaultTTL
	get(t, c, p2, "GET", "/page")
	clk.Advance(59 * time.Minute)
	if w := get(t, c, p2, "GET", "/page"); w.Header().Get("X-Cache") != "HIT" {
		t.Fatal("default TTL expired early")
	}
	clk.Advance(2 * time.Minute)
	if w := get(t, c, p2, "GET", "/page"); w.Header().Get("X-Cache") != "MISS" {
		t.Fatal("default TTL did not expire")
	}
}

func TestResponsesThatAreNotStored(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(p *page)
		h    http.Handler
	}{
		{"a response that sets a cookie", func(p *page) { p.cookie = true }, nil},
		{"an unmarked response", func(p *page) { p.mark = false }, nil},
		{"a 500", func(p *page) { p.status = 500 }, nil},
		{"a 302", func(p *page) { p.status = 302 }, nil},
		{"a private response", nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			Mark(w, Directive{})
			w.Header().Set("Cache-Control", "private, max-age=0")
			io.WriteString(w, "x")
		})},
		{"a response varying on Accept-Language", nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			Mark(w, Directive{})
			w.Header().Set("Vary", "Accept-Language")
			io.WriteString(w, "x")
		})},
		{"a response the handler compressed", nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			Mark(w, Directive{})
			w.Header().Set("Content-Encoding", "gzip")
			io.WriteString(w, "x")
		})},
		{"a response marked after WriteHeader", nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(200)
			if Mark(w, Directive{}) {
				panic("Mark after WriteHeader succeeded")
			}
			io.WriteString(w, "x")
		})},
	} {
		t.Run(tc.name+" is never stored", func(t *testing.T) {
			c := newCache(t, Config{})
			h := tc.h
			var renders *atomic.Int64
			if h == nil {
				p := newPage()
				tc.edit(p)
				h, renders = p, &p.renders
			}
			for range 3 {
				w := get(t, c, h, "GET", "/x")
				if w.Header().Get("X-Cache") != "MISS" {
					t.Fatalf("X-Cache %q", w.Header().Get("X-Cache"))
				}
				if w.Body.Len() == 0 {
					t.Fatal("pass-through response lost its body")
				}
			}
			if st := c.Stats(); st.Stores != 0 || st.Entries != 0 {
				t.Fatalf("stored: %+v", st)
			}
			if renders != nil && renders.Load() != 3 {
				t.Fatalf("%d renders", renders.Load())
			}
		})
	}
}

func TestSetCookieIsNeverServedFromTheCache(t *testing.T) {
	// Even a handler that marks, then sets a cookie late (but before the
	// header is written), must not have its response stored or shared.
	c := newCache(t, Config{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Mark(w, Directive{Tags: []string{"t"}})
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Add("Set-Cookie", "a=b")
		io.WriteString(w, "hello")
	})
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			r := httptest.NewRequest("GET", "/c", nil)
			w := httptest.NewRecorder()
			c.Serve(w, r, "/c", h)
			if w.Header().Get("X-Cache") == "HIT" {
				t.Error("a Set-Cookie response was served as a hit")
			}
		})
	}
	wg.Wait()
	if st := c.Stats(); st.Stores != 0 || st.Hits != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestLargeResponsesStreamAndAreNotStored(t *testing.T) {
	c := newCache(t, Config{MaxBytes: 64 << 10, Shards: 4}) // 16 KiB per shard
	p := newPage()
	p.body = strings.Repeat("x", 40<<10)
	for range 2 {
		w := get(t, c, p, "GET", "/big")
		if w.Body.String() != p.body || w.Header().Get("X-Cache") != "MISS" {
			t.Fatalf("big response: %d bytes, X-Cache %q", w.Body.Len(), w.Header().Get("X-Cache"))
		}
	}
	if c.Stats().Entries != 0 {
		t.Fatal("stored an entry larger than a shard")
	}
}

func TestCoalescing(t *testing.T) {
	c := newCache(t, Config{})
	release := make(chan struct{})
	var fills atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fills.Add(1)
		<-release
		newPage().ServeHTTP(w, r)
	})
	const n = 100
	var wg sync.WaitGroup
	bodies := make([]string, n)
	for i := range n {
		wg.Go(func() {
			w := get(t, c, h, "GET", "/hot", "Accept-Encoding", "gzip")
			bodies[i] = decode(t, w.Header().Get("Content-Encoding"), w.Body.Bytes())
		})
	}
	for c.Stats().Coalesced+c.Stats().Misses < n {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if f := fills.Load(); f != 1 {
		t.Fatalf("%d fills, want 1", f)
	}
	for i, b := range bodies {
		if b != pageBody {
			t.Fatalf("request %d got a wrong body (%d bytes)", i, len(b))
		}
	}
	if st := c.Stats(); st.Coalesced != n-1 || st.Misses != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestWaitersRenderThemselvesWhenTheFillIsNotStorable(t *testing.T) {
	c := newCache(t, Config{})
	release := make(chan struct{})
	var fills atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fills.Add(1) == 1 {
			<-release
		}
		w.Header().Set("Set-Cookie", "x=y") // never storable
		io.WriteString(w, "personal")
	})
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if w := get(t, c, h, "GET", "/p"); w.Body.String() != "personal" {
				t.Error("wrong body")
			}
		})
	}
	for c.Stats().Coalesced < 9 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if f := fills.Load(); f != 10 {
		t.Fatalf("%d fills, want 10", f)
	}
}

func TestAPanickingFillReleasesTheWaiters(t *testing.T) {
	c := newCache(t, Config{})
	release := make(chan struct{})
	var fills atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fills.Add(1) == 1 {
			<-release
			panic(http.ErrAbortHandler)
		}
		io.WriteString(w, "ok")
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { recover() }()
		get(t, c, h, "GET", "/p")
	}()
	for c.Stats().Misses < 1 {
		time.Sleep(time.Millisecond)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if w := get(t, c, h, "GET", "/p"); w.Body.String() != "ok" {
			t.Error("waiter got no response")
		}
	})
	for c.Stats().Coalesced < 1 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	<-done
}

func TestPurge(t *testing.T) {
	c := newCache(t, Config{})
	a, b := newPage(), newPage()
	a.tags, b.tags = []string{"Main Page", "Sidebar"}, []string{"Other"}
	get(t, c, a, "GET", "/wiki/Main_Page")
	get(t, c, a, "GET", "/wiki/Main_Page?action=history")
	get(t, c, b, "GET", "/wiki/Other")
	c.Purge("Main Page")
	if st := c.Stats(); st.Entries != 1 || st.Purged != 2 {
		t.Fatalf("after Purge: %+v", st)
	}
	if w := get(t, c, b, "GET", "/wiki/Other"); w.Header().Get("X-Cache") != "HIT" {
		t.Fatal("an untagged entry was purged")
	}
	if w := get(t, c, a, "GET", "/wiki/Main_Page"); w.Header().Get("X-Cache") != "MISS" {
		t.Fatal("purged entry was served")
	}
	c.PurgeKey("/wiki/Main_Page")
	if w := get(t, c, a, "GET", "/wiki/Main_Page"); w.Header().Get("X-Cache") != "MISS" {
		t.Fatal("PurgeKey left the entry")
	}
	c.PurgeAll()
	if st := c.Stats(); st.Entries != 0 || st.Bytes != 0 {
		t.Fatalf("after PurgeAll: %+v", st)
	}
	if w := get(t, c, b, "GET", "/wiki/Other"); w.Header().Get("X-Cache") != "MISS" {
		t.Fatal("PurgeAll left an entry")
	}
}

func TestAFillThatStartedBeforeAPurgeIsNotStored(t *testing.T) {
	for _, purge := range []struct {
		name string
		do   func(c *Cache)
	}{
		{"Purge by tag", func(c *Cache) { c.Purge("T") }},
		{"PurgeKey", func(c *Cache) { c.PurgeKey("/p") }},
		{"PurgeAll", func(c *Cache) { c.PurgeAll() }},
	} {
		t.Run(purge.name, func(t *testing.T) {
			c := newCache(t, Config{})
			var version atomic.Int64
			version.Store(1)
			started, release := make(chan struct{}), make(chan struct{})
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				v := version.Load() // read the "database"
				if v == 1 {
					close(started)
					<-release
				}
				Mark(w, Directive{Tags: []string{"T"}})
				fmt.Fprintf(w, "v%d", v)
			})
			var wg sync.WaitGroup
			wg.Go(func() {
				if w := get(t, c, h, "GET", "/p"); w.Body.String() != "v1" {
					t.Errorf("racing request got %q", w.Body.String())
				}
			})
			<-started
			version.Store(2) // the edit commits...
			purge.do(c)      // ...and purges before answering the editor
			// The editor reads its own write, although the old fill is in flight.
			if w := get(t, c, h, "GET", "/p"); w.Body.String() != "v2" {
				t.Fatalf("after purge got %q", w.Body.String())
			}
			close(release)
			wg.Wait()
			if w := get(t, c, h, "GET", "/p"); w.Body.String() != "v2" || w.Header().Get("X-Cache") != "HIT" {
				t.Fatalf("stale fill was stored: %q %s", w.Body.String(), w.Header().Get("X-Cache"))
			}
		})
	}
}

func TestReadYourWriteUnderConcurrentLoad(t *testing.T) {
	c := newCache(t, Config{Shards: 8})
	var version atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := version.Load()
		for range rand.IntN(3) {
			time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
		}
		Mark(w, Directive{Tags: []string{"T"}})
		fmt.Fprintf(w, "%d", v)
	})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				get(t, c, h, "GET", "/p")
			}
		})
	}
	for i := range 300 {
		v := version.Add(1)
		c.Purge("T")
		w := get(t, c, h, "GET", "/p")
		if got, _ := strconv.ParseInt(w.Body.String(), 10, 64); got < v {
			t.Fatalf("write %d: read %d (X-Cache %s)", i, got, w.Header().Get("X-Cache"))
		}
	}
	close(stop)
	wg.Wait()
	// Quiescent: whatever is stored must be the latest version.
	if w := get(t, c, h, "GET", "/p"); w.Body.String() != strconv.FormatInt(version.Load(), 10) {
		t.Fatalf("stale entry %q after the last purge, want %d", w.Body.String(), version.Load())
	}
}

func TestByteBudgetHoldsUnderChurn(t *testing.T) {
	const budget = 2 << 20
	c := newCache(t, Config{MaxBytes: budget, Shards: 16})
	maxEntry := int64(budget / 16)
	var inserted atomic.Int64
	stop := make(chan struct{})
	var over atomic.Int64
	var mon sync.WaitGroup
	mon.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if b := c.Stats().Bytes; b > budget+maxEntry {
				over.Store(b)
			}
		}
	})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(g), 1))
			for i := 0; inserted.Load() < 10*budget; i++ {
				n := 100 + rnd.IntN(40<<10)
				body := strings.Repeat(string(rune('a'+rnd.IntN(26))), n)
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					Mark(w, Directive{Tags: []string{"t" + strconv.Itoa(i%7)}})
					w.Header().Set("Content-Type", "text/plain")
					io.WriteString(w, body)
				})
				get(t, c, h, "GET", fmt.Sprintf("/k/%d/%d", g, i), "Accept-Encoding", "gzip")
				inserted.Add(int64(n))
				if i%50 == 0 {
					c.Purge("t3")
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	mon.Wait()
	st := c.Stats()
	if b := over.Load(); b != 0 {
		t.Fatalf("Bytes reached %d, budget %d", b, budget)
	}
	if st.Bytes > budget || st.Evictions == 0 || st.Entries == 0 {
		t.Fatalf("stats %+v", st)
	}
	// The shards' books balance: bytes equal the sum of the stored entries.
	for i, s := range c.shards {
		s.mu.RLock()
		var sum, small int64
		n := 0
		for _, l := range []*list{&s.small, &s.main} {
			for e := l.head; e != nil; e = e.next {
				sum += e.size
				if l == &s.small {
					small += e.size
				}
				n++
			}
		}
		if sum != s.bytes || small != s.smallBytes || n != len(s.m) {
			t.Errorf("shard %d: queues hold %d bytes (%d small) in %d entries, books say %d (%d) in %d",
				i, sum, small, n, s.bytes, s.smallBytes, len(s.m))
		}
		for tag, set := range s.tags {
			for e := range set {
				if s.m[e.key] != e {
					t.Errorf("shard %d: tag %q indexes a removed entry", i, tag)
				}
			}
		}
		s.mu.RUnlock()
	}
}

func TestLookupReturnsThePrecomputedVariant(t *testing.T) {
	clk := newFakeClock()
	c := newCache(t, Config{Now: clk.Now})
	get(t, c, newPage(), "GET", "/p")
	if _, ok := c.Lookup("/nope", AcceptGzip); ok {
		t.Fatal("Lookup of an absent key")
	}
	v, ok := c.Lookup("/p", ParseAcceptEncoding("gzip, br"))
	if !ok || v.Encoding != Brotli || v.Status != 200 {
		t.Fatalf("Lookup: %v %+v", ok, v)
	}
	if decode(t, "br", v.Body) != pageBody {
		t.Fatal("variant body")
	}
	wire := string(v.Wire)
	for _, line := range []string{"Content-Encoding: br\r\n", "Vary: Accept-Encoding\r\n", "Etag: \"rev-42-br\"\r\n",
		"Content-Length: " + strconv.Itoa(len(v.Body)) + "\r\n"} {
		if !strings.Contains(wire, line) {
			t.Errorf("Wire lacks %q:\n%s", line, wire)
		}
	}
	if strings.Contains(string(v.WireNotModified), "Content-Length") {
		t.Error("WireNotModified has Content-Length")
	}
	if !v.IsNotModified(`"rev-42-br"`, "") || v.IsNotModified(pageETag, "") || v.IsNotModified(`"x"`, "") {
		t.Error("IsNotModified: the brotli variant must match its own validator only")
	}
	if strings.Contains(wire, "Age:") {
		t.Error("Wire has an Age field")
	}
}

func TestMarkFindsTheRecorderThroughWrappers(t *testing.T) {
	c := newCache(t, Config{})
	var marked atomic.Bool
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		marked.Store(Mark(w, Directive{}))
		io.WriteString(w, "x")
	})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(&wrapper{w}, r)
	})
	get(t, c, h, "GET", "/p")
	if !marked.Load() || c.Stats().Entries != 1 {
		t.Fatal("Mark did not reach the recorder through Unwrap")
	}
	if Mark(httptest.NewRecorder(), Directive{}) {
		t.Fatal("Mark on a plain writer reported success")
	}
}

type wrapper struct{ http.ResponseWriter }

func (w *wrapper) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestFillThatRacedAPurgeIsNotShareable: a response rendered before a purge
// of what it shows, and finished after it, answers its own request but is
// neither stored nor marked shareable (a cache in front would otherwise keep
// the old page after the purge that was meant to reach it), and the requests
// that waited for it render their own.
func TestFillThatRacedAPurgeIsNotShareable(t *testing.T) {
	c := newCache(t, Config{})
	p := newPage()
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() {
			close(started)
			<-release
		})
		p.ServeHTTP(w, r)
	})
	first := make(chan *httptest.ResponseRecorder)
	go func() { first <- get(t, c, slow, "GET", "/p") }()
	<-started
	waiter := make(chan *httptest.ResponseRecorder)
	go func() { waiter <- get(t, c, slow, "GET", "/p") }()
	time.Sleep(20 * time.Millisecond) // let the waiter join the flight
	c.Purge("Main Page")
	close(release)
	w1, w2 := <-first, <-waiter
	if cc := w1.Header().Get("Cache-Control"); w1.Code != 200 || cc != "private, no-cache" {
		t.Errorf("the raced fill's own answer: %d, Cache-Control %q, want private, no-cache", w1.Code, cc)
	}
	if cc := w2.Header().Get("Cache-Control"); w2.Code != 200 || cc != "public, s-maxage=60" {
		t.Errorf("the waiter (its own render, after the purge): %d, Cache-Control %q", w2.Code, cc)
	}
	if n := p.renders.Load(); n != 2 {
		t.Errorf("%d renders, want 2 (the raced fill and the waiter's own)", n)
	}
	if st := c.Stats(); st.Stores != 0 {
		t.Errorf("%d responses stored; the raced fill must not be", st.Stores)
	}
}
