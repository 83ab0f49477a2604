package web_test

// Accounts: blocks, rights, API tokens, preferences and password resets,
// through the web forms and the REST API; the command line's side is in
// cmd/wikid.

import (
	"context"
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

var bg = context.Background()

func newToken(t *testing.T, w *apptest.Wiki, u wiki.User, expires time.Time) string {
	t.Helper()
	secret := "wkd_" + auth.NewSecret(32)
	if err := w.App.Store.CreateToken(bg, wiki.Token{ID: auth.HashToken(secret), UserID: u.ID, Name: "test", Created: time.Now(), Expires: expires}); err != nil {
		t.Fatal(err)
	}
	return secret
}

func putPage(c *apptest.Client, title, token, text string) *apptest.Response {
	return c.JSON(http.MethodPut, "/w/rest.php/v1/page/"+title, token, `{"source":"`+text+`"}`)
}

// TestBlocks: a block applies on the very next request on every path (web
// form, REST with a bearer token), reading stays allowed, the message says
// who, why and until when, and a block that expires stops applying.
func TestBlocks(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	admin, apw := w.CreateUser(t, "Blockadmin", wiki.GroupAdmin)
	vandal, vpw := w.CreateUser(t, "Vandal", wiki.GroupUser)
	ac := w.Login(t, "Blockadmin", apw)
	vc := w.Login(t, "Vandal", vpw)
	vc.Edit("Block target", "before the block\n")
	token := newToken(t, w, vandal, time.Time{})
	if res := putPage(w.Client(t), "Token_page", token, "by token"); res.StatusCode != http.StatusCreated {
		t.Fatalf("PUT before the block: %d %s", res.StatusCode, res.Body)
	}
	csrf, base := vc.EditForm("Block target") // opened before the block

	res := ac.PostForm("/wiki/Special:Block/Vandal", url.Values{"csrf": {ac.CSRF("/wiki/Special:Block/Vandal")},
		"expiry": {"1d"}, "reason": {"spamming links"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("block: %d\n%s", res.StatusCode, res.Body)
	}

	t.Run("the web edit is refused on the very next request with who, why and until when", func(t *testing.T) {
		res := vc.Submit("Block target", csrf, base, "after the block\n")
		if res.StatusCode != http.StatusForbidden || !strings.Contains(res.Body, "Blockadmin") || !strings.Contains(res.Body, "spamming links") ||
			!strings.Contains(res.Body, "until") {
			t.Errorf("blocked edit: %d\n%s", res.StatusCode, res.Body)
		}
	})
	t.Run("the edit page shows a notice instead of the form", func(t *testing.T) {
		res := vc.Get("/wiki/Block_target?action=edit")
		if res.StatusCode != http.StatusForbidden || strings.Contains(res.Body, `name="text"`) || !strings.Contains(res.Body, "spamming links") {
			t.Errorf("edit page: %d\n%s", res.StatusCode, res.Body)
		}
	})
	t.Run("reading stays allowed", func(t *testing.T) {
		if res := vc.Get("/wiki/Block_target"); res.StatusCode != http.StatusOK {
			t.Errorf("read: %d", res.StatusCode)
		}
	})
	t.Run("a REST write with the user's token is refused with errorKey blocked", func(t *testing.T) {
		res := putPage(w.Client(t), "Token_page2", token, "blocked")
		if res.StatusCode != http.StatusForbidden || !strings.Contains(res.Body, `"errorKey":"blocked"`) {
			t.Errorf("blocked PUT: %d %s", res.StatusCode, res.Body)
		}
	})
	t.Run("moving is refused", func(t *testing.T) {
		res := vc.PostForm("/wiki/Block_target?action=move", url.Values{"csrf": {csrf}, "newtitle": {"Moved away"}})
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("blocked move: %d", res.StatusCode)
		}
	})
	t.Run("the block is listed and logged; reblocking changes it", func(t *testing.T) {
		res := ac.Get("/wiki/Special:BlockList")
		if res.StatusCode != http.StatusOK || !strings.Contains(res.Body, "Vandal") || !strings.Contains(res.Body, "spamming links") ||
			!strings.Contains(res.Header.Get("Cache-Control"), "no-store") {
			t.Errorf("block list: %d %q\n%s", res.StatusCode, res.Header.Get("Cache-Control"), res.Body)
		}
		res = ac.PostForm("/wiki/Special:Block/Vandal", url.Values{"csrf": {ac.CSRF("/wiki/Special:Block/Vandal")}, "expiry": {"infinite"}, "reason": {"again"}})
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("reblock: %d", res.StatusCode)
		}
		l, err := w.App.Store.Log(bg, wiki.LogQuery{Type: wiki.LogBlock})
		if err != nil || len(l) != 2 || l[0].Action != "reblock" || l[0].Params["expiry"] != "infinite" || l[1].Action != "block" ||
			l[1].UserID != admin.ID || l[1].Target != "User:Vandal" {
			t.Errorf("block log = %+v, %v", l, err)
		}
	})
	t.Run("unblocking lets the user edit again at once", func(t *testing.T) {
		res := ac.PostForm("/wiki/Special:Unblock/Vandal", url.Values{"csrf": {ac.CSRF("/wiki/Special:Unblock/Vandal")}, "reason": {"ok"}})
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("unblock: %d\n%s", res.StatusCode, res.Body)
		}
		vc.Edit("Block target", "after the unblock\n")
	})
	t.Run("an expired block lets the user edit again", func(t *testing.T) {
		if _, err := w.App.Store.BlockUser(bg, wiki.Block{UserID: vandal.ID, By: wiki.MaintenanceActor, Created: time.Now(), Expires: time.Now().Add(300 * time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
		if res := putPage(w.Client(t), "Token_page3", token, "x"); res.StatusCode != http.StatusForbidden {
			t.Fatalf("PUT while blocked: %d", res.StatusCode)
		}
		time.Sleep(400 * time.Millisecond)
		if res := putPage(w.Client(t), "Token_page3", token, "x"); res.StatusCode != http.StatusCreated {
			t.Errorf("PUT after the block expired: %d %s", res.StatusCode, res.Body)
		}
		vc.Edit("Block target", "after the expiry\n")
	})
}

// TestAdminPagesAreForAdmins: every administrators' page answers 401 or 403
// to anonymous readers and users, by GET and by POST with a valid token of
// theirs, and changes nothing; a demoted administrator loses them on the
// very next request.
func TestAdminPagesAreForAdmins(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, apw := w.CreateUser(t, "Rightsadmin", wiki.GroupAdmin)
	target, upw := w.CreateUser(t, "Plainuser", wiki.GroupUser)
	_, opw := w.CreateUser(t, "Otheradmin", wiki.GroupAdmin)
	user := w.Login(t, "Plainuser", upw)
	anon := w.Client(t)
	pages := []string{"/wiki/Special:UserRights/Plainuser", "/wiki/Special:Block/Plainuser", "/wiki/Special:Unblock/Plainuser", "/wiki/Special:BlockList"}
	userCSRF := user.CSRF("/wiki/Special:Preferences")
	for _, p := range pages {
		if res := anon.Get(p); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("anonymous GET %s: %d, want 401", p, res.StatusCode)
		}
		if res := user.Get(p); res.StatusCode != http.StatusForbidden {
			t.Errorf("user GET %s: %d, want 403", p, res.StatusCode)
		}
		form := url.Values{"csrf": {userCSRF}, "group": {"admin"}, "expiry": {"infinite"}, "target": {"Rightsadmin"}}
		if res := user.PostForm(p, form); res.StatusCode != http.StatusForbidden && res.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("user POST %s: %d, want 403 (or 405 for a list)", p, res.StatusCode)
		}
	}
	if u, _ := w.App.Store.FindUser(bg, target.ID); u.Group != wiki.GroupUser {
		t.Fatalf("a user made themselves %s", u.Group)
	}

	admin := w.Login(t, "Rightsadmin", apw)
	t.Run("a POST without or with a wrong CSRF token fails", func(t *testing.T) {
		for _, tok := range []string{"", "wrong", userCSRF} {
			res := admin.PostForm("/wiki/Special:UserRights/Plainuser", url.Values{"csrf": {tok}, "group": {"admin"}})
			if res.StatusCode != http.StatusForbidden {
				t.Errorf("token %q: %d, want 403", tok, res.StatusCode)
			}
		}
		if u, _ := w.App.Store.FindUser(bg, target.ID); u.Group != wiki.GroupUser {
			t.Errorf("a forged POST changed the group to %s", u.Group)
		}
	})
	t.Run("an unknown group is refused with what to do", func(t *testing.T) {
		res := admin.PostForm("/wiki/Special:UserRights/Plainuser", url.Values{"csrf": {admin.CSRF("/wiki/Special:UserRights/Plainuser")}, "group": {"root"}})
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(res.Body, "user, rollbacker or admin") {
			t.Errorf("group root: %d\n%s", res.StatusCode, res.Body)
		}
	})
	t.Run("a promotion is logged with old and new groups", func(t *testing.T) {
		res := admin.PostForm("/wiki/Special:UserRights/Plainuser", url.Values{"csrf": {admin.CSRF("/wiki/Special:UserRights/Plainuser")},
			"group": {"admin"}, "reason": {"trusted"}})
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("promote: %d\n%s", res.StatusCode, res.Body)
		}
		l, _ := w.App.Store.Log(bg, wiki.LogQuery{Type: wiki.LogRights})
		if len(l) != 1 || l[0].Params["old"] != "user" || l[0].Params["new"] != "admin" || l[0].Comment != "trusted" || l[0].UserName != "Rightsadmin" {
			t.Errorf("rights log = %+v", l)
		}
		// The promoted user's cached session sees it on the next request.
		if res := user.Get("/wiki/Special:BlockList"); res.StatusCode != http.StatusOK {
			t.Errorf("promoted user: BlockList %d", res.StatusCode)
		}
	})
	t.Run("a demoted administrator loses the admin pages on the very next request", func(t *testing.T) {
		other := w.Login(t, "Otheradmin", opw)
		if res := other.Get("/wiki/Special:BlockList"); res.StatusCode != http.StatusOK {
			t.Fatalf("admin: %d", res.StatusCode)
		}
		if res := other.Get("/metrics"); res.StatusCode != http.StatusOK {
			t.Fatalf("admin: /metrics %d", res.StatusCode)
		}
		// Demoted by another process (the command line): straight in the store.
		o, _ := w.App.Store.FindUserByName(bg, "Otheradmin")
		if _, err := w.App.Store.SetUserGroup(bg, wiki.GroupChange{UserID: o.ID, Group: wiki.GroupUser, By: wiki.MaintenanceActor}); err != nil {
			t.Fatal(err)
		}
		// First: the admin pages below drop the stale session on the way.
		if res := other.Get("/metrics"); res.StatusCode != http.StatusForbidden {
			t.Errorf("demoted admin: /metrics %d, want 403", res.StatusCode)
		}
		if res := other.Get("/wiki/Special:BlockList"); res.StatusCode != http.StatusForbidden {
			t.Errorf("demoted admin: BlockList %d, want 403", res.StatusCode)
		}
		if res := other.Get("/wiki/Special:Block/Plainuser"); res.StatusCode != http.StatusForbidden {
			t.Errorf("demoted admin: Block %d, want 403", res.StatusCode)
		}
	})
}

