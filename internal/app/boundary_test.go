package app_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/wikid/wikid/internal/app"
	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/wiki"
)

// rawGet sends one request head exactly as given (the target is not
// re-encoded by a client library) on a new connection, and reads the answer.
func rawGet(t testing.TB, addr, method, target string, header ...string) fetched {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: wiki.test\r\nConnection: close\r\n", method, target)
	for _, h := range header {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return fetched{res.StatusCode, res.Header, string(body)}
}

// decoded returns a response body without its content coding.
func decoded(t testing.TB, f fetched) string {
	t.Helper()
	var r io.Reader
	switch f.header.Get("Content-Encoding") {
	case "":
		return f.body
	case "gzip", "br":
		if f.body == "" {
			return "" // HEAD, 304
		}
	}
	switch f.header.Get("Content-Encoding") {
	case "gzip":
		zr, err := gzip.NewReader(strings.NewReader(f.body))
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case "br":
		r = brotli.NewReader(strings.NewReader(f.body))
	default:
		t.Fatalf("unknown Content-Encoding %q", f.header.Get("Content-Encoding"))
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// saveTwice gives title two revisions and returns their ids.
func saveTwice(t testing.TB, a *app.App, title string) (int64, int64) {
	t.Helper()
	ed := engine.Editor{UserName: "127.0.0.1"}
	ctx := context.Background()
	first, err := a.Engine.Save(ctx, engine.Edit{Title: wiki.MustTitle(title), Text: "The first text of the page.\n", Editor: ed})
	if err != nil {
		t.Fatal(err)
	}
	second, err := a.Engine.Save(ctx, engine.Edit{Title: wiki.MustTitle(title), Text: "The second text of the page, with [[Main Page|a link]].\n",
		BaseRevID: first.Revision.ID, Editor: ed})
	if err != nil {
		t.Fatal(err)
	}
	return first.Revision.ID, second.Revision.ID
}

// TestNoRequestChangesWhatOthersRead: anonymous requests for other spellings
// of a page's URL (empty, repeated, unknown or re-escaped parameters, other
// title spellings, absolute form, HEAD, conditional) are redirected to their
// canonical URL or answered uncached, and never change what a later plain
// GET /wiki/X returns, in any encoding.
func TestNoRequestChangesWhatOthersRead(t *testing.T) {
	t.Parallel()
	a, base := apptest.Serve(t)
	addr := strings.TrimPrefix(base, "http://")
	rev1, rev2 := saveTwice(t, a, "Poison target")
	const page = "/wiki/Poison_target"

	encodings := []string{"", "Accept-Encoding: gzip", "Accept-Encoding: br"}
	want := decoded(t, rawGet(t, addr, "GET", page))
	if !strings.Contains(want, "The second text") {
		t.Fatalf("baseline view lacks the latest text:\n%.300s", want)
	}
	check := func(after string) {
		t.Helper()
		for _, enc := range encodings {
			got := rawGet(t, addr, "GET", page, enc)
			if got.status != http.StatusOK || decoded(t, got) != want {
				t.Fatalf("after %s, GET %s (%s) changed: %d\n%.400s", after, page, enc, got.status, decoded(t, got))
			}
		}
	}
	check("nothing") // fills the variants

	targets := []string{
		page + "?diff",
		page + "?diff=",
		page + "?diff=&oldid=",
		page + "?diff=cur",
		page + fmt.Sprintf("?oldid=%d&diff=%d", rev1, rev2),
		page + fmt.Sprintf("?diff=%d&oldid=%d", rev2, rev1),
		page + "?action=history&action=",
		page + "?action=&action=history",
		page + "?action=history&action=history",
		page + "?action=history&action=raw",
		page + fmt.Sprintf("?oldid=%d&oldid=%d", rev1, rev2),
		page + fmt.Sprintf("?oldid=%d", rev1),
		page + fmt.Sprintf("?oldid=%d&", rev1),
		page + "?action=raw",
		page + "?action=edit&",
		page + "?&action=history",
		page + "?redirect=no&redirect=",
		page + "?redirect=no",
		page + "?Action=history",
		page + "?action=history&utm_source=newsletter",
		page + "?action%3Dhistory",
		page + "?%61ction=history",
		page + "?action=hist%6Fry",
		page + "?action=history&limit=50",
		page + "?limit=10&action=history",
		page + "?",
		page + "?action=view",
		page + "?action=purge",
		page + "?action=nonsense",
		page + "?oldid=abc",
		page + "?oldid=%zz",
		"/wiki/Poison%5Ftarget",
		"/wiki/poison_target",
		"/wiki/Poison%20target",
		"/wiki/Poison_target/",
		"/wiki//Poison_target",
		"/wiki/./Poison_target",
		"/w/index.php?title=Poison_target&action=history",
		"/w/index.php?title=Poison_target",
		"http://wiki.test" + page + "?action=history",
		"http://wiki.test" + page,
	}
	for _, target := range targets {
		for _, method := range []string{"GET", "HEAD"} {
			for _, extra := range []string{"", "Accept-Encoding: gzip, br", "If-None-Match: *", "If-Modified-Since: Mon, 01 Jan 2024 00:00:00 GMT"} {
				// An empty cache: the odd request is the one that fills.
				a.Edge.PurgeAll()
				res := rawGet(t, addr, method, target, extra)
				if res.status >= 500 {
					t.Fatalf("%s %s: %d", method, target, res.status)
				}
				if cc := res.header.Get("Cache-Control"); res.status == http.StatusMovedPermanently && cc != "no-store" {
					t.Errorf("%s %s: redirect with Cache-Control %q", method, target, cc)
				}
				check(method + " " + target + " " + extra)
			}
		}
	}

	t.Run("a non-canonical target is redirected to its canonical form", func(t *testing.T) {
		for target, loc := range map[string]string{
			page + "?diff":                           page,
			page + "?action=history&action=":         page + "?action=history",
			page + "?limit=10&action=history":        page + "?action=history&limit=10",
			page + "?action=history&limit=50":        page + "?action=history",
			page + "?action=history&utm_source=x":    page + "?action=history",
			page + "?%61ction=hist%6Fry":             page + "?action=history",
			"/wiki/poison_target?action=history":     page + "?action=history",
			"/w/index.php?title=Poison_target&diff=": page,
		} {
			res := rawGet(t, addr, "GET", target)
			if res.status != http.StatusMovedPermanently || res.header.Get("Location") != loc {
				t.Errorf("GET %s: %d to %q, want 301 to %q", target, res.status, res.header.Get("Location"), loc)
			}
		}
	})
	t.Run("conflicting repeated parameters are a 400 that is not stored", func(t *testing.T) {
		res := rawGet(t, addr, "GET", page+fmt.Sprintf("?oldid=%d&oldid=%d", rev1, rev2))
		if res.status != http.StatusBadRequest || res.header.Get("Cache-Control") != "no-store" || !strings.Contains(res.body, "oldid") {
			t.Errorf("got %d, Cache-Control %q:\n%.300s", res.status, res.header.Get("Cache-Control"), res.body)
		}
	})
	t.Run("an absolute-form target is answered from the entry of its key, never stored under it", func(t *testing.T) {
		abs := "http://wiki.test" + page + "?action=history"
		a.Edge.PurgeAll()
		res := rawGet(t, addr, "GET", abs)
		if res.status != http.StatusOK || res.header.Get("Cache-Control") != "no-store" || res.header.Get("X-Cache") != "" {
			t.Errorf("on an empty cache: %d, Cache-Control %q, X-Cache %q", res.status, res.header.Get("Cache-Control"), res.header.Get("X-Cache"))
		}
		if n := a.Edge.Stats().Entries; n != 0 {
			t.Errorf("the absolute-form request stored %d entries", n)
		}
		canon := rawGet(t, addr, "GET", page+"?action=history")
		res = rawGet(t, addr, "GET", abs)
		if res.status != http.StatusOK || res.header.Get("Cache-Control") != "no-store" || res.header.Get("X-Cache") != "HIT" || res.body != canon.body {
			t.Errorf("after the canonical fill: %d, Cache-Control %q, X-Cache %q, same body %v", res.status,
				res.header.Get("Cache-Control"), res.header.Get("X-Cache"), res.body == canon.body)
		}
	})
	t.Run("a Range request is answered whole from the cache", func(t *testing.T) {
		rawGet(t, addr, "GET", page)
		for _, method := range []string{"GET", "HEAD"} {
			res := rawGet(t, addr, method, page, "Range: bytes=0-10")
			if res.status != http.StatusOK || res.header.Get("X-Cache") != "HIT" || (method == "GET" && decoded(t, res) != want) {
				t.Errorf("%s with Range: %d, X-Cache %q", method, res.status, res.header.Get("X-Cache"))
			}
		}
	})
}

// TestValidatorsPerEncoding: the identity, gzip and brotli representations
// of a page each have their own strong validator, which validates only
// that representation; 304 works for anonymous and logged-in views, with
// If-None-Match and If-Modified-Since.
func TestValidatorsPerEncoding(t *testing.T) {
	t.Parallel()
	a, base := apptest.Serve(t)
	addr := strings.TrimPrefix(base, "http://")
	const page = "/wiki/Help:Syntax"
	rawGet(t, addr, "GET", page) // fill

	etags := map[string]string{}
	for _, enc := range []string{"identity", "gzip", "br"} {
		res := rawGet(t, addr, "GET", page, "Accept-Encoding: "+enc)
		if got := res.header.Get("Content-Encoding"); got != strings.TrimPrefix(enc, "identity") {
			t.Fatalf("Accept-Encoding %s: Content-Encoding %q", enc, got)
		}
		etag := res.header.Get("ETag")
		for other, e := range etags {
			if e == etag {
				t.Errorf("%s and %s share the ETag %s", enc, other, etag)
			}
		}
		etags[enc] = etag
		if res.header["Age"] != nil {
			t.Errorf("%s hit carries Age %q", enc, res.header.Get("Age"))
		}
	}
	for enc, etag := range etags {
		for other := range etags {
			res := rawGet(t, addr, "GET", page, "Accept-Encoding: "+other, "If-None-Match: "+etag)
			want := http.StatusOK
			if other == enc {
				want = http.StatusNotModified
			}
			if res.status != want {
				t.Errorf("the %s ETag sent with Accept-Encoding %s: %d, want %d", enc, other, res.status, want)
			}
		}
	}

	// Logged in: the spliced view, through the front server and net/http.
	cookie := loginCookie(t, a, base, "Vera")
	var lm string
	for _, enc := range []string{"identity", "gzip"} {
		res := rawGet(t, addr, "GET", page, "Accept-Encoding: "+enc, "Cookie: "+cookie)
		if res.status != http.StatusOK || !strings.Contains(decoded(t, res), "Vera") {
			t.Fatalf("logged-in view (%s): %d", enc, res.status)
		}
		etag, cc := res.header.Get("ETag"), res.header.Get("Cache-Control")
		lm = res.header.Get("Last-Modified")
		if cc != "private, no-cache" || etag == "" || lm == "" || etag == etags[enc] {
			t.Errorf("logged-in view (%s): Cache-Control %q, ETag %q (anonymous %q), Last-Modified %q", enc, cc, etag, etags[enc], lm)
		}
		for _, cond := range []string{"If-None-Match: " + etag, "If-Modified-Since: " + lm} {
			for _, method := range []string{"GET", "HEAD"} {
				if res := rawGet(t, addr, method, page, "Accept-Encoding: "+enc, "Cookie: "+cookie, cond); res.status != http.StatusNotModified {
					t.Errorf("logged-in %s (%s) with %s: %d", method, enc, cond, res.status)
				}
			}
		}
	}
	// A copy kept from before the login (the anonymous page) never
	// validates the logged-in view.
	anonLM := rawGet(t, addr, "GET", page).header.Get("Last-Modified")
	if res := rawGet(t, addr, "GET", page, "Cookie: "+cookie, "If-Modified-Since: "+anonLM); res.status != http.StatusOK {
		t.Errorf("logged-in view with the anonymous page's Last-Modified: %d, want 200", res.status)
	}
}

// loginCookie creates a user, logs in through the form and returns the
// session cookie as a Cookie header value.
func loginCookie(t *testing.T, a *app.App, base, name string) string {
	t.Helper()
	password := "pw-" + strings.ToLower(name) + "-secret"
	hash, err := auth.HashPassword(password)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Store.CreateUser(context.Background(), wiki.User{Name: name, PasswordHash: hash, Group: wiki.GroupUser, Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	form := fetch(t, "GET", base+"/wiki/Special:UserLogin")
	csrf := regexp.MustCompile(`name="csrf" value="([^"]*)"`).FindStringSubmatch(form.body)[1]
	req, _ := http.NewRequest("POST", base+"/wiki/Special:UserLogin", strings.NewReader(url.Values{
		"csrf": {csrf}, "username": {name}, "password": {password}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for _, c := range res.Cookies() {
		if c.Name == "wikid_session" {
			return c.Name + "=" + c.Value
		}
	}
	t.Fatal("no session cookie after login")
	return ""
}
