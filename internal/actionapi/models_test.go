package actionapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The Action API tells and takes each page's content model, and reads a
// wikitext page's text as wikitext.
func TestContentModels(t *testing.T) {
	t.Parallel()
	wd := newWorld(t)
	root := wd.w.Login(t, "Root", wd.adminPwd)
	tok := csrf(t, root)
	out, _ := api(t, root, http.MethodPost, url.Values{"action": {"edit"}, "title": {"Wiki"}, "text": {"'''Bold''' [[Alpha]]\n\n== Part ==\nText."},
		"contentmodel": {"wikitext"}, "token": {tok}})
	if dig(out, "edit", "result") != "Success" || dig(out, "edit", "contentmodel") != "wikitext" {
		t.Fatalf("edit in wikitext: %v", out)
	}
	for _, tt := range []struct {
		title, model, format string
	}{{"Wiki", "wikitext", "text/x-wiki"}, {"Alpha", "markdown", "text/markdown"}} {
		out, _ = api(t, root, http.MethodGet, url.Values{"action": {"query"}, "titles": {tt.title}, "prop": {"info|revisions"},
			"rvprop": {"content|contentmodel"}, "rvslots": {"main"}, "formatversion": {"2"}})
		page := dig(out, "query", "pages", 0)
		if dig(page, "contentmodel") != tt.model || dig(page, "revisions", 0, "slots", "main", "contentmodel") != tt.model ||
			dig(page, "revisions", 0, "slots", "main", "contentformat") != tt.format {
			t.Errorf("%s: %v; want model %s, format %s", tt.title, page, tt.model, tt.format)
		}
	}
	out, _ = api(t, root, http.MethodGet, url.Values{"action": {"parse"}, "page": {"Wiki"}, "prop": {"text|links|sections"}, "formatversion": {"2"}})
	if html, _ := dig(out, "parse", "text").(string); !strings.Contains(html, "<b>Bold</b>") {
		t.Errorf("parse of a wikitext page: %v", out)
	}
	if dig(out, "parse", "links", 0, "title") != "Alpha" || dig(out, "parse", "sections", 0, "line") != "Part" {
		t.Errorf("the links and sections of a wikitext page: %v", out)
	}
	out, _ = api(t, root, http.MethodPost, url.Values{"action": {"edit"}, "title": {"Other"}, "text": {"x"}, "contentmodel": {"html"}, "token": {tok}})
	if errCode(out) != "badvalue" {
		t.Errorf("an edit in model html: %v", out)
	}
}
