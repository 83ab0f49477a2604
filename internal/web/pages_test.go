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

// mustStatus fails the test unless res has the wanted status.
func mustStatus(t *testing.T, res *apptest.Response, want int) {
	t.Helper()
	if res.StatusCode != want {
		body := res.Body
		if len(body) > 2000 {
			body = body[:2000] + "…"
		}
		t.Fatalf("%s %s: status %d, want %d\n%s", res.Request.Method, res.Request.URL.RequestURI(), res.StatusCode, want, body)
	}
}

func mustContain(t *testing.T, res *apptest.Response, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(res.Body, s) {
			t.Errorf("%s %s: body lacks %q", res.Request.Method, res.Request.URL.RequestURI(), s)
		}
	}
}

func mustNotContain(t *testing.T, res *apptest.Response, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if strings.Contains(res.Body, s) {
			t.Errorf("%s %s: body has %q but should not", res.Request.Method, res.Request.URL.RequestURI(), s)
		}
	}
}

func mustRedirect(t *testing.T, res *apptest.Response, status int, location string) {
	t.Helper()
	mustStatus(t, res, status)
	if got := res.Header.Get("Location"); got != location {
		t.Errorf("%s %s: Location %q, want %q", res.Request.Method, res.Request.URL.RequestURI(), got, location)
	}
}

var revIDRE = regexp.MustCompile(`\?oldid=(\d+)"`)

