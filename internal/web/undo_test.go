package web_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/wiki"
)

var (
	undoTextareaRE = regexp.MustCompile(`(?s)<textarea id="wpTextbox1" name="text"[^>]*>(.*?)</textarea>`)
	summaryRE      = regexp.MustCompile(`id="wpSummary" name="summary"[^>]*value="([^"]*)"`)
)

// formText returns the text and summary an edit form opens with.
func formText(t *testing.T, res *apptest.Response) (text, summary string) {
	t.Helper()
	m, s := undoTextareaRE.FindStringSubmatch(res.Body), summaryRE.FindStringSubmatch(res.Body)
	if m == nil || s == nil {
		t.Fatalf("%s: no edit form in\n%s", res.Request.URL.RequestURI(), res.Body)
	}
	return html.UnescapeString(strings.TrimPrefix(m[1], "\n")), html.UnescapeString(s[1])
}

// latestRevision returns the latest revision of title, from the store.
func latestRevision(t *testing.T, w *apptest.Wiki, title string) wiki.Revision {
	t.Helper()
	ctx := context.Background()
	p, err := w.App.Store.FindPage(ctx, wiki.MustTitle(title))
	if err != nil {
		t.Fatal(err)
	}
	r, err := w.App.Store.FindRevision(ctx, p.LatestID)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// firstRevision returns the first revision of title, from the store.
func firstRevision(t *testing.T, w *apptest.Wiki, title string) wiki.Revision {
	t.Helper()
	ctx := context.Background()
	p, err := w.App.Store.FindPage(ctx, wiki.MustTitle(title))
	if err != nil {
		t.Fatal(err)
	}
	revs, err := w.App.Store.History(ctx, wiki.HistoryQuery{PageID: p.ID, Limit: 500})
	if err != nil || len(revs) == 0 {
		t.Fatalf("history of %q: %v", title, err)
	}
	return revs[len(revs)-1]
}

// saveUndo opens an undo form and saves it as it is, with its hidden fields.
func saveUndo(t *testing.T, c *apptest.Client, title, query string) *apptest.Response {
	t.Helper()
	path := wiki.MustTitle(title).URL()
	form := c.Get(path + "?action=edit&" + query)
	mustStatus(t, form, http.StatusOK)
	text, summary := formText(t, form)
	q, _ := url.ParseQuery(query)
	v := url.Values{"csrf": {csrfRE.FindStringSubmatch(form.Body)[1]}, "baserev": {baserevRE.FindStringSubmatch(form.Body)[1]},
		"text": {text}, "summary": {summary}, "undo": {q.Get("undo")}, "undoafter": {q.Get("undoafter")}}
	return c.PostForm(path+"?action=submit", v)
}

var (
	csrfRE    = regexp.MustCompile(`name="csrf" value="([^"]*)"`)
	baserevRE = regexp.MustCompile(`name="baserev" value="(\d+)"`)
)

func TestUndo(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	users := map[string]*apptest.Client{}
	for _, n := range []string{"Alice", "Bob", "Carol"} {
		_, pw := w.CreateUser(t, n, wiki.GroupUser)
		users[n] = w.Login(t, n, pw)
	}
	alice, bob, carol := users["Alice"], users["Bob"], users["Carol"]
	anon := w.Client(t)

	t.Run("undoing a middle revision merges the later edits in, and the save is tagged undo", func(t *testing.T) {
		alice.Edit("Undone", "one\ntwo\nthree\nfour\n")
		bob.Edit("Undone", "one\nTWO\nthree\nfour\n")
		bobs := latestRevision(t, w, "Undone")
		carol.Edit("Undone", "one\nTWO\nthree\nFOUR\n")
		res := alice.Get("/wiki/Undone?action=edit&undo=" + itoa(bobs.ID))
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, "Check the comparison below, then save to undo", `<table class="diff`, `name="undo" value="`+itoa(bobs.ID)+`"`)
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") && !strings.Contains(cc, "private") {
			t.Errorf("undo form Cache-Control %q, want it kept from shared caches", cc)
		}
		text, summary := formText(t, res)
		if text != "one\ntwo\nthree\nFOUR\n" {
			t.Errorf("undo form text %q, want Bob's change gone and Carol's kept", text)
		}
		if want := "Undo revision " + itoa(bobs.ID) + " by [[Special:Contributions/Bob|Bob]]"; summary != want {
			t.Errorf("summary %q, want %q", summary, want)
		}
		mustStatus(t, saveUndo(t, alice, "Undone", "undo="+itoa(bobs.ID)), http.StatusSeeOther)
		rev := latestRevision(t, w, "Undone")
		if rev.Text != "one\ntwo\nthree\nFOUR\n" || len(rev.Tags) != 1 || rev.Tags[0] != wiki.TagUndo {
			t.Fatalf("saved revision %q with tags %q", rev.Text, rev.Tags)
		}
		mustContain(t, anon.Get("/wiki/Undone?action=history"), `<span class="tag tag-undo"`)
		mustContain(t, anon.Get("/wiki/Special:RecentChanges"), `<span class="tag tag-undo"`)
		mustContain(t, anon.Get("/wiki/Special:Contributions/Alice"), `<span class="tag tag-undo"`)
	})

	t.Run("an ordinary edit carries no tag", func(t *testing.T) {
		bob.Edit("Untagged", "plain\n")
		if rev := latestRevision(t, w, "Untagged"); rev.Tags != nil {
			t.Fatalf("tags %q on an ordinary edit", rev.Tags)
		}
	})

	t.Run("an undo that later edits conflict with says so instead of opening a form", func(t *testing.T) {
		alice.Edit("Conflicting", "a\nb\nc\n")
		bob.Edit("Conflicting", "a\nB\nc\n")
		bobs := latestRevision(t, w, "Conflicting")
		carol.Edit("Conflicting", "a\nBB\nc\n")
		res := alice.Get("/wiki/Conflicting?action=edit&undo=" + itoa(bobs.ID))
		mustStatus(t, res, http.StatusConflict)
		mustContain(t, res, "The edit could not be undone because later edits changed the same lines", "/wiki/Conflicting?action=history")
		mustNotContain(t, res, `name="text"`, "&lt;&lt;&lt;&lt;&lt;&lt;&lt;")
	})

	t.Run("a range of revisions is undone at once", func(t *testing.T) {
		alice.Edit("Ranged", "1\n2\n3\n4\n5\n")
		first := latestRevision(t, w, "Ranged")
		bob.Edit("Ranged", "1\nX\n3\n4\n5\n")
		from := latestRevision(t, w, "Ranged")
		bob.Edit("Ranged", "1\nX\n3\nY\n5\n")
		to := latestRevision(t, w, "Ranged")
		carol.Edit("Ranged", "1\nX\n3\nY\n5\n6\n")
		q := "undo=" + itoa(to.ID) + "&undoafter=" + itoa(first.ID)
		res := alice.Get("/wiki/Ranged?action=edit&" + q)
		mustStatus(t, res, http.StatusOK)
		text, summary := formText(t, res)
		if text != "1\n2\n3\n4\n5\n6\n" {
			t.Errorf("range undo text %q", text)
		}
		if want := "Undo revisions " + itoa(from.ID) + " to " + itoa(to.ID) + " by [[Special:Contributions/Bob|Bob]]"; summary != want {
			t.Errorf("summary %q, want %q", summary, want)
		}
		mustStatus(t, saveUndo(t, alice, "Ranged", q), http.StatusSeeOther)
		if rev := latestRevision(t, w, "Ranged"); rev.Text != "1\n2\n3\n4\n5\n6\n" || len(rev.Tags) != 1 {
			t.Fatalf("saved %q, tags %q", rev.Text, rev.Tags)
		}
	})

	t.Run("the history and the diff offer undo to editors only", func(t *testing.T) {
		last := latestRevision(t, w, "Ranged")
		mustContain(t, alice.Get("/wiki/Ranged?action=history"), "?action=edit&amp;undo="+itoa(last.ID)+`">undo</a>`)
		mustNotContain(t, anon.Get("/wiki/Ranged?action=history"), ">undo</a>")
		mustContain(t, alice.Get("/wiki/Ranged?diff="+itoa(last.ID)+"&oldid="+itoa(last.ParentID)), "?action=edit&amp;undo="+itoa(last.ID)+`">undo</a>`)
	})

	t.Run("bad undo parameters are refused with what to do, never a 500 and never cached", func(t *testing.T) {
		other := latestRevision(t, w, "Untagged")
		ranged := latestRevision(t, w, "Ranged")
		first := firstRevision(t, w, "Conflicting").ID
		for _, tc := range []struct {
			query  string
			status int
			msg    string
		}{
			{"undo=999999", http.StatusNotFound, "is not a revision of"},
			{"undo=" + itoa(other.ID), http.StatusNotFound, "is not a revision of"},
			{"undo=abc", http.StatusBadRequest, "the number of the revision to undo"},
			{"undo=-3", http.StatusBadRequest, "the number of the revision to undo"},
			{"undoafter=" + itoa(ranged.ParentID), http.StatusBadRequest, "undoafter needs undo"},
			{"undo=" + itoa(ranged.ParentID) + "&undoafter=" + itoa(ranged.ID), http.StatusBadRequest, "must be an older revision than undo"},
			{"undo=" + itoa(ranged.ID) + "&undoafter=" + itoa(other.ID), http.StatusNotFound, "is not a revision of"},
			{"oldid=" + itoa(ranged.ParentID) + "&undo=" + itoa(ranged.ID), http.StatusBadRequest, "not both"},
			{"undo=" + itoa(first), http.StatusBadRequest, "created the page"},
		} {
			for range 2 {
				res := alice.Get("/wiki/Ranged?action=edit&" + tc.query)
				if tc.query == "undo="+itoa(first) {
					res = alice.Get("/wiki/Conflicting?action=edit&" + tc.query)
				}
				if res.StatusCode != tc.status || !strings.Contains(res.Body, tc.msg) {
					t.Errorf("%s: status %d, want %d with %q\n%.600s", tc.query, res.StatusCode, tc.status, tc.msg, res.Body)
				}
				if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
					t.Errorf("%s: Cache-Control %q, want no-store", tc.query, cc)
				}
				if xcache(res) == "HIT" {
					t.Errorf("%s: an error was served from the cache", tc.query)
				}
			}
		}
	})
}