var tokenRE = regexp.MustCompile(`<code class="secret">(wkd_[A-Za-z0-9_-]+)</code>`)

// TestPreferencesTokens: a user creates a token (its secret shown once),
// uses it, sees its last use, and revokes it; a revoked or expired token
// fails on the next request; another user cannot revoke it.
func TestPreferencesTokens(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	u, pw := w.CreateUser(t, "Tokenuser", wiki.GroupUser)
	_, opw := w.CreateUser(t, "Tokenother", wiki.GroupUser)
	c := w.Login(t, "Tokenuser", pw)
	res := c.Get("/wiki/Special:Preferences")
	if res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("preferences: %d %q", res.StatusCode, res.Header.Get("Cache-Control"))
	}
	if res := w.Client(t).Get("/wiki/Special:Preferences"); res.StatusCode != http.StatusFound {
		t.Errorf("anonymous preferences: %d, want a redirect to the login", res.StatusCode)
	}
	res = c.PostForm("/wiki/Special:Preferences", url.Values{"csrf": {c.CSRF("/wiki/Special:Preferences")}, "do": {"token-create"}, "name": {"bot"}, "expiry": {"30d"}})
	m := tokenRE.FindStringSubmatch(res.Body)
	if res.StatusCode != http.StatusOK || m == nil || res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create token: %d\n%s", res.StatusCode, res.Body)
	}
	secret := m[1]
	if strings.Contains(w.Logs.String(), secret) {
		t.Error("the token's secret is in the logs")
	}
	if res := c.Get("/wiki/Special:Preferences"); strings.Contains(res.Body, secret) {
		t.Error("the token's secret is shown twice")
	}
	if res := putPage(w.Client(t), "Pref_token", secret, "x"); res.StatusCode != http.StatusCreated {
		t.Fatalf("PUT with the new token: %d %s", res.StatusCode, res.Body)
	}
	ts, _ := w.App.Store.ListTokens(bg, u.ID)
	if len(ts) != 1 || ts[0].LastUsed.IsZero() || ts[0].Expires.IsZero() {
		t.Fatalf("tokens = %+v", ts)
	}

	other := w.Login(t, "Tokenother", opw)
	res = other.PostForm("/wiki/Special:Preferences", url.Values{"csrf": {other.CSRF("/wiki/Special:Preferences")}, "do": {"token-revoke"}, "id": {ts[0].ID}})
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("another user's revoke: %d, want 404", res.StatusCode)
	}
	res = c.PostForm("/wiki/Special:Preferences", url.Values{"csrf": {c.CSRF("/wiki/Special:Preferences")}, "do": {"token-revoke"}, "id": {ts[0].ID}})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %d", res.StatusCode)
	}
	if res := putPage(w.Client(t), "Pref_token", secret, "y"); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("PUT with a revoked token: %d, want 401", res.StatusCode)
	}
	expired := newToken(t, w, u, time.Now().Add(-time.Second))
	if res := putPage(w.Client(t), "Pref_token", expired, "y"); res.StatusCode != http.StatusUnauthorized || !strings.Contains(res.Body, "expired") {
		t.Errorf("PUT with an expired token: %d %s", res.StatusCode, res.Body)
	}
}