// revisionIDs returns the revision IDs linked from a history page, newest first.
func revisionIDs(t *testing.T, c *apptest.Client, title string) []string {
	t.Helper()
	res := c.Get(wiki.MustTitle(title).URL() + "?action=history")
	mustStatus(t, res, http.StatusOK)
	var ids []string
	for _, m := range revIDRE.FindAllStringSubmatch(res.Body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

func TestReadingAndEditing(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Alice", wiki.GroupUser)
	_, adminPW := w.CreateUser(t, "Root", wiki.GroupAdmin)
	anon := w.Client(t)
	alice := w.Login(t, "Alice", pw)
	admin := w.Login(t, "Root", adminPW)

	t.Run("the root redirects to the seeded main page", func(t *testing.T) {
		mustRedirect(t, anon.Get("/"), http.StatusFound, "/wiki/Main_Page")
		res := anon.Get("/wiki/Main_Page")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, "Wikid")
	})

	t.Run("the syntax help is seeded", func(t *testing.T) {
		mustStatus(t, anon.Get("/wiki/Help:Syntax"), http.StatusOK)
	})

	t.Run("titles are normalized with a permanent redirect", func(t *testing.T) {
		cases := []struct{ path, want string }{
			{"/wiki/Main%20Page", "/wiki/Main_Page"},
			{"/wiki/Main__Page", "/wiki/Main_Page"},
			// As in MediaWiki only the first letter is case-folded:
			// main_page is the title "Main page", not "Main Page".
			{"/wiki/main_page", "/wiki/Main_page"},
			{"/wiki/help:Syntax", "/wiki/Help:Syntax"},
			{"/wiki/Main_Page?action=history", "/wiki/Main_Page?action=history"},
		}
		for _, c := range cases {
			res := anon.Get(c.path)
			if c.path == c.want {
				mustStatus(t, res, http.StatusOK)
				continue
			}
			mustRedirect(t, res, http.StatusMovedPermanently, c.want)
		}
	})

	t.Run("a link to a missing page is red and points to its edit form", func(t *testing.T) {
		alice.Edit("Linker", "See [[Link target]] for more.\n")
		res := anon.Get("/wiki/Linker")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, `href="/wiki/Link_target?action=edit&amp;redlink=1" class="new"`)
	})

	t.Run("creating the target turns the link blue without editing the linking page", func(t *testing.T) {
		alice.Edit("Link target", "I exist now.\n")
		res := anon.Get("/wiki/Linker")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, `href="/wiki/Link_target"`)
		mustNotContain(t, res, `href="/wiki/Link_target?action=edit`)
	})

	t.Run("an edit from the latest base makes a new revision listed in the history", func(t *testing.T) {
		alice.Edit("Linker", "See [[Link target]] for more.\n\nA second paragraph.\n")
		ids := revisionIDs(t, anon, "Linker")
		if len(ids) != 2 {
			t.Fatalf("history lists revisions %v, want 2", ids)
		}
		res := anon.Get("/wiki/Linker")
		mustContain(t, res, "A second paragraph.")
	})

	t.Run("a diff shows insertions and deletions in a table", func(t *testing.T) {
		alice.Edit("Diffed", "alpha\nbeta\ngamma\n")
		alice.Edit("Diffed", "alpha\nBETA\ngamma\ndelta\n")
		ids := revisionIDs(t, anon, "Diffed")
		res := anon.Get("/wiki/Diffed?diff=" + ids[0] + "&oldid=" + ids[1])
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, `<table class="diff`, "<ins", "<del", "delta")
	})

	t.Run("raw returns the source as plain text", func(t *testing.T) {
		res := anon.Get("/wiki/Diffed?action=raw")
		mustStatus(t, res, http.StatusOK)
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
			t.Errorf("Content-Type %q, want text/plain", ct)
		}
		if res.Body != "alpha\nBETA\ngamma\ndelta\n" {
			t.Errorf("raw body %q", res.Body)
		}
	})

	t.Run("a redirect page is followed and says where from", func(t *testing.T) {
		alice.Edit("Shortcut", "#REDIRECT [[Link target]]\n")
		res := anon.Get("/wiki/Shortcut")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, "Redirected from", "I exist now.")
		res = anon.Get("/wiki/Shortcut?redirect=no")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, "Redirect to:")
		mustNotContain(t, res, "Redirected from")
	})

	t.Run("moving a page leaves a redirect behind", func(t *testing.T) {
		alice.Edit("Old name", "Moving content.\n")
		csrf := alice.CSRF("/wiki/Old_name?action=move")
		res := alice.PostForm("/wiki/Old_name?action=move", url.Values{"csrf": {csrf}, "newtitle": {"New name"}, "redirect": {"1"}, "reason": {"tidy"}})
		mustRedirect(t, res, http.StatusSeeOther, "/wiki/New_name")
		res = anon.Get("/wiki/Old_name")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, "Redirected from", "Moving content.")
	})

	t.Run("an administrator's delete hides the page from views, lists and search", func(t *testing.T) {
		alice.Edit("Doomed page", "Zanzibarish content.\n")
		csrf := admin.CSRF("/wiki/Doomed_page?action=delete")
		res := admin.PostForm("/wiki/Doomed_page?action=delete", url.Values{"csrf": {csrf}, "reason": {"spam"}})
		mustStatus(t, res, http.StatusSeeOther)
		mustStatus(t, anon.Get("/wiki/Doomed_page"), http.StatusNotFound)
		mustStatus(t, anon.Get("/wiki/Doomed_page?action=raw"), http.StatusNotFound)
		mustNotContain(t, anon.Get("/wiki/Special:AllPages"), "Doomed")
		mustNotContain(t, anon.Get("/wiki/Special:Search?q=Zanzibarish"), "Doomed")
	})

	t.Run("undelete restores the page", func(t *testing.T) {
		csrf := admin.CSRF("/wiki/Doomed_page?action=undelete")
		res := admin.PostForm("/wiki/Doomed_page?action=undelete", url.Values{"csrf": {csrf}})
		mustStatus(t, res, http.StatusSeeOther)
		res = anon.Get("/wiki/Doomed_page")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, "Zanzibarish")
		mustContain(t, anon.Get("/wiki/Special:AllPages"), "Doomed page")
	})

	t.Run("a non-administrator may not delete", func(t *testing.T) {
		csrf := alice.CSRF("/wiki/Special:UserLogin")
		res := alice.PostForm("/wiki/Doomed_page?action=delete", url.Values{"csrf": {csrf}})
		mustStatus(t, res, http.StatusForbidden)
		mustStatus(t, anon.Get("/wiki/Doomed_page"), http.StatusOK)
	})

	t.Run("revert restores an older revision's text", func(t *testing.T) {
		alice.Edit("Reverted", "good text\n")
		alice.Edit("Reverted", "vandalism\n")
		ids := revisionIDs(t, alice, "Reverted")
		diffPage := alice.Get("/wiki/Reverted?diff=" + ids[0] + "&oldid=" + ids[1])
		mustContain(t, diffPage, "Revert to the older revision")
		csrf := regexp.MustCompile(`name="csrf" value="([^"]*)"`).FindStringSubmatch(diffPage.Body)[1]
		res := alice.PostForm("/wiki/Reverted?action=revert", url.Values{"csrf": {csrf}, "oldid": {ids[1]}})
		mustStatus(t, res, http.StatusSeeOther)
		res = anon.Get("/wiki/Reverted?action=raw")
		if res.Body != "good text\n" {
			t.Errorf("after revert, raw text %q", res.Body)
		}
		if n := len(revisionIDs(t, anon, "Reverted")); n != 3 {
			t.Errorf("after revert, %d revisions, want 3", n)
		}
	})

	t.Run("a category page lists its members", func(t *testing.T) {
		alice.Edit("Apple", "A fruit.\n\n[[Category:Fruit]]\n")
		alice.Edit("Banana", "Another fruit.\n\n[[Category:Fruit]]\n")
		res := anon.Get("/wiki/Category:Fruit")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, `href="/wiki/Apple"`, `href="/wiki/Banana"`)
		mustContain(t, anon.Get("/wiki/Apple"), `href="/wiki/Category:Fruit"`)

		// Subcategories come first, in a list of their own; the category
		// page's listing follows a new member through the purge.
		alice.Edit("Category:Citrus", "Sour fruit.\n\n[[Category:Fruit]]\n")
		res = anon.Get("/wiki/Category:Fruit")
		sub, pages := strings.Index(res.Body, "<h2>Subcategories</h2>"), strings.Index(res.Body, "Pages in category")
		citrus := strings.Index(res.Body, `href="/wiki/Category:Citrus"`)
		if sub < 0 || pages < 0 || citrus < sub || citrus > pages || strings.LastIndex(res.Body, `href="/wiki/Category:Citrus"`) != citrus {
			t.Errorf("the subcategory is not listed first and once (subcategories at %d, pages at %d, Citrus at %d)", sub, pages, citrus)
		}
	})

	t.Run("a subpage shows breadcrumbs to its existing parents", func(t *testing.T) {
		alice.Edit("Guide", "Top.\n")
		alice.Edit("Guide/Part one/Step", "Deep.\n")
		res := anon.Get("/wiki/Guide/Part_one/Step")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, `class="breadcrumbs"`, `<a href="/wiki/Guide">Guide</a>`)
		mustNotContain(t, res, `href="/wiki/Guide/Part_one"`)
	})

	t.Run("recent changes lists edits newest first", func(t *testing.T) {
		res := anon.Get("/wiki/Special:RecentChanges")
		mustStatus(t, res, http.StatusOK)
		i, j := strings.Index(res.Body, ">Guide/Part one/Step<"), strings.Index(res.Body, ">Apple<")
		if i < 0 || j < 0 || i > j {
			t.Errorf("recent changes: newest edit at %d, older at %d", i, j)
		}
	})

	t.Run("all pages filters by prefix", func(t *testing.T) {
		res := anon.Get("/wiki/Special:AllPages?prefix=Gui")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, `href="/wiki/Guide"`)
		mustNotContain(t, res, `href="/wiki/Apple"`)
		mustRedirect(t, anon.Get("/wiki/Special:PrefixIndex/Ban"), http.StatusMovedPermanently, "/wiki/Special:AllPages?prefix=Ban")
		mustContain(t, anon.Get("/wiki/Special:AllPages?prefix=Ban"), `href="/wiki/Banana"`)
	})

	t.Run("what links here lists the linking pages", func(t *testing.T) {
		res := anon.Get("/wiki/Special:WhatLinksHere/Link_target")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, `href="/wiki/Linker"`)
	})

	t.Run("search finds English and Korean text with highlighted snippets", func(t *testing.T) {
		alice.Edit("한국어 위키", "위키는 누구나 편집할 수 있는 웹사이트입니다\n")
		for _, q := range []string{"위키", "편집할", "Zanzibarish"} {
			res := anon.Get("/wiki/Special:Search?q=" + url.QueryEscape(q))
			mustStatus(t, res, http.StatusOK)
			mustContain(t, res, "<mark>")
			if q != "Zanzibarish" {
				mustContain(t, res, `href="`+wiki.MustTitle("한국어 위키").URL()+`"`)
			} else {
				mustContain(t, res, `href="/wiki/Doomed_page"`)
			}
		}
	})

	t.Run("search matches and shows the text readers see, not the markup", func(t *testing.T) {
		alice.Edit("Markup page", "Some **Quixotic** words, a [[Link target|Quixotic link]], `code` and [x](https://example.org/Quixotic).\n\n[[Category:Quixotic]]\n")
		w.Settle(t)
		res := anon.Get("/wiki/Special:Search?q=Quixotic")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, `href="/wiki/Markup_page"`, "Some <mark>Quixotic</mark> words, a <mark>Quixotic</mark> link, code and x.")
		mustNotContain(t, res, "**", "[[", "example.org")
		mustNotContain(t, anon.Get("/wiki/Special:Search?q=example.org"), `href="/wiki/Markup_page"`)
	})

	t.Run("edit summaries show their wiki links and no other markup", func(t *testing.T) {
		alice.Edit("Summarized", "one\n")
		csrf, base := alice.EditForm("Summarized")
		res := alice.PostForm("/wiki/Summarized?action=submit", url.Values{"csrf": {csrf}, "baserev": {base}, "text": {"two\n"},
			"summary": {"Fix **bold** per [[Link target|the <target>]] and [[Nowhere]] <b onclick=x>b</b>"}})
		mustStatus(t, res, http.StatusSeeOther)
		want := `Fix **bold** per <a href="/wiki/Link_target" title="Link target">the &lt;target&gt;</a> and <a href="/wiki/Nowhere" title="Nowhere">Nowhere</a> &lt;b onclick=x&gt;b&lt;/b&gt;`
		ids := revisionIDs(t, anon, "Summarized")
		for _, path := range []string{"/wiki/Summarized?action=history", "/wiki/Special:RecentChanges", "/wiki/Special:Contributions/Alice",
			"/wiki/Summarized?diff=" + ids[0] + "&oldid=" + ids[1]} {
			res := anon.Get(path)
			mustStatus(t, res, http.StatusOK)
			mustContain(t, res, `<span class="summary">(<bdi>`+want+`</bdi>)</span>`)
			mustNotContain(t, res, "<b onclick")
		}
	})

	t.Run("search with go jumps to an exact title", func(t *testing.T) {
		mustRedirect(t, anon.Get("/wiki/Special:Search?q=Apple&go=Go"), http.StatusMovedPermanently, "/wiki/Special:Search?go=1&q=Apple")
		mustRedirect(t, anon.Get("/wiki/Special:Search?go=1&q=Apple"), http.StatusFound, "/wiki/Apple")
	})

	t.Run("random redirects to a page", func(t *testing.T) {
		res := anon.Get("/wiki/Special:Random")
		mustStatus(t, res, http.StatusFound)
		if !strings.HasPrefix(res.Header.Get("Location"), "/wiki/") {
			t.Errorf("Location %q", res.Header.Get("Location"))
		}
	})

	t.Run("contributions list a user's edits", func(t *testing.T) {
		res := anon.Get("/wiki/Special:Contributions/Alice")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, `href="/wiki/Apple"`)
		mustNotContain(t, anon.Get("/wiki/Special:Contributions/Root"), `href="/wiki/Apple"`)
	})

	t.Run("MediaWiki index.php links redirect to the wiki path", func(t *testing.T) {
		mustRedirect(t, anon.Get("/w/index.php?title=Apple&action=history"), http.StatusMovedPermanently, "/wiki/Apple?action=history")
	})

	t.Run("an anonymous edit link leads to the login form", func(t *testing.T) {
		res := anon.Get("/wiki/Apple?action=edit")
		mustStatus(t, res, http.StatusFound)
		if !strings.HasPrefix(res.Header.Get("Location"), "/wiki/Special:UserLogin?returnto=") {
			t.Errorf("Location %q", res.Header.Get("Location"))
		}
	})

	t.Run("a page view answers a conditional GET with 304", func(t *testing.T) {
		res := anon.Get("/wiki/Apple")
		etag := res.Header.Get("ETag")
		if etag == "" {
			t.Fatal("no ETag")
		}
		r := anon.NewRequest(http.MethodGet, "/wiki/Apple", nil)
		r.Header.Set("If-None-Match", etag)
		mustStatus(t, anon.Do(r), http.StatusNotModified)
	})
}

