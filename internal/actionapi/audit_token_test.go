package actionapi_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/wiki"
)

// A login with an API token that expires gives a session that ends when
// the token does: the token's expiry is not stretched to a 30-day login.
func TestTokenLoginEndsWithTheToken(t *testing.T) {
	wd := newWorld(t)
	secret := auth.NewSecret(32)
	until := time.Now().Add(time.Hour)
	if err := wd.w.App.Store.CreateToken(context.Background(), wiki.Token{ID: auth.HashToken(secret), UserID: wd.user.ID, Name: "short", Created: time.Now(), Expires: until}); err != nil {
		t.Fatal(err)
	}
	c := wd.w.Client(t)
	out, _ := api(t, c, "GET", url.Values{"action": {"query"}, "meta": {"tokens"}, "type": {"login"}})
	tok := dig(out, "query", "tokens", "logintoken").(string)
	out, res := api(t, c, "POST", url.Values{"action": {"login"}, "lgname": {"Alice"}, "lgpassword": {secret}, "lgtoken": {tok}})
	if dig(out, "login", "result") != "Success" {
		t.Fatalf("%v", out)
	}
	var sess *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == "wikid_session" && ck.Value != "" {
			sess = ck
		}
	}
	if sess == nil {
		t.Fatalf("no session cookie: %v", res.Header)
	}
	if sess.MaxAge > int(time.Hour/time.Second)+5 || sess.Expires.After(until.Add(5*time.Second)) {
		t.Errorf("session cookie outlives the token: Max-Age %d, Expires %v, token until %v", sess.MaxAge, sess.Expires, until)
	}
	s, err := wd.w.App.Store.FindSession(context.Background(), auth.HashToken(sess.Value))
	if err != nil {
		t.Fatal(err)
	}
	if s.Expires.After(until.Add(time.Second)) {
		t.Errorf("session until %v, token until %v", s.Expires, until)
	}
}

// Revoking an API token ends the sessions action=login started with it,
// at once, in the process that cached them: a leaked token's holder is
// signed out with it. A password session of the same user stays.
func TestRevokedTokenEndsItsSessions(t *testing.T) {
	wd := newWorld(t)
	bot := wd.w.Client(t)
	out, _ := api(t, bot, "GET", url.Values{"action": {"query"}, "meta": {"tokens"}, "type": {"login"}})
	lt := dig(out, "query", "tokens", "logintoken").(string)
	if out, _ := api(t, bot, "POST", url.Values{"action": {"login"}, "lgname": {"Alice"}, "lgpassword": {wd.userToken}, "lgtoken": {lt}}); dig(out, "login", "result") != "Success" {
		t.Fatalf("%v", out)
	}
	name := func(c *apptest.Client) any {
		t.Helper()
		out, _ := api(t, c, "GET", url.Values{"action": {"query"}, "meta": {"userinfo"}, "formatversion": {"2"}})
		return dig(out, "query", "userinfo", "name")
	}
	if n := name(bot); n != "Alice" {
		t.Fatalf("after the token login: %v", n)
	}
	web := wd.w.Login(t, "Alice", wd.userPass)
	ts, err := wd.w.App.Store.ListTokens(context.Background(), wd.user.ID)
	if err != nil || len(ts) != 1 {
		t.Fatalf("tokens %v, %v", ts, err)
	}
	res := web.PostForm("/wiki/Special:Preferences", url.Values{"csrf": {web.CSRF("/wiki/Special:Preferences")}, "do": {"token-revoke"}, "id": {ts[0].ID}})
	if res.StatusCode >= 400 {
		t.Fatalf("revoke: %d %s", res.StatusCode, res.Body)
	}
	if n := name(bot); n == "Alice" {
		t.Errorf("the session of a revoked token still signs in Alice")
	}
	if n := name(web); n != "Alice" {
		t.Errorf("the password session ended too: %v", n)
	}
}
