package web_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/wiki"
)

var textareaRE = regexp.MustCompile(`(?s)<textarea id="wpTextbox1"[^>]*>(.*?)</textarea>`)

// sectionForm opens the edit form of a section and returns its csrf token,
// base revision and text.
func sectionForm(t *testing.T, c *apptest.Client, path string) (csrf, base, text string, res *apptest.Response) {
	t.Helper()
	res = c.Get(path)
	mustStatus(t, res, http.StatusOK)
	csrf = regexp.MustCompile(`name="csrf" value="([^"]*)"`).FindStringSubmatch(res.Body)[1]
	base = regexp.MustCompile(`name="baserev" value="(\d+)"`).FindStringSubmatch(res.Body)[1]
	m := textareaRE.FindStringSubmatch(res.Body)
	if m == nil {
		t.Fatalf("GET %s: no text box\n%s", path, res.Body)
	}
	return csrf, base, html.UnescapeString(strings.TrimPrefix(m[1], "\n")), res
}

func submitSection(c *apptest.Client, title, section string, form url.Values) *apptest.Response {
	return c.PostForm(wiki.MustTitle(title).URL()+"?action=submit&section="+section, form)
}

func TestSectionEditing(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, apw := w.CreateUser(t, "Ann", wiki.GroupUser)
	_, bpw := w.CreateUser(t, "Ben", wiki.GroupUser)
	a := w.Login(t, "Ann", apw)
	b := w.Login(t, "Ben", bpw)
	anon := w.Client(t)

	const page = "Intro.\n\n## Alpha\nalpha text\n\n```\n## not a section\n```\n\n## Beta\nbeta text\n\nGamma\n-----\ngamma text\n"
	a.Edit("Sectioned", page)

	t.Run("the page view has an edit link on each section heading", func(t *testing.T) {
		res := anon.Get("/wiki/Sectioned")
		mustStatus(t, res, http.StatusOK)
		for n, h := range []string{"Alpha", "Beta", "Gamma"} {
			link := `<span class="mw-editsection"><a href="/wiki/Sectioned?action=edit&amp;section=` + string(rune('1'+n)) + `" title="Edit section: ` + h + `">edit</a></span>`
			if !strings.Contains(res.Body, link) {
				t.Errorf("no edit link %s in\n%s", link, res.Body)
			}
		}
		if strings.Count(res.Body, "mw-editsection") != 3 {
			t.Errorf("%d edit links, want 3 (none for the heading in code)", strings.Count(res.Body, "mw-editsection"))
		}
	})

	t.Run("the form of a section holds that section only, with a summary naming it", func(t *testing.T) {
		_, _, text, res := sectionForm(t, a, "/wiki/Sectioned?action=edit&section=2")
		if text != "## Beta\nbeta text\n\n" {
			t.Errorf("section 2 text %q", text)
		}
		mustContain(t, res, `value="/* Beta */ "`, `action="/wiki/Sectioned?action=submit&amp;section=2"`)
		_, _, text, _ = sectionForm(t, a, "/wiki/Sectioned?action=edit&section=0")
		if text != "Intro.\n\n" {
			t.Errorf("section 0 text %q", text)
		}
	})

	t.Run("an edit of another section meanwhile merges cleanly", func(t *testing.T) {
		csrfA, baseA, textA, _ := sectionForm(t, a, "/wiki/Sectioned?action=edit&section=1")
		csrfB, baseB, textB, _ := sectionForm(t, b, "/wiki/Sectioned?action=edit&section=3")
		res := submitSection(a, "Sectioned", "1", url.Values{"csrf": {csrfA}, "baserev": {baseA},
			"text": {strings.Replace(textA, "alpha text", "alpha text, by Ann", 1)}, "summary": {"/* Alpha */ "}})
		mustRedirect(t, res, http.StatusSeeOther, "/wiki/Sectioned")
		res = submitSection(b, "Sectioned", "3", url.Values{"csrf": {csrfB}, "baserev": {baseB},
			"text": {strings.Replace(textB, "gamma text", "gamma text, by Ben", 1)}, "summary": {""}})
		mustRedirect(t, res, http.StatusSeeOther, "/wiki/Sectioned")
		got := anon.Get("/wiki/Sectioned?action=raw").Body
		want := strings.Replace(strings.Replace(page, "alpha text", "alpha text, by Ann", 1), "gamma text", "gamma text, by Ben", 1)
		if got != want {
			t.Errorf("merged text\n%q\nwant\n%q", got, want)
		}
		hist := anon.Get("/wiki/Sectioned?action=history").Body
		if !strings.Contains(hist, `<span class="autocomment">→Gamma`) || !strings.Contains(hist, `<span class="autocomment">→Alpha`) {
			t.Errorf("history lacks the section summaries:\n%s", hist)
		}
	})

	t.Run("an edit of the same section meanwhile is a conflict that says so", func(t *testing.T) {
		csrfA, baseA, textA, _ := sectionForm(t, a, "/wiki/Sectioned?action=edit&section=2")
		csrfB, baseB, textB, _ := sectionForm(t, b, "/wiki/Sectioned?action=edit&section=2")
		res := submitSection(a, "Sectioned", "2", url.Values{"csrf": {csrfA}, "baserev": {baseA},
			"text": {strings.Replace(textA, "beta text", "beta text, by Ann", 1)}})
		mustStatus(t, res, http.StatusSeeOther)
		before := anon.Get("/wiki/Sectioned?action=raw").Body
		res = submitSection(b, "Sectioned", "2", url.Values{"csrf": {csrfB}, "baserev": {baseB},
			"text": {strings.Replace(textB, "beta text", "beta text, by Ben", 1)}})
		mustStatus(t, res, http.StatusConflict)
		body := html.UnescapeString(res.Body)
		for _, want := range []string{"Edit conflict", "changed the section you were editing", "Beta", "beta text, by Ben", "beta text, by Ann", "Intro."} {
			if !strings.Contains(body, want) {
				t.Errorf("conflict page lacks %q", want)
			}
		}
		// The form now edits the whole page.
		if !strings.Contains(body, `action="/wiki/Sectioned?action=submit"`) {
			t.Errorf("the conflict form still edits a section:\n%s", body)
		}
		if got := anon.Get("/wiki/Sectioned?action=raw").Body; got != before {
			t.Errorf("the conflicting edit changed the page: %q", got)
		}
	})

	t.Run("an old revision's view has no edit links", func(t *testing.T) {
		ids := revisionIDs(t, anon, "Sectioned")
		res := anon.Get("/wiki/Sectioned?oldid=" + ids[len(ids)-1])
		mustStatus(t, res, http.StatusOK)
		if strings.Contains(res.Body, "mw-editsection") {
			t.Error("an old revision's view has section edit links")
		}
	})

	t.Run("a preview has no edit links", func(t *testing.T) {
		csrf, base, text, _ := sectionForm(t, a, "/wiki/Sectioned?action=edit&section=1")
		res := submitSection(a, "Sectioned", "1", url.Values{"csrf": {csrf}, "baserev": {base}, "text": {text}, "preview": {"1"}})
		mustStatus(t, res, http.StatusOK)
		if strings.Contains(res.Body, "mw-editsection") || !strings.Contains(res.Body, `id="Alpha"`) {
			t.Errorf("preview:\n%s", res.Body)
		}
	})

	t.Run("bad section values are refused with a message", func(t *testing.T) {
		for _, q := range []string{"section=abc", "section=-1", "section=1.5", "section=9", "section=1&section=2", "section=99999999999999999999"} {
			res := a.Get("/wiki/Sectioned?action=edit&" + q)
			if res.StatusCode != http.StatusBadRequest {
				t.Errorf("%s: status %d, want 400", q, res.StatusCode)
				continue
			}
			if !strings.Contains(res.Body, "section") {
				t.Errorf("%s: the error does not name the section parameter:\n%s", q, res.Body)
			}
			if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") && !strings.Contains(cc, "private") {
				t.Errorf("%s: Cache-Control %q", q, cc)
			}
		}
		res := anon.Get("/wiki/Sectioned?action=edit&section=abc")
		mustStatus(t, res, http.StatusBadRequest)
		mustContain(t, a.Get("/wiki/Sectioned?action=edit&section=9"), "no section 9", "0 to 3")
		mustStatus(t, a.Get("/wiki/Nowhere?action=edit&section=1"), http.StatusNotFound)
		mustStatus(t, a.Get("/wiki/Sectioned?action=edit&oldid="+revisionIDs(t, anon, "Sectioned")[0]+"&section=1"), http.StatusBadRequest)
	})

	t.Run("non-canonical section values redirect", func(t *testing.T) {
		mustRedirect(t, a.Get("/wiki/Sectioned?section=01&action=edit"), http.StatusMovedPermanently, "/wiki/Sectioned?action=edit&section=1")
		mustRedirect(t, a.Get("/wiki/Sectioned?section=2&action=edit&section=2"), http.StatusMovedPermanently, "/wiki/Sectioned?action=edit&section=2")
	})

	t.Run("a bad section in a POST is refused", func(t *testing.T) {
		csrf, base, _, _ := sectionForm(t, a, "/wiki/Sectioned?action=edit&section=1")
		res := submitSection(a, "Sectioned", "x", url.Values{"csrf": {csrf}, "baserev": {base}, "text": {"## New\n"}})
		mustStatus(t, res, http.StatusBadRequest)
		res = submitSection(a, "Sectioned", "12", url.Values{"csrf": {csrf}, "baserev": {base}, "text": {"## New\n"}})
		mustStatus(t, res, http.StatusBadRequest)
		mustContain(t, res, "no section 12")
	})
}