// TestPasswordChange: the current password is required; the change signs
// out every other session and keeps this one.
func TestPasswordChange(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Pwuser", wiki.GroupUser)
	c := w.Login(t, "Pwuser", pw)
	other := w.Login(t, "Pwuser", pw)
	if res := other.Get("/wiki/Special:Preferences"); res.StatusCode != http.StatusOK {
		t.Fatal("other session not logged in")
	}
	form := func(cur string) url.Values {
		return url.Values{"csrf": {c.CSRF("/wiki/Special:Preferences")}, "do": {"password"}, "password": {cur},
			"newpassword": {"a-new-password"}, "retype": {"a-new-password"}}
	}
	if res := c.PostForm("/wiki/Special:Preferences", form("wrong-password")); res.StatusCode != http.StatusBadRequest ||
		!strings.Contains(res.Body, "current password is wrong") {
		t.Fatalf("wrong current password: %d", res.StatusCode)
	}
	if res := c.PostForm("/wiki/Special:Preferences", form(pw)); res.StatusCode != http.StatusOK || !strings.Contains(res.Body, "was changed") {
		t.Fatalf("change: %d\n%s", res.StatusCode, res.Body)
	}
	if res := other.Get("/wiki/Special:Preferences"); res.StatusCode != http.StatusFound {
		t.Errorf("the other session still works: %d", res.StatusCode)
	}
	if res := c.Get("/wiki/Special:Preferences"); res.StatusCode != http.StatusOK {
		t.Errorf("this session was signed out: %d", res.StatusCode)
	}
	w.Login(t, "Pwuser", "a-new-password")
}

