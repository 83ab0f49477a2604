package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/wiki"
)

func TestSpecialLog(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Ann", wiki.GroupUser)
	_, apw := w.CreateUser(t, "Boss", wiki.GroupAdmin)
	ann := w.Login(t, "Ann", pw)
	boss := w.Login(t, "Boss", apw)
	anon := w.Client(t)
	del := func(title, reason string) {
		t.Helper()
		path := wiki.MustTitle(title).URL() + "?action=delete"
		mustStatus(t, boss.PostForm(path, url.Values{"csrf": {boss.CSRF(path)}, "reason": {reason}}), http.StatusSeeOther)
	}
	for _, p := range []string{"P1", "P2", "P3", "Mover"} {
		ann.Edit(p, "text of "+p+"\n")
	}

	t.Run("the log is cached like RecentChanges and purged when an entry is written", func(t *testing.T) {
		anon.Get("/wiki/Special:Log/delete")
		res := anon.Get("/wiki/Special:Log/delete")
		if xcache(res) != "HIT" {
			t.Fatalf("X-Cache %q, want HIT", xcache(res))
		}
		mustContain(t, res, "No matching log entries.")
		del("P1", "spam <script>alert(1)</script>")
		res = anon.Get("/wiki/Special:Log/delete")
		mustContain(t, res, "deleted page", "<bdi>P1</bdi>", "<bdi>Boss</bdi>", "&lt;script&gt;")
		mustNotContain(t, res, "<script>alert")
	})

	del("P2", "second")
	del("P3", "third")
	mv := "/wiki/Mover?action=move"
	mustStatus(t, ann.PostForm(mv, url.Values{"csrf": {ann.CSRF(mv)}, "newtitle": {"Moved"}, "redirect": {"1"}}), http.StatusSeeOther)

	t.Run("entries read like MediaWiki's, newest first", func(t *testing.T) {
		res := anon.Get("/wiki/Special:Log")
		mustContain(t, res, `moved page <a href="/wiki/Mover?redirect=no"><bdi>Mover</bdi></a> to <a href="/wiki/Moved"><bdi>Moved</bdi></a>`)
		re := regexp.MustCompile(`<bdi>(Mover|P3|P2|P1)</bdi>`)
		var order []string
		for _, m := range re.FindAllStringSubmatch(res.Body, -1) {
			order = append(order, m[1])
		}
		if len(order) < 4 || order[0] != "Mover" || order[1] != "P3" || order[len(order)-1] != "P1" {
			t.Errorf("order %v", order)
		}
	})

	t.Run("filters by type (as a subpage), performer and target", func(t *testing.T) {
		res := anon.Get("/wiki/Special:Log/move")
		mustContain(t, res, "Move log", "moved page")
		mustNotContain(t, res, "deleted page")
		res = anon.Get("/wiki/Special:Log?user=Ann")
		mustContain(t, res, "moved page")
		mustNotContain(t, res, "deleted page")
		res = anon.Get("/wiki/Special:Log/delete?page=P2")
		mustContain(t, res, "<bdi>P2</bdi>")
		mustNotContain(t, res, "<bdi>P3</bdi>", "<bdi>P1</bdi>")
		mustStatus(t, anon.Get("/wiki/Special:Log/nonsense"), http.StatusBadRequest)
	})

	t.Run("non-canonical addresses redirect instead of filling the cache", func(t *testing.T) {
		mustRedirect(t, anon.Get("/wiki/Special:Log?type=delete"), http.StatusMovedPermanently, "/wiki/Special:Log/delete")
		mustRedirect(t, anon.Get("/wiki/Special:Log?type=delete&user=&page="), http.StatusMovedPermanently, "/wiki/Special:Log/delete")
		mustRedirect(t, anon.Get("/wiki/Special:Log/delete?page=p2&junk=1"), http.StatusMovedPermanently, "/wiki/Special:Log/delete?page=P2")
		mustRedirect(t, anon.Get("/wiki/Special:Log/Delete"), http.StatusMovedPermanently, "/wiki/Special:Log/delete")
		mustRedirect(t, anon.Get("/wiki/Special:Log?user=Boss&offset=99&limit=2"), http.StatusMovedPermanently, "/wiki/Special:Log?limit=2&offset=99&user=Boss")
	})

	t.Run("pages through entries with cursors", func(t *testing.T) {
		res := anon.Get("/wiki/Special:Log/delete?limit=2")
		mustContain(t, res, "<bdi>P3</bdi>", "<bdi>P2</bdi>")
		mustNotContain(t, res, "<bdi>P1</bdi>")
		m := regexp.MustCompile(`<a href="([^"]+)">Older entries`).FindStringSubmatch(res.Body)
		if m == nil {
			t.Fatal("no link to older entries")
		}
		next := anon.Get(unescapeAmp(m[1]))
		mustStatus(t, next, http.StatusOK)
		mustContain(t, next, "<bdi>P1</bdi>")
		mustNotContain(t, next, "<bdi>P2</bdi>", "Older entries")
	})

	t.Run("the log is listed among the special pages and in the navigation", func(t *testing.T) {
		mustContain(t, anon.Get("/wiki/Special:SpecialPages"), `href="/wiki/Special:Log"`)
	})

	t.Run("a block's entry shows its expiry as a date, not as a timestamp (\"1 week\" is understood, as on the protection form)", func(t *testing.T) {
		for _, b := range []struct{ expiry, want string }{{"1 week", `<bdi>Ann</bdi></a> (expires `}, {"infinite", `<bdi>Ann</bdi></a> (indefinite)`}} {
			path := "/wiki/Special:Block/Ann"
			mustStatus(t, boss.PostForm(path, url.Values{"csrf": {boss.CSRF(path)}, "expiry": {b.expiry}, "reason": {"test"}}), http.StatusSeeOther)
			res := anon.Get("/wiki/Special:Log/block")
			mustContain(t, res, b.want)
			if m := regexp.MustCompile(`[^"\d]\d{4}-\d\d-\d\dT\d\d:\d\d`).FindString(res.Body); m != "" {
				t.Errorf("a raw timestamp %q in the block log", m)
			}
		}
	})

}

