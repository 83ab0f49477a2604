package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/wiki"
)

func protectForm(t *testing.T, c *apptest.Client, title, edit, move, expiry, reason string) *apptest.Response {
	t.Helper()
	path := wiki.MustTitle(title).URL() + "?action=protect"
	return c.PostForm(path, url.Values{"csrf": {c.CSRF(path)}, "edit": {edit}, "move": {move}, "expiry": {expiry}, "reason": {reason}})
}

func TestProtection(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	u, pw := w.CreateUser(t, "Ann", wiki.GroupUser)
	_, apw := w.CreateUser(t, "Boss", wiki.GroupAdmin)
	ann := w.Login(t, "Ann", pw)
	boss := w.Login(t, "Boss", apw)
	anon := w.Client(t)
	token := apiToken(t, w, u)
	ann.Edit("Guarded", "Guarded text.\n")
	annCSRF, annBase := ann.EditForm("Guarded")

	t.Run("anonymous readers and users cannot protect; a missing or wrong CSRF token is refused", func(t *testing.T) {
		for _, c := range []*apptest.Client{anon, ann} {
			res := c.PostForm("/wiki/Guarded?action=protect", url.Values{"csrf": {c.CSRF("/wiki/Special:UserLogin")}, "edit": {"admins"}})
			if res.StatusCode != http.StatusForbidden && res.StatusCode != http.StatusUnauthorized {
				t.Errorf("protect by a non-admin: status %d", res.StatusCode)
			}
		}
		if res := ann.Get("/wiki/Guarded?action=protect"); res.StatusCode != http.StatusForbidden {
			t.Errorf("protect form for a user: status %d, want 403", res.StatusCode)
		}
		mustStatus(t, boss.PostForm("/wiki/Guarded?action=protect", url.Values{"edit": {"admins"}}), http.StatusForbidden)
		mustStatus(t, boss.PostForm("/wiki/Guarded?action=protect", url.Values{"csrf": {"forged"}, "edit": {"admins"}}), http.StatusForbidden)
		if _, err := w.App.Store.FindProtection(context.Background(), "Guarded"); err == nil {
			t.Fatal("a refused request protected the page")
		}
	})

	t.Run("a bad expiry or level shows the form again", func(t *testing.T) {
		mustStatus(t, protectForm(t, boss, "Guarded", "admins", "", "next tuesday-ish", ""), http.StatusBadRequest)
		mustStatus(t, protectForm(t, boss, "Guarded", "gods", "", "", ""), http.StatusBadRequest)
	})

	t.Run("a blocked administrator cannot protect", func(t *testing.T) {
		bu, bpw := w.CreateUser(t, "Blockedboss", wiki.GroupAdmin)
		bb := w.Login(t, "Blockedboss", bpw)
		if _, err := w.App.Store.BlockUser(context.Background(), wiki.Block{UserID: bu.ID, By: wiki.MaintenanceActor, Reason: "rogue", Created: time.Now()}); err != nil {
			t.Fatal(err)
		}
		res := protectForm(t, bb, "Unguarded", "admins", "admins", "", "")
		mustStatus(t, res, http.StatusForbidden)
		mustContain(t, res, "rogue")
		if _, err := w.App.Store.FindProtection(context.Background(), "Unguarded"); err == nil {
			t.Fatal("a blocked administrator protected a page")
		}
	})

	t.Run("the expiry may be written as on Special:Block", func(t *testing.T) {
		mustRedirect(t, protectForm(t, boss, "Compact", "users", "", "2w", "short form"), http.StatusSeeOther, "/wiki/Compact")
		p, err := w.App.Store.FindProtection(context.Background(), "Compact")
		if err != nil || p.Expiry.Before(time.Now().Add(13*24*time.Hour)) || p.Expiry.After(time.Now().Add(15*24*time.Hour)) {
			t.Fatalf("protection %+v, %v; want one expiring in two weeks", p, err)
		}
	})

	t.Run("the anonymous view is cached without a lock before protection", func(t *testing.T) {
		anon.Get("/wiki/Guarded")
		res := anon.Get("/wiki/Guarded")
		if xcache(res) != "HIT" {
			t.Fatalf("X-Cache %q, want HIT", xcache(res))
		}
		mustNotContain(t, res, `class="lock"`)
	})

	t.Run("an admin protects; the next anonymous view shows the lock and the log has the entry", func(t *testing.T) {
		mustRedirect(t, protectForm(t, boss, "Guarded", "admins", "admins", "1 week", "edit war"), http.StatusSeeOther, "/wiki/Guarded")
		res := anon.Get("/wiki/Guarded")
		mustContain(t, res, `class="lock"`)
		log := anon.Get("/wiki/Special:Log/protect")
		mustContain(t, log, "protected", "<bdi>Guarded</bdi>", "[edit=admins]", "[move=admins]", "edit war", "expires ")
	})

	t.Run("users get 403 with the reason on save, move and REST; the form keeps their text", func(t *testing.T) {
		res := ann.Submit("Guarded", annCSRF, annBase, "Ann's change.\n")
		mustStatus(t, res, http.StatusForbidden)
		mustContain(t, res, "only administrators can edit it", "edit war", "Ann&#39;s change.")
		res = ann.PostForm("/wiki/Guarded?action=move", url.Values{"csrf": {ann.CSRF("/wiki/Guarded?action=move")}, "newtitle": {"Elsewhere"}})
		mustStatus(t, res, http.StatusForbidden)
		for _, tok := range []string{token, ""} {
			c := anon
			if tok == "" {
				c = ann
			}
			r := c.NewRequest(http.MethodPut, "/w/rest.php/v1/page/Guarded", strings.NewReader(`{"source":"api change","latest":{"id":`+annBase+`}}`))
			r.Header.Set("Content-Type", "application/json")
			if tok != "" {
				r.Header.Set("Authorization", "Bearer "+tok)
			} else {
				r.Header.Set("X-CSRF-Token", annCSRF)
			}
			res := c.Do(r)
			mustStatus(t, res, http.StatusForbidden)
			if e := decode[map[string]any](t, res); e["errorKey"] != "protectedpage" {
				t.Errorf("errorKey %v", e["errorKey"])
			}
		}
		if got := anon.Get("/wiki/Guarded?action=raw").Body; got != "Guarded text.\n" {
			t.Errorf("the protected page changed: %q", got)
		}
	})

	t.Run("the edit page shows the notice and the source instead of the form", func(t *testing.T) {
		res := ann.Get("/wiki/Guarded?action=edit")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, "This page has been protected", "Guarded text.", "readonly")
		mustNotContain(t, res, `name="baserev"`)
	})

	t.Run("admins still edit", func(t *testing.T) {
		boss.Edit("Guarded", "Guarded text, by the boss.\n")
	})

	t.Run("unprotecting removes the lock from the next anonymous view", func(t *testing.T) {
		anon.Get("/wiki/Guarded")
		mustRedirect(t, protectForm(t, boss, "Guarded", "", "", "", "calm"), http.StatusSeeOther, "/wiki/Guarded")
		mustNotContain(t, anon.Get("/wiki/Guarded"), `class="lock"`)
		ann.Edit("Guarded", "Ann may edit again.\n")
		mustContain(t, anon.Get("/wiki/Special:Log/protect"), "removed protection from")
	})

	t.Run("registered-only protection keeps anonymous editors out, not users", func(t *testing.T) {
		mustStatus(t, protectForm(t, boss, "Guarded", "users", "", "infinite", ""), http.StatusSeeOther)
		ann.Edit("Guarded", "Still editable by users.\n")
		res := anon.JSON(http.MethodPost, "/w/rest.php/v1/page", "", `{"title":"Guarded","source":"x"}`)
		if res.StatusCode < 400 {
			t.Errorf("anonymous create over a protected page: %d", res.StatusCode)
		}
	})

	t.Run("a missing title can be protected from creation", func(t *testing.T) {
		mustStatus(t, protectForm(t, boss, "Forbidden fruit", "admins", "", "", "salted"), http.StatusSeeOther)
		res := anon.JSON(http.MethodPost, "/w/rest.php/v1/page", token, `{"title":"Forbidden fruit","source":"x"}`)
		mustStatus(t, res, http.StatusForbidden)
		if e := decode[map[string]any](t, res); e["errorKey"] != "protectedtitle" {
			t.Errorf("errorKey %v", e["errorKey"])
		}
	})

	t.Run("an expired protection stops applying by itself, and the cached lock expires with it", func(t *testing.T) {
		ann.Edit("Brief", "brief\n")
		exp := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)
		mustStatus(t, protectForm(t, boss, "Brief", "admins", "", exp, ""), http.StatusSeeOther)
		res := anon.Get("/wiki/Brief")
		mustContain(t, res, `class="lock"`)
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "s-maxage=1") && !strings.Contains(cc, "s-maxage=2") && !strings.Contains(cc, "s-maxage=3") {
			t.Errorf("Cache-Control %q does not end with the protection", cc)
		}
		time.Sleep(3100 * time.Millisecond)
		mustNotContain(t, anon.Get("/wiki/Brief"), `class="lock"`)
		ann.Edit("Brief", "brief, after expiry\n")
	})

	t.Run("a page protected from editing only cannot be moved away by a user", func(t *testing.T) {
		ann.Edit("Edit only", "Edit-only text.\n")
		mustRedirect(t, protectForm(t, boss, "Edit only", "admins", "", "infinite", "edit war"), http.StatusSeeOther, "/wiki/Edit_only")
		res := ann.PostForm("/wiki/Edit_only?action=move", url.Values{"csrf": {ann.CSRF("/wiki/Edit_only?action=move")},
			"newtitle": {"Edit only moved"}, "redirect": {"1"}})
		mustStatus(t, res, http.StatusForbidden)
		if got := anon.Get("/wiki/Edit_only?action=raw"); got.StatusCode != http.StatusOK {
			t.Errorf("the page moved: %d", got.StatusCode)
		}
	})

	t.Run("a blocked administrator can neither protect nor lift blocks, their own included", func(t *testing.T) {
		_, cpw := w.CreateUser(t, "Carol", wiki.GroupAdmin)
		carol := w.Login(t, "Carol", cpw)
		res := carol.PostForm("/wiki/Special:Block/Boss", url.Values{"csrf": {carol.CSRF("/wiki/Special:Block/Boss")},
			"expiry": {"1d"}, "reason": {"rogue admin"}})
		mustStatus(t, res, http.StatusSeeOther)
		mustStatus(t, protectForm(t, boss, "Guarded", "admins", "admins", "infinite", "mine"), http.StatusForbidden)
		res = boss.PostForm("/wiki/Special:Unblock/Boss", url.Values{"csrf": {boss.CSRF("/wiki/Special:Unblock/Boss")}, "reason": {"me"}})
		mustStatus(t, res, http.StatusForbidden)
		if bl := anon.Get("/wiki/Special:Log/block"); strings.Contains(bl.Body, "unblocked") {
			t.Error("the blocked admin lifted the block")
		}
	})
}

func TestSpecialProtectIsThePagesProtectAction(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	c := w.Client(t)
	mustRedirect(t, c.Get("/wiki/Special:Protect/Some_page"), http.StatusMovedPermanently, "/wiki/Some_page?action=protect")
	mustStatus(t, c.Get("/wiki/Special:Protect"), http.StatusBadRequest)
}