func TestNewSection(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, apw := w.CreateUser(t, "Ann", wiki.GroupUser)
	a := w.Login(t, "Ann", apw)
	anon := w.Client(t)

	t.Run("talk pages have an Add topic tab", func(t *testing.T) {
		mustContain(t, a.Get("/wiki/Talk:Topics"), `href="/wiki/Talk:Topics?action=edit&amp;section=new"`, "Add topic")
		a.Edit("Topics", "A page.\n")
		if strings.Contains(a.Get("/wiki/Topics").Body, "Add topic") {
			t.Error("a subject page has an Add topic tab")
		}
	})

	t.Run("a new section creates a missing page", func(t *testing.T) {
		csrf, base, text, res := sectionForm(t, a, "/wiki/Talk:Topics?action=edit&section=new")
		mustContain(t, res, `name="sectiontitle"`)
		if base != "0" || text != "" {
			t.Errorf("form of a new section of a missing page: base %s, text %q", base, text)
		}
		res = submitSection(a, "Talk:Topics", "new", url.Values{"csrf": {csrf}, "baserev": {base}, "sectiontitle": {"First question"}, "text": {"Why? ~~~~"}})
		mustRedirect(t, res, http.StatusSeeOther, "/wiki/Talk:Topics")
		got := anon.Get("/wiki/Talk:Topics?action=raw").Body
		if !regexp.MustCompile(`^## First question\n\nWhy\? \[\[User:Ann\|Ann\]\] \(\[\[User talk:Ann\|talk\]\]\) \d\d:\d\d, \d{1,2} \w+ \d{4} \(UTC\)\n$`).MatchString(got) {
			t.Errorf("text %q", got)
		}
		mustContain(t, anon.Get("/wiki/Talk:Topics?action=history"), `<span class="autocomment">→First question:</span> new section`)
	})

	t.Run("a new section is appended, whatever changed since the form opened", func(t *testing.T) {
		csrf, base, _, _ := sectionForm(t, a, "/wiki/Talk:Topics?action=edit&section=new")
		a.Edit("Talk:Topics", anon.Get("/wiki/Talk:Topics?action=raw").Body+"\nA reply.\n")
		res := submitSection(a, "Talk:Topics", "new", url.Values{"csrf": {csrf}, "baserev": {base}, "sectiontitle": {"Second"}, "text": {"More."}})
		mustStatus(t, res, http.StatusSeeOther)
		got := anon.Get("/wiki/Talk:Topics?action=raw").Body
		if !strings.HasSuffix(got, "\nA reply.\n\n## Second\n\nMore.\n") {
			t.Errorf("text %q", got)
		}
	})

	t.Run("a new section needs a subject", func(t *testing.T) {
		csrf, base, _, _ := sectionForm(t, a, "/wiki/Talk:Topics?action=edit&section=new")
		res := submitSection(a, "Talk:Topics", "new", url.Values{"csrf": {csrf}, "baserev": {base}, "sectiontitle": {" "}, "text": {"Text"}})
		mustStatus(t, res, http.StatusBadRequest)
		mustContain(t, res, "give the new section a subject")
	})

	t.Run("the preview shows the section under its subject, signed", func(t *testing.T) {
		csrf, base, _, _ := sectionForm(t, a, "/wiki/Talk:Topics?action=edit&section=new")
		res := submitSection(a, "Talk:Topics", "new", url.Values{"csrf": {csrf}, "baserev": {base}, "sectiontitle": {"Previewed"}, "text": {"Hello ~~~"}, "preview": {"1"}})
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, `<h2 id="Previewed">Previewed`, `href="/wiki/User:Ann"`)
		if strings.Contains(res.Body, "Hello ~~~") && !strings.Contains(res.Body, ">Hello ~~~</textarea>") {
			t.Error("the preview shows the tildes")
		}
	})
}

