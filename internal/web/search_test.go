package web_test

import (
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/wiki"
)

// deletePage deletes title as the administrator c.
func deletePage(t *testing.T, c *apptest.Client, title string) {
	t.Helper()
	u := wiki.MustTitle(title).URL() + "?action=delete"
	mustStatus(t, c.PostForm(u, url.Values{"csrf": {c.CSRF(u)}, "reason": {"test"}}), http.StatusSeeOther)
}

// titleSearch is the answer of rest.php/v1/search/title.
type titleSearch struct {
	Pages []struct {
		ID          int64   `json:"id"`
		Key         string  `json:"key"`
		Title       string  `json:"title"`
		Excerpt     string  `json:"excerpt"`
		Description *string `json:"description"`
	} `json:"pages"`
}

func (s titleSearch) titles() []string {
	var out []string
	for _, p := range s.Pages {
		out = append(out, p.Title)
	}
	return out
}

func TestTitleCompletion(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Ada", wiki.GroupAdmin)
	admin := w.Login(t, "Ada", pw)
	for _, title := range []string{"Éclair", "Eclipse", "Ecology", "Éclat", "Limit one", "Limit two", "Limit three"} {
		admin.Edit(title, "About "+title+".")
	}
	anon := w.Client(t)
	titles := func(t *testing.T, path string) titleSearch {
		t.Helper()
		res := anon.Get(path)
		mustStatus(t, res, http.StatusOK)
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type %q", path, ct)
		}
		return decode[titleSearch](t, res)
	}

	t.Run("search/title finds titles by their start, ignoring case and accents", func(t *testing.T) {
		for _, q := range []string{"ecl", "ECL", "Écl", "e\u0301cl"} { // the last: e and a combining accent
			got := titles(t, "/w/rest.php/v1/search/title?q="+url.QueryEscape(q)).titles()
			if !slices.Equal(got, []string{"Éclair", "Éclat", "Eclipse"}) {
				t.Errorf("q=%s: %q, want Éclair, Éclat, Eclipse", q, got)
			}
		}
		if got := titles(t, "/w/rest.php/v1/search/title?q=nothing+starts+so").Pages; got == nil || len(got) != 0 {
			t.Errorf("no match: pages %#v, want an empty list (not null)", got)
		}
	})

	t.Run("search/title answers MediaWiki's shape", func(t *testing.T) {
		res := anon.Get("/w/rest.php/v1/search/title?q=eclai")
		mustStatus(t, res, http.StatusOK)
		raw := decode[map[string][]map[string]any](t, res)
		if len(raw["pages"]) != 1 {
			t.Fatalf("pages %v", raw)
		}
		p := raw["pages"][0]
		for _, k := range []string{"id", "key", "title", "excerpt", "description"} {
			if _, ok := p[k]; !ok {
				t.Errorf("page %v lacks %q", p, k)
			}
		}
		if p["key"] != "Éclair" || p["title"] != "Éclair" || p["description"] != nil || p["id"].(float64) <= 0 {
			t.Errorf("page %v", p)
		}
		if cc := res.Header.Get("Cache-Control"); cc != "public, max-age=0, s-maxage=15" {
			t.Errorf("Cache-Control %q, want the lists' short shared lifetime", cc)
		}
	})

	t.Run("limit is respected and clamped to 100", func(t *testing.T) {
		if got := titles(t, "/w/rest.php/v1/search/title?limit=2&q=limit").titles(); len(got) != 2 {
			t.Errorf("limit=2: %q", got)
		}
		// limit=1000 is read as 100: it is answered from the entry that
		// the canonical limit=100 stored.
		first := anon.Get("/w/rest.php/v1/search/title?limit=100&q=limit")
		clamped := anon.Get("/w/rest.php/v1/search/title?limit=1000&q=limit")
		mustStatus(t, clamped, http.StatusOK)
		if xcache(first) != "MISS" || xcache(clamped) != "HIT" || clamped.Body != first.Body {
			t.Errorf("limit=100 then limit=1000: X-Cache %q, %q; same body %v", xcache(first), xcache(clamped), clamped.Body == first.Body)
		}
		if got := decode[titleSearch](t, clamped).titles(); len(got) != 3 {
			t.Errorf("limit=1000: %q", got)
		}
	})

	t.Run("an empty q is a 400 that says what to give", func(t *testing.T) {
		for _, path := range []string{"/w/rest.php/v1/search/title", "/w/rest.php/v1/search/title?q=", "/w/rest.php/v1/search/title?q=+++&limit=3"} {
			res := anon.Get(path)
			mustStatus(t, res, http.StatusBadRequest)
			e := decode[struct {
				HTTPCode int               `json:"httpCode"`
				Messages map[string]string `json:"messageTranslations"`
			}](t, res)
			if e.HTTPCode != 400 || !strings.Contains(e.Messages["en"], "?q=") {
				t.Errorf("%s: %s", path, res.Body)
			}
			if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("%s: Cache-Control %q", path, cc)
			}
		}
	})

	t.Run("a deleted page is not offered, even by an answer cached before", func(t *testing.T) {
		const path = "/w/rest.php/v1/search/title?q=ecla"
		if got := titles(t, path).titles(); !slices.Equal(got, []string{"Éclair", "Éclat"}) {
			t.Fatalf("before the delete: %q", got)
		}
		if res := anon.Get(path); xcache(res) != "HIT" {
			t.Fatalf("X-Cache %q: the test needs a cached answer", xcache(res))
		}
		deletePage(t, admin, "Éclat")
		if got := titles(t, path).titles(); !slices.Equal(got, []string{"Éclair"}) {
			t.Errorf("after the delete: %q", got)
		}
		if res := anon.Get("/w/api.php?action=opensearch&search=ecla"); strings.Contains(res.Body, "Éclat") {
			t.Errorf("opensearch offers the deleted page: %s", res.Body)
		}
	})

	t.Run("unknown parameters neither split nor poison the cache", func(t *testing.T) {
		const canonical = "/w/rest.php/v1/search/title?limit=5&q=eco"
		junk := anon.Get("/w/rest.php/v1/search/title?limit=5&q=eco&utm_source=%3Cscript%3E")
		mustStatus(t, junk, http.StatusOK)
		if strings.Contains(junk.Body, "utm") || strings.Contains(junk.Body, "<") || xcache(junk) == "HIT" {
			t.Errorf("junk parameter: X-Cache %q, body %s", xcache(junk), junk.Body)
		}
		// The junk request stored nothing: the canonical one is a miss,
		// then a hit, and answers the same.
		r1, r2 := anon.Get(canonical), anon.Get(canonical)
		if xcache(r1) != "MISS" || xcache(r2) != "HIT" || r1.Body != junk.Body {
			t.Errorf("canonical after junk: X-Cache %q, %q; same body as the junk answer %v", xcache(r1), xcache(r2), r1.Body == junk.Body)
		}
		// Once the canonical answer is stored, the junk spelling gets it
		// (and still stores nothing of its own).
		if again := anon.Get("/w/rest.php/v1/search/title?q=eco&limit=5&junk=1"); xcache(again) != "HIT" || again.Body != r1.Body {
			t.Errorf("junk after canonical: X-Cache %q", xcache(again))
		}
	})
}

