package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/wiki"
)

// modelOf is the model of title's latest revision, as stored.
func modelOf(t *testing.T, w *apptest.Wiki, title wiki.Title) wiki.ContentModel {
	t.Helper()
	p, err := w.App.Store.FindPage(context.Background(), title)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := w.App.Store.FindRevision(context.Background(), p.LatestID)
	if err != nil {
		t.Fatal(err)
	}
	if rev.Model != p.Model {
		t.Fatalf("%s: page in %q, its latest revision in %q", title, p.Model, rev.Model)
	}
	return rev.Model
}

var modelFieldRE = regexp.MustCompile(`name="model" value="([^"]*)"`)

func TestRESTContentModel(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	u, _ := w.CreateUser(t, "Bot", wiki.GroupUser)
	token := apiToken(t, w, u)
	c := w.Client(t)
	type page struct {
		apiPage
		ContentModel string `json:"content_model"`
	}
	for _, tt := range []struct {
		name, title, body, want string
	}{
		{"a page created without a model is the site default's", "Plain", `{"title":"Plain","source":"x"}`, "markdown"},
		{"a page created in wikitext", "Wiki", `{"title":"Wiki","source":"'''x'''","content_model":"wikitext"}`, "wikitext"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := c.JSON(http.MethodPost, "/w/rest.php/v1/page", token, tt.body)
			mustStatus(t, res, http.StatusCreated)
			if p := decode[page](t, res); p.ContentModel != tt.want {
				t.Errorf("created in %q, want %q", p.ContentModel, tt.want)
			}
			get := decode[page](t, c.JSON(http.MethodGet, "/w/rest.php/v1/page/"+tt.title, "", ""))
			if get.ContentModel != tt.want {
				t.Errorf("GET says %q, want %q", get.ContentModel, tt.want)
			}
			bare := decode[page](t, c.JSON(http.MethodGet, "/w/rest.php/v1/page/"+tt.title+"/bare", "", ""))
			if bare.ContentModel != tt.want {
				t.Errorf("GET bare says %q, want %q", bare.ContentModel, tt.want)
			}
			if got := modelOf(t, w, wiki.Title(tt.title)); string(got) != tt.want {
				t.Errorf("stored in %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("PUT without a model keeps the page's", func(t *testing.T) {
		cur := decode[page](t, c.JSON(http.MethodGet, "/w/rest.php/v1/page/Wiki", "", ""))
		res := c.JSON(http.MethodPut, "/w/rest.php/v1/page/Wiki", token, fmt.Sprintf(`{"source":"'''y'''","latest":{"id":%d}}`, cur.Latest.ID))
		mustStatus(t, res, http.StatusOK)
		if p := decode[page](t, res); p.ContentModel != "wikitext" {
			t.Errorf("after the PUT: %q", p.ContentModel)
		}
	})
	t.Run("PUT with a model changes it", func(t *testing.T) {
		cur := decode[page](t, c.JSON(http.MethodGet, "/w/rest.php/v1/page/Wiki", "", ""))
		res := c.JSON(http.MethodPut, "/w/rest.php/v1/page/Wiki", token, fmt.Sprintf(`{"source":"'''y'''","content_model":"markdown","latest":{"id":%d}}`, cur.Latest.ID))
		mustStatus(t, res, http.StatusOK)
		p := decode[page](t, res)
		if p.ContentModel != "markdown" || p.Latest.ID == cur.Latest.ID {
			t.Errorf("the same text in Markdown: %+v; want a new revision in markdown", p)
		}
	})
	for _, body := range []string{`{"title":"Bad","source":"x","content_model":"html"}`, `{"title":"Bad","source":"x","content_model":"Markdown"}`} {
		t.Run("an unknown model is a 400 naming the known ones: "+body, func(t *testing.T) {
			res := c.JSON(http.MethodPost, "/w/rest.php/v1/page", token, body)
			mustStatus(t, res, http.StatusBadRequest)
			mustContain(t, res, "content_model", "markdown or wikitext")
		})
	}
}

func TestEditFormKeepsTheModel(t *testing.T) {
	t.Parallel()
	w := apptest.New(t, func(c *config.Config) { c.DefaultContentModel = wiki.ModelWikitext })
	_, pw := w.CreateUser(t, "Alice", wiki.GroupUser)
	alice := w.Login(t, "Alice", pw)

	t.Run("a new page's form offers the site default", func(t *testing.T) {
		res := alice.Get("/wiki/Fresh?action=edit")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, `name="model" value="wikitext"`, `Markup: <strong class="model-name">Wikitext</strong>`)
		mustNotContain(t, res, "?action=editmodel") // nothing to change yet
	})
	alice.Edit("Fresh", "'''x'''")
	if got := modelOf(t, w, "Fresh"); got != wiki.ModelWikitext {
		t.Fatalf("a page created on a wikitext wiki is in %q", got)
	}

	t.Run("a Markdown page's form carries its model, and the save keeps it", func(t *testing.T) {
		csrf, base := alice.EditForm("Fresh")
		res := alice.PostForm("/wiki/Fresh?action=submit", url.Values{"csrf": {csrf}, "baserev": {base}, "text": {"# Heading"}, "model": {"markdown"}})
		mustStatus(t, res, http.StatusSeeOther)
		res = alice.Get("/wiki/Fresh?action=edit")
		if m := modelFieldRE.FindStringSubmatch(res.Body); m == nil || m[1] != "markdown" {
			t.Fatalf("the form of a Markdown page carries model %v", m)
		}
		mustContain(t, res, `Markup: <strong class="model-name">Markdown</strong>`, `href="/wiki/Fresh?action=editmodel"`)
		alice.Edit("Fresh", "# Another") // the helper's form sends no model: the page's is kept
		if got := modelOf(t, w, "Fresh"); got != wiki.ModelMarkdown {
			t.Errorf("after an edit without a model: %q", got)
		}
	})

	t.Run("a preview reads the text in the form's model", func(t *testing.T) {
		csrf, base := alice.EditForm("Fresh")
		for model, want := range map[string]string{"markdown": "<h1", "wikitext": "<ol><li>Heading</li></ol>"} {
			res := alice.PostForm("/wiki/Fresh?action=submit", url.Values{"csrf": {csrf}, "baserev": {base}, "text": {"# Heading"}, "model": {model}, "preview": {"1"}})
			mustStatus(t, res, http.StatusOK)
			mustContain(t, res, want, `name="model" value="`+model+`"`)
		}
	})

	t.Run("a form with an unknown model is refused, naming the models", func(t *testing.T) {
		csrf, base := alice.EditForm("Fresh")
		res := alice.PostForm("/wiki/Fresh?action=submit", url.Values{"csrf": {csrf}, "baserev": {base}, "text": {"x"}, "model": {"html"}})
		mustStatus(t, res, http.StatusBadRequest)
		mustContain(t, res, "markdown or wikitext")
	})

	t.Run("page information shows the content model", func(t *testing.T) {
		if got := infoRow(t, alice.Get("/wiki/Fresh?action=info"), "Page content model"); got != "Markdown" {
			t.Errorf("page content model %q", got)
		}
	})
}

// A wikitext page is read by the wikitext renderer everywhere: its view,
// the REST HTML and its sections.
func TestAWikitextPageIsRenderedAsWikitext(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	u, pw := w.CreateUser(t, "Bot", wiki.GroupUser)
	token := apiToken(t, w, u)
	c, bot := w.Client(t), w.Login(t, "Bot", pw)
	res := c.JSON(http.MethodPost, "/w/rest.php/v1/page", token,
		`{"title":"Wiki","source":"Intro '''x''' and ''y''.\n\n== First ==\nOne.\n\n== Second ==\nTwo.\n","content_model":"wikitext"}`)
	mustStatus(t, res, http.StatusCreated)
	for _, path := range []string{"/wiki/Wiki", "/w/rest.php/v1/page/Wiki/html"} {
		view := c.Get(path)
		mustStatus(t, view, http.StatusOK)
		mustContain(t, view, "<b>x</b>", "<i>y</i>", `<h2 id="First">`)
		mustNotContain(t, view, "&#39;&#39;&#39;", "== First ==")
	}

	t.Run("a section edit finds wikitext's headings", func(t *testing.T) {
		res := bot.Get("/wiki/Wiki?action=edit&section=2")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, "== Second ==\nTwo.", `name="model" value="wikitext"`)
		mustNotContain(t, res, "One.")
		csrf, base := csrfRE.FindStringSubmatch(res.Body)[1], baserevRE.FindStringSubmatch(res.Body)[1]
		res = bot.PostForm("/wiki/Wiki?action=submit&section=2", url.Values{"csrf": {csrf}, "baserev": {base}, "text": {"== Second ==\nChanged '''here'''.\n"}, "model": {"wikitext"}})
		mustStatus(t, res, http.StatusSeeOther)
		view := c.Get("/wiki/Wiki")
		mustContain(t, view, "Changed <b>here</b>.", "One.", "action=edit&amp;section=2")
		// An old revision's view drops the section edit links.
		old := c.Get("/wiki/Wiki?oldid=" + base)
		mustContain(t, old, "Two.")
		mustNotContain(t, old, "action=edit&amp;section=2")
		if got := modelOf(t, w, "Wiki"); got != wiki.ModelWikitext {
			t.Errorf("after the section edit: %q", got)
		}
	})

	t.Run("a new topic on a wikitext talk page gets a wikitext heading", func(t *testing.T) {
		csrf := bot.CSRF("/wiki/Talk:Wiki?action=edit&section=new")
		res := bot.PostForm("/wiki/Talk:Wiki?action=submit&section=new", url.Values{"csrf": {csrf}, "baserev": {"0"}, "text": {"Hello."}, "sectiontitle": {"Topic"}, "model": {"wikitext"}})
		mustStatus(t, res, http.StatusSeeOther)
		src := decode[apiPage](t, c.JSON(http.MethodGet, "/w/rest.php/v1/page/Talk:Wiki", "", "")).Source
		if !strings.HasPrefix(src, "== Topic ==\n") {
			t.Errorf("the new topic: %q", src)
		}
	})
}

