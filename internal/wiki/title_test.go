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
		{"user_talk:x", "User talk:X"},
		{"user_TALK:foo", "User talk:Foo"},
		{"USER__TALK : foo", "User talk:Foo"},
		{"help:syntax", "Help:Syntax"},
		{"help talk:syntax", "Help talk:Syntax"},
		{"category:foo_bar", "Category:Foo bar"},
		{"Category_talk:foo", "Category talk:Foo"},
		{"special:RecentChanges", "Special:RecentChanges"},
		{"talk:foo", "Talk:Foo"},
		{"TALK:Main Page", "Talk:Main Page"},
		{"template:infobox", "Template:Infobox"},
		{"Template talk:infobox", "Template talk:Infobox"},
		{"file:photo.jpg", "File:Photo.jpg"},
		{"File talk:photo.jpg", "File talk:Photo.jpg"},
		{"project:about", "Project:About"},
		{"Project_talk:about", "Project talk:About"},
		// Aliases: Wikid's old project namespace, MediaWiki's Image.
		{"wikid:About", "Project:About"},
		{"Wikid talk:About", "Project talk:About"},
		{"image:photo.jpg", "File:Photo.jpg"},
		{"Image_talk:photo.jpg", "File talk:Photo.jpg"},
		{"Unknown:foo", "Unknown:foo"},
		{"Help:User:x", "Help:User:x"},
		{"User talk:Talk:x", "User talk:Talk:x"},
		{"Foo:Bar:baz", "Foo:Bar:baz"},
		{"Talk:Foo:bar", "Talk:Foo:bar"},
		{"Usertalk:x", "Usertalk:x"},
		{"User talk:", ""},
		{"Talk:", ""},
		// The Talk namespace holds the talk pages of main namespace pages
		// only, as in MediaWiki.
		{"Talk:User:x", ""},
		{"talk:wikid:x", ""},
		{"Talk:Talk:x", ""},
		{"Talk:Special:x", ""},
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
		{"User talk:Bob/Notes", "User talk", "Bob/Notes", "User_talk:Bob/Notes", "/wiki/User_talk:Bob/Notes", "Notes", false, []string{"User talk:Bob"}},
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

func TestTalkAndSubject(t *testing.T) {
	for _, tc := range []struct {
		title, talk, subject string // talk "" means none
	}{
		{"Main Page", "Talk:Main Page", "Main Page"},
		{"Talk:Main Page", "", "Main Page"},
		{"User:Bob", "User talk:Bob", "User:Bob"},
		{"User talk:Bob", "", "User:Bob"},
		{"Project:About", "Project talk:About", "Project:About"},
		{"Project talk:About", "", "Project:About"},
		{"File:Photo.jpg", "File talk:Photo.jpg", "File:Photo.jpg"},
		{"File talk:Photo.jpg", "", "File:Photo.jpg"},
		{"Template:Infobox", "Template talk:Infobox", "Template:Infobox"},
		{"Template talk:Infobox", "", "Template:Infobox"},
		{"Help:Syntax", "Help talk:Syntax", "Help:Syntax"},
		{"Help talk:Syntax", "", "Help:Syntax"},
		{"Category:Fruit", "Category talk:Fruit", "Category:Fruit"},
		{"Category talk:Fruit", "", "Category:Fruit"},
		{"Foo:Bar", "Talk:Foo:Bar", "Foo:Bar"},
		{"Talk:Foo:Bar", "", "Foo:Bar"},
		{"Help:User:x", "Help talk:User:x", "Help:User:x"},
		{"User talk:Talk:x", "", "User:Talk:x"},
		{"Special:RecentChanges", "", "Special:RecentChanges"},
		// The talk page would be longer than a title may be.
		{strings.Repeat("a", 255), "", "A" + strings.Repeat("a", 254)},
		{"User:" + strings.Repeat("a", 245), "User talk:A" + strings.Repeat("a", 244), "User:A" + strings.Repeat("a", 244)},
		{"User:" + strings.Repeat("a", 246), "", "User:A" + strings.Repeat("a", 245)},
	} {
		ti := MustTitle(tc.title)
		talk, ok := ti.Talk()
		if string(talk) != tc.talk || ok != (tc.talk != "") {
			t.Errorf("%q.Talk() = %q, %v; want %q", ti, talk, ok, tc.talk)
		}
		if s := ti.Subject(); string(s) != tc.subject {
			t.Errorf("%q.Subject() = %q, want %q", ti, s, tc.subject)
		}
		if ti.IsTalk() != (string(ti) != tc.subject) {
			t.Errorf("%q.IsTalk() = %v", ti, ti.IsTalk())
		}
		pair, ok := ti.Pair()
		switch {
		case ti.IsTalk() && (pair != ti.Subject() || !ok):
			t.Errorf("%q.Pair() = %q, %v; want its subject", ti, pair, ok)
		case !ti.IsTalk() && (string(pair) != tc.talk || ok != (tc.talk != "")):
			t.Errorf("%q.Pair() = %q, %v; want its talk page", ti, pair, ok)
		}
		if ok {
			if back, ok2 := pair.Pair(); !ok2 || back != ti {
				t.Errorf("%q.Pair().Pair() = %q, %v; want %q back", ti, back, ok2, ti)
			}
		}
	}
}