func TestOpenSearch(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Bo", wiki.GroupUser)
	bo := w.Login(t, "Bo", pw)
	for _, title := range []string{"Éclair", "Eclipse", "Help:Eclectic"} {
		bo.Edit(title, "About "+title+".")
	}
	anon := w.Client(t)

	t.Run("opensearch answers the query, titles, descriptions and relative URLs", func(t *testing.T) {
		res := anon.Get("/w/api.php?action=opensearch&search=ecl")
		mustStatus(t, res, http.StatusOK)
		got := decode[[]any](t, res)
		if len(got) != 4 || got[0] != "ecl" {
			t.Fatalf("answer %s", res.Body)
		}
		titles, descs, urls := got[1].([]any), got[2].([]any), got[3].([]any)
		if len(titles) != 2 || titles[0] != "Éclair" || titles[1] != "Eclipse" || len(descs) != 2 {
			t.Errorf("titles %v, descriptions %v", titles, descs)
		}
		if len(urls) != 2 || urls[0] != "/wiki/%C3%89clair" || urls[1] != "/wiki/Eclipse" {
			t.Errorf("URLs %v, want relative canonical links", urls)
		}
		if res := anon.Get("/w/api.php?action=opensearch&limit=1&search=ecl"); len(decode[[]any](t, res)[1].([]any)) != 1 {
			t.Errorf("limit=1: %s", res.Body)
		}
	})

	t.Run("opensearch without a search is four empty lists", func(t *testing.T) {
		res := anon.Get("/w/api.php?action=opensearch")
		mustStatus(t, res, http.StatusOK)
		if strings.TrimSpace(res.Body) != `["",[],[],[]]` {
			t.Errorf("body %s", res.Body)
		}
	})

	// Other modules answer their errors as MediaWiki does: 200, the code in
	// the body and in MediaWiki-API-Error (clients raise HTTP errors apart
	// from API errors).
	t.Run("another or no action is an Action API error", func(t *testing.T) {
		for path, code := range map[string]string{
			"/w/api.php?action=query&list=search": "missingparam",
			"/w/api.php?action=nosuchthing":       "badvalue",
			"/w/api.php":                          "noaction",
			"/w/api.php?search=ecl":               "noaction",
		} {
			res := anon.Get(path)
			mustStatus(t, res, http.StatusOK)
			e := decode[struct {
				Error struct{ Code, Info string } `json:"error"`
			}](t, res)
			if e.Error.Code != code || e.Error.Info == "" || res.Header.Get("MediaWiki-API-Error") != code {
				t.Errorf("%s: MediaWiki-API-Error %q, body %s; want code %q", path, res.Header.Get("MediaWiki-API-Error"), res.Body, code)
			}
			if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("%s: Cache-Control %q", path, cc)
			}
		}
	})

	type osd struct {
		XMLName   xml.Name `xml:"http://a9.com/-/spec/opensearch/1.1/ OpenSearchDescription"`
		ShortName string   `xml:"ShortName"`
		URLs      []struct {
			Type     string `xml:"type,attr"`
			Template string `xml:"template,attr"`
		} `xml:"Url"`
	}
	templates := func(t *testing.T, body string) map[string]string {
		t.Helper()
		var d osd
		if err := xml.Unmarshal([]byte(body), &d); err != nil {
			t.Fatalf("not an OpenSearch description: %v\n%s", err, body)
		}
		out := map[string]string{}
		for _, u := range d.URLs {
			out[u.Type] = u.Template
		}
		return out
	}

	t.Run("opensearch_desc.php is XML with absolute URLs and never cached", func(t *testing.T) {
		res := anon.Get("/w/opensearch_desc.php")
		mustStatus(t, res, http.StatusOK)
		if ct := res.Header.Get("Content-Type"); ct != "application/opensearchdescription+xml; charset=utf-8" {
			t.Errorf("Content-Type %q", ct)
		}
		if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("Cache-Control %q: the URLs come from the Host header", cc)
		}
		tm := templates(t, res.Body)
		if tm["text/html"] != w.URL+"/wiki/Special:Search?go=1&q={searchTerms}" ||
			tm["application/x-suggestions+json"] != w.URL+"/w/api.php?action=opensearch&search={searchTerms}" {
			t.Errorf("templates %v", tm)
		}
		if res := anon.Get("/w/opensearch_desc.php"); xcache(res) == "HIT" {
			t.Error("a second request was answered from the cache")
		}
	})

	t.Run("opensearch_desc.php escapes a hostile Host", func(t *testing.T) {
		// What net/http lets through reaches the document escaped.
		r := anon.NewRequest(http.MethodGet, "/w/opensearch_desc.php", nil)
		r.Host = "a&b'c.example"
		res := anon.Do(r)
		mustStatus(t, res, http.StatusOK)
		if strings.Contains(res.Body, "a&b") {
			t.Errorf("raw & in the XML:\n%s", res.Body)
		}
		if tm := templates(t, res.Body); !strings.HasPrefix(tm["text/html"], "http://a&b'c.example/wiki/") {
			t.Errorf("templates %v", tm)
		}
		// A front that passed markup in Host (net/http refuses it) would
		// still get well-formed XML.
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/w/opensearch_desc.php", nil)
		req.Host = `x"><script>alert(1)</script>`
		w.App.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "<script>") {
			t.Errorf("Host with markup: %d\n%s", rec.Code, rec.Body)
		}
		templates(t, rec.Body.String())
	})

	t.Run("opensearch_desc.php says https only when a trusted proxy does", func(t *testing.T) {
		r := anon.NewRequest(http.MethodGet, "/w/opensearch_desc.php", nil)
		r.Header.Set("X-Forwarded-Proto", "https")
		if tm := templates(t, anon.Do(r).Body); !strings.HasPrefix(tm["text/html"], "http://") {
			t.Errorf("an untrusted client chose the scheme: %v", tm)
		}
		behind := apptest.New(t, func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1", "::1"} })
		c := behind.Client(t)
		r = c.NewRequest(http.MethodGet, "/w/opensearch_desc.php", nil)
		r.Header.Set("X-Forwarded-For", "203.0.113.9")
		r.Header.Set("X-Forwarded-Proto", "https")
		if tm := templates(t, c.Do(r).Body); !strings.HasPrefix(tm["text/html"], "https://") {
			t.Errorf("behind a trusted proxy that says https: %v", tm)
		}
	})

	t.Run("every page links the description", func(t *testing.T) {
		mustContain(t, anon.Get("/wiki/Eclipse"),
			`<link rel="search" type="application/opensearchdescription+xml" href="/w/opensearch_desc.php" title="Wikid">`)
	})
}

