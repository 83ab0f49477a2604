package web_test

// Login throttling through the whole stack: the key is the client's address
// as the trusted proxies tell it, with and without the account; never the
// account alone. The policy itself is tested in internal/session.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/web"
	"github.com/wikid/wikid/internal/wiki"
)

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// loginWiki is a wiki whose login throttle reads a clock the test moves.
type loginWiki struct {
	*apptest.Wiki
	clock *testClock
	c     *apptest.Client
	csrf  string
}

func newLoginWiki(t *testing.T, opts ...func(*config.Config)) *loginWiki {
	t.Helper()
	w := apptest.New(t, opts...)
	clk := &testClock{t: time.Now()}
	web.SetLoginClock(w.App.Web, clk.Now)
	c := w.Client(t)
	return &loginWiki{Wiki: w, clock: clk, c: c, csrf: c.CSRF("/wiki/Special:UserLogin")}
}

// login posts the login form with the given extra header lines ("Name:
// value") and forgets the session and the device cookie it may get (a
// test that wants the device cookie sends it as a header: device).
func (w *loginWiki) login(t *testing.T, name, password string, header ...string) *apptest.Response {
	t.Helper()
	r := w.c.NewRequest(http.MethodPost, "/wiki/Special:UserLogin", strings.NewReader(url.Values{
		"csrf": {w.csrf}, "username": {name}, "password": {password}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, h := range header {
		k, v, _ := strings.Cut(h, ":")
		r.Header.Add(k, strings.TrimSpace(v))
	}
	res := w.c.Do(r)
	w.c.Jar.SetCookies(&url.URL{Scheme: "http", Host: strings.TrimPrefix(w.URL, "http://")},
		[]*http.Cookie{{Name: "wikid_session", MaxAge: -1}, {Name: "wikid_device", MaxAge: -1}})
	return res
}

// from is the header a trusted proxy on loopback adds for a client at addr.
func from(addr string) string { return "X-Forwarded-For: " + addr }

func retryAfter(t *testing.T, res *apptest.Response) time.Duration {
	t.Helper()
	s, err := strconv.Atoi(res.Header.Get("Retry-After"))
	if err != nil || s < 1 {
		t.Fatalf("429 with Retry-After %q", res.Header.Get("Retry-After"))
	}
	return time.Duration(s) * time.Second
}

func behindLoopbackProxy(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1", "::1"} }

func TestLoginThrottling(t *testing.T) {
	t.Parallel()
	w := newLoginWiki(t, behindLoopbackProxy)
	_, apw := w.CreateUser(t, "Admin", wiki.GroupAdmin)
	_, opw := w.CreateUser(t, "Office mate", wiki.GroupUser)

	t.Run("over the limit a login answers 429 before checking the password", func(t *testing.T) {
		var wrong time.Duration
		for range 5 {
			start := time.Now()
			mustStatus(t, w.login(t, "Office mate", "wrong-password", from("192.0.2.1")), http.StatusUnauthorized)
			wrong += time.Since(start)
		}
		// Even the right password, in another letter case.
		start := time.Now()
		res := w.login(t, "office mate", opw, from("192.0.2.1"))
		throttled := time.Since(start)
		mustStatus(t, res, http.StatusTooManyRequests)
		mustContain(t, res, "Too many failed logins from your address", "Wait a second and try again")
		if ra := retryAfter(t, res); ra != time.Second {
			t.Errorf("Retry-After %v, want 1s", ra)
		}
		if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("429 Cache-Control %q", cc)
		}
		if len(res.Header.Values("Set-Cookie")) > 0 {
			t.Error("a throttled login set a cookie")
		}
		t.Logf("a wrong password takes %v on average; a throttled attempt %v (no argon2)", wrong/5, throttled)
		// The owner elsewhere is not slowed down.
		mustStatus(t, w.login(t, "Office mate", opw, from("192.0.2.2")), http.StatusSeeOther)
	})

	t.Run("an attacker failing 100 times does not lock the owner out", func(t *testing.T) {
		counts := map[int]int{}
		for i := range 100 {
			counts[w.login(t, "Admin", "guess-"+strconv.Itoa(i), from("203.0.113.66")).StatusCode]++
		}
		if counts[http.StatusUnauthorized] != 5 || counts[http.StatusTooManyRequests] != 95 {
			t.Errorf("100 guesses from one address: %v, want 5 × 401 and 95 × 429", counts)
		}
		mustStatus(t, w.login(t, "Admin", apw, from("198.51.100.10")), http.StatusSeeOther)
		mustStatus(t, w.login(t, "admin", apw, from("2001:db8:77::1")), http.StatusSeeOther)
	})

	t.Run("many addresses failing against one account each get slower", func(t *testing.T) {
		// 10 failures from each of several addresses (every failure costs an
		// argon2 hash; internal/session runs the same with 50 addresses).
		for i := range 6 {
			addr := fmt.Sprintf("198.18.0.%d", i+1)
			var waits []time.Duration
			for n := 0; n < 10; {
				res := w.login(t, "Admin", "guess", from(addr))
				if res.StatusCode == http.StatusTooManyRequests {
					ra := retryAfter(t, res)
					waits = append(waits, ra)
					w.clock.Add(ra)
					continue
				}
				mustStatus(t, res, http.StatusUnauthorized)
				n++
			}
			want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}
			if fmt.Sprint(waits) != fmt.Sprint(want) {
				t.Errorf("%s: Retry-After %v, want %v", addr, waits, want)
			}
			res := w.login(t, "Admin", apw, from(addr))
			mustStatus(t, res, http.StatusTooManyRequests)
			mustContain(t, res, "Wait 32 seconds")
		}
		mustStatus(t, w.login(t, "Admin", apw, from("192.0.2.200")), http.StatusSeeOther)
	})

	t.Run("an attacker's address is slowed across accounts", func(t *testing.T) {
		for i := range 20 {
			mustStatus(t, w.login(t, "Nobody "+string(rune('A'+i)), "wrong-password", from("203.0.113.9")), http.StatusUnauthorized)
		}
		res := w.login(t, "Office mate", opw, from("203.0.113.9"))
		mustStatus(t, res, http.StatusTooManyRequests)
		mustContain(t, res, "Too many failed logins")
		// Another address is not slowed down.
		mustStatus(t, w.login(t, "Office mate", opw, from("203.0.113.10")), http.StatusSeeOther)
	})

	t.Run("a success clears the address and account counter", func(t *testing.T) {
		for range 4 {
			mustStatus(t, w.login(t, "Office mate", "wrong-password", from("203.0.113.5")), http.StatusUnauthorized)
		}
		mustStatus(t, w.login(t, "Office mate", opw, from("203.0.113.5")), http.StatusSeeOther)
		for range 5 {
			mustStatus(t, w.login(t, "Office mate", "wrong-password", from("203.0.113.5")), http.StatusUnauthorized)
		}
		mustStatus(t, w.login(t, "Office mate", opw, from("203.0.113.5")), http.StatusTooManyRequests)
	})

	t.Run("many users behind one address log in", func(t *testing.T) {
		for range 22 {
			mustStatus(t, w.login(t, "Office mate", opw, from("203.0.113.77")), http.StatusSeeOther)
		}
	})

	t.Run("clients behind a trusted proxy are throttled apart", func(t *testing.T) {
		for range 5 {
			mustStatus(t, w.login(t, "Office mate", "wrong-password", from("192.0.2.101")), http.StatusUnauthorized)
		}
		mustStatus(t, w.login(t, "Office mate", opw, from("192.0.2.101")), http.StatusTooManyRequests)
		// A client further left in the chain is not the client: the trusted
		// proxy appended the real one.
		mustStatus(t, w.login(t, "Office mate", opw, "X-Forwarded-For: 192.0.2.102, 192.0.2.101"), http.StatusTooManyRequests)
		mustStatus(t, w.login(t, "Office mate", opw, from("192.0.2.102")), http.StatusSeeOther)
	})
}

// An untrusted client's forwarding headers do not change its key: with no
// proxy trusted, every forged address is still the peer's (loopback here).
func TestLoginThrottlingIgnoresForgedHeaders(t *testing.T) {
	t.Parallel()
	w := newLoginWiki(t)
	_, pw := w.CreateUser(t, "Victim", wiki.GroupUser)
	for i := range 5 {
		mustStatus(t, w.login(t, "Victim", "wrong-password", from(fmt.Sprintf("192.0.2.%d", i+1))), http.StatusUnauthorized)
	}
	for _, forged := range []string{from("192.0.2.99"), "Forwarded: for=192.0.2.98", "X-Real-IP: 192.0.2.97", "Via: 1.1 192.0.2.96"} {
		mustStatus(t, w.login(t, "Victim", pw, forged), http.StatusTooManyRequests)
	}
	// The proxy on this host that nobody configured is pointed out, once.
	if n := strings.Count(w.Logs.String(), "trusted_proxies is empty"); n != 1 {
		t.Errorf("the unconfigured-proxy warning was logged %d times, want once:\n%s", n, w.Logs.String())
	}
}

// trust_proxy: true still works, as trusted_proxies set to loopback, and
// says at start that it is deprecated.
func TestTrustProxyAlias(t *testing.T) {
	t.Parallel()
	w := newLoginWiki(t, func(c *config.Config) { c.TrustProxy = true })
	_, pw := w.CreateUser(t, "Aliased", wiki.GroupUser)
	for range 5 {
		mustStatus(t, w.login(t, "Aliased", "wrong-password", from("192.0.2.1")), http.StatusUnauthorized)
	}
	mustStatus(t, w.login(t, "Aliased", pw, from("192.0.2.1")), http.StatusTooManyRequests)
	mustStatus(t, w.login(t, "Aliased", pw, from("192.0.2.2")), http.StatusSeeOther)
	if !strings.Contains(w.Logs.String(), "trust_proxy is deprecated") {
		t.Errorf("no deprecation warning at start:\n%s", w.Logs.String())
	}
	if strings.Contains(w.Logs.String(), "trusted_proxies is empty") {
		t.Error("the unconfigured-proxy warning was logged with a trusted proxy")
	}
}

// client_ip_header: Forwarded is safe only when every trusted proxy writes
// Forwarded itself; Wikid says so at start.
func TestForwardedHeaderWarning(t *testing.T) {
	t.Parallel()
	w := apptest.New(t, behindLoopbackProxy, func(c *config.Config) { c.ClientIPHeader = "Forwarded" })
	if !strings.Contains(w.Logs.String(), "every proxy in trusted_proxies must set or overwrite Forwarded") {
		t.Errorf("no warning about Forwarded at start:\n%s", w.Logs.String())
	}
	if d := apptest.New(t, behindLoopbackProxy); strings.Contains(d.Logs.String(), "client_ip_header is Forwarded") {
		t.Error("the Forwarded warning with client_ip_header X-Forwarded-For")
	}
}

// The anonymous editor's name and the session cookie's Secure flag come
// from the trusted proxy, and never from an untrusted client's headers.
func TestClientFromTrustedProxyOnly(t *testing.T) {
	t.Parallel()
	anonEdit := func(c *config.Config) { c.EditGroup = wiki.GroupAnonymous }
	lastEditor := func(t *testing.T, w *apptest.Wiki) string {
		t.Helper()
		cs, err := w.App.Store.RecentChanges(context.Background(), wiki.ChangeQuery{Limit: 1})
		if err != nil || len(cs) != 1 {
			t.Fatalf("recent changes: %v %v", cs, err)
		}
		return cs[0].UserName
	}
	edit := func(t *testing.T, w *apptest.Wiki, title string, header ...string) {
		t.Helper()
		c := w.Client(t)
		csrf, base := c.EditForm(title)
		r := c.NewRequest(http.MethodPost, wiki.MustTitle(title).URL()+"?action=submit", strings.NewReader(url.Values{
			"csrf": {csrf}, "baserev": {base}, "text": {"text by " + title}, "summary": {"test"}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for _, h := range header {
			k, v, _ := strings.Cut(h, ":")
			r.Header.Add(k, strings.TrimSpace(v))
		}
		mustStatus(t, c.Do(r), http.StatusSeeOther)
	}
	secure := func(t *testing.T, w *loginWiki, name, pw string, header ...string) bool {
		t.Helper()
		res := w.login(t, name, pw, header...)
		mustStatus(t, res, http.StatusSeeOther)
		for _, c := range res.Cookies() {
			if c.Name == "wikid_session" {
				return c.Secure
			}
		}
		t.Fatal("no session cookie")
		return false
	}

	t.Run("behind a trusted proxy", func(t *testing.T) {
		w := newLoginWiki(t, anonEdit, behindLoopbackProxy)
		edit(t, w.Wiki, "Proxied edit", "X-Forwarded-For: 6.6.6.6, 2001:db8::5")
		if got := lastEditor(t, w.Wiki); got != "2001:db8::5" {
			t.Errorf("anonymous editor %q, want the client the proxy named", got)
		}
		_, pw := w.CreateUser(t, "Secure user", wiki.GroupUser)
		if !secure(t, w, "Secure user", pw, from("192.0.2.1"), "X-Forwarded-Proto: https") {
			t.Error("no Secure cookie though the trusted proxy says https")
		}
		if secure(t, w, "Secure user", pw, from("192.0.2.1"), "X-Forwarded-Proto: http") {
			t.Error("a Secure cookie though the trusted proxy says http")
		}
	})
	t.Run("from an untrusted client", func(t *testing.T) {
		w := newLoginWiki(t, anonEdit)
		edit(t, w.Wiki, "Direct edit", "X-Forwarded-For: 192.0.2.66", "Forwarded: for=192.0.2.67")
		if got := lastEditor(t, w.Wiki); got != "127.0.0.1" {
			t.Errorf("anonymous editor %q, want the peer's address", got)
		}
		_, pw := w.CreateUser(t, "Plain user", wiki.GroupUser)
		if secure(t, w, "Plain user", pw, "X-Forwarded-Proto: https") {
			t.Error("a forged X-Forwarded-Proto made the cookie Secure")
		}
	})
}
