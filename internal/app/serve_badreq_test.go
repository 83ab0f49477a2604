package app_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/wiki"
)

// Timeouts the bad-request matrix configures. ReadHeaderTimeout is fixed at
// 10 s in app.Serve (not a config key), so the slowloris case waits for it.
const (
	badReadTimeout  = 2 * time.Second
	badWriteTimeout = 2 * time.Second
	badIdleTimeout  = 1 * time.Second
	badHeaderLimit  = 16 << 10
	badBodyLimit    = 64 << 10
	headerTimeout   = 2 * time.Second // config ReadHeaderTimeout
)

// TestBadRequestMatrix: the whole app, front server in
// front, answers malformed, hostile and slow clients on raw TCP connections
// with a 4xx (or closes the connection where HTTP says so), never a 5xx,
// never a file from outside the wiki; afterwards it is healthy and its
// goroutine count is back near the baseline.
//
// Not parallel on purpose: the goroutine count is only meaningful while no
// other test of the package runs.
func TestBadRequestMatrix(t *testing.T) {
	a, _ := apptest.Serve(t, func(cfg *config.Config) {
		cfg.AccessLog = false
		cfg.ReadTimeout, cfg.WriteTimeout, cfg.IdleTimeout = badReadTimeout, badWriteTimeout, badIdleTimeout
		cfg.ReadHeaderTimeout = headerTimeout
		cfg.MaxHeaderBytes, cfg.MaxBodyBytes = badHeaderLimit, badBodyLimit
	})
	ctx := context.Background()
	addr := a.Addr()

	// A user with an API token, for bodies that get past authentication.
	hash, _ := auth.HashPassword("badreq-pass-123")
	u, err := a.Store.CreateUser(ctx, wiki.User{Name: "Mallory", PasswordHash: hash, Group: wiki.GroupUser, Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	token := auth.NewSecret(32)
	if err := a.Store.CreateToken(ctx, wiki.Token{ID: auth.HashToken(token), UserID: u.ID, Name: "t", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	bearer := "Authorization: Bearer " + token + "\r\n"

	// Warm up: the page is in the edge (so the front's fast path is exercised
	// too), and the baseline goroutine count is taken with the app idle.
	for range 2 {
		if st, _ := rawStatus(t, addr, "GET /wiki/Main_Page HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); st != 200 {
			t.Fatalf("warm-up: %d", st)
		}
	}
	baseline := settledGoroutines(0)

	big := func(n int, c byte) string { return string(bytes.Repeat([]byte{c}, n)) }
	req := func(line string, headers ...string) string {
		return line + "\r\nHost: x\r\n" + strings.Join(headers, "") + "Connection: close\r\n\r\n"
	}
	type tc struct {
		name string
		raw  string
		// closeOK: a closed connection with no answer is what HTTP says
		// (the server may not be able to tell where the request ends).
		closeOK bool
		want    []int // acceptable statuses; empty: any 4xx
		// follow: a redirect is acceptable if it stays on this site and
		// following it gets a 4xx (net/http's ServeMux answers a path with
		// dot segments with a 307 to the cleaned path; that is not a leak).
		follow bool
	}
	cases := []tc{
		// Oversized heads.
		{name: "one header over MaxHeaderBytes", raw: req("GET /wiki/Main_Page HTTP/1.1", "X-Big: "+big(badHeaderLimit+8<<10, 'a')+"\r\n"), want: []int{431}},
		{name: "thousands of small headers", raw: req("GET /wiki/Main_Page HTTP/1.1", strings.Repeat("X-A: b\r\n", 4000)), want: []int{431}},
		{name: "cookie over MaxHeaderBytes", raw: req("GET /wiki/Main_Page HTTP/1.1", "Cookie: wikid_session="+big(64<<10, 'c')+"\r\n"), want: []int{431}},
		{name: "request line of 100 KB", raw: req("GET /wiki/" + big(100<<10, 'A') + " HTTP/1.1"), want: []int{414, 431, 400}},
		{name: "query of 100 KB", raw: req("GET /wiki/Main_Page?q=" + big(100<<10, 'q') + " HTTP/1.1"), want: []int{414, 431, 400}},
		{name: "title of 12 KB (within the head limit)", raw: req("GET /wiki/" + big(12<<10, 'T') + " HTTP/1.1")},
		{name: "REST title of 12 KB", raw: req("GET /w/rest.php/v1/page/" + big(12<<10, 'T') + " HTTP/1.1")},
		{name: "search query of 12 KB", raw: req("GET /wiki/Special:Search?search=" + big(12<<10, 's') + " HTTP/1.1"), want: []int{200, 400, 413, 414}},

		// Oversized bodies.
		{name: "REST PUT over max_body_bytes", raw: req("PUT /w/rest.php/v1/page/Big HTTP/1.1", bearer, "Content-Type: application/json\r\n", fmt.Sprintf("Content-Length: %d\r\n", badBodyLimit+1024)) + `{"source":"` + big(badBodyLimit+1024-13, 'x') + `"}`, want: []int{413}},
		{name: "REST PUT chunked over max_body_bytes", raw: req("PUT /w/rest.php/v1/page/Big HTTP/1.1", bearer, "Content-Type: application/json\r\n", "Transfer-Encoding: chunked\r\n") + chunked(`{"source":"`+big(badBodyLimit*2, 'x')+`"}`), want: []int{413}},
		{name: "REST POST over max_body_bytes", raw: req("POST /w/rest.php/v1/page HTTP/1.1", bearer, "Content-Type: application/json\r\n", fmt.Sprintf("Content-Length: %d\r\n", badBodyLimit*2)) + big(badBodyLimit*2, ' '), want: []int{413}},
		{name: "form POST over max_body_bytes", raw: req("POST /wiki/Big?action=submit HTTP/1.1", "Content-Type: application/x-www-form-urlencoded\r\n", fmt.Sprintf("Content-Length: %d\r\n", badBodyLimit*2)) + "wpTextbox1=" + big(badBodyLimit*2-11, 'x'), want: []int{413, 403}},
		{name: "login POST over max_body_bytes", raw: req("POST /wiki/Special:UserLogin HTTP/1.1", "Content-Type: application/x-www-form-urlencoded\r\n", fmt.Sprintf("Content-Length: %d\r\n", badBodyLimit*2)) + "username=" + big(badBodyLimit*2-9, 'u'), want: []int{413, 403}},
		{name: "Content-Length not a number", raw: req("PUT /w/rest.php/v1/page/X HTTP/1.1", bearer, "Content-Length: abc\r\n"), want: []int{400}},
		{name: "Content-Length and Transfer-Encoding", raw: req("POST /w/rest.php/v1/page HTTP/1.1", "Content-Length: 4\r\n", "Transfer-Encoding: chunked\r\n") + "0\r\n\r\n"},
		{name: "two different Content-Lengths", raw: req("POST /w/rest.php/v1/page HTTP/1.1", "Content-Length: 4\r\n", "Content-Length: 5\r\n") + "abcde", want: []int{400}},
		{name: "invalid JSON body", raw: req("PUT /w/rest.php/v1/page/X HTTP/1.1", bearer, "Content-Type: application/json\r\n", "Content-Length: 5\r\n") + "{{{{{", want: []int{400}},
		{name: "invalid UTF-8 in a JSON body", raw: req("PUT /w/rest.php/v1/page/X HTTP/1.1", bearer, "Content-Type: application/json\r\n", "Content-Length: 15\r\n") + "{\"source\":\"\xff\xfe\"}", want: []int{400}},
		{name: "NUL in a JSON body", raw: req("PUT /w/rest.php/v1/page/Nul_body HTTP/1.1", bearer, "Content-Type: application/json\r\n", "Content-Length: 19\r\n") + "{\"source\":\"a\\u0000b\"}"[:19], want: []int{400}},

		// Methods.
		{name: "unknown method FOO", raw: req("FOO /wiki/Main_Page HTTP/1.1"), want: []int{405, 501, 400}},
		{name: "TRACE", raw: req("TRACE /wiki/Main_Page HTTP/1.1"), want: []int{405, 501, 400}},
		{name: "DELETE on a page", raw: req("DELETE /wiki/Main_Page HTTP/1.1"), want: []int{405, 501, 400, 403}},
		{name: "PATCH on the REST page", raw: req("PATCH /w/rest.php/v1/page/Main_Page HTTP/1.1", bearer), want: []int{405, 501, 400}},
		{name: "CONNECT", raw: req("CONNECT 127.0.0.1:22 HTTP/1.1")},
		{name: "method with invalid characters", raw: req("G(E)T /wiki/Main_Page HTTP/1.1"), want: []int{400, 405, 501}},
		{name: "lower-case get", raw: req("get /wiki/Main_Page HTTP/1.1"), want: []int{400, 405, 501}},
		{name: "OPTIONS *", raw: req("OPTIONS * HTTP/1.1"), want: []int{200, 204, 400, 405, 501}},

		// Path traversal.
		{name: "/wiki/../../etc/passwd", follow: true, raw: req("GET /wiki/../../etc/passwd HTTP/1.1")},
		{name: "/wiki/..%2f..%2fetc%2fpasswd", raw: req("GET /wiki/..%2f..%2fetc%2fpasswd HTTP/1.1")},
		{name: "/wiki/%2e%2e/%2e%2e/etc/passwd", raw: req("GET /wiki/%2e%2e/%2e%2e/etc/passwd HTTP/1.1")},
		{name: "/wiki/Foo/../../go.mod", follow: true, raw: req("GET /wiki/Foo/../../go.mod HTTP/1.1")},
		{name: "/static/../go.mod", follow: true, raw: req("GET /static/../go.mod HTTP/1.1")},
		{name: "/static/%2e%2e/x", raw: req("GET /static/%2e%2e/x HTTP/1.1")},
		{name: "/static/..%2fgo.mod", raw: req("GET /static/..%2fgo.mod HTTP/1.1")},
		{name: "/static/%2e%2e%2f%2e%2e%2fgo.mod", raw: req("GET /static/%2e%2e%2f%2e%2e%2fgo.mod HTTP/1.1")},
		{name: `/static/..\go.mod`, raw: req(`GET /static/..\go.mod HTTP/1.1`)},
		{name: "/static//etc/passwd", follow: true, raw: req("GET /static//etc/passwd HTTP/1.1")},
		{name: "REST page ..%2F..%2Fetc%2Fpasswd", raw: req("GET /w/rest.php/v1/page/..%2F..%2Fetc%2Fpasswd HTTP/1.1")},
		{name: "raw ?action=raw of ../../etc/passwd", raw: req("GET /wiki/..%2F..%2Fetc%2Fpasswd?action=raw HTTP/1.1")},
		{name: "index.php title=../../etc/passwd", raw: req("GET /w/index.php?title=../../etc/passwd&action=raw HTTP/1.1")},
		{name: "absolute-form target to another host", raw: req("GET http://evil.example/etc/passwd HTTP/1.1")},

		// NUL bytes and control characters.
		{name: "%00 in a title", raw: req("GET /wiki/Foo%00bar HTTP/1.1")},
		{name: "%00 in a REST title", raw: req("GET /w/rest.php/v1/page/Foo%00bar HTTP/1.1")},
		{name: "%00 in a query", raw: req("GET /wiki/Special:Search?search=a%00b HTTP/1.1"), want: []int{200, 400}},
		{name: "%00 in a REST search", raw: req("GET /w/rest.php/v1/search/page?q=a%00b HTTP/1.1"), want: []int{200, 400}},
		{name: "%00%00%00 search", raw: req("GET /wiki/Special:Search?search=%00%00%00 HTTP/1.1"), want: []int{200, 400}},
		{name: "%00 in Contributions", raw: req("GET /wiki/Special:Contributions/Foo%00 HTTP/1.1")},
		{name: "%00 in WhatLinksHere", raw: req("GET /wiki/Special:WhatLinksHere/Foo%00 HTTP/1.1")},
		{name: "%00 in action", raw: req("GET /wiki/Main_Page?action=edit%00 HTTP/1.1")},
		{name: "%00 in diff", raw: req("GET /wiki/Main_Page?diff=1%00&oldid=1 HTTP/1.1")},
		{name: "%00 in history offset", raw: req("GET /w/rest.php/v1/page/Main_Page/history?older_than=1%00 HTTP/1.1")},
		{name: "%00 in oldid", raw: req("GET /wiki/Main_Page?oldid=1%00 HTTP/1.1")},
		{name: "%00 in a static path", raw: req("GET /static/app.css%00.png HTTP/1.1")},
		{name: "raw NUL in the path", raw: req("GET /wiki/Foo\x00bar HTTP/1.1"), want: []int{400}},
		{name: "raw NUL in the query", raw: req("GET /wiki/Main_Page?a=\x00 HTTP/1.1"), want: []int{400}},
		{name: "raw NUL in a header value", raw: req("GET /wiki/Main_Page HTTP/1.1", "X-A: a\x00b\r\n"), want: []int{400}},
		{name: "raw NUL in a header name", raw: req("GET /wiki/Main_Page HTTP/1.1", "X-\x00: b\r\n"), want: []int{400}},
		{name: "raw NUL in a cookie", raw: req("GET /wiki/Main_Page HTTP/1.1", "Cookie: wikid_session=a\x00b\r\n"), want: []int{400}},
		{name: "%0d%0a in a title (header injection)", follow: true, raw: req("GET /wiki/Foo%0d%0aSet-Cookie:%20x=1 HTTP/1.1")},
		{name: "bare CR in a header", raw: req("GET /wiki/Main_Page HTTP/1.1", "X-A: a\rb\r\n"), want: []int{400}},

		// Invalid UTF-8.
		{name: "%FF%FE in a title", raw: req("GET /wiki/%FF%FE HTTP/1.1")},
		{name: "raw 0xFF in the path", raw: req("GET /wiki/\xff\xfe HTTP/1.1"), want: []int{400}},
		{name: "overlong UTF-8 %C0%AE%C0%AE", raw: req("GET /wiki/%C0%AE%C0%AE/%C0%AE%C0%AE/etc/passwd HTTP/1.1")},
		{name: "invalid UTF-8 in a search", raw: req("GET /wiki/Special:Search?search=%FF HTTP/1.1"), want: []int{200, 400}},
		{name: "bad percent-escape", raw: req("GET /wiki/Foo%zz HTTP/1.1"), want: []int{400}},

		// Protocol garbage.
		{name: "HTTP/0.9 request", raw: "GET /\r\n\r\n", closeOK: true, want: []int{400, 505}},
		// net/http answers an unsupported major version with 505 (RFC 9110
		// §15.6.6 says so); the only 5xx the matrix tolerates, reported.
		{name: "HTTP/3.0 version", raw: req("GET /wiki/Main_Page HTTP/3.0"), want: []int{400, 505}},
		{name: "HTTP/1.1 without Host", raw: "GET /wiki/Main_Page HTTP/1.1\r\nConnection: close\r\n\r\n", want: []int{400}},
		{name: "two Host headers", raw: req("GET /wiki/Main_Page HTTP/1.1", "Host: y\r\n"), want: []int{400}},
		{name: "header without a colon", raw: req("GET /wiki/Main_Page HTTP/1.1", "NoColonHere\r\n"), want: []int{400}},
		{name: "obs-fold header", raw: req("GET /wiki/Main_Page HTTP/1.1", "X-A: a\r\n  folded\r\n"), want: []int{400, 200}},
		{name: "space before colon", raw: req("GET /wiki/Main_Page HTTP/1.1", "X-A : a\r\n"), want: []int{400}},
		{name: "random binary", raw: "\x8f\x01\x02\xff\xfe garbage \x00\x00\r\n\r\n", closeOK: true},
		{name: "TLS ClientHello", raw: "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + big(64, 'r') + "\r\n\r\n", closeOK: true},
		{name: "HTTP/2 preface without h2c", raw: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", closeOK: true, want: []int{400, 505}},
		{name: "bare LF line endings", raw: "GET /wiki/Main_Page HTTP/1.1\nHost: x\nConnection: close\n\n", want: []int{200, 400}},
		{name: "empty request line", raw: "\r\n\r\n\r\n", closeOK: true},
		{name: "Expect: 100-continue with a body over the limit", raw: req("PUT /w/rest.php/v1/page/Big HTTP/1.1", bearer, "Content-Type: application/json\r\n", "Expect: 100-continue\r\n", fmt.Sprintf("Content-Length: %d\r\n", badBodyLimit*4)), want: []int{413, 417}},
		{name: "Range on a page", raw: req("GET /wiki/Main_Page HTTP/1.1", "Range: bytes=99999999-\r\n"), want: []int{200, 206, 416}},
	}

	results := map[string]int{}
	var rmu sync.Mutex
	t.Run("matrix", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				st, body := rawStatus(t, addr, c.raw)
				rmu.Lock()
				results[c.name] = st
				rmu.Unlock()
				checkBody(t, body)
				switch {
				case st == 0 && c.closeOK:
				case st == 0:
					t.Errorf("the connection closed without an answer")
				case st == 505 && contains(c.want, 505):
					t.Logf("505 from net/http for an unsupported HTTP version")
				case st >= 500:
					t.Errorf("status %d (a 5xx):\n%s", st, clip(body))
				case st >= 300 && st < 400 && c.follow:
					loc := headerOf(body, "Location")
					if !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") || strings.ContainsAny(loc, "\r\n\x00") {
						t.Fatalf("status %d to %q: not a clean on-site path", st, loc)
					}
					if headerOf(body, "Set-Cookie") != "" {
						t.Errorf("a Set-Cookie came through:\n%s", clip(body))
					}
					st2, body2 := rawStatus(t, addr, req("GET "+loc+" HTTP/1.1"))
					checkBody(t, body2)
					t.Logf("%d to %s, which answers %d", st, loc, st2)
					if st2 < 400 || st2 > 499 {
						t.Errorf("%d to %s, which answers %d, want a 4xx", st, loc, st2)
					}
				case len(c.want) > 0 && !contains(c.want, st):
					t.Errorf("status %d, want one of %v:\n%s", st, c.want, clip(body))
				case len(c.want) == 0 && (st < 400 || st > 499):
					t.Errorf("status %d, want a 4xx:\n%s", st, clip(body))
				}
			})
		}

		// Slow and stuck clients.
		t.Run("slowloris head is cut off by the header timeout", func(t *testing.T) {
			t.Parallel()
			c := dial(t, addr)
			start := time.Now()
			head := "GET /wiki/Main_Page HTTP/1.1\r\nHost: x\r\nX-Slow: "
			if _, err := io.WriteString(c, head); err != nil {
				t.Fatal(err)
			}
			closed := make(chan []byte, 1)
			go func() { b, _ := io.ReadAll(c); closed <- b }()
			tick := time.NewTicker(500 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case b := <-closed:
					el := time.Since(start)
					st := statusOf(b)
					t.Logf("closed after %v (status %d)", el.Round(time.Millisecond), st)
					if st >= 500 {
						t.Errorf("status %d", st)
					}
					if el > headerTimeout+3*time.Second {
						t.Errorf("held for %v", el)
					}
					return
				case <-tick.C:
					if time.Since(start) > headerTimeout+5*time.Second {
						t.Fatal("a slowloris head was never cut off")
					}
					c.Write([]byte("a")) // one byte at a time, never the end of the head
				}
			}
		})
		t.Run("slowloris head over the front's buffer is cut off too", func(t *testing.T) {
			t.Parallel()
			c := dial(t, addr)
			start := time.Now()
			// More than the front's 8 KiB buffer: the connection goes to net/http.
			io.WriteString(c, "GET /wiki/Main_Page HTTP/1.1\r\nHost: x\r\nX-Big: "+big(9<<10, 'b')+"\r\nX-Slow: ")
			closed := make(chan []byte, 1)
			go func() { b, _ := io.ReadAll(c); closed <- b }()
			tick := time.NewTicker(500 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case b := <-closed:
					el := time.Since(start)
					t.Logf("closed after %v (status %d)", el.Round(time.Millisecond), statusOf(b))
					if statusOf(b) >= 500 {
						t.Errorf("status %d", statusOf(b))
					}
					if el > headerTimeout+3*time.Second {
						t.Errorf("held for %v", el)
					}
					return
				case <-tick.C:
					if time.Since(start) > 2*headerTimeout+5*time.Second {
						t.Fatal("a slowloris head was never cut off")
					}
					c.Write([]byte("a"))
				}
			}
		})
		t.Run("slow body is cut off by the read timeout", func(t *testing.T) {
			t.Parallel()
			c := dial(t, addr)
			start := time.Now()
			io.WriteString(c, "PUT /w/rest.php/v1/page/Slow HTTP/1.1\r\nHost: x\r\n"+bearer+"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"source\":\"")
			closed := make(chan []byte, 1)
			go func() { b, _ := io.ReadAll(c); closed <- b }()
			tick := time.NewTicker(300 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case b := <-closed:
					el := time.Since(start)
					st := statusOf(b)
					rmu.Lock()
					results["slow body"] = st
					rmu.Unlock()
					t.Logf("answered %d / closed after %v", st, el.Round(time.Millisecond))
					if st >= 500 {
						t.Errorf("status %d for a body cut off by the read timeout:\n%s", st, clip(string(b)))
					}
					if el > badReadTimeout+3*time.Second {
						t.Errorf("held for %v", el)
					}
					return
				case <-tick.C:
					if time.Since(start) > badReadTimeout+10*time.Second {
						t.Fatal("a slow body was never cut off")
					}
					c.Write([]byte("x"))
				}
			}
		})
		t.Run("slow chunked form body is cut off by the read timeout", func(t *testing.T) {
			t.Parallel()
			c := dial(t, addr)
			start := time.Now()
			io.WriteString(c, "POST /wiki/Special:UserLogin HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n")
			closed := make(chan []byte, 1)
			go func() { b, _ := io.ReadAll(c); closed <- b }()
			tick := time.NewTicker(300 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case b := <-closed:
					st := statusOf(b)
					rmu.Lock()
					results["slow chunked form body"] = st
					rmu.Unlock()
					t.Logf("answered %d / closed after %v", st, time.Since(start).Round(time.Millisecond))
					if st >= 500 {
						t.Errorf("status %d:\n%s", st, clip(string(b)))
					}
					return
				case <-tick.C:
					if time.Since(start) > badReadTimeout+10*time.Second {
						t.Fatal("a slow body was never cut off")
					}
					c.Write([]byte("1\r\na\r\n"))
				}
			}
		})
		t.Run("idle keep-alive connection is closed", func(t *testing.T) {
			t.Parallel()
			for _, path := range []string{"/wiki/Main_Page", "/wiki/Special:SpecialPages"} { // front hit, net/http
				c := dial(t, addr)
				io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
				br := bufio.NewReader(c)
				res, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				start := time.Now()
				c.SetReadDeadline(time.Now().Add(badIdleTimeout + 5*time.Second))
				_, err = br.ReadByte()
				el := time.Since(start)
				if !errors.Is(err, io.EOF) && !isReset(err) {
					t.Errorf("%s: idle read: %v after %v, want EOF", path, err, el)
				} else if el > badIdleTimeout+time.Second {
					t.Errorf("%s: idle connection closed after %v", path, el)
				}
				t.Logf("%s (%s): idle connection closed after %v", path, res.Header.Get("X-Cache"), el.Round(time.Millisecond))
			}
		})
		t.Run("a client that never reads is freed by the write timeout", func(t *testing.T) {
			t.Parallel()
			for _, path := range []string{"/wiki/Help:Syntax", "/wiki/Special:SpecialPages", "/w/rest.php/v1/page/Help:Syntax"} {
				c := dial(t, addr)
				if tc, ok := c.(*net.TCPConn); ok {
					tc.SetReadBuffer(4 << 10)
				}
				// Pipeline thousands of requests and never read an answer.
				one := "GET " + path + " HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n\r\n"
				c.SetWriteDeadline(time.Now().Add(badWriteTimeout + 5*time.Second))
				start := time.Now()
				for range 5000 {
					if _, err := io.WriteString(c, one); err != nil {
						break // the server stopped reading: its socket is full too
					}
				}
				// Wait past the write timeout, then check the server closed its side.
				time.Sleep(badWriteTimeout + time.Second)
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				n, err := io.Copy(io.Discard, c)
				if err != nil && !isReset(err) {
					t.Errorf("%s: after the write timeout the connection is still open (%v, %d bytes)", path, err, n)
				}
				t.Logf("%s: freed after %v (%d bytes were buffered)", path, time.Since(start).Round(time.Millisecond), n)
				c.Close()
			}
		})
	})

	t.Run("the server is healthy afterwards", func(t *testing.T) {
		for _, p := range []string{"/healthz", "/wiki/Main_Page", "/wiki/Help:Syntax", "/w/rest.php/v1/page/Main_Page"} {
			st, body := rawStatus(t, addr, "GET "+p+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
			if st != 200 {
				t.Errorf("GET %s: %d\n%s", p, st, clip(body))
			}
		}
		// An edit still works.
		st, body := rawStatus(t, addr, "PUT /w/rest.php/v1/page/After HTTP/1.1\r\nHost: x\r\n"+bearer+"Content-Type: application/json\r\nContent-Length: 20\r\nConnection: close\r\n\r\n{\"source\":\"healthy\"}")
		if st/100 != 2 {
			t.Errorf("edit after the matrix: %d\n%s", st, clip(body))
		}
		after := settledGoroutines(baseline + 5)
		t.Logf("goroutines: baseline %d, after %d", baseline, after)
		if after > baseline+5 {
			buf := make([]byte, 1<<20)
			t.Errorf("goroutines: baseline %d, after %d:\n%s", baseline, after, buf[:runtime.Stack(buf, true)])
		}
	})
	fivexx, fourxx, closed := 0, 0, 0
	for _, st := range results {
		switch {
		case st == 0:
			closed++
		case st >= 500:
			fivexx++
		case st >= 400:
			fourxx++
		}
	}
	t.Logf("bad-request matrix: %d cases (+6 slow-client cases): %d answered 4xx, %d closed without an answer, %d 5xx; statuses %v", len(cases), fourxx, closed, fivexx, results)
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// rawStatus writes raw on a new connection and returns the status of the
// first answer (0 if the connection closed without one) and its text.
func rawStatus(t *testing.T, addr, raw string) (int, string) {
	t.Helper()
	c := dial(t, addr)
	c.SetDeadline(time.Now().Add(20 * time.Second))
	werr := make(chan error, 1)
	go func() { _, err := io.WriteString(c, raw); werr <- err }()
	// The server may answer (413, 431) and close before reading everything.
	b, _ := io.ReadAll(io.LimitReader(c, 4<<20))
	c.Close()
	<-werr
	return statusOf(b), string(b)
}

// headerOf returns the first value of header name in a raw response.
func headerOf(raw, name string) string {
	head, _, _ := strings.Cut(raw, "\r\n\r\n")
	for _, line := range strings.Split(head, "\r\n")[1:] {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func statusOf(b []byte) int {
	var major, minor, st int
	if _, err := fmt.Sscanf(string(b), "HTTP/%d.%d %d", &major, &minor, &st); err != nil {
		return 0
	}
	return st
}

// checkBody fails if an answer leaks a file from outside the wiki.
func checkBody(t *testing.T, body string) {
	t.Helper()
	for _, leak := range []string{"root:x:0:0", "module github.com/wikid/wikid", "goroutine ", "panic:"} {
		if strings.Contains(body, leak) {
			t.Errorf("the answer contains %q", leak)
		}
	}
}

func chunked(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		n := min(len(s), 8<<10)
		fmt.Fprintf(&b, "%x\r\n%s\r\n", n, s[:n])
		s = s[n:]
	}
	b.WriteString("0\r\n\r\n")
	return b.String()
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func clip(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe"))
}

// settledGoroutines waits up to 10 s for the goroutine count to fall to
// target (0: just let it settle) and returns it.
func settledGoroutines(target int) int {
	n := runtime.NumGoroutine()
	for i := 0; i < 100; i++ {
		time.Sleep(100 * time.Millisecond)
		m := runtime.NumGoroutine()
		if (target > 0 && m <= target) || (target == 0 && m == n && i > 5) {
			return m
		}
		n = m
	}
	return n
}
