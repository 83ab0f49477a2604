package web_test

// Sessions and auth: CSRF on every state-changing request,
// session rotation at login, logout on the server, constant time comparison
// of secrets and the security headers. Login throttling: throttle_test.go.

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/wiki"
)

// TestCSRFOnEveryPost: every POST handler refuses a missing, wrong, stale,
// another user's or cross-site token, even for an administrator who may do
// everything, and changes nothing.
func TestCSRFOnEveryPost(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, apw := w.CreateUser(t, "Csrfadmin", wiki.GroupAdmin)
	_, upw := w.CreateUser(t, "Csrfuser", wiki.GroupUser)
	admin := w.Login(t, "Csrfadmin", apw)
	other := w.Login(t, "Csrfuser", upw)
	admin.Edit("Csrf target", "first text\n")
	admin.Edit("Csrf target", "second text\n")
	good := admin.CSRF("/wiki/Special:UserLogin")
	otherTok := other.CSRF("/wiki/Special:UserLogin")
	anonTok := w.Client(t).CSRF("/wiki/Special:UserLogin")
	sess, err := w.App.Store.FindSession(context.Background(), auth.HashToken(admin.SessionCookie()))
	if err != nil {
		t.Fatal(err)
	}
	if good != sess.CSRF {
		t.Fatalf("the form token is not the session's")
	}
	revs := revisionIDs(t, admin, "Csrf target")

	posts := []struct {
		path string
		form url.Values
	}{
		{"/wiki/Csrf_target?action=submit", url.Values{"text": {"forged edit"}, "baserev": {revs[0]}}},
		{"/wiki/Csrf_target?action=edit", url.Values{"text": {"forged edit"}, "baserev": {revs[0]}}},
		{"/wiki/Csrf_target?action=submit", url.Values{"text": {"forged preview"}, "preview": {"1"}}},
		{"/wiki/Csrf_target?action=revert", url.Values{"oldid": {revs[len(revs)-1]}}},
		{"/wiki/Csrf_target?action=move", url.Values{"newtitle": {"Moved by forgery"}}},
		{"/wiki/Csrf_target?action=delete", url.Values{"reason": {"forged"}}},
		{"/wiki/Csrf_target?action=undelete", url.Values{"reason": {"forged"}}},
		{"/wiki/Csrf_target?action=purge", url.Values{}},
		{"/wiki/Special:UserLogout", url.Values{}},
		{"/wiki/Special:UserLogin", url.Values{"username": {"Csrfuser"}, "password": {upw}}},
		{"/wiki/Special:CreateAccount", url.Values{"username": {"Forged account"}, "password": {"long-password-1"}, "retype": {"long-password-1"}}},
	}
	type attack struct {
		name   string
		token  string
		header []string
	}
	attacks := []attack{
		{"no token", "", nil},
		{"a wrong token", wrongFirst(good), nil},
		{"another user's token", otherTok, nil},
		{"an anonymous token on a session", anonTok, nil},
		{"a stale anonymous-style token", "1." + strings.Repeat("0", 32), nil},
		{"the right token from another site (Origin)", good, []string{"Origin", "https://evil.example"}},
		{"the right token from another site (Sec-Fetch-Site)", good, []string{"Sec-Fetch-Site", "cross-site"}},
	}
	checked := 0
	for _, p := range posts {
		for _, a := range attacks {
			form := url.Values{}
			for k, v := range p.form {
				form[k] = v
			}
			if a.token != "" {
				form.Set("csrf", a.token)
			}
			r := admin.NewRequest(http.MethodPost, p.path, strings.NewReader(form.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for i := 0; i+1 < len(a.header); i += 2 {
				r.Header.Set(a.header[i], a.header[i+1])
			}
			res := admin.Do(r)
			checked++
			if res.StatusCode != http.StatusForbidden {
				t.Errorf("POST %s with %s: %d, want 403", p.path, a.name, res.StatusCode)
			}
			if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("POST %s with %s: Cache-Control %q", p.path, a.name, cc)
			}
			if len(res.Header.Values("Set-Cookie")) > 0 {
				t.Errorf("POST %s with %s set a cookie", p.path, a.name)
			}
		}
	}
	// Nothing changed: same revisions, not moved, not deleted, still logged in.
	if got := revisionIDs(t, admin, "Csrf target"); strings.Join(got, ",") != strings.Join(revs, ",") {
		t.Errorf("revisions changed: %v → %v", revs, got)
	}
	mustStatus(t, admin.Get("/wiki/Csrf_target"), http.StatusOK)
	mustStatus(t, admin.Get("/wiki/Moved_by_forgery"), http.StatusNotFound)
	mustContain(t, admin.Get("/wiki/Main_Page"), `class="me"><bdi>Csrfadmin</bdi></a>`)
	if _, err := w.App.Store.FindUserByName(context.Background(), "Forged account"); !errors.Is(err, wiki.ErrNotFound) {
		t.Errorf("an account was created without a token: %v", err)
	}

	// The API used with a session cookie needs the X-CSRF-Token header too.
	api := []struct{ method, path, body string }{
		{"PUT", "/w/rest.php/v1/page/Csrf_target", `{"source":"api forged","latest":{"id":` + revs[0] + `}}`},
		{"POST", "/w/rest.php/v1/page", `{"title":"Api forged","source":"api forged"}`},
	}
	for _, c := range api {
		for _, a := range attacks {
			r := admin.NewRequest(c.method, c.path, strings.NewReader(c.body))
			r.Header.Set("Content-Type", "application/json")
			if a.token != "" {
				r.Header.Set("X-CSRF-Token", a.token)
			}
			for i := 0; i+1 < len(a.header); i += 2 {
				r.Header.Set(a.header[i], a.header[i+1])
			}
			res := admin.Do(r)
			checked++
			if res.StatusCode != http.StatusForbidden {
				t.Errorf("%s %s with a cookie and %s: %d, want 403\n%s", c.method, c.path, a.name, res.StatusCode, res.Body)
			}
		}
		// With the right header it works: the check is not simply "no cookies".
		r := admin.NewRequest(c.method, c.path, strings.NewReader(c.body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("X-CSRF-Token", good)
		if res := admin.Do(r); res.StatusCode/100 != 2 {
			t.Errorf("%s %s with a cookie and the right X-CSRF-Token: %d\n%s", c.method, c.path, res.StatusCode, res.Body)
		}
	}
	t.Logf("CSRF: %d forged requests refused (%d form endpoints, %d API endpoints × %d attacks)", checked, len(posts), len(api), len(attacks))
}

// TestSessionLifecycle: a new session ID at every login (a planted one is
// dropped, not adopted), and logout deletes the session on the server.
func TestSessionLifecycle(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, vpw := w.CreateUser(t, "Victim", wiki.GroupUser)
	_, apw := w.CreateUser(t, "Attacker", wiki.GroupUser)
	ctx := context.Background()

	t.Run("no fixation: a planted session is replaced at login", func(t *testing.T) {
		attacker := w.Login(t, "Attacker", apw)
		planted := attacker.SessionCookie()
		victim := w.Client(t)
		victim.SetSessionCookie(planted) // e.g. through a sibling subdomain
		res := victim.PostForm("/wiki/Special:UserLogin", url.Values{
			"csrf": {victim.CSRF("/wiki/Special:UserLogin")}, "username": {"Victim"}, "password": {vpw}})
		mustStatus(t, res, http.StatusSeeOther)
		if victim.SessionCookie() == planted || victim.SessionCookie() == "" {
			t.Fatal("the session ID was not rotated at login")
		}
		// The planted ID is gone, and never became the victim's.
		if _, err := w.App.Store.FindSession(ctx, auth.HashToken(planted)); !errors.Is(err, wiki.ErrNotFound) {
			t.Errorf("the planted session survived the login: %v", err)
		}
		mustNotContain(t, attacker.Get("/wiki/Main_Page"), `class="me"><bdi>Victim<`)
		mustContain(t, victim.Get("/wiki/Main_Page"), `class="me"><bdi>Victim</bdi></a>`)
		// A CSRF token of the old session is not valid in the new one.
		sess, _ := w.App.Store.FindSession(ctx, auth.HashToken(victim.SessionCookie()))
		if old := attacker.CSRF("/wiki/Special:UserLogin"); old == sess.CSRF {
			t.Error("the new session kept the old CSRF token")
		}
	})

	t.Run("registration starts a fresh session too", func(t *testing.T) {
		c := w.Client(t)
		c.SetSessionCookie(strings.Repeat("p", 43))
		res := c.PostForm("/wiki/Special:CreateAccount", url.Values{"csrf": {c.CSRF("/wiki/Special:CreateAccount")},
			"username": {"Newcomer"}, "password": {"newcomer-pass"}, "retype": {"newcomer-pass"}})
		mustStatus(t, res, http.StatusSeeOther)
		if c.SessionCookie() == strings.Repeat("p", 43) {
			t.Error("registration kept the planted cookie")
		}
	})

	t.Run("logout deletes the session on the server", func(t *testing.T) {
		c := w.Login(t, "Victim", vpw)
		tok := c.SessionCookie()
		mustContain(t, c.Get("/wiki/Main_Page"), "Log out") // now in the session cache too
		res := c.PostForm("/wiki/Special:UserLogout", url.Values{"csrf": {c.CSRF("/wiki/Special:UserLogin")}})
		mustStatus(t, res, http.StatusSeeOther)
		if _, err := w.App.Store.FindSession(ctx, auth.HashToken(tok)); !errors.Is(err, wiki.ErrNotFound) {
			t.Errorf("the session is still in the store after logout: %v", err)
		}
		replay := w.Client(t)
		replay.SetSessionCookie(tok)
		mustNotContain(t, replay.Get("/wiki/Main_Page"), "Log out")
		r := replay.NewRequest("PUT", "/w/rest.php/v1/page/Main_Page", strings.NewReader(`{"source":"x"}`))
		r.Header.Set("Content-Type", "application/json")
		if res := replay.Do(r); res.StatusCode != http.StatusUnauthorized && res.StatusCode != http.StatusForbidden {
			t.Errorf("an API write with the logged-out cookie: %d", res.StatusCode)
		}
	})
}

// TestSecretsComparedInConstantTime: no == or != on a value named like a
// secret (CSRF token, signature, session, password hash) in the web and auth
// packages; they go through auth.Equal or subtle.ConstantTimeCompare.
func TestSecretsComparedInConstantTime(t *testing.T) {
	secret := regexp.MustCompile(`(?i)csrf|sig$|^sig|secret|passwordhash|^tok$|token$`)
	fset := token.NewFileSet()
	checked := 0
	for _, dir := range []string{".", "../auth"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			af, err := parser.ParseFile(fset, f, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(af, func(n ast.Node) bool {
				be, ok := n.(*ast.BinaryExpr)
				if !ok || (be.Op != token.EQL && be.Op != token.NEQ) {
					return true
				}
				checked++
				if isEmptyOrNil(be.X) || isEmptyOrNil(be.Y) {
					return true
				}
				for _, side := range []ast.Expr{be.X, be.Y} {
					if name := exprName(side); name != "" && secret.MatchString(name) {
						t.Errorf("%s: %s compared with %s; use auth.Equal", fset.Position(be.Pos()), name, be.Op)
					}
				}
				return true
			})
		}
	}
	if checked == 0 {
		t.Fatal("no comparisons found: the source was not read")
	}
}

func isEmptyOrNil(e ast.Expr) bool {
	if l, ok := e.(*ast.BasicLit); ok {
		return l.Value == `""`
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name == "nil"
	}
	return false
}

func exprName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.CallExpr:
		return exprName(e.Fun)
	}
	return ""
}

// TestSecurityHeaders: every kind of response carries the CSP (no inline
// script, frame-ancestors 'none'), nosniff and a Referrer-Policy.
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Headers", wiki.GroupUser)
	user := w.Login(t, "Headers", pw)
	anon := w.Client(t)
	page := anon.Get("/wiki/Main_Page")
	asset := regexp.MustCompile(`href="(/static/[^"]+\.css)"`).FindStringSubmatch(page.Body)
	if asset == nil {
		t.Fatal("no stylesheet link")
	}
	big := strings.Repeat("x", 3<<20)
	cases := []struct {
		c      *apptest.Client
		method string
		path   string
		body   string
		html   bool
	}{
		{anon, "GET", "/wiki/Main_Page", "", true},
		{anon, "HEAD", "/wiki/Main_Page", "", true},
		{user, "GET", "/wiki/Main_Page", "", true},
		{anon, "GET", "/wiki/No_such_page", "", true},
		{anon, "GET", "/wiki/Special:UserLogin", "", true},
		{anon, "GET", "/wiki/Special:RecentChanges", "", true},
		{user, "GET", "/wiki/Main_Page?action=edit", "", true},
		{anon, "GET", "/wiki/Main_Page?action=history", "", true},
		{anon, "GET", "/wiki/Main_Page?action=raw", "", false},
		{anon, "GET", "/wiki/A%7Cb", "", true},
		{anon, "GET", "/nothing/here", "", true},
		{anon, "PUT", "/wiki/Main_Page", "", true},
		{anon, "POST", "/wiki/Main_Page?action=submit", big, true},
		{anon, "GET", "/w/rest.php/v1/page/Main_Page", "", false},
		{anon, "GET", "/w/rest.php/v1/page/No_such", "", false},
		{anon, "GET", asset[1], "", false},
		{anon, "GET", "/healthz", "", false},
	}
	for _, c := range cases {
		var r *http.Request
		if c.body != "" {
			r = c.c.NewRequest(c.method, c.path, strings.NewReader(c.body))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		} else {
			r = c.c.NewRequest(c.method, c.path, nil)
		}
		res := c.c.Do(r)
		h := res.Header
		if h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s %s (%d): X-Content-Type-Options %q", c.method, c.path, res.StatusCode, h.Get("X-Content-Type-Options"))
		}
		if !c.html {
			continue
		}
		csp := h.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self'", "object-src 'none'", "frame-ancestors 'none'", "base-uri 'self'", "form-action 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s %s (%d): CSP %q lacks %q", c.method, c.path, res.StatusCode, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s %s: CSP allows inline script: %q", c.method, c.path, csp)
		}
		if h.Get("Referrer-Policy") == "" || h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s %s (%d): Referrer-Policy %q, X-Frame-Options %q", c.method, c.path, res.StatusCode, h.Get("Referrer-Policy"), h.Get("X-Frame-Options"))
		}
	}
}

// wrongFirst returns tok with its first character changed (a token that
// begins with "x" must not stay right).
func wrongFirst(tok string) string {
	if strings.HasPrefix(tok, "x") {
		return "y" + tok[1:]
	}
	return "x" + tok[1:]
}