func TestSignatures(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, apw := w.CreateUser(t, "Ann", wiki.GroupUser)
	a := w.Login(t, "Ann", apw)
	anon := w.Client(t)

	t.Run("signatures expand on save, not in code", func(t *testing.T) {
		a.Edit("Talk:Sig", "Name: ~~~\n\nBoth: ~~~~\n\nTime: ~~~~~\n\nCode: `~~~~`\n\n```\n~~~~\n```\n\n<nowiki>~~~~</nowiki>\n")
		got := anon.Get("/wiki/Talk:Sig?action=raw").Body
		for _, re := range []string{
			`Name: \[\[User:Ann\|Ann\]\] \(\[\[User talk:Ann\|talk\]\]\)\n`,
			`Both: \[\[User:Ann\|Ann\]\] \(\[\[User talk:Ann\|talk\]\]\) \d\d:\d\d, \d{1,2} [A-Z][a-z]+ \d{4} \(UTC\)\n`,
			`Time: \d\d:\d\d, \d{1,2} [A-Z][a-z]+ \d{4} \(UTC\)\n`,
			"Code: `~~~~`\n\n```\n~~~~\n```\n\n<nowiki>~~~~</nowiki>\n",
		} {
			if !regexp.MustCompile(re).MatchString(got) {
				t.Errorf("saved text lacks %s:\n%s", re, got)
			}
		}
	})

	t.Run("a custom signature is checked when saved", func(t *testing.T) {
		csrf := a.CSRF("/wiki/Special:Preferences")
		cases := []struct{ sig, msg string }{
			{"Just a name", "must link to your user page"},
			{"[[User:Ben|Ann]]", "which is not yours"},
			{"[[User:Ann|Ann]] <pre>", "must not contain HTML tags"},
			{"[[User:Ann|Ann]] ~~~", "must not contain ~~~"},
			{"[[User:Ann|Ann]] {{Fancy}}", "must not use templates"},
			{"[[User:Ann|Ann]]\nsecond line", "must be one line"},
			{"[[User:Ann|Ann]]" + strings.Repeat("x", 250), "the limit is 255"},
		}
		for _, c := range cases {
			res := a.PostForm("/wiki/Special:Preferences", url.Values{"csrf": {csrf}, "do": {"signature"}, "signature": {c.sig}})
			mustStatus(t, res, http.StatusBadRequest)
			mustContain(t, res, c.msg)
			if !strings.Contains(res.Body, `name="signature"`) {
				t.Errorf("the form is not shown again for %q", c.sig)
			}
		}
		for _, ok := range []string{"[[User talk:Ann|Ann (talk)]]", "[[Special:Contributions/Ann|A.]]", "''[[User:Ann|Ann the Great]]''"} {
			res := a.PostForm("/wiki/Special:Preferences", url.Values{"csrf": {csrf}, "do": {"signature"}, "signature": {ok}})
			mustStatus(t, res, http.StatusOK)
			mustContain(t, res, "Your signature was saved", html.EscapeString(ok))
		}
		// Saving the other preferences keeps it.
		res := a.PostForm("/wiki/Special:Preferences", url.Values{"csrf": {csrf}, "do": {"prefs"}, "timezone": {"UTC"}})
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, html.EscapeString("''[[User:Ann|Ann the Great]]''"))
	})

	t.Run("~~~ writes the custom signature", func(t *testing.T) {
		a.Edit("Talk:Custom", "Hi ~~~\n")
		if got := anon.Get("/wiki/Talk:Custom?action=raw").Body; got != "Hi ''[[User:Ann|Ann the Great]]''\n" {
			t.Errorf("text %q", got)
		}
	})

}

