package app_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/wiki"
)

type fetched struct {
	status int
	header http.Header
	body   string
}

// fetch sends one request on a new connection, so that the front server
// (not a connection already handed to net/http) sees it.
func fetch(t *testing.T, method, u string, header ...string) fetched {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range header {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	tr := &http.Transport{DisableKeepAlives: true, DisableCompression: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return fetched{res.StatusCode, res.Header, string(b)}
}

// TestLoggedInViewsThroughTheFront: a logged-in view is spliced from the
// cached page by the front server, identical to what net/http would send,
// and a logout takes effect at once.
func TestLoggedInViewsThroughTheFront(t *testing.T) {
	t.Parallel()
	a, base := apptest.Serve(t)
	hash, err := auth.HashPassword("front-pass-123")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Store.CreateUser(context.Background(), wiki.User{Name: "Fay", PasswordHash: hash, Group: wiki.GroupUser, Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	form := fetch(t, "GET", base+"/wiki/Special:UserLogin")
	csrf := regexp.MustCompile(`name="csrf" value="([^"]*)"`).FindStringSubmatch(form.body)[1]
	req, _ := http.NewRequest("POST", base+"/wiki/Special:UserLogin", strings.NewReader(url.Values{
		"csrf": {csrf}, "username": {"Fay"}, "password": {"front-pass-123"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var session string
	for _, c := range res.Cookies() {
		if c.Name == "wikid_session" {
			session = c.Value
		}
	}
	if session == "" {
		t.Fatal("no session cookie after login")
	}
	cookie := "Cookie: _ga=GA1.2.3; wikid_session=" + session
	page := base + "/wiki/Main_Page"

	// A job's purge that lands while the first view fills the cache leaves
	// nothing to splice (that view is then rendered privately, as it should
	// be): the views below start once the jobs of the set-up are done.
	apptest.SettleJobs(t, a)
	first := fetch(t, "GET", page, cookie)  // the session may have to be read first
	second := fetch(t, "GET", page, cookie) // from memory: the front
	for i, r := range []fetched{first, second} {
		if r.status != 200 || r.header.Get("X-Cache") != "SPLICE" || r.header.Get("Cache-Control") != "private, no-cache" {
			t.Fatalf("view %d: %d X-Cache %q Cache-Control %q", i+1, r.status, r.header.Get("X-Cache"), r.header.Get("Cache-Control"))
		}
		if !strings.Contains(r.body, `class="me"><bdi>Fay</bdi></a>`) || !strings.Contains(r.body, "Log out") {
			t.Fatalf("view %d lacks Fay's user bar", i+1)
		}
	}
	t.Run("the front's answer equals net/http's", func(t *testing.T) {
		if first.body != second.body {
			t.Error("bodies differ")
		}
		for _, k := range []string{"Content-Type", "Content-Length", "ETag", "Last-Modified", "Vary", "Content-Security-Policy", "X-Frame-Options", "Referrer-Policy"} {
			if first.header.Get(k) != second.header.Get(k) {
				t.Errorf("%s: net/http %q, front %q", k, first.header.Get(k), second.header.Get(k))
			}
		}
	})
	t.Run("a conditional logged-in view gets 304", func(t *testing.T) {
		r := fetch(t, "GET", page, cookie, "If-None-Match: "+second.header.Get("ETag"))
		if r.status != 304 || r.body != "" {
			t.Errorf("status %d, %d bytes", r.status, len(r.body))
		}
	})
	t.Run("the anonymous page never shows the user", func(t *testing.T) {
		r := fetch(t, "GET", page, "Cookie: _ga=GA1.2.3")
		if r.header.Get("X-Cache") != "HIT" || strings.Contains(r.body, "Fay") || strings.Contains(r.body, "Log out") {
			t.Errorf("anonymous: X-Cache %q, shows the user: %v", r.header.Get("X-Cache"), strings.Contains(r.body, "Fay"))
		}
	})
	t.Run("a forged session is anonymous", func(t *testing.T) {
		r := fetch(t, "GET", page, "Cookie: wikid_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
		if strings.Contains(r.body, "Log out") || r.header.Get("Cache-Control") == "private, no-cache" {
			t.Error("a forged session cookie got a logged-in page")
		}
	})
	t.Run("after logout the old cookie is anonymous at once", func(t *testing.T) {
		csrf := regexp.MustCompile(`name="csrf" value="([^"]*)"`).FindStringSubmatch(second.body)[1]
		req, _ := http.NewRequest("POST", base+"/wiki/Special:UserLogout", strings.NewReader(url.Values{"csrf": {csrf}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Cookie", "wikid_session="+session)
		res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("logout: %d", res.StatusCode)
		}
		r := fetch(t, "GET", page, cookie)
		if strings.Contains(r.body, "Log out") || strings.Contains(r.body, `class="me"`) {
			t.Error("a logged-out session still gets the user's page")
		}
	})
}
