package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/store/sqlite/sqlitetest"
	"github.com/wikid/wikid/internal/view"
	"github.com/wikid/wikid/internal/web"
	"github.com/wikid/wikid/internal/wiki"
)

// nsTabs returns the namespace tabs of a page view, as "label href class"
// lines.
func nsTabs(t *testing.T, res *apptest.Response) []string {
	t.Helper()
	m := regexp.MustCompile(`<nav class="tabs ns-tabs" aria-label="Namespaces">(.*?)</nav>`).FindStringSubmatch(res.Body)
	if m == nil {
		t.Fatalf("%s: no namespace tabs in\n%s", res.Request.URL.RequestURI(), res.Body)
	}
	var out []string
	for _, a := range regexp.MustCompile(`<a href="([^"]*)"(?: class="([^"]*)")?[^>]*>([^<]*)</a>`).FindAllStringSubmatch(m[1], -1) {
		out = append(out, strings.TrimSpace(a[3]+" "+a[1]+" "+a[2]))
	}
	return out
}

func wantTabs(t *testing.T, res *apptest.Response, want ...string) {
	t.Helper()
	if got := nsTabs(t, res); strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("%s: namespace tabs\n  %s\nwant\n  %s", res.Request.URL.RequestURI(), strings.Join(got, " | "), strings.Join(want, " | "))
	}
}

