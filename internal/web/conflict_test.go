package web_test

import (
	"html"
	"net/http"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/wiki"
)

func TestEditConflicts(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, apw := w.CreateUser(t, "Ann", wiki.GroupUser)
	_, bpw := w.CreateUser(t, "Ben", wiki.GroupUser)
	a := w.Login(t, "Ann", apw)
	b := w.Login(t, "Ben", bpw)
	c := w.Login(t, "Ben", bpw) // a second tab of Ben's
	anon := w.Client(t)

	const base = "First paragraph.\n\nSecond paragraph.\n\nThird paragraph.\n"
	a.Edit("Shared", base)

	csrfA, baseA := a.EditForm("Shared")
	csrfB, baseB := b.EditForm("Shared")
	csrfC, baseC := c.EditForm("Shared")
	if baseA != baseB || baseB != baseC {
		t.Fatalf("the three forms opened at different bases: %s %s %s", baseA, baseB, baseC)
	}

	t.Run("the first save from the common base succeeds", func(t *testing.T) {
		res := a.Submit("Shared", csrfA, baseA, strings.Replace(base, "First paragraph.", "First paragraph, by Ann.", 1))
		mustRedirect(t, res, http.StatusSeeOther, "/wiki/Shared")
	})

	t.Run("a change elsewhere from the old base is merged", func(t *testing.T) {
		res := b.Submit("Shared", csrfB, baseB, strings.Replace(base, "Third paragraph.", "Third paragraph, by Ben.", 1))
		mustRedirect(t, res, http.StatusSeeOther, "/wiki/Shared")
		want := "First paragraph, by Ann.\n\nSecond paragraph.\n\nThird paragraph, by Ben.\n"
		if got := anon.Get("/wiki/Shared?action=raw").Body; got != want {
			t.Errorf("merged text %q, want %q", got, want)
		}
	})

	t.Run("a change to the same line from the old base is a conflict that saves nothing", func(t *testing.T) {
		before := revisionIDs(t, anon, "Shared")
		mine := strings.Replace(base, "First paragraph.", "First paragraph, by Ben's other tab.", 1)
		res := c.Submit("Shared", csrfC, baseC, mine)
		mustStatus(t, res, http.StatusConflict)
		body := html.UnescapeString(res.Body)
		if !strings.Contains(body, "Edit conflict") {
			t.Error("the conflict page does not say so")
		}
		if !strings.Contains(body, "First paragraph, by Ann.") || !strings.Contains(body, "Third paragraph, by Ben.") {
			t.Error("the conflict page lacks the current text")
		}
		if !strings.Contains(body, "First paragraph, by Ben's other tab.") {
			t.Error("the conflict page lacks the user's own text")
		}
		if got := anon.Get("/wiki/Shared?action=raw").Body; strings.Contains(got, "other tab") {
			t.Errorf("the conflicting edit was saved: %q", got)
		}
		if after := revisionIDs(t, anon, "Shared"); len(after) != len(before) {
			t.Errorf("revisions %v after the conflict, %v before", after, before)
		}
	})

	t.Run("saving the same text again makes no revision", func(t *testing.T) {
		before := revisionIDs(t, anon, "Shared")
		csrf, rev := a.EditForm("Shared")
		res := a.Submit("Shared", csrf, rev, anon.Get("/wiki/Shared?action=raw").Body)
		mustStatus(t, res, http.StatusSeeOther)
		if after := revisionIDs(t, anon, "Shared"); len(after) != len(before) {
			t.Errorf("a null edit made a revision: %v → %v", before, after)
		}
	})

	t.Run("an empty text is refused", func(t *testing.T) {
		csrf, rev := a.EditForm("Shared")
		res := a.Submit("Shared", csrf, rev, "  \n\n")
		mustStatus(t, res, http.StatusBadRequest)
		mustContain(t, res, "empty")
	})

	t.Run("creating a page another user just created merges or conflicts, never overwrites", func(t *testing.T) {
		csrfA, _ := a.EditForm("Fresh")
		csrfB, _ := b.EditForm("Fresh")
		mustStatus(t, a.Submit("Fresh", csrfA, "0", "Ann's page.\n"), http.StatusSeeOther)
		res := b.Submit("Fresh", csrfB, "0", "Ben's page.\n")
		mustStatus(t, res, http.StatusConflict)
		if got := anon.Get("/wiki/Fresh?action=raw").Body; got != "Ann's page.\n" {
			t.Errorf("Fresh is %q", got)
		}
	})
}