func TestNamespaces(t *testing.T) {
	seen := map[int]bool{}
	for _, n := range Namespaces {
		if seen[n.ID] {
			t.Errorf("namespace ID %d twice", n.ID)
		}
		seen[n.ID] = true
		if got, ok := NamespaceByID(n.ID); !ok || got != n {
			t.Errorf("NamespaceByID(%d) = %+v, %v", n.ID, got, ok)
		}
		if got, ok := NamespaceByName(n.Name); !ok || got != n {
			t.Errorf("NamespaceByName(%q) = %+v, %v", n.Name, got, ok)
		}
		// A subject namespace and its talk namespace name each other.
		if n.IsTalk() != (n.ID%2 == 1) || n.Talk().Subject() != n.Subject() || n.Subject().Talk() != n.Talk() ||
			n.Talk().IsTalk() != true || n.Subject().IsTalk() {
			t.Errorf("%+v: talk %+v, subject %+v", n, n.Talk(), n.Subject())
		}
		if n.Name == "" {
			continue
		}
		// A page in n is in n, however its namespace is spelled.
		for _, spelling := range []string{n.Name, strings.ToLower(n.Name), strings.ToUpper(n.Name), strings.ReplaceAll(n.Name, " ", "_")} {
			ti, err := ParseTitle(spelling + ":x")
			if err != nil || ti.Namespace() != n.Name || ti.Name() != "X" {
				t.Errorf("ParseTitle(%q) = %q (namespace %q), %v", spelling+":x", ti, ti.Namespace(), err)
			}
		}
		if p := n.Prefixes(); len(p) == 0 || p[0] != n.Name+":" {
			t.Errorf("%q: prefixes %q", n.Name, p)
		}
	}
	if p := strings.Join(mustNamespace(t, 4).Prefixes(), " "); p != "Project: Wikid:" {
		t.Errorf("Project's prefixes %q", p)
	}
	if p := strings.Join(mustNamespace(t, 7).Prefixes(), " "); p != "File talk: Image talk:" {
		t.Errorf("File talk's prefixes %q", p)
	}
	if _, ok := NamespaceByID(8); ok {
		t.Error("namespace 8 (MediaWiki) exists")
	}
	if _, ok := NamespaceByName(NSSpecial); ok {
		t.Error("Special is listed among the namespaces pages can be in")
	}
}

func mustNamespace(t *testing.T, id int) Namespace {
	t.Helper()
	n, ok := NamespaceByID(id)
	if !ok {
		t.Fatalf("no namespace %d", id)
	}
	return n
}

func TestParseLink(t *testing.T) {
	var rules TitleRules
	for _, tc := range []struct{ in, title, frag string }{
		{"Main Page#History", "Main Page", "History"},
		{"#Section", "", "Section"},
		{"help:syntax# Links ", "Help:Syntax", "Links"},
	} {
		ti, frag, err := rules.ParseLink(tc.in)
		if err != nil || string(ti) != tc.title || frag != tc.frag {
			t.Errorf("ParseLink(%q) = %q, %q, %v", tc.in, ti, frag, err)
		}
	}
	if _, _, err := rules.ParseLink("#"); err == nil {
		t.Error("ParseLink(\"#\") is not an error")
	}
}