// TestDiscussionTab: every page view has a Discussion tab to its talk page
// and talk pages one back to their page, red (to the edit form) while the
// other page does not exist. The views are cached: creating or deleting
// the other page purges them, so the next view has the new colour.
func TestDiscussionTab(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Carol", wiki.GroupUser)
	_, apw := w.CreateUser(t, "Boss", wiki.GroupAdmin)
	carol := w.Login(t, "Carol", pw)
	boss := w.Login(t, "Boss", apw)
	anon := w.Client(t)
	carol.Edit("Topic", "Some text.")

	t.Run("a cached page view's Discussion tab turns blue when the talk page is created", func(t *testing.T) {
		get(t, anon, "/wiki/Topic")
		before := get(t, anon, "/wiki/Topic")
		if xcache(before) != "HIT" {
			t.Fatalf("X-Cache %q, want HIT: the view is not cached", xcache(before))
		}
		wantTabs(t, before, "Page /wiki/Topic active", "Discussion /wiki/Talk:Topic?action=edit&amp;redlink=1 new")
		carol.Edit("Talk:Topic", "What about it?")
		after := get(t, anon, "/wiki/Topic")
		wantTabs(t, after, "Page /wiki/Topic active", "Discussion /wiki/Talk:Topic")
		if after.Header.Get("ETag") == before.Header.Get("ETag") {
			t.Error("the ETag did not change with the tab")
		}
		// A logged-in view is spliced from the same cached page.
		wantTabs(t, carol.Get("/wiki/Topic"), "Page /wiki/Topic active", "Discussion /wiki/Talk:Topic")
		// The other cached responses of the page show the tab too.
		wantTabs(t, get(t, anon, "/wiki/Topic?action=history"), "Page /wiki/Topic active", "Discussion /wiki/Talk:Topic")
	})

	t.Run("a talk page's tab leads back to its page", func(t *testing.T) {
		wantTabs(t, get(t, anon, "/wiki/Talk:Topic"), "Page /wiki/Topic", "Discussion /wiki/Talk:Topic active")
		wantTabs(t, get(t, anon, "/wiki/Talk:Nothing_here"),
			"Page /wiki/Nothing_here?action=edit&amp;redlink=1 new", "Discussion /wiki/Talk:Nothing_here?action=edit&amp;redlink=1 active new")
	})

	t.Run("deleting the talk page turns the tab red again", func(t *testing.T) {
		get(t, anon, "/wiki/Topic")
		path := "/wiki/Talk:Topic?action=delete"
		mustStatus(t, boss.PostForm(path, url.Values{"csrf": {boss.CSRF(path)}, "reason": {"test"}}), http.StatusSeeOther)
		wantTabs(t, get(t, anon, "/wiki/Topic"), "Page /wiki/Topic active", "Discussion /wiki/Talk:Topic?action=edit&amp;redlink=1 new")
	})

	t.Run("creating, moving and restoring a page recolour its talk page's tab", func(t *testing.T) {
		carol.Edit("User talk:Carol", "Hello Carol.")
		wantTabs(t, get(t, anon, "/wiki/User_talk:Carol"),
			"User page /wiki/User:Carol?action=edit&amp;redlink=1 new", "Discussion /wiki/User_talk:Carol active")
		carol.Edit("User:Carol", "I am Carol.")
		wantTabs(t, get(t, anon, "/wiki/User_talk:Carol"), "User page /wiki/User:Carol", "Discussion /wiki/User_talk:Carol active")

		carol.Edit("Talk:Mover", "Talk about the mover.")
		carol.Edit("Mover", "A page to move.")
		wantTabs(t, get(t, anon, "/wiki/Talk:Mover"), "Page /wiki/Mover", "Discussion /wiki/Talk:Mover active")
		mv := "/wiki/Mover?action=move"
		mustStatus(t, carol.PostForm(mv, url.Values{"csrf": {carol.CSRF(mv)}, "newtitle": {"Moved"}}), http.StatusSeeOther)
		wantTabs(t, get(t, anon, "/wiki/Talk:Mover"), "Page /wiki/Mover?action=edit&amp;redlink=1 new", "Discussion /wiki/Talk:Mover active")

		path := "/wiki/Moved?action=delete"
		get(t, anon, "/wiki/Talk:Moved")
		mustStatus(t, boss.PostForm(path, url.Values{"csrf": {boss.CSRF(path)}, "reason": {"test"}}), http.StatusSeeOther)
		carol.Edit("Talk:Moved", "Talk about the moved page.")
		wantTabs(t, get(t, anon, "/wiki/Talk:Moved"), "Page /wiki/Moved?action=edit&amp;redlink=1 new", "Discussion /wiki/Talk:Moved active")
		path = "/wiki/Moved?action=undelete"
		mustStatus(t, boss.PostForm(path, url.Values{"csrf": {boss.CSRF(path)}, "reason": {"test"}}), http.StatusSeeOther)
		wantTabs(t, get(t, anon, "/wiki/Talk:Moved"), "Page /wiki/Moved", "Discussion /wiki/Talk:Moved active")
	})

	t.Run("tabs are labelled by namespace as in MediaWiki", func(t *testing.T) {
		for title, label := range map[string]string{"Project:About": "Project page", "Help:Syntax": "Help page",
			"Template:Box": "Template", "Category:Fruit": "Category", "File:Photo.jpg": "File"} {
			ti := wiki.MustTitle(title)
			talk, _ := ti.Talk()
			wantTabs(t, get(t, anon, talk.URL()),
				label+" "+ti.URL()+redIfMissing(t, w, ti), "Discussion "+talk.URL()+"?action=edit&amp;redlink=1 active new")
		}
	})

	t.Run("special pages have no namespace tabs", func(t *testing.T) {
		if res := get(t, anon, "/wiki/Special:RecentChanges"); strings.Contains(res.Body, "ns-tabs") {
			t.Error("RecentChanges has namespace tabs")
		}
	})
}

// redIfMissing is the URL suffix and class of a tab to t: empty when t
// exists.
func redIfMissing(t *testing.T, w *apptest.Wiki, ti wiki.Title) string {
	t.Helper()
	ex, err := w.App.Store.ExistingTitles(t.Context(), []wiki.Title{ti})
	if err != nil {
		t.Fatal(err)
	}
	if ex[ti] {
		return ""
	}
	return "?action=edit&amp;redlink=1 new"
}

