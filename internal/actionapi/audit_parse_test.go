package actionapi_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// bigLinks is a page text of n distinct links.
func bigLinks(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "[[L%d]] ", i)
	}
	return b.String()
}

// action=parse's links or sections parse a page's text again, outside the
// render cache (a 1 MiB page of links costs a core for seconds): anonymous
// clients may not do that without limit. Such parses count against the
// parse rate limit by their size; small pages stay free, and so do
// prop=links and generator=links, which read the link rows.
func TestUncachedParsesAreRateLimited(t *testing.T) {
	wd := newWorld(t)
	root := wd.w.Login(t, "Root", wd.adminPwd)
	// 360 KB: the cost is by size (a page of that many links takes a
	// core for a second or so; plain words keep the test fast under -race).
	text := strings.Repeat("lorem ipsum ", 30000) + bigLinks(100)
	out, _ := api(t, root, "POST", url.Values{"action": {"edit"}, "title": {"Big"}, "text": {text}, "token": {csrf(t, root)}})
	if dig(out, "edit", "result") != "Success" {
		t.Fatalf("%.300v", out)
	}
	anon := wd.w.Client(t)
	page := url.Values{"action": {"parse"}, "page": {"Big"}, "prop": {"links"}}
	n := 0
	for range 20 {
		out, _ := api(t, anon, "GET", page)
		if errCode(out) == "ratelimited" {
			break
		}
		if errCode(out) != "" {
			t.Fatalf("%.300v", out)
		}
		n++
	}
	if n >= 20 {
		t.Fatalf("%d parses of a 360 KB page allowed in a row", n)
	}
	// Every other way to parse the big text again is refused now: each
	// counts against the same limit (the test clients share an address).
	for _, q := range []url.Values{
		{"action": {"parse"}, "page": {"Big"}, "prop": {"sections"}},
		{"action": {"parse"}, "oldid": {"0"}, "page": {"Big"}, "prop": {"links"}},
		{"action": {"parse"}, "text": {text}, "prop": {"links"}},
	} {
		if out, _ := api(t, anon, "POST", q); errCode(out) != "ratelimited" {
			t.Errorf("%v: %.300v", q.Get("prop")+q.Get("generator"), out)
		}
	}
	// prop=links and generator=links read the link rows, never the text:
	// they stay free on the big page too.
	out, _ = api(t, anon, "GET", url.Values{"action": {"query"}, "titles": {"Big"}, "prop": {"links"}, "pllimit": {"max"}, "formatversion": {"2"}})
	if links, _ := dig(out, "query", "pages", 0, "links").([]any); len(links) != 100 {
		t.Errorf("prop=links of the big page after the parse limit: %.300v", out)
	}
	out, _ = api(t, anon, "GET", url.Values{"action": {"query"}, "titles": {"Big"}, "generator": {"links"}, "gpllimit": {"max"}})
	if errCode(out) != "" {
		t.Errorf("generator=links of the big page after the parse limit: %.300v", out)
	}
	// A small page's links cost nothing.
	for range 100 {
		out, _ := api(t, anon, "GET", url.Values{"action": {"query"}, "titles": {"Alpha"}, "prop": {"links"}})
		if errCode(out) != "" {
			t.Fatalf("%v", out)
		}
	}
}

// A short text that transcludes a large page costs what it made, not what
// it said: a client parsing "{{:Big}}" again and again is stopped after a
// few, where its length alone counted one event each. What it made is the
// larger of the expanded text and the HTML: a page of categories makes
// little HTML, a page of headings too much HTML to keep (it is replaced by
// its text, which is short here).
func TestParsedTextChargedByOutput(t *testing.T) {
	for name, text := range map[string]string{
		"words":      strings.Repeat("lorem ipsum ", 60000),     // 720 KB
		"categories": strings.Repeat("[[Category:C]]\n", 48000), // 720 KB, no HTML
		"headings":   strings.Repeat("# a\n", 180000),           // 720 KB, over 8 MB of HTML
	} {
		t.Run(name, func(t *testing.T) {
			wd := newWorld(t)
			root := wd.w.Login(t, "Root", wd.adminPwd)
			out, _ := api(t, root, "POST", url.Values{"action": {"edit"}, "title": {"Big"}, "text": {text}, "token": {csrf(t, root)}})
			if dig(out, "edit", "result") != "Success" {
				t.Fatalf("%.300v", out)
			}
			anon := wd.w.Client(t)
			n := 0
			for i := range 30 {
				out, _ := api(t, anon, "POST", url.Values{"action": {"parse"}, "text": {fmt.Sprintf("{{:Big}} %d", i)}, "prop": {"text"}})
				if errCode(out) == "ratelimited" {
					break
				}
				if errCode(out) != "" {
					t.Fatalf("%.300v", out)
				}
				n++
			}
			if n == 0 || n >= 10 {
				t.Fatalf("%d parses of a text transcluding 720 KB allowed in a row", n)
			}
		})
	}
}