// checkTitle states what every title rules.Parse returns satisfies.
func checkTitle(t *testing.T, rules TitleRules, in string, ti Title) {
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
	again, err := rules.Parse(s)
	if err != nil || again != ti {
		t.Fatalf("ParseTitle is not idempotent: %q → %q → %q, %v", in, s, again, err)
	}
	// The first letter of the name is upper case where the rules say so.
	if r, _ := utf8.DecodeRuneInString(ti.Name()); rules.Capitalized(ti.Namespace()) && unicode.ToUpper(r) != r {
		t.Fatalf("%q: the first letter of its name is not upper case", s)
	}
	// The namespace, if any, is canonical and has a name after it.
	if ns := ti.Namespace(); ns != "" && (!strings.HasPrefix(s, ns+":") || ti.Name() == "") {
		t.Fatalf("%q: namespace %q, name %q", s, ns, ti.Name())
	}
	// Its talk page or subject is a title whose own pair is it again.
	if pair, ok := ti.Pair(); ok {
		if again, err := rules.Parse(string(pair)); err != nil || again != pair {
			t.Fatalf("%q: pair %q does not parse to itself: %q, %v", s, pair, again, err)
		}
		if back, ok := pair.Pair(); !ok || back != ti || pair.IsTalk() == ti.IsTalk() {
			t.Fatalf("%q: pair %q, whose pair is %q, %v", s, pair, back, ok)
		}
	} else if ti.IsTalk() || (!ti.IsSpecial() && len(s)+len("Talk:") <= MaxTitleBytes-len(" talk")) {
		t.Fatalf("%q has no pair", s)
	}
	// Key and URL round trip.
	if k, err := rules.Parse(ti.Key()); err != nil || k != ti {
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
		checkTitle(t, TitleRules{}, in, ti)
	}
}

// FuzzParseTitle: ParseTitle never panics, and what it accepts is a
// normalized title: idempotent, no forbidden or control characters, NFC,
// at most 255 bytes, and its key and URL lead back to it. The same holds
// of the case-sensitive rules (capital_links false), whose title differs
// from ParseTitle's in the case of the name's first letter at most.
func FuzzParseTitle(f *testing.F) {
	for _, s := range []string{"Main Page", "main_page", "  a  b  ", "user:alice", "User : alice", "Help:User:x",
		"user_TALK:foo", "talk:user:x", "Talk:Foo:bar", "wikid talk:x", "IMAGE:x", "File talk :x", "Talk:ſpecial:x",
		"대문", "\u1112\u1161\u11ab", "e\u0301cole", "ſpecial:x", "A%41", "100%", "Foo/../Bar", "~~~", "A|b",
		"\x00", "\xff", "\u00a0x\u3000", "Category:한국어_문서", strings.Repeat("한", 86), "\u0131\u0307", "i\u0307x", "A//B", "A/",
		"A\u202eB", "\ufeffA", "می\u200cخواهم", "👩\u200d💻", "Ad\u200dmin", "\ue000", "\U000E0041",
		"apple", "talk:apple", "user:bob", "User talk:bob/x", "special:x", "ǆ", "ıx", "ßa", "help:user:x"} {
		f.Add(s)
	}
	sensitive := NewTitleRules(false)
	f.Fuzz(func(t *testing.T, in string) {
		ti, err := ParseTitle(in)
		ts, errs := sensitive.Parse(in)
		if (err == nil) != (errs == nil) {
			// Only the length limit may tell them apart: upper-casing a
			// letter can change its length in UTF-8 by a few bytes.
			if accepted := max(len(ti), len(ts)); accepted <= MaxTitleBytes-4 {
				t.Fatalf("%q: ParseTitle's error %v, the case-sensitive rules' %v: the rules refuse different titles", in, err, errs)
			}
			return
		}
		if err != nil {
			if KindOf(err) != KindInvalid || Message(err) == "" {
				t.Fatalf("ParseTitle(%q): %v is not a KindInvalid with a message", in, err)
			}
			return
		}
		checkTitle(t, TitleRules{}, in, ti)
		checkTitle(t, sensitive, in, ts)
		// Capitalizing the case-sensitive title gives ParseTitle's.
		if again, err := ParseTitle(string(ts)); err != nil || again != ti {
			t.Fatalf("%q: case-sensitive %q, capitalized %q, %v; want %q", in, ts, again, err, ti)
		}
	})
}

