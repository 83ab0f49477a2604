package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/wiki"
)

func TestCookies(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Carol", wiki.GroupUser)

	t.Run("anonymous responses never set a cookie", func(t *testing.T) {
		anon := w.Client(t)
		for _, path := range []string{
			"/", "/wiki/Main_Page", "/wiki/Main_Page?action=history", "/wiki/Main_Page?action=raw",
			"/wiki/No_such_page", "/wiki/Main_Page?action=edit", "/wiki/Special:UserLogin",
			"/wiki/Special:CreateAccount", "/wiki/Special:RecentChanges", "/wiki/Special:Search?q=wiki",
			"/wiki/A%7Cb", "/w/rest.php/v1/page/Main_Page", "/healthz",
		} {
			res := anon.Get(path)
			if sc := res.Header.Values("Set-Cookie"); len(sc) > 0 {
				t.Errorf("GET %s (%d) set cookies %q", path, res.StatusCode, sc)
			}
		}
	})

	t.Run("a stale session cookie is not refreshed on cacheable pages", func(t *testing.T) {
		c := w.Client(t)
		c.SetSessionCookie(strings.Repeat("x", 43))
		res := c.Get("/wiki/Main_Page")
		mustStatus(t, res, http.StatusOK)
		mustNotContain(t, res, "Log out")
		if sc := res.Header.Values("Set-Cookie"); len(sc) > 0 {
			t.Errorf("a cacheable page set cookies %q", sc)
		}
	})

	var c *apptest.Client
	var oldCookie string

	t.Run("login sets one HttpOnly SameSite=Lax session cookie and a device cookie", func(t *testing.T) {
		c = w.Client(t)
		res := c.PostForm("/wiki/Special:UserLogin", url.Values{
			"csrf": {c.CSRF("/wiki/Special:UserLogin")}, "username": {"carol"}, "password": {pw}, "returnto": {"Help:Syntax"}})
		mustRedirect(t, res, http.StatusSeeOther, "/wiki/Help:Syntax")
		cookies := res.Cookies()
		if len(cookies) != 2 || cookies[0].Name != "wikid_session" || cookies[1].Name != "wikid_device" {
			t.Fatalf("login set %d cookies: %v", len(cookies), res.Header.Values("Set-Cookie"))
		}
		for _, ck := range cookies {
			if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" {
				t.Errorf("cookie %s: %+v", ck.Name, ck)
			}
		}
		ck := cookies[0]
		if res.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("login response Cache-Control %q", res.Header.Get("Cache-Control"))
		}
		oldCookie = ck.Value
		res = c.Get("/wiki/Main_Page")
		mustContain(t, res, `class="me"><bdi>Carol</bdi></a>`)
		if cc := res.Header.Get("Cache-Control"); strings.Contains(cc, "public") {
			t.Errorf("a logged-in view is publicly cacheable: %q", cc)
		}
	})

	t.Run("logging in again replaces the session", func(t *testing.T) {
		res := c.PostForm("/wiki/Special:UserLogin", url.Values{
			"csrf": {c.CSRF("/wiki/Special:UserLogin")}, "username": {"Carol"}, "password": {pw}})
		mustStatus(t, res, http.StatusSeeOther)
		if c.SessionCookie() == oldCookie {
			t.Fatal("a second login kept the session ID (fixation)")
		}
		stale := w.Client(t)
		stale.SetSessionCookie(oldCookie)
		mustNotContain(t, stale.Get("/wiki/Main_Page"), "Log out")
		oldCookie = c.SessionCookie()
	})

	t.Run("logout deletes the session on the server", func(t *testing.T) {
		csrf := c.CSRF("/wiki/Special:UserLogin")
		res := c.PostForm("/wiki/Special:UserLogout", url.Values{"csrf": {csrf}})
		mustRedirect(t, res, http.StatusSeeOther, "/wiki/Main_Page")
		if sc := res.Header.Values("Set-Cookie"); len(sc) != 1 || !strings.Contains(sc[0], "wikid_session=;") || !strings.Contains(sc[0], "Max-Age=0") {
			t.Errorf("logout Set-Cookie %q, want the session cookie cleared and the device cookie kept", sc)
		}
		// Replaying the old cookie (as a thief who copied it would) no longer works.
		thief := w.Client(t)
		thief.SetSessionCookie(oldCookie)
		mustNotContain(t, thief.Get("/wiki/Main_Page"), "Log out")
		res = thief.Get("/wiki/Main_Page?action=edit")
		mustStatus(t, res, http.StatusFound)
		res = thief.PostForm("/wiki/Main_Page?action=submit", url.Values{"csrf": {csrf}, "text": {"stolen"}})
		if res.StatusCode != http.StatusForbidden && res.StatusCode != http.StatusUnauthorized {
			t.Errorf("an edit with the logged-out cookie: status %d", res.StatusCode)
		}
	})

	t.Run("two session cookies are both distrusted", func(t *testing.T) {
		c := w.Login(t, "Carol", pw)
		r := c.NewRequest(http.MethodGet, "/wiki/Main_Page", nil)
		r.Header.Add("Cookie", "wikid_session="+strings.Repeat("y", 43))
		mustNotContain(t, c.Do(r), "Log out")
	})
}
