package web_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/wiki"
)

// infoRow returns the value cell of the information page's row named th,
// tags stripped.
func infoRow(t *testing.T, res *apptest.Response, th string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<th scope="row">` + regexp.QuoteMeta(th) + `</th><td>(.*?)</td>`).FindStringSubmatch(res.Body)
	if m == nil {
		t.Fatalf("no row %q in\n%s", th, res.Body)
	}
	return strings.TrimSpace(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(m[1], ""))
}

func TestPageInformation(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, apw := w.CreateUser(t, "Alice", wiki.GroupUser)
	_, bpw := w.CreateUser(t, "Bob", wiki.GroupUser)
	alice, bob := w.Login(t, "Alice", apw), w.Login(t, "Bob", bpw)
	anon := w.Client(t)
	alice.Edit("Template:Box", "boxed")
	alice.Edit("Info target", "Links to [[Alpha]] and [[Beta]]. {{Box}}\n\n[[Category:Things]]\n")
	bob.Edit("Info target", "Links to [[Alpha]] and [[Beta]]. {{Box}} More.\n\n[[Category:Things]]\n")
	bob.Edit("Linker", "See [[Info target]].")
	bob.Edit("Shortcut", "#REDIRECT [[Info target]]")
	w.Settle(t)
	page, err := w.App.Store.FindPage(context.Background(), "Info target")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("the figures of a small wiki", func(t *testing.T) {
		res := anon.Get("/wiki/Info_target?action=info")
		mustStatus(t, res, http.StatusOK)
		for th, want := range map[string]string{
			"Display title":                    "Info target",
			"Page ID":                          itoa(page.ID),
			"Page length (in bytes)":           itoa(int64(page.Size)),
			"Number of redirects to this page": "1",
			"Pages linking here":               "2",
			"Links on this page":               "2",
			"Total number of edits":            "2",
			"Total number of distinct authors": "2",
			"Edit":                             "Allow all users",
			"Categories (1)":                   "Things",
			"Templates used (1)":               "Template:Box",
		} {
			if got := infoRow(t, res, th); got != want {
				t.Errorf("%s: %q, want %q", th, got, want)
			}
		}
		if got := infoRow(t, res, "Page creator"); !strings.HasPrefix(got, "Alice") {
			t.Errorf("page creator %q, want Alice", got)
		}
		if got := infoRow(t, res, "Latest editor"); !strings.HasPrefix(got, "Bob") {
			t.Errorf("latest editor %q, want Bob", got)
		}
		// Alice and Bob watch the page (they edited it), too few to count.
		if got := infoRow(t, res, "Number of page watchers"); got != "Fewer than 30 watchers" {
			t.Errorf("watchers %q", got)
		}
	})

	t.Run("the article and its history link to it", func(t *testing.T) {
		mustContain(t, anon.Get("/wiki/Info_target"), `href="/wiki/Info_target?action=info">Page information</a>`)
		mustContain(t, anon.Get("/wiki/Info_target?action=history"), `href="/wiki/Info_target?action=info">Page information</a>`)
	})

	t.Run("it is cached for anonymous readers and purged by the page's edits and by links to it", func(t *testing.T) {
		anon.Get("/wiki/Info_target?action=info")
		if res := anon.Get("/wiki/Info_target?action=info"); xcache(res) != "HIT" {
			t.Fatalf("second read: X-Cache %q, want HIT", xcache(res))
		}
		alice.Edit("Info target", "Now only [[Alpha]].\n")
		res := anon.Get("/wiki/Info_target?action=info")
		if got := infoRow(t, res, "Total number of edits"); got != "3" {
			t.Errorf("after an edit: %s edits, want 3 (X-Cache %s)", got, xcache(res))
		}
		if got := infoRow(t, res, "Links on this page"); got != "1" {
			t.Errorf("after an edit: %s links, want 1", got)
		}
		bob.Edit("Second linker", "Also [[Info target]].")
		if got := infoRow(t, anon.Get("/wiki/Info_target?action=info"), "Pages linking here"); got != "3" {
			t.Errorf("after another page linked to it: %s pages linking here, want 3", got)
		}
	})

	t.Run("protection is shown", func(t *testing.T) {
		_, spw := w.CreateUser(t, "Sysop", wiki.GroupAdmin)
		sysop := w.Login(t, "Sysop", spw)
		mustStatus(t, protectForm(t, sysop, "Info target", "users", "admins", "infinite", "test"), http.StatusSeeOther)
		res := anon.Get("/wiki/Info_target?action=info")
		if got := infoRow(t, res, "Edit"); got != "Allow only registered users (infinite)" {
			t.Errorf("edit protection %q", got)
		}
		if got := infoRow(t, res, "Move"); got != "Allow only administrators (infinite)" {
			t.Errorf("move protection %q", got)
		}
	})

	t.Run("a page that does not exist has no information", func(t *testing.T) {
		res := anon.Get("/wiki/No_such_page?action=info")
		mustStatus(t, res, http.StatusNotFound)
		mustContain(t, res, "does not exist")
		mustStatus(t, anon.Get("/wiki/Info_target?action=info&action=history"), http.StatusBadRequest)
	})
}
