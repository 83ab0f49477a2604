package actionapi_test

import (
	"net/url"
	"strings"
	"testing"
)

// The fields MediaWiki defines as HTML (parsedcomment, a section's line,
// displaytitle, search snippets) are inserted as HTML by clients (gadgets,
// feeds): they carry no markup a user wrote.
func TestHTMLFieldsAreEscaped(t *testing.T) {
	wd := newWorld(t)
	root := wd.w.Login(t, "Root", wd.adminPwd)
	const evil = `<img src=x onerror=alert(1)>`
	out, _ := api(t, root, "POST", url.Values{"action": {"edit"}, "title": {"Evil"}, "text": {"Intro evil.\n\n## Head " + evil + "\n\nBody evil."},
		"summary": {"sum " + evil}, "token": {csrf(t, root)}})
	if dig(out, "edit", "result") != "Success" {
		t.Fatalf("%v", out)
	}
	anon := wd.w.Client(t)
	for _, q := range []url.Values{
		{"action": {"query"}, "titles": {"Evil"}, "prop": {"revisions"}, "rvprop": {"parsedcomment"}},
		{"action": {"query"}, "titles": {"Evil"}, "prop": {"revisions"}, "rvprop": {"parsedcomment"}, "rvlimit": {"5"}},
		{"action": {"query"}, "list": {"recentchanges"}, "rcprop": {"parsedcomment|title"}},
		{"action": {"query"}, "list": {"usercontribs"}, "ucuser": {"Root"}, "ucprop": {"parsedcomment"}},
		{"action": {"parse"}, "page": {"Evil"}, "prop": {"sections|displaytitle|text"}},
		{"action": {"query"}, "list": {"search"}, "srsearch": {"evil"}},
	} {
		out, res := api(t, anon, "GET", q)
		if errCode(out) != "" {
			t.Errorf("%v: %s", q, res.Body)
			continue
		}
		// The JSON encoder writes < as \u003c: look at the decoded values.
		if s := findString(out, "<img"); s != "" {
			t.Errorf("%v: %q", q, s)
		}
	}
}

// findString returns the first string in v containing sub.
func findString(v any, sub string) string {
	switch x := v.(type) {
	case string:
		if strings.Contains(x, sub) {
			return x
		}
	case map[string]any:
		for _, e := range x {
			if s := findString(e, sub); s != "" {
				return s
			}
		}
	case []any:
		for _, e := range x {
			if s := findString(e, sub); s != "" {
				return s
			}
		}
	}
	return ""
}
