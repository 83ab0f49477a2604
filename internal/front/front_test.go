package front

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/edge"
)

// fixture is a front server over a small edge + handler setup: pages under
// /wiki/ are cacheable, everything else is not; requests with a wikid_session
// cookie bypass the cache.
type fixture struct {
	t     *testing.T
	cache *edge.Cache
	srv   *Server
	http  *http.Server
	addr  string
	hits  atomic.Int64 // fast-path responses
	calls atomic.Int64 // handler invocations
	done  chan error
	ref   *httptest.Server // the same handler behind plain net/http
}

var pageBody = strings.Repeat("<p>Hello, wiki. This is a cached page body.</p>\n", 200)

// largeBody is a page above the arena's threshold in every encoding (its
// words are random, so that even its gzip and brotli copies stay large):
// the event loops send it with sendfile.
var largeBody = func() string {
	words := strings.Fields("the wiki page railway narrow gauge station line engine track signal bridge valley river town mill coal freight passenger timetable")
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for b.Len() < 300<<10 {
		b.WriteString(words[rng.IntN(len(words))])
		if rng.IntN(12) == 0 {
			fmt.Fprintf(&b, " %d.\n", rng.IntN(1<<30))
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}()

// goroutines runs the suite on the goroutine-per-connection path (on Linux
// the default is the event loops); .ci/run runs it both ways.
var goroutines = flag.Bool("front.goroutines", false, "serve fast-path connections with a goroutine each instead of event loops")

func newFixture(t *testing.T, mod func(*http.Server), opts ...func(*Options)) *fixture {
	t.Helper()
	f := &fixture{t: t, cache: edge.New(edge.Config{}), done: make(chan error, 1)}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.calls.Add(1)
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "posted %d bytes", len(b))
			return
		}
		if r.URL.Path == "/slow" {
			time.Sleep(300 * time.Millisecond)
			io.WriteString(w, "slow done")
			return
		}
		if !strings.HasPrefix(r.URL.Path, "/wiki/") {
			http.Error(w, "not here", http.StatusNotFound)
			return
		}
		edge.Mark(w, edge.Directive{Tags: []string{r.URL.Path}})
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "public, max-age=0, s-maxage=300")
		h.Set("ETag", `"v1"`)
		h.Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
		h.Set("Vary", "Cookie")
		h.Set("X-Content-Type-Options", "nosniff")
		if r.URL.Path == "/wiki/Missing" {
			w.WriteHeader(http.StatusNotFound)
		}
		if strings.HasPrefix(r.URL.Path, "/wiki/Large") {
			io.WriteString(w, largeBody)
		} else {
			io.WriteString(w, pageBody)
		}
		io.WriteString(w, r.URL.Path)
	})
	bypass := func(r *http.Request) bool {
		_, err := r.Cookie("wikid_session")
		return err == nil
	}
	// As Wikid's handler layer does: only requests that may share a stored
	// response go through the edge, keyed by their target as sent.
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (r.Method != http.MethodGet && r.Method != http.MethodHead) || bypass(r) ||
			r.Header.Get("Authorization") != "" || r.Header.Get("Range") != "" || r.Header.Get("Upgrade") != "" {
			next.ServeHTTP(w, r)
			return
		}
		f.cache.Serve(w, r, r.RequestURI, next)
	})
	f.http = &http.Server{Handler: handler, ReadHeaderTimeout: 2 * time.Second, IdleTimeout: 5 * time.Second,
		WriteTimeout: 5 * time.Second, MaxHeaderBytes: 4 << 10, ErrorLog: nil}
	if mod != nil {
		mod(f.http)
	}
	o := Options{Cache: f.cache, HTTP: f.http, OnHit: func(h Hit) {
		f.hits.Add(1)
		if h.Method == "" || h.Target == "" || h.Status == 0 {
			t.Errorf("incomplete Hit %+v", h)
		}
	}}
	if *goroutines {
		o.Loops = -1
	}
	for _, opt := range opts {
		opt(&o)
	}
	f.srv = New(o)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = ln.Addr().String()
	go func() { f.done <- f.srv.Serve(ln) }()
	f.ref = httptest.NewServer(handler)
	t.Cleanup(func() {
		f.ref.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		f.srv.Shutdown(ctx)
	})
	return f
}

