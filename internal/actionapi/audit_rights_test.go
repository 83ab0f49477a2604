package actionapi_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/wiki"
)

// Every change checks the right, the block and the page's protection.
func TestRightsOfChanges(t *testing.T) {
	wd := newWorld(t, func(c *config.Config) { c.EditGroup = wiki.GroupUser; c.UploadGroup = wiki.GroupUser })
	ctx := context.Background()
	alice := wd.w.Client(t)
	apiLogin(t, wd, alice)
	tok := csrf(t, alice)
	root := wd.w.Login(t, "Root", wd.adminPwd)
	out, _ := api(t, root, "POST", url.Values{"action": {"protect"}, "title": {"Alpha"}, "protections": {"edit=sysop|move=sysop"}, "token": {csrf(t, root)}})
	if dig(out, "protect", "title") != "Alpha" {
		t.Fatalf("%v", out)
	}
	do := func(q url.Values) map[string]any {
		q.Set("token", tok)
		out, _ := api(t, alice, "POST", q)
		return out
	}
	t.Run("without the right", func(t *testing.T) {
		for _, q := range []url.Values{
			{"action": {"delete"}, "title": {"Beta"}},
			{"action": {"protect"}, "title": {"Beta"}, "protections": {"edit=all"}},
			{"action": {"protect"}, "title": {"Alpha"}, "protections": {"edit=all|move=all"}},
		} {
			if code := errCode(do(q)); code != "permissiondenied" {
				t.Errorf("%v: %s", q, code)
			}
		}
	})
	t.Run("protected page", func(t *testing.T) {
		p, err := wd.w.App.Store.FindPage(ctx, "Alpha")
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []url.Values{
			{"action": {"move"}, "from": {"Alpha"}, "to": {"Alpha2"}},
			{"action": {"edit"}, "title": {"Alpha"}, "appendtext": {"x"}},
			{"action": {"edit"}, "pageid": {fmt.Sprint(p.ID)}, "text": {"x"}},
		} {
			if out := do(q); errCode(out) == "" {
				t.Errorf("%v: %v", q, out)
			}
		}
	})
	t.Run("anonymous", func(t *testing.T) {
		anon := wd.w.Client(t)
		atok := csrf(t, anon)
		for _, q := range []url.Values{
			{"action": {"edit"}, "title": {"Gamma"}, "text": {"x"}},
			{"action": {"move"}, "from": {"Beta"}, "to": {"Beta2"}},
			{"action": {"watch"}, "titles": {"Beta"}},
		} {
			q.Set("token", atok)
			if out, _ := api(t, anon, "POST", q); errCode(out) == "" {
				t.Errorf("%v: %v", q, out)
			}
		}
		res := anon.Multipart("/w/api.php", map[string]string{"action": "upload", "filename": "A.png", "token": atok, "format": "json"}, "A.png", tinyPNG(), nil)
		if !strings.Contains(res.Body, `"error"`) {
			t.Errorf("upload: %s", res.Body)
		}
	})
	t.Run("blocked", func(t *testing.T) {
		if _, err := wd.w.App.Store.BlockUser(ctx, wiki.Block{UserID: wd.user.ID, By: wiki.Actor{ID: wd.admin.ID, Name: "Root"}, Reason: "testing", Created: time.Now()}); err != nil {
			t.Fatal(err)
		}
		defer wd.w.App.Store.UnblockUser(ctx, wd.user.ID, wiki.Actor{ID: wd.admin.ID, Name: "Root"}, "", time.Now())
		for _, q := range []url.Values{
			{"action": {"move"}, "from": {"Beta"}, "to": {"Beta2"}},
			{"action": {"edit"}, "title": {"Gamma"}, "text": {"x"}},
		} {
			if code := errCode(do(q)); code != "blocked" {
				t.Errorf("%v: %s", q, code)
			}
		}
		res := alice.Multipart("/w/api.php", map[string]string{"action": "upload", "filename": "A.png", "token": tok, "format": "json"}, "A.png", tinyPNG(), nil)
		if !strings.Contains(res.Body, `"blocked"`) {
			t.Errorf("upload: %s", res.Body)
		}
	})
	t.Run("another user's data", func(t *testing.T) {
		_, res := api(t, alice, "GET", url.Values{"action": {"query"}, "meta": {"userinfo"}, "uiprop": {"*"}, "uiuser": {"Root"}, "list": {"watchlist"}, "wlowner": {"Root"}})
		if strings.Contains(res.Body, "Root") || strings.Contains(res.Body, "@") {
			t.Errorf("%s", res.Body)
		}
	})
}