func unescapeAmp(s string) string { return regexp.MustCompile(`&amp;`).ReplaceAllString(s, "&") }

// A deleted page's edits leave RecentChanges, contributions and their
// feeds, summaries included, as MediaWiki archives them; its deletion
// stays. The lists were cached: the deletion purges them.
func TestDeletedPageEditsLeaveChangeLists(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Spammer", wiki.GroupUser)
	_, apw := w.CreateUser(t, "Boss", wiki.GroupAdmin)
	spammer := w.Login(t, "Spammer", pw)
	boss := w.Login(t, "Boss", apw)
	anon := w.Client(t)
	csrf, base := spammer.EditForm("Pills")
	mustStatus(t, spammer.PostForm("/wiki/Pills?action=submit", url.Values{
		"csrf": {csrf}, "baserev": {base}, "text": {"spam\n"}, "summary": {"buy cheap pills now"}}), http.StatusSeeOther)
	spammer.Edit("Sandbox", "a fine edit\n")
	lists := []string{
		"/wiki/Special:RecentChanges",
		"/wiki/Special:Contributions/Spammer",
		"/wiki/Special:RecentChanges?feed=atom",
		"/wiki/Special:Contributions/Spammer?feed=atom",
	}
	for _, u := range lists {
		anon.Get(u)
		res := anon.Get(u)
		mustContain(t, res, "buy cheap pills now", "Sandbox")
	}
	path := "/wiki/Pills?action=delete"
	mustStatus(t, boss.PostForm(path, url.Values{"csrf": {boss.CSRF(path)}, "reason": {"spam"}}), http.StatusSeeOther)
	for _, u := range lists {
		res := anon.Get(u)
		mustNotContain(t, res, "buy cheap pills now")
		mustContain(t, res, "Sandbox")
	}
	mustContain(t, anon.Get("/wiki/Special:RecentChanges"), `deleted <a href="/wiki/Pills" class="new">`)
	path = "/wiki/Pills?action=undelete"
	mustStatus(t, boss.PostForm(path, url.Values{"csrf": {boss.CSRF(path)}}), http.StatusSeeOther)
	mustContain(t, anon.Get("/wiki/Special:Contributions/Spammer"), "buy cheap pills now")
}