func TestSearchGo(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Ada", wiki.GroupAdmin)
	admin := w.Login(t, "Ada", pw)
	for _, title := range []string{"Apple pie", "Éclair", "Resume", "Résumé", "Doomed title"} {
		admin.Edit(title, "About "+title+".")
	}
	anon := w.Client(t)
	goTo := func(q string) *apptest.Response { return anon.Get("/wiki/Special:Search?go=1&q=" + url.QueryEscape(q)) }

	t.Run("the header form asks for Go with a URL that is already canonical", func(t *testing.T) {
		res := anon.Get("/wiki/Apple_pie")
		mustContain(t, res, `<input type="hidden" name="go" value="1">`)
		if i, j := strings.Index(res.Body, `name="go"`), strings.Index(res.Body, `name="q"`); i < 0 || j < i {
			t.Errorf("go must come before q in the form (the canonical order)")
		}
		// A form sends ?go=1&q=Apple+pie: straight to the page, no 301.
		mustRedirect(t, anon.Get("/wiki/Special:Search?go=1&q=Apple+pie"), http.StatusFound, "/wiki/Apple_pie")
	})

	t.Run("Special:Search's own form searches the text (no Go)", func(t *testing.T) {
		res := anon.Get("/wiki/Special:Search?q=Apple+pie")
		mustStatus(t, res, http.StatusOK)
		form := res.Body[strings.Index(res.Body, `class="inline-form big-search"`):]
		form = form[:strings.Index(form, "</form>")]
		if strings.Contains(form, `name="go"`) {
			t.Errorf("the results page's form has go: %s", form)
		}
		mustContain(t, res, `There is a page named <a href="/wiki/Apple_pie"><strong><bdi>Apple pie</bdi></strong></a>`)
	})

	t.Run("Go opens the page with exactly the title", func(t *testing.T) {
		res := goTo("Apple pie")
		mustRedirect(t, res, http.StatusFound, "/wiki/Apple_pie")
		if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("Cache-Control %q", cc)
		}
		mustRedirect(t, goTo("Resume"), http.StatusFound, "/wiki/Resume")
	})

	t.Run("Go falls back to a title equal but for case and accents", func(t *testing.T) {
		for q, want := range map[string]string{
			"apple PIE": "/wiki/Apple_pie",
			"eclair":    "/wiki/%C3%89clair",
			"ÉCLAIR":    "/wiki/%C3%89clair",
			"apple_pie": "/wiki/Apple_pie",
			// Both Resume and Résumé fold to "resume": the one that
			// differs in case only wins.
			"RÉSUMÉ": "/wiki/R%C3%A9sum%C3%A9",
			"RESUME": "/wiki/Resume",
		} {
			res := goTo(q)
			if res.StatusCode != http.StatusFound || res.Header.Get("Location") != want {
				t.Errorf("Go %q: %d to %q, want 302 to %q", q, res.StatusCode, res.Header.Get("Location"), want)
			}
		}
	})

	t.Run("the results page names the page a Go would open", func(t *testing.T) {
		res := anon.Get("/wiki/Special:Search?q=eclair")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, `There is a page named <a href="/wiki/%C3%89clair"><strong><bdi>Éclair</bdi></strong></a>`)
		mustNotContain(t, res, "Create the page")
	})

	t.Run("Go without a matching title shows the results", func(t *testing.T) {
		for _, q := range []string{"Apple", "about", "pie apple", "Special:Random"} {
			res := goTo(q)
			mustStatus(t, res, http.StatusOK)
			mustContain(t, res, "<h1 class=\"page-title\">Search</h1>")
		}
		mustContain(t, goTo("about"), `href="/wiki/Apple_pie"`)
	})

	t.Run("a deleted page's Go is not served from a cache", func(t *testing.T) {
		r1, r2 := goTo("doomed TITLE"), goTo("doomed TITLE")
		for _, res := range []*apptest.Response{r1, r2} {
			mustRedirect(t, res, http.StatusFound, "/wiki/Doomed_title")
			if cc := res.Header.Get("Cache-Control"); cc != "no-store" || xcache(res) == "HIT" {
				t.Errorf("Go's redirect: Cache-Control %q, X-Cache %q", cc, xcache(res))
			}
		}
		deletePage(t, admin, "Doomed title")
		for _, q := range []string{"doomed TITLE", "Doomed title"} {
			res := goTo(q)
			mustStatus(t, res, http.StatusOK)
			mustNotContain(t, res, "There is a page named")
		}
	})
}