// TestNamespaceFilters: AllPages, RecentChanges, Contributions and Search
// take MediaWiki's namespace=N; other spellings of a number redirect to the
// canonical one and anything else is refused, so no cache entry is made
// for them.
func TestNamespaceFilters(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Dora", wiki.GroupUser)
	dora := w.Login(t, "Dora", pw)
	anon := w.Client(t)
	for _, p := range []string{"Quince", "Talk:Quince", "User:Dora", "User talk:Dora", "Template:Quince box"} {
		dora.Edit(p, "quince jelly on "+p)
	}
	titles := func(res *apptest.Response) string {
		t.Helper()
		var out []string
		for _, m := range regexp.MustCompile(`<bdi>((?:Talk|User|User talk|Template):[^<]*|Quince)</bdi>`).FindAllStringSubmatch(res.Body, -1) {
			if !strings.Contains(strings.Join(out, "|"), m[1]) {
				out = append(out, m[1])
			}
		}
		return strings.Join(out, ",")
	}

	for _, tc := range []struct{ path, want string }{
		{"/wiki/Special:AllPages?namespace=1", "Talk:Quince"},
		{"/wiki/Special:AllPages?namespace=0", "Quince"},
		{"/wiki/Special:AllPages?namespace=2", "User:Dora"},
		{"/wiki/Special:AllPages?namespace=10", "Template:Quince box"},
		// As MediaWiki: a prefix without a namespace is in the one chosen
		// (the heading says so).
		{"/wiki/Special:AllPages?namespace=1&prefix=Q", "Talk:Q,Talk:Quince"},
		{"/wiki/Special:RecentChanges?namespace=3", "User talk:Dora"},
		{"/wiki/Special:RecentChanges?namespace=0", "Quince"},
		{"/wiki/Special:Contributions/Dora?namespace=1", "Talk:Quince"},
		{"/wiki/Special:Search?namespace=1&q=jelly", "Talk:Quince"},
		{"/wiki/Special:Search?namespace=10&q=jelly", "Template:Quince box"},
		{"/w/rest.php/v1/search/page?namespace=2&q=jelly", ""},
	} {
		res := get(t, anon, tc.path)
		mustStatus(t, res, http.StatusOK)
		if strings.HasPrefix(tc.path, "/w/rest.php") {
			if !strings.Contains(res.Body, `"title":"User:Dora"`) || strings.Contains(res.Body, "Quince") {
				t.Errorf("%s: %s", tc.path, res.Body)
			}
			continue
		}
		if got := titles(res); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.path, got, tc.want)
		}
		if again := get(t, anon, tc.path); xcache(again) != "HIT" {
			t.Errorf("%s: X-Cache %q the second time, want HIT", tc.path, xcache(again))
		}
	}

	t.Run("the filter form selects the namespace shown and its links keep it", func(t *testing.T) {
		res := get(t, anon, "/wiki/Special:RecentChanges?limit=1&namespace=0")
		mustContain(t, res, `<option value="0" selected>(Main)</option>`, `<option value="">all</option>`,
			`<input type="hidden" name="limit" value="1">`, `href="/wiki/Special:RecentChanges?limit=1&amp;namespace=0&amp;offset=`)
		mustContain(t, get(t, anon, "/wiki/Special:AllPages?namespace=3"), `<option value="3" selected>User talk</option>`)
		mustContain(t, get(t, anon, "/wiki/Special:Search?namespace=3&q=x"), `<option value="3" selected>User talk</option>`)
	})

	t.Run("other spellings redirect to the canonical one; anything else is refused", func(t *testing.T) {
		for _, tc := range []struct{ path, to string }{
			{"/wiki/Special:AllPages?namespace=01", "/wiki/Special:AllPages?namespace=1"},
			{"/wiki/Special:AllPages?namespace=%2B1", "/wiki/Special:AllPages?namespace=1"},
			{"/wiki/Special:RecentChanges?namespace=00", "/wiki/Special:RecentChanges?namespace=0"},
			{"/wiki/Special:RecentChanges?namespace=+2", "/wiki/Special:RecentChanges?namespace=2"},
			{"/wiki/Special:RecentChanges?namespace=", "/wiki/Special:RecentChanges"},
			{"/wiki/Special:RecentChanges?namespace=all", "/wiki/Special:RecentChanges"},
			{"/wiki/Special:Search?q=jelly&namespace=1", "/wiki/Special:Search?namespace=1&q=jelly"},
		} {
			mustRedirect(t, get(t, anon, tc.path), http.StatusMovedPermanently, tc.to)
		}
		for _, path := range []string{"/wiki/Special:AllPages?namespace=abc", "/wiki/Special:RecentChanges?namespace=8",
			"/wiki/Special:Search?namespace=-1&q=x", "/wiki/Special:RecentChanges?namespace=1&namespace=2",
			"/w/rest.php/v1/search/page?namespace=Talk&q=x"} {
			res := get(t, anon, path)
			mustStatus(t, res, http.StatusBadRequest)
			if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("%s: Cache-Control %q", path, cc)
			}
			if !strings.Contains(res.Body, "number of a namespace") && !strings.Contains(res.Body, "given twice") {
				t.Errorf("%s: the error does not say what is wrong:\n%s", path, res.Body)
			}
		}
	})
}

