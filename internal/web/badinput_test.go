package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/wiki"
)

// Bad input of every kind gets a clear 4xx and changes nothing; no input
// yields a 5xx (apptest fails the test on any).
func TestBadInput(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Editor", wiki.GroupUser)
	anon := w.Client(t)
	_, bossPW := w.CreateUser(t, "Boss", wiki.GroupAdmin)
	ed := w.Login(t, "Editor", pw)
	boss := w.Login(t, "Boss", bossPW)
	ed.Edit("Stable", "Original text.\n")
	csrf := ed.CSRF("/wiki/Stable?action=edit")

	// unchanged asserts that Stable still has exactly one revision and its text.
	unchanged := func(t *testing.T) {
		t.Helper()
		res := anon.Get("/wiki/Stable?action=raw")
		if res.Body != "Original text.\n" {
			t.Errorf("Stable's text changed to %q", res.Body)
		}
		if ids := revisionIDs(t, anon, "Stable"); len(ids) != 1 {
			t.Errorf("Stable has revisions %v, want 1", ids)
		}
	}

	t.Run("invalid titles are refused with 400 naming the problem", func(t *testing.T) {
		cases := []struct {
			name, path, msg string
		}{
			{"a less-than sign", "/wiki/A%3Cb", "may not contain"},
			{"a greater-than sign", "/wiki/A%3Eb", "may not contain"},
			{"an opening bracket", "/wiki/A%5Bb", "may not contain"},
			{"a closing bracket", "/wiki/A%5Db", "may not contain"},
			{"a pipe", "/wiki/A%7Cb", "may not contain"},
			{"an opening brace", "/wiki/A%7Bb", "may not contain"},
			{"a closing brace", "/wiki/A%7Db", "may not contain"},
			{"a hash", "/wiki/A%23b", "may not contain"},
			{"a control character", "/wiki/A%01b", "control character"},
			{"a delete character", "/wiki/A%7Fb", "control character"},
			{"a percent-encoded sequence", "/wiki/A%2541", "percent-encoded"},
			{"more than 255 bytes", "/wiki/" + strings.Repeat("x", 256), "the limit is 255 bytes"},
			{"more than 255 bytes of Korean", "/wiki/" + strings.Repeat("%ED%95%9C", 86), "the limit is 255 bytes"},
			{"nothing", "/wiki/", "empty"},
			{"only underscores", "/wiki/___", "empty"},
			{"a relative path", "/wiki/..%2Fx", "relative path"},
			{"a namespace without a name", "/wiki/Help:", "no page in it"},
			{"invalid UTF-8", "/wiki/%FF%FE", "UTF-8"},
			{"a lone continuation byte", "/wiki/Ab%80", "UTF-8"},
		}
		for _, c := range cases {
			for _, suffix := range []string{"", "?action=edit", "?action=history", "?action=raw"} {
				res := anon.Get(c.path + suffix)
				if res.StatusCode != http.StatusBadRequest {
					t.Errorf("title with %s (GET %s%s): status %d, want 400", c.name, c.path, suffix, res.StatusCode)
					continue
				}
				if !strings.Contains(res.Body, c.msg) {
					t.Errorf("title with %s: the page does not say %q:\n%s", c.name, c.msg, res.Body)
				}
			}
			res := ed.PostForm(c.path+"?action=submit", url.Values{"csrf": {csrf}, "text": {"x"}})
			if res.StatusCode != http.StatusBadRequest {
				t.Errorf("title with %s (POST submit): status %d, want 400", c.name, res.StatusCode)
			}
		}
	})

	t.Run("a move to an invalid title is refused with the form again", func(t *testing.T) {
		csrf := ed.CSRF("/wiki/Stable?action=move")
		res := ed.PostForm("/wiki/Stable?action=move", url.Values{"csrf": {csrf}, "newtitle": {"Bad|title"}})
		mustStatus(t, res, http.StatusBadRequest)
		mustContain(t, res, "may not contain")
		unchanged(t)
	})

	t.Run("invalid UTF-8 in form text is refused", func(t *testing.T) {
		for _, field := range []string{"text", "summary"} {
			v := url.Values{"csrf": {csrf}, "baserev": {"0"}, "text": {"fine"}, "summary": {"fine"}}
			v.Set(field, "bad \xff\xfe bytes")
			res := ed.PostForm("/wiki/Stable?action=submit", v)
			mustStatus(t, res, http.StatusBadRequest)
			mustContain(t, res, "UTF-8")
		}
		unchanged(t)
	})

	t.Run("invalid UTF-8 in a move, delete or undelete reason is refused", func(t *testing.T) {
		for _, action := range []string{"move", "delete", "undelete"} {
			bcsrf := boss.CSRF("/wiki/Special:UserLogin")
			res := boss.PostForm("/wiki/Stable?action="+action, url.Values{"csrf": {bcsrf}, "newtitle": {"Moved stable"}, "reason": {"bad \xff reason"}})
			mustStatus(t, res, http.StatusBadRequest)
			mustContain(t, res, "UTF-8")
		}
		unchanged(t)
		mustStatus(t, anon.Get("/wiki/Moved_stable"), http.StatusNotFound)
	})

	t.Run("invalid UTF-8 in login and registration names is refused", func(t *testing.T) {
		c := w.Client(t)
		acsrf := c.CSRF("/wiki/Special:UserLogin")
		res := c.PostForm("/wiki/Special:UserLogin", url.Values{"csrf": {acsrf}, "username": {"Edi\xfftor"}, "password": {pw}})
		mustStatus(t, res, http.StatusUnauthorized)
		res = c.PostForm("/wiki/Special:CreateAccount", url.Values{"csrf": {acsrf}, "username": {"Bad\xffname"}, "password": {"long-enough-pw"}, "retype": {"long-enough-pw"}})
		mustStatus(t, res, http.StatusBadRequest)
		mustContain(t, res, "UTF-8")
		if c.SessionCookie() != "" {
			t.Error("a refused login or registration set a session cookie")
		}
	})

	t.Run("a body over the limit is refused with 413", func(t *testing.T) {
		cfg := config.Default()
		big := strings.Repeat("a", int(cfg.BodyLimit())) // over the request limit with the other fields
		form := "csrf=" + url.QueryEscape(csrf) + "&text=" + big
		for _, chunked := range []bool{false, true} {
			var body io.Reader = strings.NewReader(form)
			if chunked {
				body = io.MultiReader(body) // hides the length: sent chunked
			}
			r := ed.NewRequest(http.MethodPost, "/wiki/Stable?action=submit", body)
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			res := ed.Do(r)
			if chunked != (r.ContentLength == 0) {
				t.Fatalf("chunked=%v but ContentLength %d", chunked, r.ContentLength)
			}
			mustStatus(t, res, http.StatusRequestEntityTooLarge)
			mustContain(t, res, "larger than the limit")
		}
		unchanged(t)
	})

	t.Run("unknown actions are refused with 400", func(t *testing.T) {
		res := anon.Get("/wiki/Stable?action=foo")
		mustStatus(t, res, http.StatusBadRequest)
		mustContain(t, res, "unknown action")
		res = ed.PostForm("/wiki/Stable?action=foo", url.Values{"csrf": {csrf}, "text": {"x"}})
		mustStatus(t, res, http.StatusBadRequest)
		mustContain(t, res, "unknown action")
		unchanged(t)
	})

	t.Run("wrong methods are refused with 405 and Allow", func(t *testing.T) {
		cases := []struct {
			method, path string
			form         url.Values
		}{
			{http.MethodPut, "/wiki/Stable", nil},
			{http.MethodDelete, "/wiki/Stable", nil},
			{"PATCH", "/wiki/Stable", nil},
			{"PATCH", "/", nil},
			{"PATCH", "/w/rest.php/v1/page/Stable", nil},
			{"PROPFIND", "/wiki/Stable", nil},
			{http.MethodPost, "/wiki/Special:RecentChanges", url.Values{"csrf": {csrf}}},
			{http.MethodPost, "/wiki/Special:AllPages", nil},
			{http.MethodPost, "/healthz", nil},
			{http.MethodDelete, "/w/rest.php/v1/page/Stable", nil},
			{http.MethodPost, "/w/rest.php/v1/search/page", nil},
			{http.MethodGet, "/wiki/Special:UserLogout", nil},
			{http.MethodPost, "/", nil},
			{http.MethodDelete, "/wiki/Special:AllPages", nil},
			{http.MethodOptions, "/wiki/Stable", nil},
			{http.MethodPut, "/w/index.php?title=Stable", nil},
		}
		for _, c := range cases {
			t.Run(c.method+" "+c.path, func(t *testing.T) {
				var body io.Reader
				if c.form != nil {
					body = strings.NewReader(c.form.Encode())
				}
				r := ed.NewRequest(c.method, c.path, body)
				if c.form != nil {
					r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				}
				res := ed.Do(r)
				mustStatus(t, res, http.StatusMethodNotAllowed)
				if res.Header.Get("Allow") == "" || strings.Contains(res.Header.Get("Allow"), c.method) {
					t.Errorf("Allow %q", res.Header.Get("Allow"))
				}
			})
		}
		unchanged(t)
	})

	t.Run("state changes without the right CSRF token are refused with 403", func(t *testing.T) {
		other := w.Login(t, "Editor", pw) // another session of the same user
		otherCSRF := other.CSRF("/wiki/Stable?action=edit")
		anonCSRF := anon.CSRF("/wiki/Special:UserLogin")
		cases := []struct{ name, token string }{
			{"no token", ""},
			{"a forged token", "forged-token-value"},
			{"a forged anonymous token", "abc.0123456789abcdef0123456789abcdef"},
			{"another session's token", otherCSRF},
			{"an anonymous form's token", anonCSRF},
		}
		for _, c := range cases {
			for _, action := range []string{"submit", "delete", "move", "revert", "purge"} {
				v := url.Values{"text": {"Hijacked.\n"}, "newtitle": {"Hijacked"}, "oldid": {"1"}}
				if c.token != "" {
					v.Set("csrf", c.token)
				}
				res := ed.PostForm("/wiki/Stable?action="+action, v)
				if res.StatusCode != http.StatusForbidden {
					t.Errorf("%s with %s: status %d, want 403", action, c.name, res.StatusCode)
				} else if !strings.Contains(res.Body, "security token") {
					t.Errorf("%s with %s: the page does not explain the token", action, c.name)
				}
			}
			res := ed.PostForm("/wiki/Special:UserLogout", url.Values{"csrf": {c.token}})
			if res.StatusCode != http.StatusForbidden {
				t.Errorf("logout with %s: status %d, want 403", c.name, res.StatusCode)
			}
		}
		unchanged(t)
		mustStatus(t, anon.Get("/wiki/Hijacked"), http.StatusNotFound)
		if res := ed.Get("/wiki/Stable"); !strings.Contains(res.Body, "Log out") {
			t.Error("the refused logouts logged the editor out")
		}
	})

	t.Run("a cross-site Origin is refused even with the right token", func(t *testing.T) {
		v := url.Values{"csrf": {csrf}, "text": {"Hijacked.\n"}}
		r := ed.NewRequest(http.MethodPost, "/wiki/Stable?action=submit", strings.NewReader(v.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Origin", "https://evil.example")
		mustStatus(t, ed.Do(r), http.StatusForbidden)
		unchanged(t)
	})

	t.Run("an expired session is treated as anonymous", func(t *testing.T) {
		u, err := w.App.Store.FindUserByName(context.Background(), "Editor")
		if err != nil {
			t.Fatal(err)
		}
		token := auth.NewSecret(32)
		sess := wiki.Session{ID: auth.HashToken(token), UserID: u.ID, CSRF: "expired-csrf-secret",
			Created: time.Now().Add(-48 * time.Hour), Expires: time.Now().Add(-time.Hour)}
		if err := w.App.Store.CreateSession(context.Background(), sess); err != nil {
			t.Fatal(err)
		}
		c := w.Client(t)
		c.SetSessionCookie(token)
		res := c.Get("/wiki/Stable?action=edit")
		mustStatus(t, res, http.StatusFound)
		if !strings.HasPrefix(res.Header.Get("Location"), "/wiki/Special:UserLogin") {
			t.Errorf("edit form with an expired session: Location %q", res.Header.Get("Location"))
		}
		res = c.PostForm("/wiki/Stable?action=submit", url.Values{"csrf": {sess.CSRF}, "text": {"Hijacked.\n"}})
		if res.StatusCode != http.StatusForbidden && res.StatusCode != http.StatusUnauthorized {
			t.Errorf("save with an expired session: status %d, want 401 or 403", res.StatusCode)
		}
		// Even with a valid anonymous token, an anonymous user may not edit.
		res = c.PostForm("/wiki/Stable?action=submit", url.Values{"csrf": {c.CSRF("/wiki/Special:UserLogin")}, "text": {"Hijacked.\n"}})
		mustStatus(t, res, http.StatusUnauthorized)
		mustNotContain(t, c.Get("/wiki/Stable"), "Log out")
		unchanged(t)
	})

	t.Run("a wrong password is refused with 401 and sets no cookie", func(t *testing.T) {
		c := w.Client(t)
		res := c.PostForm("/wiki/Special:UserLogin", url.Values{"csrf": {c.CSRF("/wiki/Special:UserLogin")},
			"username": {"Editor"}, "password": {"not-the-password"}})
		mustStatus(t, res, http.StatusUnauthorized)
		mustContain(t, res, "wrong")
		if len(res.Cookies()) != 0 {
			t.Errorf("failed login set cookies %v", res.Cookies())
		}
	})

	t.Run("malformed revision numbers are refused with 400", func(t *testing.T) {
		for _, q := range []string{"oldid=abc", "oldid=-1", "diff=x", "diff=1&oldid=zz", "action=raw&oldid=1e3", "action=edit&oldid=x"} {
			res := ed.Get("/wiki/Stable?" + q)
			if res.StatusCode != http.StatusBadRequest {
				t.Errorf("?%s: status %d, want 400", q, res.StatusCode)
			}
		}
	})

	t.Run("revisions of other pages or none at all are not found", func(t *testing.T) {
		for _, q := range []string{"oldid=999999", "diff=999999", "action=raw&oldid=999999"} {
			res := anon.Get("/wiki/Stable?" + q)
			if res.StatusCode != http.StatusNotFound {
				t.Errorf("?%s: status %d, want 404", q, res.StatusCode)
			}
		}
	})

	t.Run("odd queries to the special pages are handled", func(t *testing.T) {
		for _, path := range []string{
			"/wiki/Special:Search?q=" + strings.Repeat("x", 301),
			"/wiki/Special:Search?q=%FF",
			"/wiki/Special:AllPages?from=%3C",
			"/wiki/Special:AllPages?prefix=%7B",
			"/wiki/Special:WhatLinksHere",
			"/wiki/Special:Contributions",
			"/wiki/Special:Contributions/a%2Fb",
		} {
			res := anon.Get(path)
			if res.StatusCode != http.StatusBadRequest {
				t.Errorf("GET %s: status %d, want 400", path, res.StatusCode)
			}
		}
		for _, path := range []string{
			"/wiki/Special:NoSuchPage",
			"/nowhere",
			"/static/nothing.css",
		} {
			mustStatus(t, anon.Get(path), http.StatusNotFound)
		}
		for _, tc := range []struct {
			path   string
			status int
		}{
			{"/wiki/Special:Search?q=%22*%28%29+OR+NEAR%28", http.StatusOK},
			{"/wiki/Special:Search?q=%22%2A%28%29+OR+NEAR%28", http.StatusMovedPermanently}, // '*' is written raw
			{"/wiki/Special:Search?offset=-5&q=-", http.StatusBadRequest},
			{"/wiki/Special:RecentChanges?limit=-1&offset=abc", http.StatusBadRequest},
			{"/wiki/Special:RecentChanges?limit=-1", http.StatusMovedPermanently}, // a count below 1 means the default
			{"/wiki/Special:AllPages?limit=99999999999999999999", http.StatusBadRequest},
			{"/wiki/Special:AllPages?limit=99999", http.StatusMovedPermanently}, // clamped to 1000
			{"/wiki/Special:AllPages?limit=1000", http.StatusOK},
			{"/wiki/Stable?action=history&limit=0&offset=-1", http.StatusBadRequest},
		} {
			mustStatus(t, anon.Get(tc.path), tc.status)
		}
	})

	t.Run("the API refuses bad input with JSON errors", func(t *testing.T) {
		token := auth.NewSecret(16)
		u, _ := w.App.Store.FindUserByName(context.Background(), "Editor")
		if err := w.App.Store.CreateToken(context.Background(), wiki.Token{ID: auth.HashToken(token), UserID: u.ID, Name: "t", Created: time.Now()}); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name, method, path, token, body string
			status                          int
		}{
			{"a bad bearer token", http.MethodGet, "/w/rest.php/v1/page/Stable", "not-a-token", "", 401},
			{"a bad bearer token on a write", http.MethodPut, "/w/rest.php/v1/page/Stable", "not-a-token", `{"source":"x"}`, 401},
			{"bad JSON", http.MethodPut, "/w/rest.php/v1/page/Stable", token, `{"source":`, 400},
			{"JSON without source", http.MethodPut, "/w/rest.php/v1/page/Stable", token, `{"comment":"x"}`, 400},
			{"invalid UTF-8 in JSON", http.MethodPut, "/w/rest.php/v1/page/Stable", token, "{\"source\":\"\xff\"}", 400},
			{"an invalid title", http.MethodGet, "/w/rest.php/v1/page/A%7Cb", "", "", 400},
			{"invalid UTF-8 in the title", http.MethodGet, "/w/rest.php/v1/page/%FF", "", "", 400},
			{"a missing page", http.MethodGet, "/w/rest.php/v1/page/Nope", "", "", 404},
			{"a create with an invalid title", http.MethodPost, "/w/rest.php/v1/page", token, `{"title":"a<b","source":"x"}`, 400},
			{"a create of an existing page", http.MethodPost, "/w/rest.php/v1/page", token, `{"title":"Stable","source":"x"}`, 409},
			{"a PUT without latest on an existing page", http.MethodPut, "/w/rest.php/v1/page/Stable", token, `{"source":"Changed.\n"}`, 409},
			{"a PUT with a revision of nothing", http.MethodPut, "/w/rest.php/v1/page/Stable", token, `{"source":"Changed.\n","latest":{"id":999999}}`, 400},
			{"a bad revision number", http.MethodGet, "/w/rest.php/v1/revision/abc", "", "", 400},
			{"a missing revision", http.MethodGet, "/w/rest.php/v1/revision/999999", "", "", 404},
			{"a compare of bad revisions", http.MethodGet, "/w/rest.php/v1/revision/0/compare/-1", "", "", 400},
			{"a search without a query", http.MethodGet, "/w/rest.php/v1/search/page", "", "", 400},
			{"an unknown route", http.MethodGet, "/w/rest.php/v1/nothing", "", "", 404},
			{"a history with a bad cursor", http.MethodGet, "/w/rest.php/v1/page/Stable/history?older_than=x", "", "", 400},
			{"an anonymous write", http.MethodPut, "/w/rest.php/v1/page/Stable", "", `{"source":"x"}`, 401},
		}
		for _, c := range cases {
			res := anon.JSON(c.method, c.path, c.token, c.body)
			if res.StatusCode != c.status {
				t.Errorf("%s: status %d, want %d\n%s", c.name, res.StatusCode, c.status, res.Body)
				continue
			}
			var e struct {
				HTTPCode            int               `json:"httpCode"`
				ErrorKey            string            `json:"errorKey"`
				MessageTranslations map[string]string `json:"messageTranslations"`
			}
			if err := json.Unmarshal([]byte(res.Body), &e); err != nil {
				t.Errorf("%s: body is not JSON: %v\n%s", c.name, err, res.Body)
				continue
			}
			if e.HTTPCode != c.status || e.ErrorKey == "" || e.MessageTranslations["en"] == "" {
				t.Errorf("%s: error body %s", c.name, res.Body)
			}
			if ct := res.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s: Content-Type %q", c.name, ct)
			}
		}
		// A body over the limit, sent to the API.
		cfg := config.Default()
		res := anon.JSON(http.MethodPut, "/w/rest.php/v1/page/Stable", token, `{"source":"`+strings.Repeat("a", int(cfg.BodyLimit()))+`"}`)
		mustStatus(t, res, http.StatusRequestEntityTooLarge)
		unchanged(t)
	})
}