func TestTitleRules(t *testing.T) {
	capital, sensitive := NewTitleRules(true), NewTitleRules(false)
	if capital != (TitleRules{}) || !capital.CapitalLinks() || sensitive.CapitalLinks() {
		t.Fatalf("NewTitleRules: capital %+v, sensitive %+v; the zero value must be capital_links true", capital, sensitive)
	}
	for _, tc := range []struct {
		in, capital, sensitive string // "" means an error
	}{
		// The main namespace and every namespace that follows the setting.
		{"apple", "Apple", "apple"},
		{"Apple", "Apple", "Apple"},
		{"apple_pie", "Apple pie", "apple pie"},
		{"  apple  ", "Apple", "apple"},
		{"iPhone", "IPhone", "iPhone"},
		{"talk:apple", "Talk:Apple", "Talk:apple"},
		{"project:about", "Project:About", "Project:about"},
		{"wikid:about", "Project:About", "Project:about"},
		{"Project talk:about", "Project talk:About", "Project talk:about"},
		{"file:photo.jpg", "File:Photo.jpg", "File:photo.jpg"},
		{"image:photo.jpg", "File:Photo.jpg", "File:photo.jpg"},
		{"template:foo", "Template:Foo", "Template:foo"},
		{"Template talk:foo", "Template talk:Foo", "Template talk:foo"},
		{"help:syntax", "Help:Syntax", "Help:syntax"},
		{"category:fruit", "Category:Fruit", "Category:fruit"},
		{"Category talk:fruit", "Category talk:Fruit", "Category talk:fruit"},
		{"unknown:foo", "Unknown:foo", "unknown:foo"},
		{"help:user:x", "Help:User:x", "Help:user:x"},
		// User, User talk and Special are capitalized either way, as in
		// MediaWiki; namespace names are case-insensitive either way.
		{"user:bob", "User:Bob", "User:Bob"},
		{"USER:bob", "User:Bob", "User:Bob"},
		{"user_talk:bob", "User talk:Bob", "User talk:Bob"},
		{"User talk:bob/notes", "User talk:Bob/notes", "User talk:Bob/notes"},
		{"special:recentChanges", "Special:RecentChanges", "Special:RecentChanges"},
		{"SPECIAL:allpages", "Special:Allpages", "Special:Allpages"},
		// Letters without a single upper-case form, letters with a title
		// case, and the Turkish i: as unicode.ToUpper has them, when the
		// first letter is upper-cased at all.
		{"ßa", "ßa", "ßa"},
		{"ǆungla", "Ǆungla", "ǆungla"}, // upper case (U+01C4) as unicode.ToUpper has it, not title case (U+01C5)
		{"ǅungla", "Ǆungla", "ǅungla"},
		{"ıx", "Ix", "ıx"},             // dotless i upper-cases to I
		{"i\u0307x", "İx", "i\u0307x"}, // I and a combining dot compose (NFC) to İ
		{"\u0131\u0307x", "İx", "\u0131\u0307x"},
		{"ωmega", "Ωmega", "ωmega"},
		{"école", "École", "école"},
		{"e\u0301cole", "École", "école"},
		{"user:ıx", "User:Ix", "User:Ix"},
		{"대문", "대문", "대문"},
		// The rules do not change what is refused.
		{"", "", ""},
		{"talk:", "", ""},
		{"a|b", "", ""},
		{"Talk:user:x", "", ""},
		{strings.Repeat("a", 256), "", ""},
	} {
		for _, c := range []struct {
			name  string
			rules TitleRules
			want  string
		}{{"capital", capital, tc.capital}, {"sensitive", sensitive, tc.sensitive}} {
			got, err := c.rules.Parse(tc.in)
			switch {
			case c.want == "" && err == nil:
				t.Errorf("%s: Parse(%q) = %q, want an error", c.name, tc.in, got)
			case c.want == "":
			case err != nil || string(got) != c.want:
				t.Errorf("%s: Parse(%q) = %q, %v; want %q", c.name, tc.in, got, err, c.want)
			default:
				checkTitle(t, c.rules, tc.in, got)
			}
		}
		// ParseTitle is the default rules.
		if got, err := ParseTitle(tc.in); (err == nil) != (tc.capital != "") || string(got) != tc.capital && err == nil {
			t.Errorf("ParseTitle(%q) = %q, %v; want %q", tc.in, got, err, tc.capital)
		}
	}
	for _, tc := range []struct {
		ns          string
		capitalized bool // under case-sensitive rules
	}{
		{NSMain, false}, {NSTalk, false}, {NSUser, true}, {NSUserTalk, true}, {NSProject, false}, {NSFile, false},
		{NSTemplate, false}, {NSHelp, false}, {NSCategory, false}, {NSCategoryTalk, false}, {NSSpecial, true},
	} {
		if !capital.Capitalized(tc.ns) || sensitive.Capitalized(tc.ns) != tc.capitalized {
			t.Errorf("Capitalized(%q): %v with capital links, %v without; want true, %v", tc.ns, capital.Capitalized(tc.ns), sensitive.Capitalized(tc.ns), tc.capitalized)
		}
	}
}

