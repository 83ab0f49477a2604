package web_test

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/wiki"
)

// Titles and user names that could deceive are refused on every path that
// accepts one, with the character and its position named.
func TestDeceptiveNamesAndTitlesAreRefused(t *testing.T) {
	t.Parallel()
	w := newLoginWiki(t, behindLoopbackProxy)
	u, pw := w.CreateUser(t, "Admin", wiki.GroupAdmin)
	ed := w.Login(t, "Admin", pw)
	ed.Edit("Plain page", "text")

	t.Run("registering a look-alike of an existing account is refused, naming it", func(t *testing.T) {
		for _, name := range []string{"\u0410dmin", "Adrnin"} { // Cyrillic А; r and n for m
			res := register(t, w, name, from("192.0.2.50"))
			mustStatus(t, res, http.StatusBadRequest)
			want := "The name “" + name + "” is too similar to the existing account “Admin”. Choose another name."
			if !strings.Contains(html.UnescapeString(res.Body), want) {
				t.Errorf("registering %q: the form does not say %q", name, want)
			}
		}
		if _, err := w.App.Store.FindUserByName(t.Context(), "\u0410dmin"); err == nil {
			t.Error("the look-alike account was created")
		}
	})

	t.Run("registering a name with a bidirectional override is refused at its position", func(t *testing.T) {
		res := register(t, w, "Eve\u202egnp.exe", from("192.0.2.51"))
		mustStatus(t, res, http.StatusBadRequest)
		if want := "the user name contains U+202E RIGHT-TO-LEFT OVERRIDE (an invisible bidirectional control) at character 4; remove it"; !strings.Contains(html.UnescapeString(res.Body), want) {
			t.Errorf("the form does not say %q", want)
		}
	})

	t.Run("a Persian name with its ZWNJ can register", func(t *testing.T) {
		mustStatus(t, register(t, w, "علی\u200cرضا", from("192.0.2.52")), http.StatusSeeOther)
	})

	t.Run("creating a page with a zero-width space in its title is refused", func(t *testing.T) {
		res := ed.Get("/wiki/" + url.PathEscape("Plain\u200bpage") + "?action=edit")
		mustStatus(t, res, http.StatusBadRequest)
		if want := "U+200B ZERO WIDTH SPACE (an invisible character) at character 6"; !strings.Contains(html.UnescapeString(res.Body), want) {
			t.Errorf("the answer does not say %q:\n%s", want, res.Body)
		}
	})

	t.Run("moving a page to a title with a right-to-left override is refused", func(t *testing.T) {
		res := ed.PostForm("/wiki/Plain_page?action=move", url.Values{
			"csrf": {ed.CSRF("/wiki/Plain_page?action=move")}, "newtitle": {"Plain\u202epage"}, "reason": {"test"}})
		mustStatus(t, res, http.StatusBadRequest)
		if want := "U+202E RIGHT-TO-LEFT OVERRIDE"; !strings.Contains(html.UnescapeString(res.Body), want) {
			t.Errorf("the move form does not say %q:\n%s", want, res.Body)
		}
		if p, err := w.App.Store.FindPage(t.Context(), wiki.MustTitle("Plain page")); err != nil || p.Deleted {
			t.Errorf("the page moved anyway: %+v, %v", p, err)
		}
	})

	t.Run("REST refuses a private-use character in a new title", func(t *testing.T) {
		token := apiToken(t, w.Wiki, u)
		res := ed.JSON(http.MethodPost, "/w/rest.php/v1/page", token, `{"title":"Icon \ue000","source":"x"}`)
		mustStatus(t, res, http.StatusBadRequest)
		if e := decode[struct{ MessageTranslations map[string]string }](t, res); !strings.Contains(e.MessageTranslations["en"], "U+E000 (a private-use character) at character 6") {
			t.Errorf("REST error %v does not name the character", e)
		}
	})

	t.Run("a ZWJ emoji title and a Korean title are created", func(t *testing.T) {
		ed.Edit("👩\u200d💻 tips", "text")
		ed.Edit("대문 안내", "text")
		for _, ti := range []string{"👩\u200d💻 tips", "대문 안내"} {
			if _, err := w.App.Store.FindPage(t.Context(), wiki.MustTitle(ti)); err != nil {
				t.Errorf("%q: %v", ti, err)
			}
		}
	})
}
