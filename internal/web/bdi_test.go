package web_test

import (
	"net/url"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/wiki"
)

// unisolated returns the text nodes of page that contain needle outside a
// <bdi> element (and outside <title>, which can hold no markup, form fields,
// where the text is a value, and diff tables, where it is the page's text).
func unisolated(t *testing.T, page, needle string) []string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	var walk func(n *html.Node, isolated bool)
	walk = func(n *html.Node, isolated bool) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "bdi":
				isolated = true
			case "title", "textarea", "script", "style":
				return
			case "table": // a diff's cells are the page's text, not names
				for _, a := range n.Attr {
					if a.Key == "class" && strings.Contains(a.Val, "diff") {
						return
					}
				}
			}
		}
		if n.Type == html.TextNode && !isolated && strings.Contains(n.Data, needle) {
			parent := ""
			if n.Parent != nil {
				parent = n.Parent.Data
			}
			bad = append(bad, "<"+parent+">"+n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, isolated)
		}
	}
	walk(doc, false)
	return bad
}

// Every user name and title shown in running text or a list is isolated
// with <bdi>, so that right-to-left text in it cannot reorder what is
// around it (the byte counts, the dates, the next name).
func TestNamesAndTitlesAreIsolated(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	const user, page, cat = "ערן", "שלום עולם", "קטגוריה"
	_, pw := w.CreateUser(t, user, wiki.GroupAdmin)
	c := w.Login(t, user, pw)
	c.Edit("Category:"+cat, "a category")
	c.Edit(page, "first [[Category:"+cat+"]] [[Elsewhere]]")
	c.Edit(page, "second [[Category:"+cat+"]] [[Elsewhere]]")
	c.Edit("Elsewhere", "links back to [["+page+"]]")
	w.Settle(t)
	p, err := w.App.Store.FindPage(t.Context(), wiki.MustTitle(page))
	if err != nil {
		t.Fatal(err)
	}
	key := url.PathEscape(wiki.MustTitle(page).Key())
	for _, path := range []string{
		"/wiki/Special:RecentChanges",
		"/wiki/Special:Contributions/" + url.PathEscape(user),
		"/wiki/" + key + "?action=history",
		"/wiki/" + key + "?diff=" + strconv.FormatInt(p.LatestID, 10),
		"/wiki/" + key + "?oldid=" + strconv.FormatInt(p.LatestID, 10),
		"/wiki/" + key,
		"/wiki/" + key + "?action=edit",
		"/wiki/Special:AllPages",
		"/wiki/Special:AllPages?prefix=" + url.QueryEscape(page),
		"/wiki/Special:WhatLinksHere/" + key,
		"/wiki/Special:Categories",
		"/wiki/Category:" + url.PathEscape(cat),
		"/wiki/Special:Search?fulltext=1&search=second",
		"/wiki/Main_Page",
	} {
		res := c.Get(path)
		if loc := res.Header.Get("Location"); res.StatusCode == 301 && loc != "" {
			res = c.Get(loc) // to the canonical form of the query
		}
		if res.StatusCode != 200 {
			t.Errorf("GET %s: %d", path, res.StatusCode)
			continue
		}
		for _, needle := range []string{user, page, cat} {
			if bad := unisolated(t, res.Body, needle); len(bad) > 0 {
				t.Errorf("GET %s: %q shown without <bdi> in %q", path, needle, bad)
			}
		}
		if !strings.Contains(res.Body, "<bdi>") {
			t.Errorf("GET %s: no <bdi> at all", path)
		}
	}
}