func TestRegistration(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	c := w.Client(t)
	csrf := c.CSRF("/wiki/Special:CreateAccount")

	t.Run("registering logs the new user in", func(t *testing.T) {
		res := c.PostForm("/wiki/Special:CreateAccount", url.Values{"csrf": {csrf}, "username": {"newbie"},
			"password": {"long-enough-pw"}, "retype": {"long-enough-pw"}, "returnto": {"Help:Syntax"}})
		mustRedirect(t, res, http.StatusSeeOther, "/wiki/Help:Syntax")
		res = c.Get("/wiki/Help:Syntax")
		mustContain(t, res, `class="me"><bdi>Newbie</bdi></a>`, "Log out")
	})

	t.Run("a taken name is refused with the form again", func(t *testing.T) {
		other := w.Client(t)
		res := other.PostForm("/wiki/Special:CreateAccount", url.Values{"csrf": {csrf}, "username": {"Newbie"},
			"password": {"long-enough-pw"}, "retype": {"long-enough-pw"}})
		mustStatus(t, res, http.StatusBadRequest)
		mustContain(t, res, "already taken")
		if other.SessionCookie() != "" {
			t.Error("a refused registration set a session cookie")
		}
	})

	t.Run("mismatched passwords are refused", func(t *testing.T) {
		res := w.Client(t).PostForm("/wiki/Special:CreateAccount", url.Values{"csrf": {csrf}, "username": {"Other"},
			"password": {"long-enough-pw"}, "retype": {"long-enough-px"}})
		mustStatus(t, res, http.StatusBadRequest)
		mustContain(t, res, "differ")
	})
}