// hitCount returns the number of fast-path responses once it is at least
// want or a second has passed: OnHit runs just after the response is written.
func (f *fixture) hitCount(want int64) int64 {
	deadline := time.Now().Add(time.Second)
	for f.hits.Load() < want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(5 * time.Millisecond) // let any unexpected extra hit land
	return f.hits.Load()
}

// rawConn is a client connection speaking raw HTTP/1.x.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func (f *fixture) dial() *rawConn {
	f.t.Helper()
	c, err := net.Dial("tcp", f.addr)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawConn{t: f.t, c: c, br: bufio.NewReader(c)}
}

func (rc *rawConn) send(s string) {
	rc.t.Helper()
	if _, err := io.WriteString(rc.c, s); err != nil {
		rc.t.Fatal(err)
	}
}

// read reads one response to a request with the given method; the body is
// read completely.
func (rc *rawConn) read(method string) (*http.Response, []byte) {
	rc.t.Helper()
	res, err := http.ReadResponse(rc.br, &http.Request{Method: method})
	if err != nil {
		rc.t.Fatalf("reading response: %v", err)
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		rc.t.Fatalf("reading body: %v", err)
	}
	res.Body.Close()
	return res, b
}

// closed reports whether the server closed the connection (EOF with nothing
// more to read).
func (rc *rawConn) closed() bool {
	rc.c.SetReadDeadline(time.Now().Add(3 * time.Second))
	_, err := rc.br.ReadByte()
	return err == io.EOF || errors.Is(err, net.ErrClosed) || isReset(err)
}

func isReset(err error) bool { return err != nil && strings.Contains(err.Error(), "reset") }

