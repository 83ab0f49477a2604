package httpx

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/wiki"
)

var testSpec = &Spec{Name: "test", Params: []Param{
	{Name: "action", Kind: Enum, Values: []string{"view", "history", "edit"}, Default: "view"},
	{Name: "oldid", Kind: ID, What: "a revision number"},
	{Name: "diff", Kind: ID, Values: []string{"prev", "cur"}},
	{Name: "limit", Kind: Limit, Max: 500, Default: "50"},
	{Name: "offset", Kind: Offset, Max: 10000},
	{Name: "from", Kind: TitleKey},
	{Name: "q", Alias: "search", Kind: Text, Max: 20},
	{Name: "go", Kind: Flag},
	{Name: "namespace", Kind: Namespace},
	{Name: "pagefrom", Kind: SortCursor},
}}

func TestCanonicalForms(t *testing.T) {
	for _, tc := range []struct {
		query, want string // want "" with wantErr: an error
		wantErr     string
	}{
		{"", "", ""},
		{"action=history", "action=history", ""},
		{"action=history&action=", "action=history", ""},
		{"action=&action=history", "action=history", ""},
		{"action=history&action=history", "action=history", ""},
		{"action=view", "", ""},
		{"action=view&action=history", "", "given twice"},
		{"action=history&action=edit", "", "given twice"},
		{"action=nonsense", "", "unknown value"},
		{"%61ction=hist%6Fry", "action=history", ""},
		{"limit=10&action=history", "action=history&limit=10", ""},
		{"limit=50", "", ""},
		{"limit=99999", "limit=500", ""},
		{"limit=0", "", ""},
		{"limit=x", "", "must be"},
		{"oldid=007", "oldid=7", ""},
		{"oldid=-1", "", "must be a revision number"},
		{"oldid=1&oldid=2", "", "given twice"},
		{"diff=prev&oldid=3", "diff=prev&oldid=3", ""},
		{"diff=next", "", "must be"},
		{"offset=0", "", ""},
		{"offset=20000", "offset=10000", ""},
		{"from=main%20page", "from=Main_page", ""},
		{"from=a%3Cb", "", "not a valid title"},
		{"search=foo+bar", "q=foo+bar", ""},
		{"q=+foo+", "q=foo", ""},
		{"q=a*b%7E", "q=a*b%7E", ""},
		{"q=a%00b", "", "control character"},
		{"q=" + strings.Repeat("x", 21), "", "longer than"},
		{"go=Go", "go=1", ""},
		{"utm_source=x&action=history", "action=history", ""},
		{"&&action=history&", "action=history", ""},
		{"diff", "", ""},
		{"q=%zz", "", "malformed"},
		{"q=%FF", "", "UTF-8"},
		// Namespaces by MediaWiki's numbers; other spellings of a number
		// have one canonical form, anything else is refused.
		{"namespace=0", "namespace=0", ""},
		{"namespace=1", "namespace=1", ""},
		{"namespace=15", "namespace=15", ""},
		{"namespace=00", "namespace=0", ""},
		{"namespace=%2B1", "namespace=1", ""},
		{"namespace=+1", "namespace=1", ""},
		{"namespace=-0", "namespace=0", ""},
		{"namespace=0001", "namespace=1", ""},
		{"namespace=", "", ""},
		{"namespace=all", "", ""},
		{"namespace=ALL", "", ""},
		{"namespace=abc", "", "must be the number of a namespace (0 (Main), 1 Talk, 2 User"},
		{"namespace=8", "", "must be the number of a namespace"},
		{"namespace=-1", "", "must be the number of a namespace"},
		{"namespace=1e0", "", "must be the number of a namespace"},
		{"namespace=0x1", "", "must be the number of a namespace"},
		{"namespace=99999999999999999999", "", "must be the number of a namespace"},
		{"namespace=Talk", "", "must be the number of a namespace"},
		{"namespace=1&namespace=01", "namespace=1", ""},
		{"namespace=1&namespace=2", "", "given twice"},
		// A category listing's cursor: the key folded as stored, the title
		// in its key form; white space is a key, not trimmed.
		{"pagefrom=b", "pagefrom=B", ""},
		{"pagefrom=smith%2C+john%0AJohn%20Smith", "pagefrom=SMITH%2C+JOHN%0AJohn_Smith", ""},
		{"pagefrom=B%0AJohn_Smith", "pagefrom=B%0AJohn_Smith", ""},
		{"pagefrom=+", "pagefrom=+", ""},
		{"pagefrom=a%0A", "pagefrom=A", ""},
		{"pagefrom=a%0A+", "pagefrom=A", ""},
		{"pagefrom=%0AX", "pagefrom=%0AX", ""},
		{"pagefrom=%C3%A9lan", "pagefrom=%C3%89LAN", ""},
		{"pagefrom=e%CC%81", "pagefrom=%C3%89", ""},
		{"pagefrom=%09a", "pagefrom=A", ""},
		{"pagefrom=", "", ""},
		{"pagefrom=a%01", "", "without other control characters"},
		{"pagefrom=a%0Ab%0Ac", "", "a sort key, optionally followed by a line break"},
		{"pagefrom=a%0A" + strings.Repeat("x", 256), "", "longer than 255 bytes"},
		{"pagefrom=b&pagefrom=B", "pagefrom=B", ""},
		{"pagefrom=a&pagefrom=b", "", "given twice"},
	} {
		q, err := ParseQuery(tc.query)
		var got Params
		if err == nil {
			got, err = testSpec.Canonical(q, wiki.TitleRules{})
		}
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err %v, want one saying %q", tc.query, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.query, err)
		case got.Encode() != tc.want:
			t.Errorf("%q → %q, want %q", tc.query, got.Encode(), tc.want)
		}
		if err == nil {
			// Idempotent: the canonical form parses to itself.
			again, err := ParseQuery(got.Encode())
			if err != nil {
				t.Fatal(err)
			}
			if p, err := testSpec.Canonical(again, wiki.TitleRules{}); err != nil || p.Encode() != got.Encode() {
				t.Errorf("%q: canonical %q is not a fixpoint (%q, %v)", tc.query, got.Encode(), p.Encode(), err)
			}
		}
	}
}

