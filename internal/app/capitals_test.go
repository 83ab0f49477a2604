package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/wiki"
)

func capitalLinksOff(c *config.Config) { c.CapitalLinks = false }

// A wiki started with capital_links false, as a Wiktionary: "apple" and
// "Apple" are two pages, links and URLs keep the first letter as written,
// and user pages are capitalized all the same.
func TestCapitalLinksFalse(t *testing.T) {
	t.Parallel()
	w := apptest.New(t, capitalLinksOff)
	_, pw := w.CreateUser(t, "Editor", wiki.GroupUser)
	ed := w.Login(t, "Editor", pw)
	ed.Edit("apple", "A fruit.\n")
	ed.Edit("Apple", "A company.\n")
	ed.Edit("Template:fruit", "lower-case template")
	ed.Edit("Template:Fruit", "upper-case template")
	ed.Edit("fruits", "[[apple]], [[Apple]], [[pear]], [[user:bob]] and {{fruit}}.\n")
	c := w.Client(t)

	t.Run("apple and Apple are two pages, neither redirected", func(t *testing.T) {
		for path, text := range map[string]string{"/wiki/apple": "A fruit.", "/wiki/Apple": "A company."} {
			res := c.Get(path)
			if res.StatusCode != http.StatusOK || !strings.Contains(res.Body, text) {
				t.Errorf("GET %s: %d, want 200 with %q\n%s", path, res.StatusCode, text, res.Body)
			}
			if raw := c.Get(path + "?action=raw"); raw.Body != text+"\n" {
				t.Errorf("GET %s?action=raw: %q, want %q", path, raw.Body, text+"\n")
			}
		}
	})

	t.Run("links keep the first letter as written, templates too", func(t *testing.T) {
		body := c.Get("/wiki/fruits").Body
		for _, want := range []string{
			`<a href="/wiki/apple" title="apple">apple</a>`,
			`<a href="/wiki/Apple" title="Apple">Apple</a>`,
			`<a href="/wiki/pear?action=edit&amp;redlink=1" class="new" title="pear (page does not exist)">pear</a>`,
			`href="/wiki/User:Bob?action=edit&amp;redlink=1"`,
			"and lower-case template.",
		} {
			if !strings.Contains(body, want) {
				t.Errorf("fruits lacks %s:\n%s", want, body)
			}
		}
		// The link rows are by the same rules: apple's backlinks list fruits.
		if res := c.Get("/wiki/Special:WhatLinksHere/apple"); !strings.Contains(res.Body, `href="/wiki/fruits"`) {
			t.Errorf("WhatLinksHere/apple does not list fruits (%d):\n%s", res.StatusCode, res.Body)
		}
		if res := c.Get("/wiki/apple"); !strings.Contains(res.Body, `href="/wiki/Talk:apple?action=edit&amp;redlink=1"`) {
			t.Errorf("apple's discussion tab is not Talk:apple:\n%s", res.Body)
		}
	})

	t.Run("other spellings are still canonicalized, keeping the case of the first letter", func(t *testing.T) {
		for _, tc := range []struct{ target, location string }{
			{"/wiki/apple%20pie", "/wiki/apple_pie"},
			{"/wiki/talk:apple", "/wiki/Talk:apple"},
			{"/wiki/help_talk:syntax", "/wiki/Help_talk:syntax"},
			{"/wiki/User:bob", "/wiki/User:Bob"},
			{"/wiki/user_talk:bob", "/wiki/User_talk:Bob"},
			{"/wiki/apple?action=view", "/wiki/apple"},
			{"/wiki/apple?action=history&action=", "/wiki/apple?action=history"},
			{"/wiki/Special:AllPages?from=apple&utm_source=x", "/wiki/Special:AllPages?from=apple"},
			{"/w/index.php?title=apple", "/wiki/apple"},
			{"/w/index.php?title=user:bob", "/wiki/User:Bob"},
		} {
			res := c.Get(tc.target)
			if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != tc.location {
				t.Errorf("GET %s: %d to %q, want 301 to %q", tc.target, res.StatusCode, res.Header.Get("Location"), tc.location)
			}
		}
	})

	t.Run("search, REST and the move form read titles by the same rules", func(t *testing.T) {
		if res := c.Get("/wiki/Special:Search?go=1&q=apple"); res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/wiki/apple" {
			t.Errorf("Go to apple: %d to %q, want 302 to /wiki/apple", res.StatusCode, res.Header.Get("Location"))
		}
		res := c.Get("/w/rest.php/v1/page/apple")
		if res.StatusCode != http.StatusOK || !strings.Contains(res.Body, `"title":"apple"`) || !strings.Contains(res.Body, "A fruit.") {
			t.Errorf("REST page/apple: %d\n%s", res.StatusCode, res.Body)
		}
		if res := c.Get("/wiki/Special:AllPages?prefix=app"); !strings.Contains(res.Body, `href="/wiki/apple"`) || strings.Contains(res.Body, `href="/wiki/Apple"`) {
			t.Errorf("AllPages prefix=app does not list apple alone:\n%s", res.Body)
		}
		csrf := ed.CSRF("/wiki/fruits?action=move")
		res = ed.PostForm("/wiki/fruits?action=move", map[string][]string{"csrf": {csrf}, "newtitle": {"fruit salad"}, "reason": {"test"}})
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/wiki/fruit_salad" {
			t.Errorf("move to fruit salad: %d to %q, want 303 to /wiki/fruit_salad\n%s", res.StatusCode, res.Header.Get("Location"), res.Body)
		}
	})
}

// A wiki whose capital_links is turned off after its pages were viewed
// renders them again: no stored or cached render made under the other
// setting is served.
func TestCapitalLinksChangeRendersAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := apptest.New(t, func(c *config.Config) { c.DataDir = dir })
	_, pw := w.CreateUser(t, "Editor", wiki.GroupUser)
	ed := w.Login(t, "Editor", pw)
	ed.Edit("Apple", "A company.\n")
	ed.Edit("Fruits", "[[apple]]\n")
	if body := w.Client(t).Get("/wiki/Fruits").Body; !strings.Contains(body, `<a href="/wiki/Apple" title="Apple">apple</a>`) {
		t.Fatalf("with capital_links true, [[apple]] is not a link to Apple:\n%s", body)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w2 := apptest.New(t, func(c *config.Config) { c.DataDir = dir; c.CapitalLinks = false })
	body := w2.Client(t).Get("/wiki/Fruits").Body
	if !strings.Contains(body, `<a href="/wiki/apple?action=edit&amp;redlink=1" class="new" title="apple (page does not exist)">apple</a>`) {
		t.Errorf("with capital_links false, [[apple]] is not a red link to apple (an old render served?):\n%s", body)
	}
}
