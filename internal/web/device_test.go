package web_test

// Device cookies: a browser that logged in to an account before is
// throttled apart from its address, so that failed logins by others behind
// the same address (a NAT, an unconfigured proxy) never lock it out.

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/wiki"
)

// deviceOf returns the device cookie res sets, failing the test when it
// sets none.
func deviceOf(t *testing.T, res *apptest.Response) *http.Cookie {
	t.Helper()
	for _, c := range res.Cookies() {
		if c.Name == "wikid_device" && c.Value != "" {
			return c
		}
	}
	t.Fatalf("no wikid_device cookie in %d answer: %q", res.StatusCode, res.Header.Values("Set-Cookie"))
	return nil
}

// device is the header line that sends device cookie c.
func device(c *http.Cookie) string { return "Cookie: wikid_device=" + c.Value }

func TestDeviceCookie(t *testing.T) {
	t.Parallel()
	w := newLoginWiki(t, behindLoopbackProxy)
	_, apw := w.CreateUser(t, "Admin", wiki.GroupAdmin)
	_, opw := w.CreateUser(t, "Office mate", wiki.GroupUser)
	const shared = "203.0.113.50" // the owner's address, and the attacker's

	// The owner logged in from this browser before.
	res := w.login(t, "Admin", apw, from(shared))
	mustStatus(t, res, http.StatusSeeOther)
	owner := deviceOf(t, res)
	mateRes := w.login(t, "Office mate", opw, from("192.0.2.77"))
	mustStatus(t, mateRes, http.StatusSeeOther)
	mate := deviceOf(t, mateRes)

	t.Run("the cookie is HttpOnly, SameSite=Lax, for the whole site, for a year", func(t *testing.T) {
		if !owner.HttpOnly || owner.SameSite != http.SameSiteLaxMode || owner.Path != "/" || owner.Secure {
			t.Errorf("device cookie %+v", owner)
		}
		if owner.MaxAge < 364*24*3600 || owner.MaxAge > 366*24*3600 {
			t.Errorf("Max-Age %d, want a year", owner.MaxAge)
		}
		if strings.Contains(owner.Value, "Admin") || strings.Contains(strings.ToLower(owner.Value), "admin") {
			t.Errorf("the account name is in clear in the cookie: %s", owner.Value)
		}
		// Secure exactly when the session cookie is.
		res := w.login(t, "Admin", apw, from(shared), "X-Forwarded-Proto: https")
		mustStatus(t, res, http.StatusSeeOther)
		for _, c := range res.Cookies() {
			if !c.Secure {
				t.Errorf("%s is not Secure though the trusted proxy says https", c.Name)
			}
		}
	})

	t.Run("an attacker at the owner's address does not lock the owner out", func(t *testing.T) {
		counts := map[int]int{}
		for i := range 100 {
			counts[w.login(t, "Admin", "guess-"+strconv.Itoa(i), from(shared)).StatusCode]++
		}
		for i := range 50 {
			counts[w.login(t, "Someone "+strconv.Itoa(i), "guess", from(shared)).StatusCode]++
		}
		if counts[http.StatusTooManyRequests] < 100 || counts[http.StatusUnauthorized]+counts[http.StatusTooManyRequests] != 150 {
			t.Errorf("150 guesses from one address: %v, want nearly all 429", counts)
		}
		// Without the device cookie, the owner waits as everyone at that
		// address does.
		res := w.login(t, "Admin", apw, from(shared))
		mustStatus(t, res, http.StatusTooManyRequests)
		mustContain(t, res, "Too many failed logins from your address")
		// With it, the owner is in at once, in any letter case, and gets a
		// fresh device cookie.
		start := time.Now()
		res = w.login(t, "admin", apw, from(shared), device(owner))
		mustStatus(t, res, http.StatusSeeOther)
		deviceOf(t, res)
		t.Logf("the owner logged in in %v", time.Since(start))
	})

	t.Run("a forged or another account's device cookie gives no exemption", func(t *testing.T) {
		n, rest, _ := strings.Cut(owner.Value, ".")
		acct, sig, _ := strings.Cut(rest, ".")
		mateAcct := strings.Split(mate.Value, ".")[1]
		flip := "0"
		if strings.HasSuffix(sig, "0") {
			flip = "1"
		}
		for name, value := range map[string]string{
			"another account's cookie":             mate.Value,
			"a cookie with its signature changed":  n + "." + acct + "." + sig[:len(sig)-1] + flip,
			"the owner's signature on mate's name": n + "." + mateAcct + "." + sig,
			"garbage":                              "x.y.z",
			"a session token":                      strings.Repeat("a", 43),
		} {
			c := &http.Cookie{Name: "wikid_device", Value: value}
			res := w.login(t, "Admin", apw, from(shared), device(c))
			if res.StatusCode != http.StatusTooManyRequests {
				t.Errorf("Admin with %s: %d, want 429", name, res.StatusCode)
			}
		}
		// Another account's cookie does not make Office mate's failures
		// Admin's business, nor the reverse.
		res := w.login(t, "Office mate", opw, from(shared), device(owner))
		mustStatus(t, res, http.StatusTooManyRequests)
		mustStatus(t, w.login(t, "Office mate", opw, from(shared), device(mate)), http.StatusSeeOther)
	})

	t.Run("device-cookie failures are throttled in their own bucket", func(t *testing.T) {
		const addr = "198.51.100.99"
		res := w.login(t, "Office mate", opw, from(addr))
		mustStatus(t, res, http.StatusSeeOther)
		stolen := deviceOf(t, res)
		for i := range 5 {
			res := w.login(t, "Office mate", "wrong-password", from(addr), device(stolen))
			if res.StatusCode != http.StatusUnauthorized {
				t.Fatalf("device failure %d: %d, want 401", i+1, res.StatusCode)
			}
		}
		var waits []time.Duration
		for range 4 {
			res := w.login(t, "Office mate", "wrong-password", from(addr), device(stolen))
			mustStatus(t, res, http.StatusTooManyRequests)
			mustContain(t, res, "Too many failed logins from this browser")
			ra := retryAfter(t, res)
			waits = append(waits, ra)
			w.clock.Add(ra)
			mustStatus(t, w.login(t, "Office mate", "wrong-password", from(addr), device(stolen)), http.StatusUnauthorized)
		}
		if want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}; !slices.Equal(waits, want) {
			t.Errorf("Retry-After %v, want %v", waits, want)
		}
		// The right password from that browser waits too: the bucket is
		// the browser's.
		mustStatus(t, w.login(t, "Office mate", opw, from(addr), device(stolen)), http.StatusTooManyRequests)
		// Nine failures with the cookie did not count against the address:
		// without it, at that address, both accounts log in at once.
		mustStatus(t, w.login(t, "Office mate", opw, from(addr)), http.StatusSeeOther)
		mustStatus(t, w.login(t, "Admin", apw, from(addr)), http.StatusSeeOther)
	})

	t.Run("logout keeps the device cookie; anonymous GETs never set a cookie", func(t *testing.T) {
		c := w.Login(t, "Office mate", opw)
		res := c.PostForm("/wiki/Special:UserLogout", url.Values{"csrf": {c.CSRF("/wiki/Special:UserLogin")}})
		mustStatus(t, res, http.StatusSeeOther)
		for _, ck := range res.Cookies() {
			if ck.Name != "wikid_session" {
				t.Errorf("logout sets cookie %s", ck.Name)
			}
		}
		if c.SessionCookie() != "" {
			t.Fatal("still a session after logout")
		}
		hasDevice := false
		u, _ := url.Parse(w.URL)
		for _, ck := range c.Jar.Cookies(u) {
			hasDevice = hasDevice || ck.Name == "wikid_device"
		}
		if !hasDevice {
			t.Fatal("the device cookie is gone after logout")
		}
		paths := []string{"/", "/wiki/Main_Page", "/wiki/Main_Page?action=history", "/wiki/Main_Page?action=edit", "/wiki/Main_Page?action=raw",
			"/wiki/No_such_page", "/wiki/Special:UserLogin", "/wiki/Special:CreateAccount", "/wiki/Special:RecentChanges",
			"/wiki/Special:Search?q=main", "/w/rest.php/v1/page/Main_Page", "/healthz", "/nothing/here"}
		for _, p := range paths {
			for _, method := range []string{http.MethodGet, http.MethodHead} {
				for i := range 2 { // a miss, then a hit of the edge cache
					res := c.Do(c.NewRequest(method, p, nil))
					if v := res.Header.Values("Set-Cookie"); len(v) > 0 {
						t.Errorf("anonymous %s %s (%d, try %d) sets %q", method, p, res.StatusCode, i+1, v)
					}
				}
			}
		}
	})
}
