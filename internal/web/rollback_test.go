package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/wiki"
)

// rollbackPost posts a rollback of title's latest edits by from, with csrf.
func rollbackPost(c *apptest.Client, title, from, csrf string) *apptest.Response {
	v := url.Values{}
	if csrf != "" {
		v.Set("csrf", csrf)
	}
	return c.PostForm(wiki.MustTitle(title).URL()+"?action=rollback&from="+url.QueryEscape(from), v)
}

func TestRollback(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	login := func(name string, g wiki.Group) *apptest.Client {
		_, pw := w.CreateUser(t, name, g)
		return w.Login(t, name, pw)
	}
	alice, vandal, plain := login("Alice", wiki.GroupUser), login("Vandal", wiki.GroupUser), login("Plain", wiki.GroupUser)
	roller, boss := login("Roller", wiki.GroupRollbacker), login("Boss", wiki.GroupAdmin)
	anon := w.Client(t)

	alice.Edit("Vandalized", "Good text.\n")
	for _, junk := range []string{"Bad 1\n", "Bad 2\n", "Bad 3\n"} {
		vandal.Edit("Vandalized", junk)
	}
	csrf := roller.CSRF("/wiki/Vandalized?action=history")

	t.Run("the history offers rollback of the streak to rollbackers and administrators only", func(t *testing.T) {
		mustContain(t, roller.Get("/wiki/Vandalized?action=history"), "rollback 3 edits", `formaction="/wiki/Vandalized?action=rollback&amp;from=Vandal"`, `id="rollback-form"`)
		mustContain(t, boss.Get("/wiki/Vandalized?action=history"), "rollback 3 edits")
		for _, c := range []*apptest.Client{plain, anon} {
			mustNotContain(t, c.Get("/wiki/Vandalized?action=history"), "rollback 3 edits", `id="rollback-form"`)
		}
		last := latestRevision(t, w, "Vandalized")
		mustContain(t, roller.Get("/wiki/Vandalized?diff="+itoa(last.ID)+"&oldid="+itoa(last.ParentID)), "rollback 3 edits")
		contribs := roller.Get("/wiki/Special:Contributions/Vandal")
		mustContain(t, contribs, `<span class="current">current</span>`, ">rollback</button>")
		if n := strings.Count(contribs.Body, ">rollback</button>"); n != 1 {
			t.Errorf("contributions show %d rollback buttons, want 1 (the top edit)", n)
		}
		mustNotContain(t, anon.Get("/wiki/Special:Contributions/Vandal"), ">rollback</button>")
	})

	t.Run("plain users are refused", func(t *testing.T) {
		mustStatus(t, rollbackPost(plain, "Vandalized", "Vandal", plain.CSRF("/wiki/Vandalized?action=history")), http.StatusForbidden)
		mustStatus(t, plain.Get("/wiki/Vandalized?action=rollback&from=Vandal"), http.StatusForbidden)
		mustStatus(t, rollbackPost(anon, "Vandalized", "Vandal", anon.CSRF("/wiki/Special:UserLogin")), http.StatusUnauthorized)
		if rev := latestRevision(t, w, "Vandalized"); rev.UserName != "Vandal" {
			t.Fatalf("a refused rollback changed the page: latest by %s", rev.UserName)
		}
	})

	t.Run("the CSRF token is required", func(t *testing.T) {
		mustStatus(t, rollbackPost(roller, "Vandalized", "Vandal", ""), http.StatusForbidden)
		mustStatus(t, rollbackPost(roller, "Vandalized", "Vandal", "forged"), http.StatusForbidden)
		if rev := latestRevision(t, w, "Vandalized"); rev.UserName != "Vandal" {
			t.Fatalf("a forged rollback changed the page: latest by %s", rev.UserName)
		}
	})

	t.Run("a GET asks first, with a form that posts the rollback", func(t *testing.T) {
		res := roller.Get("/wiki/Vandalized?action=rollback&from=Vandal")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, "Revert the 3 latest edits by Vandal", `action="/wiki/Vandalized?action=rollback&amp;from=Vandal"`, `name="csrf"`)
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
			t.Errorf("confirmation Cache-Control %q, want no-store", cc)
		}
		mustStatus(t, roller.Get("/wiki/Vandalized?action=rollback"), http.StatusBadRequest)
	})

	t.Run("a rollback of a streak of three restores the previous author's text in one tagged revision", func(t *testing.T) {
		before := latestRevision(t, w, "Vandalized")
		res := rollbackPost(roller, "Vandalized", "Vandal", csrf)
		mustStatus(t, res, http.StatusSeeOther)
		rev := latestRevision(t, w, "Vandalized")
		if rev.Text != "Good text.\n" || rev.UserName != "Roller" || rev.ParentID != before.ID || !rev.Minor {
			t.Fatalf("after rollback: %+v", rev)
		}
		if want := "/wiki/Vandalized?diff=" + itoa(rev.ID) + "&oldid=" + itoa(before.ID); res.Header.Get("Location") != want {
			t.Errorf("Location %q, want %q", res.Header.Get("Location"), want)
		}
		if want := "Reverted edits by [[Special:Contributions/Vandal|Vandal]] ([[User talk:Vandal|talk]]) to last revision by Alice"; rev.Summary != want {
			t.Errorf("summary %q, want %q", rev.Summary, want)
		}
		if len(rev.Tags) != 1 || rev.Tags[0] != wiki.TagRollback {
			t.Errorf("tags %q, want rollback", rev.Tags)
		}
		mustContain(t, anon.Get("/wiki/Vandalized?action=history"), `<span class="tag tag-rollback"`)
		mustContain(t, anon.Get("/wiki/Special:RecentChanges"), `<span class="tag tag-rollback"`)
		mustContain(t, anon.Get("/wiki/Vandalized"), "Good text.")
	})

	t.Run("a second rollback of the same user is refused: someone edited meanwhile", func(t *testing.T) {
		res := rollbackPost(roller, "Vandalized", "Vandal", csrf)
		mustStatus(t, res, http.StatusConflict)
		mustContain(t, res, "is by Roller, not Vandal", "someone edited the page meanwhile")
	})

	t.Run("a rollback is refused when another user edited after the streak", func(t *testing.T) {
		alice.Edit("Meanwhile", "Fine.\n")
		vandal.Edit("Meanwhile", "Broken.\n")
		alice.Edit("Meanwhile", "Fixed by hand.\n")
		res := rollbackPost(boss, "Meanwhile", "Vandal", boss.CSRF("/wiki/Meanwhile?action=history"))
		mustStatus(t, res, http.StatusConflict)
		mustContain(t, res, "someone edited the page meanwhile")
		if rev := latestRevision(t, w, "Meanwhile"); rev.Text != "Fixed by hand.\n" {
			t.Fatalf("text %q after a refused rollback", rev.Text)
		}
	})

	t.Run("a rollback is refused when every revision is by the user", func(t *testing.T) {
		vandal.Edit("All mine", "one\n")
		vandal.Edit("All mine", "two\n")
		mustNotContain(t, roller.Get("/wiki/All_mine?action=history"), "rollback 2 edits")
		res := rollbackPost(roller, "All mine", "Vandal", csrf)
		mustStatus(t, res, http.StatusConflict)
		mustContain(t, res, "no earlier version by another user")
	})

	t.Run("a rollback respects the page's protection", func(t *testing.T) {
		alice.Edit("Guarded roll", "Fine.\n")
		vandal.Edit("Guarded roll", "Broken.\n")
		mustStatus(t, protectForm(t, boss, "Guarded roll", "admins", "", "infinite", "test"), http.StatusSeeOther)
		mustStatus(t, rollbackPost(roller, "Guarded roll", "Vandal", csrf), http.StatusForbidden)
		mustStatus(t, rollbackPost(boss, "Guarded roll", "Vandal", boss.CSRF("/wiki/Guarded_roll?action=history")), http.StatusSeeOther)
		if rev := latestRevision(t, w, "Guarded roll"); rev.Text != "Fine.\n" {
			t.Fatalf("text %q after an administrator's rollback", rev.Text)
		}
	})

	t.Run("a rollbacker demoted elsewhere is refused at once", func(t *testing.T) {
		alice.Edit("Demotion", "Fine.\n")
		vandal.Edit("Demotion", "Broken.\n")
		u, err := w.App.Store.FindUserByName(context.Background(), "Roller")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.App.Store.SetUserGroup(context.Background(), wiki.GroupChange{UserID: u.ID, Group: wiki.GroupUser, By: wiki.MaintenanceActor}); err != nil {
			t.Fatal(err)
		}
		mustStatus(t, rollbackPost(roller, "Demotion", "Vandal", csrf), http.StatusForbidden)
	})
}
