package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/wiki"
)

// An infobox template, used with parameters, edited: every page using it
// serves the new version from the edge cache, with a new ETag, for
// anonymous and logged-in readers alike, and the edit form said how many
// pages that would be.
func TestTemplateEditReachesCachedPages(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Ann", wiki.GroupUser)
	ann := w.Login(t, "Ann", pw)
	anon := w.Client(t)

	ann.Edit("Template:Infobox", "| {{{name}}} | |\n|---|---|\n| Born | {{{born|unknown}}} |\n<noinclude>\nDocumentation of the infobox.\n</noinclude>\n")
	ann.Edit("Ada Lovelace", "{{Infobox|name=Ada Lovelace|born=1815}}\n\nA mathematician.\n")
	ann.Edit("Alan Turing", "{{Infobox|name=Alan Turing}}\n\nA computer scientist.\n")

	first := map[string]string{}
	for _, page := range []string{"/wiki/Ada_Lovelace", "/wiki/Alan_Turing"} {
		res := anon.Get(page)
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, "<td>Born</td>")
		mustNotContain(t, res, "Documentation of the infobox")
		if res = anon.Get(page); xcache(res) != "HIT" {
			t.Fatalf("%s: X-Cache %q on the second view, want HIT", page, xcache(res))
		}
		first[page] = res.Header.Get("ETag")
		mustContain(t, ann.Get(page), "<td>Born</td>")
	}
	mustContain(t, anon.Get("/wiki/Ada_Lovelace"), "1815")
	mustContain(t, anon.Get("/wiki/Alan_Turing"), "unknown")
	tpl := anon.Get("/wiki/Template:Infobox")
	mustContain(t, tpl, "Documentation of the infobox", "Pages using this template")

	form := ann.Get("/wiki/Template:Infobox?action=edit")
	mustContain(t, form, "2 pages use this page as a template")
	mustContain(t, ann.Get("/wiki/Ada_Lovelace?action=edit"), "Templates used on this page", `href="/wiki/Template:Infobox"`)
	links := anon.Get("/wiki/Special:WhatLinksHere/Template:Infobox")
	mustContain(t, links, "Ada Lovelace", "Alan Turing", "(transclusion)")

	ann.Edit("Template:Infobox", "| {{{name}}} | |\n|---|---|\n| Year of birth | {{{born|not known}}} |\n")
	w.Settle(t)
	for _, page := range []string{"/wiki/Ada_Lovelace", "/wiki/Alan_Turing"} {
		res := anon.Get(page)
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, "Year of birth")
		mustNotContain(t, res, "<td>Born</td>")
		if res.Header.Get("ETag") == first[page] {
			t.Errorf("%s: the ETag did not change with the template", page)
		}
		if again := anon.Get(page); xcache(again) != "HIT" {
			t.Errorf("%s: X-Cache %q after the refresh, want HIT (the new version cached)", page, xcache(again))
		}
		mustContain(t, ann.Get(page), "Year of birth")
	}
	mustContain(t, anon.Get("/wiki/Alan_Turing"), "not known")
}

// A preview expands templates and lists them; a loop is an error box.
func TestTemplatePreviewAndLoop(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Ann", wiki.GroupUser)
	ann := w.Login(t, "Ann", pw)
	ann.Edit("Template:Greet", "Hello, {{{1|stranger}}}!")
	ann.Edit("Template:Loop", "again {{Loop}}")
	csrf, base := ann.EditForm("Sandbox")
	res := ann.PostForm("/wiki/Sandbox?action=submit", url.Values{"csrf": {csrf}, "baserev": {base},
		"text": {"{{Greet|reader}} {{Missing one}} {{Loop}}"}, "preview": {"1"}})
	mustStatus(t, res, http.StatusOK)
	mustContain(t, res, "Hello, reader!", "Templates used in this preview", `class="error"`)
	if !strings.Contains(res.Body, `href="/wiki/Template:Missing_one?action=edit" class="new"`) {
		t.Errorf("the missing template is not listed as a red link")
	}
}

// Special:WhatLinksHere lists links and transclusions together in page ID
// order, as MediaWiki does, a page at a time from a page-ID cursor (one
// index range per page of the listing, however many pages use the title).
func TestWhatLinksHerePagesByPageID(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Ann", wiki.GroupUser)
	ann := w.Login(t, "Ann", pw)
	anon := w.Client(t)
	ann.Edit("Template:Used", "used")
	// Created in this order: their IDs rise from Zulu to Alpha.
	ann.Edit("Zulu", "[[Template:Used]]")
	ann.Edit("Yankee", "{{Used}}")
	ann.Edit("Xray", "[[Template:Used]] and {{Used}}")
	ann.Edit("Alpha", "[[Template:Used]]")
	w.Settle(t)

	first := anon.Get("/wiki/Special:WhatLinksHere/Template:Used?limit=2")
	mustStatus(t, first, http.StatusOK)
	mustContain(t, first, `href="/wiki/Zulu"`, `href="/wiki/Yankee"`, "(transclusion)")
	mustNotContain(t, first, `href="/wiki/Xray"`, `href="/wiki/Alpha"`)
	if strings.Index(first.Body, `href="/wiki/Zulu"`) > strings.Index(first.Body, `href="/wiki/Yankee"`) {
		t.Errorf("not in page ID order:\n%s", first.Body)
	}
	next := between(first.Body, `href="/wiki/Special:WhatLinksHere/Template:Used?from=`, `"`)
	if next == "" {
		t.Fatalf("no next link:\n%s", first.Body)
	}
	rest := anon.Get("/wiki/Special:WhatLinksHere/Template:Used?from=" + strings.ReplaceAll(next, "&amp;", "&"))
	mustStatus(t, rest, http.StatusOK)
	mustContain(t, rest, `href="/wiki/Xray"`, `href="/wiki/Alpha"`)
	mustNotContain(t, rest, `href="/wiki/Zulu"`, `href="/wiki/Yankee"`)

	for _, bad := range []string{"Xray", "0", "-3"} {
		res := anon.Get("/wiki/Special:WhatLinksHere/Template:Used?from=" + url.QueryEscape(bad))
		mustStatus(t, res, http.StatusBadRequest)
		mustContain(t, res, "page number")
	}
}

// between returns the text of s between the first before and the next
// after, or "".
func between(s, before, after string) string {
	_, rest, ok := strings.Cut(s, before)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, after)
	return v
}