// TestPasswordReset: a reset link works once.
func TestPasswordReset(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	u, _ := w.CreateUser(t, "Resetuser", wiki.GroupUser)
	secret := auth.NewSecret(32)
	if err := w.App.Store.CreatePasswordReset(bg, wiki.PasswordReset{ID: auth.HashToken(secret), UserID: u.ID, Created: time.Now(), Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	c := w.Client(t)
	path := "/wiki/Special:PasswordReset?token=" + secret
	res := c.Get(path)
	if res.StatusCode != http.StatusOK || !strings.Contains(res.Body, "Resetuser") || res.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("reset form: %d %q", res.StatusCode, res.Header.Get("Referrer-Policy"))
	}
	post := func() *apptest.Response {
		return c.PostForm("/wiki/Special:PasswordReset", url.Values{"csrf": {c.CSRF(path)}, "token": {secret},
			"password": {"reset-password-1"}, "retype": {"reset-password-1"}})
	}
	if res := post(); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("reset: %d\n%s", res.StatusCode, res.Body)
	}
	w.Login(t, "Resetuser", "reset-password-1")
	if res := c.Get(path); res.StatusCode != http.StatusNotFound {
		t.Errorf("a used link: %d, want 404", res.StatusCode)
	}
	if res := c.PostForm("/wiki/Special:PasswordReset", url.Values{"csrf": {c.CSRF("/wiki/Special:UserLogin")}, "token": {secret},
		"password": {"reset-password-2"}, "retype": {"reset-password-2"}}); res.StatusCode != http.StatusNotFound {
		t.Errorf("reusing a link: %d, want 404", res.StatusCode)
	}
}