func TestTitlesDerivedKeepTheirCase(t *testing.T) {
	sensitive := NewTitleRules(false)
	for _, tc := range []struct {
		title, talk, subject string
		parents              []string
	}{
		{"apple", "Talk:apple", "apple", nil},
		{"Talk:apple", "", "apple", nil},
		{"help:syntax", "Help talk:syntax", "Help:syntax", nil},
		{"Help talk:syntax", "", "Help:syntax", nil},
		{"apple/pie/crust", "Talk:apple/pie/crust", "apple/pie/crust", []string{"apple", "apple/pie"}},
		{"user:bob/notes", "User talk:Bob/notes", "User:Bob/notes", []string{"User:Bob"}},
		{"User talk:bob", "", "User:Bob", nil},
	} {
		ti, err := sensitive.Parse(tc.title)
		if err != nil {
			t.Fatal(err)
		}
		if talk, _ := ti.Talk(); string(talk) != tc.talk {
			t.Errorf("%q.Talk() = %q, want %q", ti, talk, tc.talk)
		}
		if s := ti.Subject(); string(s) != tc.subject {
			t.Errorf("%q.Subject() = %q, want %q", ti, s, tc.subject)
		}
		var ps []string
		for _, p := range ti.Parents() {
			ps = append(ps, string(p))
		}
		if strings.Join(ps, "|") != strings.Join(tc.parents, "|") {
			t.Errorf("%q.Parents() = %q, want %q", ti, ps, tc.parents)
		}
	}
	ti, frag, err := sensitive.ParseLink("apple#Pie")
	if err != nil || ti != "apple" || frag != "Pie" {
		t.Errorf("ParseLink(apple#Pie) = %q, %q, %v", ti, frag, err)
	}
	// User names are capitalized whatever the wiki's rules.
	if n, err := ParseUserName("bob"); err != nil || n != "Bob" {
		t.Errorf("ParseUserName(bob) = %q, %v", n, err)
	}
}

// TestSpaced checks spaced's shortcut for titles already spaced against
// the rune by rune rewrite.
func TestSpaced(t *testing.T) {
	for _, s := range []string{
		"", " ", "_", "Main Page", "Main_Page", " Main Page", "Main Page ", "Main  Page", "Main\tPage",
		"a\nb", "a\vb", "a\fb", "a\rb", "a\u0085b", "a\u00a0b", "a\u3000b", "Ünïcode Title", "a b c d", "a",
		"File:X.png", "_a_", "a_ b", "a __b", "a\x00b", "a\x7fb",
	} {
		if got, want := spaced(s), respace(s); got != want {
			t.Errorf("spaced(%q) = %q, want %q", s, got, want)
		}
	}
}
