package wiki

import (
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

func TestParseTitle(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want "" means an error
	}{
		// Spaces and underscores, as MediaWiki.
		{"Main Page", "Main Page"},
		{"Main_Page", "Main Page"},
		{"main page", "Main page"},
		{"  Main   Page  ", "Main Page"},
		{"__Main__Page__", "Main Page"},
		{"Main\tPage\n", "Main Page"},
		{"\u00a0Main\u00a0Page\u3000", "Main Page"},
		{"a", "A"},
		{"iPhone", "IPhone"},
		{"100%", "100%"},
		{"50% off", "50% off"},
		{"A/B/C", "A/B/C"},
		{"C++", "C++"},
		{"AT&T", "AT&T"},
		{"Foo?bar", "Foo?bar"},
		{"Semi;colon", "Semi;colon"},
		{"Quote's \"quoted\"", "Quote's \"quoted\""},
		// Namespaces: canonical case, spaces around the colon dropped.
		{"user:alice", "User:Alice"},
		{"USER:Alice", "User:Alice"},
		{"User : alice", "User:Alice"},
		{"user_talk:x", "User talk:x"}, // not a namespace here: main namespace, first letter up
		{"help:syntax", "Help:Syntax"},
		{"category:foo_bar", "Category:Foo bar"},
		{"special:RecentChanges", "Special:RecentChanges"},
		{"wikid:About", "Wikid:About"},
		{"Unknown:foo", "Unknown:foo"},
		{"Help:User:x", "Help:User:x"},
		{"Foo:Bar:baz", "Foo:Bar:baz"},
		// Unicode: NFC, Korean, upper-casing of the first letter only.
		{"대문", "대문"},
		{"위키 백과", "위키 백과"},
		{"\u1112\u1161\u11ab\u1100\u1173\u11af", "한글"}, // conjoining jamo compose to syllables
		{"e\u0301cole", "École"},
		{"école", "École"},
		{"ωmega", "Ωmega"},
		{"ßtraße", "ßtraße"}, // no single upper-case letter: unchanged
		{"日本語", "日本語"},
		{"user:김철수", "User:김철수"},
		{"Category:한국어_문서", "Category:한국어 문서"},
		// Errors.
		{"", ""},
		{"   ", ""},
		{"___", ""},
		{"User:", ""},
		{"user:  ", ""},
		{":Foo", ""},
		{"/Foo", ""},
		{"Help:/Foo", ""},
		{".", ""},
		{"..", ""},
		{"./Foo", ""},
		{"../Foo", ""},
		{"Foo/./Bar", ""},
		{"Foo/../Bar", ""},
		{"Foo/.", ""},
		{"Foo/..", ""},
		{"Sign ~~~", ""},
		{"A#b", ""},
		{"A<b", ""},
		{"A>b", ""},
		{"A[b", ""},
		{"A]b", ""},
		{"A|b", ""},
		{"A{b", ""},
		{"A}b", ""},
		{"A\x00b", ""},
		{"A\x01b", ""},
		{"A\x7fb", ""},
		{"A\u0080b", ""},
		{"A\u009fb", ""},
		{"A\ufffdb", ""},
		{"A%41", ""},
		{"%2e%2e", ""},
		{"A%c3%a9", ""},
		{"\xff\xfe", ""},
		{"A\xc3", ""},
		// Length: 255 bytes of UTF-8 after normalization.
		{strings.Repeat("a", 255), "A" + strings.Repeat("a", 254)},
		{strings.Repeat("a", 256), ""},
		{strings.Repeat("한", 85), strings.Repeat("한", 85)},
		{strings.Repeat("한", 86), ""},
		{"User:" + strings.Repeat("x", 250), "User:X" + strings.Repeat("x", 249)},
		{"User:" + strings.Repeat("x", 251), ""},
		{strings.Repeat("a_", 127) + "a", "A" + strings.Repeat(" a", 127)},
		{strings.Repeat(" ", 1000) + "a" + strings.Repeat("_", 1000), "A"},
	} {
		got, err := ParseTitle(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("ParseTitle(%q) = %q, want an error", tc.in, got)
			} else if KindOf(err) != KindInvalid || Message(err) == "" {
				t.Errorf("ParseTitle(%q): error %v is not a KindInvalid with a message", tc.in, err)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("ParseTitle(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestTitleParts(t *testing.T) {
	for _, tc := range []struct {
		title, ns, name, key, url, subpage string
		special                            bool
		parents                            []string
	}{
		{"Main Page", "", "Main Page", "Main_Page", "/wiki/Main_Page", "Main Page", false, nil},
		{"Help:Syntax", "Help", "Syntax", "Help:Syntax", "/wiki/Help:Syntax", "Syntax", false, nil},
		{"Special:RecentChanges", "Special", "RecentChanges", "Special:RecentChanges", "/wiki/Special:RecentChanges", "RecentChanges", true, nil},
		{"A/B c/D", "", "A/B c/D", "A/B_c/D", "/wiki/A/B_c/D", "D", false, []string{"A", "A/B c"}},
		{"대문", "", "대문", "대문", "/wiki/%EB%8C%80%EB%AC%B8", "대문", false, nil},
		{"100% sure?", "", "100% sure?", "100%_sure?", "/wiki/100%25_sure%3F", "100% sure?", false, nil},
	} {
		ti := MustTitle(tc.title)
		if ti.Namespace() != tc.ns || ti.Name() != tc.name || ti.Key() != tc.key || ti.URL() != tc.url ||
			ti.Subpage() != tc.subpage || ti.IsSpecial() != tc.special {
			t.Errorf("%q: ns %q name %q key %q url %q subpage %q special %v", tc.title, ti.Namespace(), ti.Name(), ti.Key(), ti.URL(), ti.Subpage(), ti.IsSpecial())
		}
		var ps []string
		for _, p := range ti.Parents() {
			ps = append(ps, string(p))
		}
		if strings.Join(ps, "|") != strings.Join(tc.parents, "|") {
			t.Errorf("%q: parents %q, want %q", tc.title, ps, tc.parents)
		}
	}
}

func TestParseLink(t *testing.T) {
	for _, tc := range []struct{ in, title, frag string }{
		{"Main Page#History", "Main Page", "History"},
		{"#Section", "", "Section"},
		{"help:syntax# Links ", "Help:Syntax", "Links"},
	} {
		ti, frag, err := ParseLink(tc.in)
		if err != nil || string(ti) != tc.title || frag != tc.frag {
			t.Errorf("ParseLink(%q) = %q, %q, %v", tc.in, ti, frag, err)
		}
	}
	if _, _, err := ParseLink("#"); err == nil {
		t.Error("ParseLink(\"#\") is not an error")
	}
}

// checkTitle states what every title ParseTitle returns satisfies.
func checkTitle(t *testing.T, in string, ti Title) {
	t.Helper()
	s := string(ti)
	if s == "" || len(s) > MaxTitleBytes || !utf8.ValidString(s) {
		t.Fatalf("ParseTitle(%q) = %q: empty, too long or invalid UTF-8", in, s)
	}
	if !norm.NFC.IsNormalString(s) {
		t.Fatalf("ParseTitle(%q) = %q is not NFC", in, s)
	}
	if strings.ContainsAny(s, "#<>[]|{}_\ufffd") || strings.Contains(s, "  ") || strings.Contains(s, "~~~") ||
		s[0] == ' ' || s[len(s)-1] == ' ' {
		t.Fatalf("ParseTitle(%q) = %q has a forbidden character or stray space", in, s)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r != ' ' && unicode.IsSpace(r)) {
			t.Fatalf("ParseTitle(%q) = %q has control or space character %U", in, s, r)
		}
		if c := charClass(r); c != "" && r != 0x200c && r != 0x200d {
			t.Fatalf("ParseTitle(%q) = %q has %U, %s", in, s, r, c)
		}
	}
	// Idempotent.
	again, err := ParseTitle(s)
	if err != nil || again != ti {
		t.Fatalf("ParseTitle is not idempotent: %q → %q → %q, %v", in, s, again, err)
	}
	// The namespace, if any, is canonical and has a name after it.
	if ns := ti.Namespace(); ns != "" && (!strings.HasPrefix(s, ns+":") || ti.Name() == "") {
		t.Fatalf("%q: namespace %q, name %q", s, ns, ti.Name())
	}
	// Key and URL round trip.
	if k, err := ParseTitle(ti.Key()); err != nil || k != ti {
		t.Fatalf("ParseTitle(Key(%q)) = %q, %v", s, k, err)
	}
	u := ti.URL()
	rest, ok := strings.CutPrefix(u, "/wiki/")
	if !ok {
		t.Fatalf("URL(%q) = %q", s, u)
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; c <= ' ' || c >= 0x7f || c == '?' || c == '#' {
			t.Fatalf("URL(%q) = %q has byte %#x", s, u, c)
		}
	}
	dec, err := url.PathUnescape(rest)
	if err != nil || dec != ti.Key() {
		t.Fatalf("URL(%q) = %q decodes to %q, %v; want the key %q", s, u, dec, err, ti.Key())
	}
	if p, err := url.Parse(u); err != nil || p.EscapedPath() != u {
		t.Fatalf("URL(%q) = %q does not survive url.Parse: %v", s, u, err)
	}
}

func TestTitlesOfTheTable(t *testing.T) {
	for _, in := range []string{"Main Page", "대문", "User:김철수", "100% sure?", "A/B c/D", "e\u0301cole", "Help:User:x"} {
		ti, err := ParseTitle(in)
		if err != nil {
			t.Fatal(err)
		}
		checkTitle(t, in, ti)
	}
}

// FuzzParseTitle: ParseTitle never panics, and what it accepts is a
// normalized title: idempotent, no forbidden or control characters, NFC,
// at most 255 bytes, and its key and URL lead back to it.
func FuzzParseTitle(f *testing.F) {
	for _, s := range []string{"Main Page", "main_page", "  a  b  ", "user:alice", "User : alice", "Help:User:x",
		"대문", "\u1112\u1161\u11ab", "e\u0301cole", "ſpecial:x", "A%41", "100%", "Foo/../Bar", "~~~", "A|b",
		"\x00", "\xff", "\u00a0x\u3000", "Category:한국어_문서", strings.Repeat("한", 86), "\u0131\u0307", "i\u0307x", "A//B", "A/",
		"A\u202eB", "\ufeffA", "می\u200cخواهم", "👩\u200d💻", "Ad\u200dmin", "\ue000", "\U000E0041"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		ti, err := ParseTitle(in)
		if err != nil {
			if KindOf(err) != KindInvalid || Message(err) == "" {
				t.Fatalf("ParseTitle(%q): %v is not a KindInvalid with a message", in, err)
			}
			return
		}
		checkTitle(t, in, ti)
	})
}