// TestPreferencesDates: a user's time zone and date format apply to their
// own history, and never to anyone else's view of it.
func TestPreferencesDates(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Zoneuser", wiki.GroupUser)
	c := w.Login(t, "Zoneuser", pw)
	c.Edit("Zone page", "text\n")
	res := c.PostForm("/wiki/Special:Preferences", url.Values{"csrf": {c.CSRF("/wiki/Special:Preferences")}, "do": {"prefs"},
		"timezone": {"Asia/Tokyo"}, "dateformat": {"iso"}, "minordefault": {"1"}})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("save prefs: %d\n%s", res.StatusCode, res.Body)
	}
	if res := c.PostForm("/wiki/Special:Preferences", url.Values{"csrf": {c.CSRF("/wiki/Special:Preferences")}, "do": {"prefs"},
		"timezone": {"Mars/Olympus"}}); res.StatusCode != http.StatusBadRequest {
		t.Errorf("unknown zone: %d", res.StatusCode)
	}
	rev, _ := w.App.Store.RecentChanges(bg, wiki.ChangeQuery{Limit: 1})
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	want := rev[0].Time.In(tokyo).Format("2006-01-02T15:04:05")
	mine := c.Get("/wiki/Zone_page?action=history")
	if !strings.Contains(mine.Body, want) || mine.Header.Get("Cache-Control") != "private, no-cache" {
		t.Errorf("own history lacks %q (Cache-Control %q)", want, mine.Header.Get("Cache-Control"))
	}
	anon := w.Client(t).Get("/wiki/Zone_page?action=history")
	if strings.Contains(anon.Body, want) || !strings.Contains(anon.Body, rev[0].Time.UTC().Format("15:04, 2 January 2006")) {
		t.Errorf("the anonymous history shows the user's zone")
	}
	if res := c.Get("/wiki/Zone_page?action=edit"); !regexp.MustCompile(`name="minor" value="1" checked`).MatchString(res.Body) {
		t.Errorf("the minor box is not ticked by default")
	}
}

// TestRegistrationIsLogged: an account created on the web is logged.
func TestRegistrationIsLogged(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	c := w.Client(t)
	res := c.PostForm("/wiki/Special:CreateAccount", url.Values{"csrf": {c.CSRF("/wiki/Special:CreateAccount")},
		"username": {"Newcomer"}, "password": {"newcomer-pass"}, "retype": {"newcomer-pass"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("register: %d", res.StatusCode)
	}
	l, err := w.App.Store.Log(bg, wiki.LogQuery{Type: wiki.LogNewUsers})
	if err != nil || len(l) != 1 || l[0].Action != "create" || l[0].Target != "User:Newcomer" {
		t.Errorf("newusers log = %+v, %v", l, err)
	}
}

// An account made before the character rules, with a name they refuse, can
// still log in and be blocked by name: the rules are for new names (names_test.go
// checks that new names are held to them).
func TestAccountsWithNamesTheRulesRefuse(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, apw := w.CreateUser(t, "Legacyadmin", wiki.GroupAdmin)
	const name = "Ev\u202eil" // a right-to-left override, stored before the rules
	_, pw := w.CreateUser(t, name, wiki.GroupUser)
	ev := w.Login(t, name, pw)
	ev.Edit("Legacy page", "before\n")
	csrf, base := ev.EditForm("Legacy page")
	ac := w.Login(t, "Legacyadmin", apw)
	res := ac.PostForm("/wiki/Special:Block", url.Values{"csrf": {ac.CSRF("/wiki/Special:Block")},
		"target": {name}, "expiry": {"1d"}, "reason": {"old vandal"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("block %q: %d\n%s", name, res.StatusCode, res.Body)
	}
	if res := ev.Submit("Legacy page", csrf, base, "after\n"); res.StatusCode != http.StatusForbidden {
		t.Errorf("the blocked legacy account edited: %d", res.StatusCode)
	}
}