func TestTitlesByTheWikisRules(t *testing.T) {
	sensitive := wiki.NewTitleRules(false)
	for _, tc := range []struct {
		query, capital, sensitive string
	}{
		{"from=apple", "from=Apple", "from=apple"},
		{"from=apple_pie", "from=Apple_pie", "from=apple_pie"},
		{"from=Apple", "from=Apple", "from=Apple"},
		{"from=talk:apple", "from=Talk%3AApple", "from=Talk%3Aapple"},
		{"from=user:bob", "from=User%3ABob", "from=User%3ABob"},
		{"from=special:allpages", "from=Special%3AAllpages", "from=Special%3AAllpages"},
	} {
		q, err := ParseQuery(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			rules wiki.TitleRules
			want  string
		}{{wiki.TitleRules{}, tc.capital}, {sensitive, tc.sensitive}} {
			got, err := testSpec.Canonical(q, c.rules)
			if err != nil || got.Encode() != c.want {
				t.Errorf("%q, capital links %v: %q, %v; want %q", tc.query, c.rules.CapitalLinks(), got.Encode(), err, c.want)
			}
		}
	}
	// A request parsed by the case-sensitive rules reads its titles, and
	// writes its links, by them; its canonical target is as sent.
	r := httptest.NewRequest("GET", "/wiki/X?from=apple", nil)
	q, err := Parse(r, testSpec, "/wiki/X", sensitive)
	if err != nil {
		t.Fatal(err)
	}
	if !q.AsSent || q.Moved || q.Title("from") != "apple" {
		t.Errorf("AsSent %v, Moved %v, from %q; want the target as sent and the title apple", q.AsSent, q.Moved, q.Title("from"))
	}
	if got := q.Link("/wiki/X", "from", "apple pie"); got != "/wiki/X?from=apple_pie" {
		t.Errorf("Link = %q, want from=apple_pie", got)
	}
	q, err = Parse(r, testSpec, "/wiki/X", wiki.TitleRules{})
	if err != nil || !q.Moved || q.Key() != "/wiki/X?from=Apple" {
		t.Errorf("by the default rules: %+v, %v; want a redirect to from=Apple", q, err)
	}
}

func TestParseMarksWhatTheEdgeMayServe(t *testing.T) {
	for _, tc := range []struct {
		target        string
		asSent, moved bool
	}{
		{"/wiki/X", true, false},
		{"/wiki/X?action=history", true, false},
		{"/wiki/X?", false, true},
		{"/wiki/X?diff", false, true},
		{"/wiki/X?limit=10&action=history", false, true},
		{"/wiki/%58", false, true},
		{"http://host/wiki/X", false, false},
		{"http://host/wiki/X?diff", false, true},
	} {
		r := httptest.NewRequest("GET", tc.target, nil)
		path := "/wiki/X"
		q, err := Parse(r, testSpec, path, wiki.TitleRules{})
		if err != nil {
			t.Fatalf("%s: %v", tc.target, err)
		}
		if q.AsSent != tc.asSent || q.Moved != tc.moved {
			t.Errorf("%s: AsSent %v Moved %v, want %v %v (key %q)", tc.target, q.AsSent, q.Moved, tc.asSent, tc.moved, q.Key())
		}
	}
}

func TestLinksAreCanonical(t *testing.T) {
	got := testSpec.Link("/wiki/X", wiki.TitleRules{}, "offset", "5", "limit", "50", "action", "history", "unknown", "x")
	if got != "/wiki/X?action=history&offset=5" {
		t.Errorf("Link = %q", got)
	}
	if got := QueryEscape("a b*c~é/"); got != "a+b*c%7E%C3%A9%2F" {
		t.Errorf("QueryEscape = %q", got)
	}
}

func TestIndexParam(t *testing.T) {
	spec := &Spec{Name: "edit", Params: []Param{{Name: "section", Kind: Index, Values: []string{"new"}, What: "a section number or new"}}}
	for in, want := range map[string]string{"section=0": "section=0", "section=07": "section=7", "section=new": "section=new", "section=": ""} {
		q, _ := ParseQuery(in)
		got, err := spec.Canonical(q, wiki.TitleRules{})
		if err != nil || got.Encode() != want {
			t.Errorf("%s: %q, %v; want %q", in, got.Encode(), err, want)
		}
	}
	for _, in := range []string{"section=-1", "section=abc", "section=1.5", "section=99999999999", "section=1&section=2"} {
		q, _ := ParseQuery(in)
		if _, err := spec.Canonical(q, wiki.TitleRules{}); wiki.KindOf(err) != wiki.KindInvalid {
			t.Errorf("%s: err %v, want an invalid-parameter error", in, err)
		}
	}
}