func TestChangeContentModel(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Alice", wiki.GroupUser)
	_, apw := w.CreateUser(t, "Root", wiki.GroupAdmin)
	alice, admin, anon := w.Login(t, "Alice", pw), w.Login(t, "Root", apw), w.Client(t)
	const text = "# Title\n\nSome **bold** text.\n"
	alice.Edit("Doc", text)
	before := anon.Get("/wiki/Doc") // cached at the edge
	mustContain(t, before, "<strong>bold</strong>")

	t.Run("the form of a Markdown page offers wikitext, keeping the text", func(t *testing.T) {
		res := alice.Get("/wiki/Doc?action=editmodel")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, `<option value="wikitext" selected>Wikitext</option>`, "no automatic conversion from Markdown to wikitext",
			`name="model" value="wikitext"`, "Changed content model from Markdown to wikitext", "**bold**")
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") && !strings.Contains(cc, "private") {
			t.Errorf("the form is cacheable: %q", cc)
		}
	})

	t.Run("choosing the model the page is in says so", func(t *testing.T) {
		res := alice.Get("/wiki/Doc?action=editmodel&model=markdown")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, "The page is already in Markdown")
	})

	t.Run("who may not edit may not change the model", func(t *testing.T) {
		res := anon.Get("/wiki/Doc?action=editmodel")
		if res.StatusCode != http.StatusForbidden && res.StatusCode != http.StatusUnauthorized {
			t.Errorf("anonymous: %d", res.StatusCode)
		}
		mustStatus(t, alice.Get("/wiki/Nothing?action=editmodel"), http.StatusNotFound)
	})

	csrf := alice.CSRF("/wiki/Doc?action=editmodel")
	p, err := w.App.Store.FindPage(context.Background(), "Doc")
	if err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprint(p.LatestID)

	t.Run("a preview renders the text in the new model", func(t *testing.T) {
		res := alice.PostForm("/wiki/Doc?action=editmodel", url.Values{"csrf": {csrf}, "baserev": {base}, "model": {"wikitext"}, "text": {text}, "preview": {"1"}})
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, "Preview in Wikitext", "<ol><li>Title</li></ol>", "Some **bold** text.")
		if modelOf(t, w, "Doc") != wiki.ModelMarkdown {
			t.Error("the preview changed the model")
		}
	})

	t.Run("the save stores the text in the new model, and the view changes", func(t *testing.T) {
		res := alice.PostForm("/wiki/Doc?action=editmodel", url.Values{"csrf": {csrf}, "baserev": {base}, "model": {"wikitext"}, "text": {text}, "summary": {""}})
		mustRedirect(t, res, http.StatusSeeOther, "/wiki/Doc")
		if got := modelOf(t, w, "Doc"); got != wiki.ModelWikitext {
			t.Fatalf("after the change: %q", got)
		}
		after := anon.Get("/wiki/Doc")
		mustNotContain(t, after, "<strong>bold</strong>")
		mustContain(t, after, "<ol><li>Title</li></ol>", "Some **bold** text.")
		mustContain(t, anon.Get("/wiki/Doc?action=history"), "Changed content model from Markdown to wikitext")
		mustContain(t, anon.Get("/wiki/Special:Log/contentmodel"), "changed the content model of the page", "from Markdown to Wikitext")
		// The old revision still renders as it was: its model is its own.
		mustContain(t, anon.Get("/wiki/Doc?oldid="+base), "<strong>bold</strong>")
	})

	t.Run("back to Markdown, the wikitext is converted for review", func(t *testing.T) {
		res := alice.Get("/wiki/Doc?action=editmodel")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, `<option value="markdown" selected>Markdown</option>`, "was converted from Wikitext to Markdown",
			"Changed content model from wikitext to Markdown", `name="converted" value="1"`)
	})

	t.Run("conversions are a few a minute per user", func(t *testing.T) {
		// The subtest before converted once.
		for i := 2; i <= 10; i++ {
			mustStatus(t, alice.Get("/wiki/Doc?action=editmodel"), http.StatusOK)
		}
		res := alice.Get("/wiki/Doc?action=editmodel")
		mustStatus(t, res, http.StatusTooManyRequests)
		mustContain(t, res, "in the last minute; wait a minute")
		if res.Header.Get("Retry-After") == "" {
			t.Error("no Retry-After")
		}
		mustStatus(t, admin.Get("/wiki/Doc?action=editmodel"), http.StatusOK) // each user has their own
	})

	t.Run("a form made before another save is refused, not merged", func(t *testing.T) {
		res := alice.PostForm("/wiki/Doc?action=editmodel", url.Values{"csrf": {csrf}, "baserev": {base}, "model": {"markdown"}, "text": {text}})
		mustStatus(t, res, http.StatusConflict)
		mustContain(t, res, "open the form again")
	})

	t.Run("a protected page's model is changed by whom its protection lets edit", func(t *testing.T) {
		pcsrf := admin.CSRF("/wiki/Doc?action=protect")
		mustStatus(t, admin.PostForm("/wiki/Doc?action=protect", url.Values{"csrf": {pcsrf}, "edit": {"admins"}, "move": {"admins"}, "expiry": {"infinite"}}), http.StatusSeeOther)
		mustStatus(t, alice.Get("/wiki/Doc?action=editmodel"), http.StatusForbidden)
		mustStatus(t, admin.Get("/wiki/Doc?action=editmodel"), http.StatusOK)
	})

	t.Run("the page's tabs link to the form", func(t *testing.T) {
		mustContain(t, alice.Get("/wiki/Doc"), `href="/wiki/Doc?action=editmodel"`)
	})
}
