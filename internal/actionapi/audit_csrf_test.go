package actionapi_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/wiki"
)

func TestCSRF(t *testing.T) {
	wd := newWorld(t, func(c *config.Config) { c.EditGroup = wiki.GroupAnonymous })
	alice := wd.w.Client(t)
	apiLogin(t, wd, alice)
	aliceTok := csrf(t, alice)
	bob := wd.w.Client(t)
	anonTok := csrf(t, bob)
	edit := func(tok string) url.Values {
		return url.Values{"action": {"edit"}, "title": {"Gamma"}, "text": {"csrf " + tok}, "token": {tok}, "format": {"json"}}
	}
	cases := []struct {
		name   string
		query  string
		form   url.Values
		header map[string]string
	}{
		{"no token", "", url.Values{"action": {"edit"}, "title": {"Gamma"}, "text": {"x"}, "format": {"json"}}, nil},
		{"token in the query string", "token=" + url.QueryEscape(aliceTok), url.Values{"action": {"edit"}, "title": {"Gamma"}, "text": {"x"}, "format": {"json"}}, nil},
		{"token in both", "token=" + url.QueryEscape(aliceTok), edit(aliceTok), nil},
		{"anonymous token after login", "", edit(anonTok), nil},
		{"token without its suffix", "", edit(strings.TrimSuffix(aliceTok, "+\\")), nil},
		{"cross-site, right token", "", edit(aliceTok), map[string]string{"Origin": "https://evil.example"}},
		{"cross-site fetch metadata", "", edit(aliceTok), map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"text/plain body", "", edit(aliceTok), map[string]string{"Content-Type": "text/plain"}},
		{"json body", "", edit(aliceTok), map[string]string{"Content-Type": "application/json"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := "/w/api.php"
			if tc.query != "" {
				path += "?" + tc.query
			}
			r := alice.NewRequest("POST", path, strings.NewReader(tc.form.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			res := alice.Do(r)
			if strings.Contains(res.Body, `"result":"Success"`) {
				t.Errorf("%s", res.Body)
			}
		})
	}
	// Another session's token.
	t.Run("another session's token", func(t *testing.T) {
		root := wd.w.Login(t, "Root", wd.adminPwd)
		out, res := api(t, root, "POST", edit(aliceTok))
		if errCode(out) != "badtoken" {
			t.Errorf("%s", res.Body)
		}
	})
	// An anonymous cross-site edit (the victim's address in the history).
	t.Run("anonymous cross-site", func(t *testing.T) {
		r := bob.NewRequest("POST", "/w/api.php", strings.NewReader(edit(anonTok).Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Origin", "https://evil.example")
		if res := bob.Do(r); strings.Contains(res.Body, `"result":"Success"`) {
			t.Errorf("%s", res.Body)
		}
	})
	// The right way works.
	out, res := api(t, alice, "POST", edit(aliceTok))
	if dig(out, "edit", "result") != "Success" {
		t.Errorf("%s", res.Body)
	}
}

// A login through the API starts a new session: a session cookie the
// client had before (set by an attacker) is not kept, and a login token
// in the query string is refused as every token is.
func TestLoginSessionAndToken(t *testing.T) {
	wd := newWorld(t)
	attacker := wd.w.Client(t)
	apiLogin(t, wd, attacker)
	fixed := attacker.SessionCookie()
	victim := wd.w.Client(t)
	victim.SetSessionCookie(fixed)
	// The victim's client carries the attacker's session: it is Alice.
	// After logging in as Root, the session must be a new one, and the
	// attacker's cookie must not be Root.
	out, _ := api(t, victim, "GET", url.Values{"action": {"query"}, "meta": {"tokens"}, "type": {"login"}})
	tok := dig(out, "query", "tokens", "logintoken").(string)
	out, _ = api(t, victim, "POST", url.Values{"action": {"clientlogin"}, "username": {"Root"}, "password": {wd.adminPwd}, "loginreturnurl": {"http://x/"}, "logintoken": {tok}})
	if dig(out, "clientlogin", "status") != "PASS" {
		t.Fatalf("%v", out)
	}
	if victim.SessionCookie() == fixed {
		t.Errorf("the session cookie was kept across the login")
	}
	out, _ = api(t, attacker, "GET", url.Values{"action": {"query"}, "meta": {"userinfo"}})
	if dig(out, "query", "userinfo", "name") == "Root" {
		t.Errorf("the fixed session became Root's: %v", out)
	}
	t.Run("lgtoken in the query string", func(t *testing.T) {
		c := wd.w.Client(t)
		out, _ := api(t, c, "GET", url.Values{"action": {"query"}, "meta": {"tokens"}, "type": {"login"}})
		tok := dig(out, "query", "tokens", "logintoken").(string)
		form := url.Values{"action": {"login"}, "lgname": {"Alice"}, "lgpassword": {wd.userToken}, "format": {"json"}}
		r := c.NewRequest("POST", "/w/api.php?lgtoken="+url.QueryEscape(tok), strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res := c.Do(r)
		if strings.Contains(res.Body, "Success") || len(res.Header.Values("Set-Cookie")) != 0 {
			t.Errorf("%s", res.Body)
		}
	})
	t.Run("logintoken in the query string", func(t *testing.T) {
		c := wd.w.Client(t)
		out, _ := api(t, c, "GET", url.Values{"action": {"query"}, "meta": {"tokens"}, "type": {"login"}})
		tok := dig(out, "query", "tokens", "logintoken").(string)
		form := url.Values{"action": {"clientlogin"}, "username": {"Alice"}, "password": {wd.userPass}, "loginreturnurl": {"http://x/"}, "format": {"json"}}
		r := c.NewRequest("POST", "/w/api.php?logintoken="+url.QueryEscape(tok), strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res := c.Do(r)
		if strings.Contains(res.Body, "PASS") || len(res.Header.Values("Set-Cookie")) != 0 {
			t.Errorf("%s", res.Body)
		}
	})
}

// Answers are JSON for everyone: no JSONP, no CORS grant, no HTML
// format, and never stored.
func TestNoJSONPNoCORSNoHTML(t *testing.T) {
	wd := newWorld(t)
	alice := wd.w.Client(t)
	apiLogin(t, wd, alice)
	for _, q := range []string{
		"action=query&meta=userinfo|tokens&callback=steal&format=json",
		"action=query&meta=userinfo|tokens&origin=https%3A%2F%2Fevil.example&format=json",
		"action=query&meta=userinfo|tokens&origin=*&format=json",
		"action=query&meta=userinfo|tokens&format=jsonfm",
		"action=query&meta=userinfo|tokens&format=xml",
		"action=query&meta=userinfo|tokens&format=php",
		"action=query&titles=%3Cscript%3Ealert(1)%3C/script%3E&format=jsonfm",
		"action=%3Cscript%3E&format=json",
	} {
		r := alice.NewRequest("GET", "/w/api.php?"+q, nil)
		r.Header.Set("Origin", "https://evil.example")
		res := alice.Do(r)
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type %q", q, ct)
		}
		if res.Header.Get("Access-Control-Allow-Origin") != "" || res.Header.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("%s: CORS %v", q, res.Header)
		}
		if strings.HasPrefix(res.Body, "steal") || strings.Contains(res.Body, "<script") {
			t.Errorf("%s: %s", q, res.Body)
		}
		if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("%s: Cache-Control %q", q, cc)
		}
	}
	// The same URL with and without a session: each its own answer.
	anon := wd.w.Client(t)
	for range 2 {
		_, res := api(t, alice, "GET", url.Values{"action": {"query"}, "meta": {"userinfo|tokens"}})
		if !strings.Contains(res.Body, `"Alice"`) {
			t.Errorf("alice: %s", res.Body)
		}
		_, res = api(t, anon, "GET", url.Values{"action": {"query"}, "meta": {"userinfo|tokens"}})
		if strings.Contains(res.Body, `"Alice"`) || res.Header.Get("Set-Cookie") != "" {
			t.Errorf("anonymous: %s", res.Body)
		}
	}
}

// An anonymous token is bound to no browser: only the request's origin
// tells a cross-site post. "Origin: null" is what a sandboxed frame, a
// data: URL or a cross-site redirect sends (and browsers without fetch
// metadata send nothing else): for a login or an anonymous change it is
// another site. A session's token is bound to its session: there the
// token alone decides.
func TestOpaqueOriginWithAnonymousToken(t *testing.T) {
	wd := newWorld(t, func(c *config.Config) { c.EditGroup = wiki.GroupAnonymous })
	c := wd.w.Client(t)
	tok := csrf(t, c)
	send := func(form url.Values) string {
		r := c.NewRequest("POST", "/w/api.php", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Origin", "null")
		return c.Do(r).Body
	}
	if body := send(url.Values{"action": {"login"}, "lgname": {"Alice"}, "lgpassword": {wd.userToken}, "lgtoken": {tok}, "format": {"json"}}); strings.Contains(body, "Success") {
		t.Errorf("login: %s", body)
	}
	if body := send(url.Values{"action": {"clientlogin"}, "username": {"Alice"}, "password": {wd.userPass}, "loginreturnurl": {"http://x/"}, "logintoken": {tok}, "format": {"json"}}); strings.Contains(body, "PASS") {
		t.Errorf("clientlogin: %s", body)
	}
	if body := send(url.Values{"action": {"edit"}, "title": {"Gamma"}, "text": {"x"}, "token": {tok}, "format": {"json"}}); strings.Contains(body, "Success") {
		t.Errorf("anonymous edit: %s", body)
	}
	// Logged in: the session's token is enough.
	apiLogin(t, wd, c)
	if body := send(url.Values{"action": {"edit"}, "title": {"Gamma"}, "text": {"x"}, "token": {csrf(t, c)}, "format": {"json"}}); !strings.Contains(body, "Success") {
		t.Errorf("logged-in edit: %s", body)
	}
}