func get(path string, hdr ...string) string {
	var b strings.Builder
	b.WriteString("GET " + path + " HTTP/1.1\r\nHost: example.org\r\n")
	for i := 0; i+1 < len(hdr); i += 2 {
		b.WriteString(hdr[i] + ": " + hdr[i+1] + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

// warm fills the cache for path through net/http.
func (f *fixture) warm(path string) {
	f.t.Helper()
	res, err := http.Get(f.ref.URL + path)
	if err != nil {
		f.t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
}

// headersEquivalent compares two responses' headers, ignoring those that
// depend on the time of serving and on the connection.
func headersEquivalent(t *testing.T, got, want http.Header) {
	t.Helper()
	skip := map[string]bool{"Date": true, "Connection": true}
	for k := range want {
		if !skip[k] && strings.Join(got[k], "|") != strings.Join(want[k], "|") {
			t.Errorf("header %s = %q, net/http sends %q", k, got[k], want[k])
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok && !skip[k] {
			t.Errorf("extra header %s = %q", k, got[k])
		}
	}
	if len(got["Date"]) == 0 || len(want["Date"]) == 0 {
		t.Errorf("Date: %q, net/http: %q", got["Date"], want["Date"])
	}
	if got["Age"] != nil {
		t.Errorf("a hit carries Age %q: a cache in front would count the time in this cache against s-maxage", got["Age"])
	}
}

func TestHitMatchesNetHTTP(t *testing.T) {
	f := newFixture(t, nil)
	f.warm("/wiki/Page")
	f.warm("/wiki/Large")
	for _, page := range []string{"/wiki/Page", "/wiki/Large"} {
		for _, method := range []string{"GET", "HEAD"} {
			for _, ae := range []string{"", "gzip", "br", "gzip, deflate, br", "identity", "gzip;q=0, br;q=0"} {
				for _, cond := range []string{"", "If-None-Match"} {
					t.Run(page+" "+method+" "+ae+" "+cond, func(t *testing.T) {
						var hdr []string
						if ae != "" {
							hdr = []string{"Accept-Encoding", ae}
						}
						etag := ""
						if cond != "" {
							etag = f.etagFor(page, ae)
							hdr = append(hdr, cond, etag)
						}
						req := strings.Replace(get(page, hdr...), "GET", method, 1)
						before := f.hits.Load()
						rc := f.dial()
						rc.send(req)
						got, gotBody := rc.read(method)
						if f.hitCount(before+1) != before+1 {
							t.Fatal("not answered by the fast path")
						}
						// The same request through plain net/http + edge.
						rr, _ := http.NewRequest(method, f.ref.URL+page, nil)
						if ae != "" {
							rr.Header.Set("Accept-Encoding", ae)
						}
						if cond != "" {
							rr.Header.Set(cond, etag)
						}
						tr := &http.Transport{DisableCompression: true}
						defer tr.CloseIdleConnections()
						want, err := tr.RoundTrip(rr)
						if err != nil {
							t.Fatal(err)
						}
						wantBody, _ := io.ReadAll(want.Body)
						want.Body.Close()
						if got.StatusCode != want.StatusCode || got.Proto != want.Proto {
							t.Errorf("status %s %d, net/http %s %d", got.Proto, got.StatusCode, want.Proto, want.StatusCode)
						}
						if !bytes.Equal(gotBody, wantBody) {
							t.Errorf("body differs: %d bytes, net/http %d", len(gotBody), len(wantBody))
						}
						headersEquivalent(t, got.Header, want.Header)
						if got.Header.Get("X-Cache") != "HIT" || got.Header.Get("Server-Timing") != "cache;desc=hit" {
							t.Errorf("X-Cache %q, Server-Timing %q", got.Header.Get("X-Cache"), got.Header.Get("Server-Timing"))
						}
						if method == "GET" && cond == "" && got.ContentLength != int64(len(gotBody)) {
							t.Errorf("Content-Length %d, body %d", got.ContentLength, len(gotBody))
						}
						if cond != "" && got.StatusCode != http.StatusNotModified {
							t.Errorf("status %d with a matching %s", got.StatusCode, cond)
						}
						if _, err := http.ParseTime(got.Header.Get("Date")); err != nil {
							t.Errorf("Date %q: %v", got.Header.Get("Date"), err)
						}
					})
				}
			}
		}
	}
	if st := f.cache.Stats(); !*goroutines && runtime.GOOS == "linux" && st.ArenaBytes < int64(len(largeBody)) {
		t.Errorf("arena holds %d bytes: the large page was not sent from it", st.ArenaBytes)
	}
}

// etagFor returns the ETag of page's variant for Accept-Encoding ae.
func (f *fixture) etagFor(page, ae string) string {
	f.t.Helper()
	rc := f.dial()
	defer rc.c.Close()
	var hdr []string
	if ae != "" {
		hdr = []string{"Accept-Encoding", ae}
	}
	before := f.hits.Load()
	rc.send(strings.Replace(get(page, hdr...), "GET", "HEAD", 1))
	resp, _ := rc.read("HEAD")
	f.hitCount(before + 1) // OnHit runs after the response is written
	if resp.Header.Get("Etag") == "" {
		f.t.Fatalf("%s has no ETag", page)
	}
	return resp.Header.Get("Etag")
}

func TestCached404IsServedAsIs(t *testing.T) {
	f := newFixture(t, nil)
	f.warm("/wiki/Missing")
	rc := f.dial()
	rc.send(get("/wiki/Missing"))
	res, body := rc.read("GET")
	if res.StatusCode != 404 || res.Status != "404 Not Found" || !strings.HasSuffix(string(body), "/wiki/Missing") || f.hitCount(1) != 1 {
		t.Fatalf("%s, %d bytes, hits %d", res.Status, len(body), f.hits.Load())
	}
}

func TestMissFallsThroughThenHitsOnANewConnection(t *testing.T) {
	f := newFixture(t, nil)
	rc := f.dial()
	rc.send(get("/wiki/Fresh"))
	res, body := rc.read("GET")
	if res.StatusCode != 200 || res.Header.Get("X-Cache") != "MISS" || f.hits.Load() != 0 {
		t.Fatalf("first: %s X-Cache %q hits %d", res.Status, res.Header.Get("X-Cache"), f.hits.Load())
	}
	// The same connection now belongs to net/http, which serves the hit itself.
	rc.send(get("/wiki/Fresh"))
	res, body2 := rc.read("GET")
	if res.Header.Get("X-Cache") != "HIT" || f.hits.Load() != 0 || !bytes.Equal(body, body2) {
		t.Fatalf("second: X-Cache %q hits %d", res.Header.Get("X-Cache"), f.hits.Load())
	}
	rc2 := f.dial()
	rc2.send(get("/wiki/Fresh"))
	res, body3 := rc2.read("GET")
	if res.Header.Get("X-Cache") != "HIT" || f.hitCount(1) != 1 || !bytes.Equal(body, body3) {
		t.Fatalf("new connection: X-Cache %q hits %d", res.Header.Get("X-Cache"), f.hits.Load())
	}
}

// With NoFastPath every connection goes to net/http, which answers hits
// from the same cache with the same bytes; the front still counts it.
func TestNoFastPath(t *testing.T) {
	f := newFixture(t, nil, func(o *Options) { o.NoFastPath = true })
	f.warm("/wiki/Cached")
	rc := f.dial()
	for range 3 {
		rc.send(get("/wiki/Cached"))
		res, body := rc.read("GET")
		if res.StatusCode != 200 || res.Header.Get("X-Cache") != "HIT" || !strings.Contains(string(body), "/wiki/Cached") {
			t.Fatalf("%s X-Cache %q", res.Status, res.Header.Get("X-Cache"))
		}
	}
	if n := f.hitCount(1); n != 0 {
		t.Fatalf("%d fast-path responses with NoFastPath", n)
	}
	if st := f.srv.ConnStats(); st.Open < 1 {
		t.Fatalf("open connections = %d: the handed-off connection is not counted", st.Open)
	}
}

func TestIneligibleRequestsGoToNetHTTP(t *testing.T) {
	f := newFixture(t, nil)
	f.warm("/wiki/Page")
	for _, tc := range []struct {
		name, req, method string
		status            int
		body              string // substring, "" for any
	}{
		{"session cookie", get("/wiki/Page", "Cookie", "_ga=1; wikid_session=abcdefghijklmnopqrstuvwxyz"), "GET", 200, "/wiki/Page"},
		{"authorization", get("/wiki/Page", "Authorization", "Bearer x"), "GET", 200, "/wiki/Page"},
		{"range", get("/wiki/Page", "Range", "bytes=0-10"), "GET", 200, ""},
		{"post with body", "POST /wiki/Page HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", "POST", 200, "posted 5 bytes"},
		{"chunked", "POST /wiki/Page HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", "POST", 200, "posted 3 bytes"},
		{"GET with a body", "GET /wiki/Page HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi", "GET", 200, ""},
		{"expect 100-continue", "POST /wiki/Page HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi", "POST", 200, "posted 2 bytes"},
		{"another spelling of a cached target", get("/wiki//Page"), "GET", 200, "/wiki//Page"},
		{"dot segments", get("/x/../wiki/Page"), "GET", 0, ""},
		{"escaped spelling", get("/wiki/%50age"), "GET", 200, ""},
		{"no Host", "GET /wiki/Page HTTP/1.1\r\n\r\n", "GET", 400, ""},
		{"two Hosts", "GET /wiki/Page HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "GET", 400, ""},
		{"absolute form", "GET http://x/wiki/Page HTTP/1.1\r\nHost: x\r\n\r\n", "GET", 200, ""},
		{"lower-case method", "get /wiki/Page HTTP/1.1\r\nHost: x\r\n\r\n", "GET", 0, ""},
		{"bare LF", "GET /wiki/Page HTTP/1.1\nHost: x\n\n", "GET", 200, ""},
		{"bad header name", "GET /wiki/Page HTTP/1.1\r\nHost: x\r\nBad Name: y\r\n\r\n", "GET", 400, ""},
		{"obs-fold", "GET /wiki/Page HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n 2\r\n\r\n", "GET", 0, ""},
		{"upgrade", get("/wiki/Page", "Connection", "Upgrade", "Upgrade", "websocket"), "GET", 200, ""},
		{"HTTP/2 preface-ish", "GET /wiki/Page HTTP/2.0\r\nHost: x\r\n\r\n", "GET", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := f.hits.Load()
			rc := f.dial()
			rc.send(tc.req)
			res, err := http.ReadResponse(rc.br, &http.Request{Method: tc.method})
			for err == nil && res.StatusCode == http.StatusContinue {
				res, err = http.ReadResponse(rc.br, &http.Request{Method: tc.method})
			}
			if err != nil {
				t.Fatalf("no response: %v", err)
			}
			body, _ := io.ReadAll(res.Body)
			if tc.status != 0 && res.StatusCode != tc.status {
				t.Errorf("status %d, want %d (%s)", res.StatusCode, tc.status, body)
			}
			if tc.body != "" && !strings.Contains(string(body), tc.body) {
				t.Errorf("body %.80q does not contain %q", body, tc.body)
			}
			if f.hitCount(before) != before {
				t.Error("answered by the fast path")
			}
		})
	}
}

func TestOtherCookiesStillHit(t *testing.T) {
	f := newFixture(t, nil)
	f.warm("/wiki/Page")
	rc := f.dial()
	rc.send(get("/wiki/Page", "Cookie", "_ga=GA1.2.3; prefs=dark"))
	res, _ := rc.read("GET")
	if res.Header.Get("X-Cache") != "HIT" || f.hitCount(1) != 1 {
		t.Fatalf("X-Cache %q, hits %d", res.Header.Get("X-Cache"), f.hits.Load())
	}
}

func TestConditionalGetGets304(t *testing.T) {
	f := newFixture(t, nil)
	f.warm("/wiki/Page")
	for _, hdr := range [][]string{
		{"If-None-Match", `"v1"`},
		{"If-None-Match", `W/"v0", W/"v1"`},
		{"If-Modified-Since", "Mon, 02 Jan 2006 15:04:05 GMT"},
		{"If-Modified-Since", "Tue, 03 Jan 2006 15:04:05 GMT"},
	} {
		rc := f.dial()
		rc.send(get("/wiki/Page", hdr...))
		res, body := rc.read("GET")
		if res.StatusCode != 304 || len(body) != 0 || res.Header.Get("Content-Length") != "" || res.Header.Get("ETag") != `"v1"` {
			t.Errorf("%v: %s, %d body bytes, headers %v", hdr, res.Status, len(body), res.Header)
		}
		// The connection stays usable.
		rc.send(get("/wiki/Page", "If-None-Match", `"other"`))
		res, body = rc.read("GET")
		if res.StatusCode != 200 || len(body) == 0 {
			t.Errorf("after 304: %s, %d bytes", res.Status, len(body))
		}
	}
	if f.hitCount(8) != 8 {
		t.Errorf("hits %d, want 8", f.hits.Load())
	}
}

func TestHeadHasNoBody(t *testing.T) {
	f := newFixture(t, nil)
	f.warm("/wiki/Page")
	rc := f.dial()
	rc.send(strings.Replace(get("/wiki/Page"), "GET", "HEAD", 1))
	rc.send(get("/wiki/Page"))
	res, _ := rc.read("HEAD")
	if res.StatusCode != 200 || res.Header.Get("Content-Length") == "" {
		t.Fatalf("HEAD: %s %v", res.Status, res.Header)
	}
	// If HEAD had a body, this response would be garbage.
	res, body := rc.read("GET")
	if res.StatusCode != 200 || !strings.HasSuffix(string(body), "/wiki/Page") {
		t.Fatalf("GET after HEAD: %s", res.Status)
	}
}

func TestConnectionSemantics(t *testing.T) {
	f := newFixture(t, nil)
	f.warm("/wiki/Page")
	t.Run("HTTP/1.0 closes", func(t *testing.T) {
		rc := f.dial()
		rc.send("GET /wiki/Page HTTP/1.0\r\n\r\n")
		res, _ := rc.read("GET")
		if res.Proto != "HTTP/1.0" || res.Header.Get("Connection") != "" || !rc.closed() {
			t.Fatalf("%s Connection %q", res.Proto, res.Header.Get("Connection"))
		}
	})
	t.Run("HTTP/1.0 keep-alive", func(t *testing.T) {
		rc := f.dial()
		rc.send("GET /wiki/Page HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
		res, _ := rc.read("GET")
		if res.Header.Get("Connection") != "keep-alive" {
			t.Fatalf("Connection %q", res.Header.Get("Connection"))
		}
		rc.send("GET /wiki/Page HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
		rc.read("GET")
	})
	t.Run("HTTP/1.1 Connection: close", func(t *testing.T) {
		rc := f.dial()
		rc.send(get("/wiki/Page", "Connection", "close"))
		res, _ := rc.read("GET")
		if !res.Close || !rc.closed() { // ReadResponse turns "Connection: close" into Close
			t.Fatalf("Close %v", res.Close)
		}
	})
	if f.hitCount(4) != 4 {
		t.Errorf("hits %d, want 4", f.hits.Load())
	}
}

func TestPipelinedMix(t *testing.T) {
	f := newFixture(t, nil)
	f.warm("/wiki/A")
	rc := f.dial()
	// hit, hit, miss (hands over), hit (now net/http's), POST, hit
	rc.send(get("/wiki/A") + get("/wiki/A", "Accept-Encoding", "gzip") + get("/wiki/B") + get("/wiki/A") +
		"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc" + strings.Replace(get("/wiki/A"), "GET", "HEAD", 1))
	type want struct {
		method, cache, enc string
		suffix             string
	}
	for i, w := range []want{
		{"GET", "HIT", "", "/wiki/A"}, {"GET", "HIT", "gzip", ""}, {"GET", "MISS", "", "/wiki/B"},
		{"GET", "HIT", "", "/wiki/A"}, {"POST", "", "", "posted 3 bytes"}, {"HEAD", "HIT", "", ""},
	} {
		res, body := rc.read(w.method)
		if res.StatusCode != 200 || res.Header.Get("X-Cache") != w.cache || res.Header.Get("Content-Encoding") != w.enc ||
			!strings.HasSuffix(string(body), w.suffix) {
			t.Fatalf("response %d: %s X-Cache %q encoding %q body ...%q", i, res.Status, res.Header.Get("X-Cache"),
				res.Header.Get("Content-Encoding"), body[max(0, len(body)-20):])
		}
	}
	if f.hitCount(2) != 2 {
		t.Errorf("fast-path hits %d, want 2", f.hits.Load())
	}
}

func TestPipelinedHitsEndingWithClose(t *testing.T) {
	f := newFixture(t, nil)
	f.warm("/wiki/A")
	rc := f.dial()
	rc.send(get("/wiki/A") + get("/wiki/A", "Connection", "close") + get("/wiki/A"))
	rc.read("GET")
	res, _ := rc.read("GET")
	if !res.Close || !rc.closed() {
		t.Fatal("connection not closed after Connection: close")
	}
}

func TestMalformedAndOversized(t *testing.T) {
	f := newFixture(t, nil)
	f.warm("/wiki/Page")
	for _, tc := range []struct {
		name, req string
		status    int
	}{
		{"garbage request line", "HELLO\r\n\r\n", 400},
		{"bad version", "GET /wiki/Page HTTP/9.9\r\nHost: x\r\n\r\n", 505},
		{"control byte in target", "GET /wiki/P\x01age HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"oversized header", get("/wiki/Page", "X-Big", strings.Repeat("a", 20<<10)), 431},
		{"oversized request line", get("/wiki/Page?" + strings.Repeat("a", 20<<10)), 431},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := f.dial()
			rc.send(tc.req)
			res, err := http.ReadResponse(rc.br, nil)
			if err != nil {
				t.Fatalf("no response: %v", err)
			}
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.status)
			}
		})
	}
	if f.hitCount(0) != 0 {
		t.Errorf("fast-path hits %d", f.hits.Load())
	}
}

func TestSlowlorisIsCut(t *testing.T) {
	f := newFixture(t, func(s *http.Server) { s.ReadHeaderTimeout = 300 * time.Millisecond })
	f.warm("/wiki/Page")
	rc := f.dial()
	start := time.Now()
	rc.send("GET /wiki/Page HTTP/1.1\r\nHost: x\r\n")
	for i := 0; i < 20; i++ {
		time.Sleep(50 * time.Millisecond)
		if _, err := io.WriteString(rc.c, "X-A: b\r\n"); err != nil {
			break
		}
	}
	if !rc.closed() {
		t.Fatal("slow client not cut")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("cut after %v", d)
	}
	// An idle new connection is cut too.
	rc = f.dial()
	if !rc.closed() {
		t.Fatal("idle new connection not cut")
	}
}

func TestIdleKeepAliveIsClosed(t *testing.T) {
	f := newFixture(t, func(s *http.Server) { s.IdleTimeout = 200 * time.Millisecond })
	f.warm("/wiki/Page")
	rc := f.dial()
	rc.send(get("/wiki/Page"))
	rc.read("GET")
	start := time.Now()
	if !rc.closed() || time.Since(start) > 2*time.Second {
		t.Fatal("idle connection not closed in time")
	}
}

func TestGracefulShutdown(t *testing.T) {
	f := newFixture(t, nil)
	f.warm("/wiki/Page")
	idle := f.dial() // an idle fast-path connection after a hit
	idle.send(get("/wiki/Page"))
	idle.read("GET")
	slow := f.dial() // an in-flight net/http request
	slow.send(get("/slow"))
	time.Sleep(50 * time.Millisecond)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- f.srv.Shutdown(ctx) }()
	res, body := slow.read("GET")
	if res.StatusCode != 200 || string(body) != "slow done" {
		t.Fatalf("in-flight request: %s %q", res.Status, body)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-f.done; !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("Serve returned %v", err)
	}
	if !idle.closed() {
		t.Fatal("idle fast-path connection left open")
	}
	if _, err := net.DialTimeout("tcp", f.addr, time.Second); err == nil {
		t.Fatal("still accepting")
	}
}

func TestShutdownWithHandedOffIdleConnection(t *testing.T) {
	f := newFixture(t, nil)
	rc := f.dial()
	rc.send(get("/wiki/Fresh")) // miss: the connection is net/http's now
	rc.read("GET")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if !rc.closed() {
		t.Fatal("net/http's idle connection left open")
	}
}

func TestHitRequest(t *testing.T) {
	h := Hit{Method: "GET", Target: "/wiki/A?x=1", Proto: "HTTP/1.1", Status: 200}
	r := h.Request()
	if r.URL.Path != "/wiki/A" || r.URL.RequestURI() != "/wiki/A?x=1" || r.ProtoMinor != 1 {
		t.Fatalf("%+v", r)
	}
}

func TestParseDoesNotAllocate(t *testing.T) {
	head := []byte(get("/wiki/Page", "Accept-Encoding", "gzip, deflate, br", "Cookie", "_ga=1",
		"If-None-Match", `"x"`, "User-Agent", "Mozilla/5.0", "Connection", "keep-alive"))
	var r request
	if n := testing.AllocsPerRun(100, func() { parse(head, &r) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
	if !parse(head, &r) || r.accepted != edge.AcceptGzip|edge.AcceptBrotli || string(r.ifNoneMatch) != `"x"` || !r.keepAlive {
		t.Fatalf("%+v", r)
	}
}
