package web_test

import (
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/wiki"
)

// Edits made against a revision of a page deleted or moved since.
func TestStaleEditsAfterDeleteAndMove(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	u, pw := w.CreateUser(t, "Ann", wiki.GroupUser)
	_, apw := w.CreateUser(t, "Boss", wiki.GroupAdmin)
	ann := w.Login(t, "Ann", pw)
	boss := w.Login(t, "Boss", apw)
	anon := w.Client(t)
	token := apiToken(t, w, u)

	t.Run("an edit of a page deleted since is a 409 with the editor's text and the deletion, and recreates nothing", func(t *testing.T) {
		ann.Edit("Doomed", "Secret old text of the doomed page.\n")
		csrf, base := ann.EditForm("Doomed")
		mustStatus(t, boss.PostForm("/wiki/Doomed?action=delete", url.Values{"csrf": {boss.CSRF("/wiki/Doomed?action=delete")}, "reason": {"spam <b>x</b>"}}), http.StatusSeeOther)
		res := ann.Submit("Doomed", csrf, base, "My careful new text.\n")
		mustStatus(t, res, http.StatusConflict)
		body := html.UnescapeString(res.Body)
		for _, want := range []string{"My careful new text.", "was deleted", "Boss", "spam <b>x</b>", "This page has been deleted"} {
			if !strings.Contains(body, want) {
				t.Errorf("the 409 page lacks %q", want)
			}
		}
		mustNotContain(t, res, "Secret old text", "<b>x</b>")
		mustStatus(t, anon.Get("/wiki/Doomed"), http.StatusNotFound)
		if !strings.Contains(res.Body, `name="baserev" value="0"`) {
			t.Error("the form shown again does not create the page anew (baserev 0)")
		}
	})

	t.Run("creating a deleted page explicitly works, and its form shows the deletion log first", func(t *testing.T) {
		res := ann.Get("/wiki/Doomed?action=edit")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, "This page has been deleted.", "deleted page")
		csrf, base := ann.EditForm("Doomed")
		if base != "0" {
			t.Fatalf("the form of a deleted page has base %s", base)
		}
		mustStatus(t, ann.Submit("Doomed", csrf, base, "Fresh start.\n"), http.StatusSeeOther)
		if got := anon.Get("/wiki/Doomed?action=raw").Body; got != "Fresh start.\n" {
			t.Errorf("recreated text %q", got)
		}
	})

	t.Run("the missing view of a deleted page shows the deletion log", func(t *testing.T) {
		ann.Edit("Gone", "x\n")
		mustStatus(t, boss.PostForm("/wiki/Gone?action=delete", url.Values{"csrf": {boss.CSRF("/wiki/Gone?action=delete")}, "reason": {"obsolete"}}), http.StatusSeeOther)
		res := anon.Get("/wiki/Gone")
		mustStatus(t, res, http.StatusNotFound)
		mustContain(t, res, "deleted page", "obsolete", "<bdi>Gone</bdi>")
	})

	t.Run("an edit of a page moved without a redirect is a 409 pointing to the new title, and forks nothing", func(t *testing.T) {
		ann.Edit("Old name", "Line one.\n\nLine two.\n")
		csrf, base := ann.EditForm("Old name")
		mustStatus(t, ann.PostForm("/wiki/Old_name?action=move", url.Values{"csrf": {ann.CSRF("/wiki/Old_name?action=move")}, "newtitle": {"New name"}}), http.StatusSeeOther)
		res := ann.Submit("Old name", csrf, base, "Line one.\n\nLine two, changed.\n")
		mustStatus(t, res, http.StatusConflict)
		mustContain(t, res, "was moved to", `href="/wiki/New_name"`, "Line two, changed.")
		mustStatus(t, anon.Get("/wiki/Old_name"), http.StatusNotFound)
		// The form shown again saves at the new title, merging from the same base.
		if !strings.Contains(res.Body, `action="/wiki/New_name?action=submit"`) {
			t.Fatal("the form shown again does not post to the new title")
		}
		mustStatus(t, ann.Submit("New name", csrf, base, "Line one.\n\nLine two, changed.\n"), http.StatusSeeOther)
		if got := anon.Get("/wiki/New_name?action=raw").Body; got != "Line one.\n\nLine two, changed.\n" {
			t.Errorf("new title's text %q", got)
		}
	})

	t.Run("an edit of a page moved with a redirect is a 409 too, not an edit of the redirect", func(t *testing.T) {
		ann.Edit("Here", "Text here.\n")
		csrf, base := ann.EditForm("Here")
		mustStatus(t, ann.PostForm("/wiki/Here?action=move", url.Values{"csrf": {ann.CSRF("/wiki/Here?action=move")}, "newtitle": {"There"}, "redirect": {"1"}}), http.StatusSeeOther)
		res := ann.Submit("Here", csrf, base, "Text here, improved.\n")
		mustStatus(t, res, http.StatusConflict)
		mustContain(t, res, `href="/wiki/There"`)
	})

	t.Run("REST: an update based on a deleted page's revision is a 409 JSON error carrying the text", func(t *testing.T) {
		ann.Edit("Api doomed", "old api text\n")
		p, _ := w.App.Store.FindPage(t.Context(), "Api doomed")
		mustStatus(t, boss.PostForm("/wiki/Api_doomed?action=delete", url.Values{"csrf": {boss.CSRF("/wiki/Api_doomed?action=delete")}}), http.StatusSeeOther)
		res := anon.JSON(http.MethodPut, "/w/rest.php/v1/page/Api_doomed", token,
			`{"source": "my api text", "comment": "c", "latest": {"id": `+itoa(p.LatestID)+`}}`)
		mustStatus(t, res, http.StatusConflict)
		e := decode[map[string]any](t, res)
		if e["errorKey"] != "pagedeleted" || e["source"] != "my api text\n" && e["source"] != "my api text" {
			t.Errorf("error = %v", e)
		}
		mustNotContain(t, res, "old api text")
	})

	t.Run("REST: an update based on a moved page's revision is a 409 naming the new title", func(t *testing.T) {
		ann.Edit("Api here", "api here\n")
		p, _ := w.App.Store.FindPage(t.Context(), "Api here")
		mustStatus(t, ann.PostForm("/wiki/Api_here?action=move", url.Values{"csrf": {ann.CSRF("/wiki/Api_here?action=move")}, "newtitle": {"Api there"}}), http.StatusSeeOther)
		res := anon.JSON(http.MethodPut, "/w/rest.php/v1/page/Api_here", token,
			`{"source": "changed", "comment": "c", "latest": {"id": `+itoa(p.LatestID)+`}}`)
		mustStatus(t, res, http.StatusConflict)
		e := decode[map[string]any](t, res)
		if e["errorKey"] != "pagemoved" || e["newTitle"] != "Api there" || e["source"] == nil {
			t.Errorf("error = %v", e)
		}
		mustStatus(t, anon.Get("/wiki/Api_here"), http.StatusNotFound)
	})

	t.Run("the 409 never reveals a deleted revision: a base from another deleted page returns only the sender's text", func(t *testing.T) {
		ann.Edit("Hidden", "TOP SECRET deleted text\n")
		p, _ := w.App.Store.FindPage(t.Context(), "Hidden")
		mustStatus(t, boss.PostForm("/wiki/Hidden?action=delete", url.Values{"csrf": {boss.CSRF("/wiki/Hidden?action=delete")}}), http.StatusSeeOther)
		ann.Edit("Probe", "probe\n")
		csrf, _ := ann.EditForm("Probe")
		res := ann.Submit("Probe", csrf, itoa(p.LatestID), "probe\nmore\n")
		if res.StatusCode == http.StatusSeeOther || strings.Contains(res.Body, "TOP SECRET") {
			t.Errorf("status %d; body leaks the deleted text: %v", res.StatusCode, strings.Contains(res.Body, "TOP SECRET"))
		}
		res = anon.JSON(http.MethodPut, "/w/rest.php/v1/page/Probe", token, `{"source": "x", "latest": {"id": `+itoa(p.LatestID)+`}}`)
		mustNotContain(t, res, "TOP SECRET")
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