func TestSignatureAnonymous(t *testing.T) {
	t.Parallel()
	w := apptest.New(t, func(c *config.Config) { c.EditGroup = wiki.GroupAnonymous })
	anon := w.Client(t)
	anon.Edit("Talk:Anon", "From me ~~~\n")
	got := anon.Get("/wiki/Talk:Anon?action=raw").Body
	if !regexp.MustCompile(`^From me \[\[Special:Contributions/([0-9.:a-f]+)\|([0-9.:a-f]+)\]\]\n$`).MatchString(got) {
		t.Errorf("text %q", got)
	}
}

func TestRESTSectionEdit(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	u, _ := w.CreateUser(t, "Bot", wiki.GroupUser)
	token := apiToken(t, w, u)
	c := w.Client(t)

	res := c.JSON(http.MethodPost, "/w/rest.php/v1/page", token, `{"title":"REST sections","source":"intro\n\n## A\na\n\n## B\nb\n"}`)
	mustStatus(t, res, http.StatusCreated)
	created := decode[apiPage](t, res)

	t.Run("a section number replaces that section", func(t *testing.T) {
		res := c.JSON(http.MethodPut, "/w/rest.php/v1/page/REST_sections", token,
			`{"source":"## B\nb, by the bot\n","section":2,"latest":{"id":`+itoa(created.Latest.ID)+`}}`)
		mustStatus(t, res, http.StatusOK)
		if got := decode[apiPage](t, res).Source; got != "intro\n\n## A\na\n\n## B\nb, by the bot\n" {
			t.Errorf("source %q", got)
		}
	})

	t.Run("a stale base merges an edit of another section", func(t *testing.T) {
		res := c.JSON(http.MethodPut, "/w/rest.php/v1/page/REST_sections", token,
			`{"source":"## A\na, merged\n","section":"1","latest":{"id":`+itoa(created.Latest.ID)+`}}`)
		mustStatus(t, res, http.StatusOK)
		if got := decode[apiPage](t, res).Source; got != "intro\n\n## A\na, merged\n\n## B\nb, by the bot\n" {
			t.Errorf("source %q", got)
		}
	})

	t.Run("new appends a section with its subject", func(t *testing.T) {
		res := c.JSON(http.MethodPut, "/w/rest.php/v1/page/REST_sections", token,
			`{"source":"c ~~~","section":"new","sectiontitle":"C"}`)
		mustStatus(t, res, http.StatusOK)
		if got := decode[apiPage](t, res).Source; !strings.HasSuffix(got, "b, by the bot\n\n## C\n\nc [[User:Bot|Bot]] ([[User talk:Bot|talk]])\n") {
			t.Errorf("source %q", got)
		}
	})

	t.Run("bad sections are 400s", func(t *testing.T) {
		for _, sec := range []string{`"x"`, `-1`, `1.5`, `true`, `9`} {
			res := c.JSON(http.MethodPut, "/w/rest.php/v1/page/REST_sections", token,
				`{"source":"x\n","section":`+sec+`,"latest":{"id":`+itoa(created.Latest.ID)+`}}`)
			mustStatus(t, res, http.StatusBadRequest)
			mustContain(t, res, "section")
		}
	})
}