// TestUserLinks: wherever an edit's author is shown, an account's name
// links to its user page (lists of edits add its talk page and
// contributions, as MediaWiki does), an anonymous editor's address to its
// contributions.
func TestUserLinks(t *testing.T) {
	t.Parallel()
	w := apptest.New(t, func(c *config.Config) { c.EditGroup = wiki.GroupAnonymous })
	_, pw := w.CreateUser(t, "Eve", wiki.GroupUser)
	eve := w.Login(t, "Eve", pw)
	anon := w.Client(t)
	eve.Edit("Linked", "First text.")
	anon.Edit("Linked", "Second text, by an address.")
	rc, err := w.App.Store.RecentChanges(t.Context(), wiki.ChangeQuery{Limit: 1})
	if err != nil || len(rc) != 1 {
		t.Fatalf("recent changes: %v, %v", rc, err)
	}
	addr := rc[0].UserName
	eveLink := `<a href="/wiki/User:Eve" class="username"><bdi>Eve</bdi></a>`
	eveTools := eveLink + ` <span class="usertools">(<a href="/wiki/User_talk:Eve">talk</a> | <a href="/wiki/Special:Contributions/Eve">contribs</a>)</span>`
	anonLink := `<a href="/wiki/Special:Contributions/` + addr + `" class="username anon"><bdi>` + addr + `</bdi></a>`
	anonTools := anonLink + ` <span class="usertools">(<a href="/wiki/User_talk:` + addr + `">talk</a>)</span>`

	mustContain(t, get(t, anon, "/wiki/Linked?action=history"), eveTools, anonTools)
	mustContain(t, get(t, anon, "/wiki/Special:RecentChanges"), eveTools, anonTools)
	mustContain(t, get(t, anon, "/wiki/Linked?diff=cur&oldid="+strconv.FormatInt(rc[0].OldRevID, 10)), eveTools, anonTools)
	mustContain(t, get(t, anon, "/wiki/Linked"), "by "+anonLink+".")
	mustContain(t, get(t, anon, "/wiki/Linked?oldid="+strconv.FormatInt(rc[0].OldRevID, 10)), "as edited by "+eveLink)
	// A user's contributions list their edits without the tool links:
	// the heading names the user.
	res := get(t, anon, "/wiki/Special:Contributions/Eve")
	mustContain(t, res, eveLink)
	mustNotContain(t, res, eveTools)
}

// The server reads titles from requests by the configuration's rules and
// the engine links pages by its renderer's: a server whose two disagree
// is refused, with what to do.
func TestTitleRulesOfConfigAndEngineAgree(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.CapitalLinks = false
	views, err := view.Parse(cfg.TitleRules())
	if err != nil {
		t.Fatal(err)
	}
	secret := make([]byte, 32)
	e := engine.New(engine.Options{Store: sqlitetest.Open(t)})
	if _, err := web.New(web.Options{Config: cfg, Engine: e, Views: views, Secret: secret}); err == nil || !strings.Contains(err.Error(), "render.WithTitleRules") {
		t.Errorf("capital_links false with a default renderer: %v, want an error saying how to build the renderer", err)
	}
	e = engine.New(engine.Options{Store: sqlitetest.Open(t), Renderer: render.New(render.WithTitleRules(cfg.TitleRules()))})
	if _, err := web.New(web.Options{Config: cfg, Engine: e, Views: views, Secret: secret}); err != nil {
		t.Errorf("capital_links false on both sides: %v", err)
	}
}
