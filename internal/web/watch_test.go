package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/wiki"
)

var watchTabRE = regexp.MustCompile(`<a href="[^"]*\?action=(un)?watch" class="watch( watched)?">(Watch|Unwatch)</a>`)

// star returns the watch tab's label on a page body ("" when absent).
func star(body string) string {
	m := watchTabRE.FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[3]
}

func watchPost(t *testing.T, c *apptest.Client, title, action string, extra url.Values) *apptest.Response {
	t.Helper()
	form := url.Values{"csrf": {c.CSRF("/wiki/" + title + "?action=" + action)}}
	for k, v := range extra {
		form[k] = v
	}
	return c.PostForm("/wiki/"+title+"?action="+action, form)
}

func TestWatchStar(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Wanda", wiki.GroupUser)
	wanda := w.Login(t, "Wanda", pw)
	_, apw := w.CreateUser(t, "Root", wiki.GroupAdmin)
	root := w.Login(t, "Root", apw)
	_, vpw := w.CreateUser(t, "Vic", wiki.GroupUser)
	vic := w.Login(t, "Vic", vpw)
	root.Edit("Starred", "Some text.")
	anon := w.Client(t)
	get(t, anon, "/wiki/Starred")

	t.Run("a logged-in view shows the star, spliced from the cached page", func(t *testing.T) {
		res := get(t, wanda, "/wiki/Starred")
		if xcache(res) != "SPLICE" || star(res.Body) != "Watch" {
			t.Fatalf("X-Cache %q, star %q", xcache(res), star(res.Body))
		}
		if a := get(t, anon, "/wiki/Starred"); xcache(a) != "HIT" || star(a.Body) != "" {
			t.Fatalf("anonymous: X-Cache %q, star %q", xcache(a), star(a.Body))
		}
	})
	before := get(t, wanda, "/wiki/Starred")

	t.Run("the star's link asks first, privately", func(t *testing.T) {
		res := get(t, wanda, "/wiki/Starred?action=watch")
		if res.StatusCode != http.StatusOK || !strings.Contains(res.Body, `name="expiry"`) || !strings.Contains(res.Header.Get("Cache-Control"), "no-store") {
			t.Fatalf("status %d, Cache-Control %q\n%s", res.StatusCode, res.Header.Get("Cache-Control"), res.Body)
		}
	})

	t.Run("watching turns the star on for this viewer only, and the page stays a hit", func(t *testing.T) {
		if res := watchPost(t, wanda, "Starred", "watch", nil); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("watch: status %d\n%s", res.StatusCode, res.Body)
		}
		res := get(t, wanda, "/wiki/Starred")
		if xcache(res) != "SPLICE" || star(res.Body) != "Unwatch" {
			t.Fatalf("after watching: X-Cache %q, star %q", xcache(res), star(res.Body))
		}
		if talk := get(t, wanda, "/wiki/Talk:Starred"); star(talk.Body) != "Unwatch" {
			t.Errorf("the talk page is not watched with the page: star %q", star(talk.Body))
		}
		if r := get(t, vic, "/wiki/Starred"); star(r.Body) != "Watch" {
			t.Errorf("another user sees star %q", star(r.Body))
		}
		if r := get(t, root, "/wiki/Starred"); star(r.Body) != "Unwatch" {
			t.Errorf("the page's creator sees star %q: a page one creates is watched", star(r.Body))
		}
		if a := get(t, anon, "/wiki/Starred"); xcache(a) != "HIT" {
			t.Errorf("anonymous view after a watch: X-Cache %q, want HIT", xcache(a))
		}
		// A copy the browser kept from before the watch no longer validates.
		cond := get(t, wanda, "/wiki/Starred", "If-None-Match: "+before.Header.Get("Etag"))
		if cond.StatusCode != http.StatusOK || star(cond.Body) != "Unwatch" {
			t.Errorf("conditional view with the old ETag: status %d, star %q", cond.StatusCode, star(cond.Body))
		}
	})

	t.Run("the star's script gets 204 and the new state", func(t *testing.T) {
		r := wanda.NewRequest(http.MethodPost, "/wiki/Starred?action=unwatch", strings.NewReader(url.Values{"csrf": {wanda.CSRF("/wiki/Starred?action=unwatch")}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("X-Requested-With", "wikid")
		res := wanda.Do(r)
		if res.StatusCode != http.StatusNoContent || res.Header.Get("X-Wikid-Watch") != "unwatched" {
			t.Fatalf("status %d, X-Wikid-Watch %q", res.StatusCode, res.Header.Get("X-Wikid-Watch"))
		}
		if s := star(get(t, wanda, "/wiki/Starred").Body); s != "Watch" {
			t.Fatalf("after unwatching: star %q", s)
		}
	})

	t.Run("a watch needs the form's token and an account", func(t *testing.T) {
		if res := wanda.PostForm("/wiki/Starred?action=watch", url.Values{}); res.StatusCode != http.StatusForbidden {
			t.Errorf("no token: status %d", res.StatusCode)
		}
		res := get(t, anon, "/wiki/Starred?action=watch")
		if res.StatusCode != http.StatusUnauthorized || xcache(res) == "HIT" {
			t.Errorf("anonymous watch form: status %d, X-Cache %q", res.StatusCode, xcache(res))
		}
		if again := get(t, anon, "/wiki/Starred?action=watch"); xcache(again) == "HIT" {
			t.Errorf("the anonymous refusal was cached")
		}
		if res := watchPost(t, wanda, "Starred", "watch", url.Values{"expiry": {"forever and ever"}}); res.StatusCode != http.StatusBadRequest {
			t.Errorf("unknown period: status %d", res.StatusCode)
		}
	})

	t.Run("a temporary watch shows its end on the watchlist editor", func(t *testing.T) {
		if res := watchPost(t, wanda, "Starred", "watch", url.Values{"expiry": {"1 week"}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("watch: status %d", res.StatusCode)
		}
		res := get(t, wanda, "/wiki/Special:EditWatchlist")
		if !strings.Contains(res.Body, "Starred") || !strings.Contains(res.Body, "(until") {
			t.Fatalf("EditWatchlist:\n%s", res.Body)
		}
	})
}

func TestWatchlist(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Alma", wiki.GroupUser)
	alma := w.Login(t, "Alma", pw)
	_, bpw := w.CreateUser(t, "Bert", wiki.GroupUser)
	bert := w.Login(t, "Bert", bpw)
	bert.Edit("Watched one", "first")
	bert.Edit("Unwatched one", "first")
	if res := watchPost(t, alma, "Watched_one", "watch", nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("watch: %d", res.StatusCode)
	}
	alma.Edit("Watched one", "second, by Alma")
	csrf, base := bert.EditForm("Watched one")
	if res := bert.PostForm("/wiki/Watched_one?action=submit", url.Values{"csrf": {csrf}, "baserev": {base},
		"text": {"third, minor"}, "summary": {"typo"}, "minor": {"1"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("minor edit: %d", res.StatusCode)
	}
	bert.Edit("Talk:Watched one", "A question.")
	bert.Edit("Unwatched one", "second")

	rows := func(body string) int { return strings.Count(body, `<li class="change-`) }
	for _, tc := range []struct {
		query string
		want  int
	}{
		{"", 4}, // creation, Alma's edit, the minor edit, the talk page
		{"?hideminor=1", 3},
		{"?hidemyself=1", 3},
		{"?newonly=1", 2},
		{"?namespace=1", 1},
		{"?days=1&hideminor=1&hidemyself=1", 2},
	} {
		res := get(t, alma, "/wiki/Special:Watchlist"+tc.query)
		if res.StatusCode != http.StatusOK || rows(res.Body) != tc.want || strings.Contains(res.Body, "Unwatched one") {
			t.Errorf("Watchlist%s: status %d, %d rows, want %d\n%s", tc.query, res.StatusCode, rows(res.Body), tc.want, res.Body)
		}
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "private") && !strings.Contains(cc, "no-store") {
			t.Errorf("Watchlist%s: Cache-Control %q", tc.query, cc)
		}
	}
	t.Run("anonymous readers are sent to the login form", func(t *testing.T) {
		res := get(t, w.Client(t), "/wiki/Special:Watchlist")
		if res.StatusCode != http.StatusFound || !strings.Contains(res.Header.Get("Location"), "Special:UserLogin") {
			t.Fatalf("status %d, Location %q", res.StatusCode, res.Header.Get("Location"))
		}
	})
	t.Run("bad filters are refused", func(t *testing.T) {
		if res := get(t, alma, "/wiki/Special:Watchlist?days=5"); res.StatusCode != http.StatusBadRequest {
			t.Errorf("days=5: status %d", res.StatusCode)
		}
	})
	t.Run("recent changes take the same filters", func(t *testing.T) {
		all := rows(get(t, alma, "/wiki/Special:RecentChanges").Body)
		created := rows(get(t, alma, "/wiki/Special:RecentChanges?newonly=1").Body)
		if mine := rows(get(t, alma, "/wiki/Special:RecentChanges?hidemyself=1").Body); mine != all-1 {
			t.Errorf("without Alma's one edit: %d rows of %d", mine, all)
		}
		if created != all-3 { // Alma's edit, the minor edit, the second edit of Unwatched one
			t.Errorf("new pages: %d rows of %d", created, all)
		}
		// "Hide my edits" means nothing to an anonymous reader, whose list
		// is everyone's.
		anon := get(t, w.Client(t), "/wiki/Special:RecentChanges?hidemyself=1")
		if rows(anon.Body) != all {
			t.Errorf("anonymous hidemyself: %d rows of %d", rows(anon.Body), all)
		}
	})
}

func TestAutoWatch(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Cleo", wiki.GroupUser)
	cleo := w.Login(t, "Cleo", pw)

	cleo.Edit("Made by Cleo", "text")
	if s := star(get(t, cleo, "/wiki/Made_by_Cleo").Body); s != "Unwatch" {
		t.Fatalf("a page Cleo created: star %q, want it watched", s)
	}
	csrf, base := cleo.EditForm("Made by Cleo")
	if form := get(t, cleo, "/wiki/Made_by_Cleo?action=edit"); !strings.Contains(form.Body, `name="watchthis" value="1" checked`) {
		t.Fatalf("the edit form's watch box is not ticked on a watched page")
	}
	// The box cleared: the page leaves the watchlist.
	if res := cleo.PostForm("/wiki/Made_by_Cleo?action=submit", url.Values{"csrf": {csrf}, "baserev": {base},
		"text": {"more text"}, "watchthis-shown": {"1"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d", res.StatusCode)
	}
	if s := star(get(t, cleo, "/wiki/Made_by_Cleo").Body); s != "Watch" {
		t.Fatalf("after saving with the box cleared: star %q", s)
	}
	// The preference off: new pages are not watched.
	res := cleo.PostForm("/wiki/Special:Preferences", url.Values{"csrf": {cleo.CSRF("/wiki/Special:Preferences")}, "do": {"prefs"},
		"timezone": {"UTC"}, "dateformat": {"dmy"}})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("preferences: %d\n%s", res.StatusCode, res.Body)
	}
	cleo.Edit("Another by Cleo", "text")
	if s := star(get(t, cleo, "/wiki/Another_by_Cleo").Body); s != "Watch" {
		t.Fatalf("with auto-watch off: star %q", s)
	}
}

func TestEditWatchlist(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Dora", wiki.GroupUser)
	dora := w.Login(t, "Dora", pw)
	for _, title := range []string{"One", "Two", "Three"} {
		if res := watchPost(t, dora, title, "watch", nil); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("watch %s: %d", title, res.StatusCode)
		}
	}
	page := get(t, dora, "/wiki/Special:EditWatchlist")
	if !strings.Contains(page.Body, "You watch 3 pages") || strings.Contains(page.Body, `value="Talk:One"`) {
		t.Fatalf("EditWatchlist:\n%s", page.Body)
	}
	csrf := dora.CSRF("/wiki/Special:EditWatchlist")
	if res := dora.PostForm("/wiki/Special:EditWatchlist", url.Values{"csrf": {csrf}, "titles": {"One", "Three"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("remove: %d\n%s", res.StatusCode, res.Body)
	}
	if s := star(get(t, dora, "/wiki/Talk:One").Body); s != "Watch" {
		t.Errorf("Talk:One still watched after removing One")
	}
	if s := star(get(t, dora, "/wiki/Two").Body); s != "Unwatch" {
		t.Errorf("Two no longer watched")
	}
	if res := dora.PostForm("/wiki/Special:EditWatchlist", url.Values{"csrf": {csrf}, "clear": {"1"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("clear: %d", res.StatusCode)
	}
	if page := get(t, dora, "/wiki/Special:EditWatchlist"); !strings.Contains(page.Body, "Your watchlist is empty") {
		t.Fatalf("after clearing:\n%s", page.Body)
	}
	if res := dora.PostForm("/wiki/Special:EditWatchlist", url.Values{"csrf": {csrf}, "titles": {"Special:Nothing<>"}}); res.StatusCode != http.StatusBadRequest {
		t.Errorf("a bad title: %d", res.StatusCode)
	}
}
