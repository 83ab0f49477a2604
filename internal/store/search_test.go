package store

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/wikid/wikid/internal/wiki"
)

func TestSnippet(t *testing.T) {
	m := func(s string) string {
		s = strings.ReplaceAll(s, wiki.MarkStart, "[")
		return strings.ReplaceAll(s, wiki.MarkEnd, "]")
	}
	for _, tc := range []struct {
		name, text string
		query      string
		want       string
	}{
		{"marks every match, folding case and accents", "Tomato and tomato, Café", "TOMATO cafe", "[Tomato] and [tomato], [Café]"},
		{"marks Korean inside a word", "위키는 누구나", "위키", "[위키]는 누구나"},
		{"marks a CJK word as one span", "東京都の人口", "東京都", "[東京都]の人口"},
		{"marks prefixes", "wiki wikis wok", "wik*", "[wiki] [wikis] wok"},
		{"folds apostrophes", "Don’t panic", "don't", "[Don’t] panic"},
		{"returns the start without a match", "no match here", "zzz", "no match here"},
		{"collapses white space", "a\n\n  b", "", "a b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := m(Snippet(tc.text, ParseQuery(tc.query))); got != tc.want {
				t.Fatalf("snippet = %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("windows long text around the first match", func(t *testing.T) {
		text := strings.Repeat("lorem ipsum ", 100) + "needle " + strings.Repeat("dolor sit ", 100)
		got := m(Snippet(text, ParseQuery("needle")))
		if !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") || !strings.Contains(got, "[needle]") {
			t.Fatalf("snippet = %q", got)
		}
		if n := len([]rune(got)); n > SnippetRunes+4 {
			t.Fatalf("snippet is %d characters", n)
		}
	})
}

func TestSnippetSource(t *testing.T) {
	long := strings.Repeat("filler line of text\n", 200)
	for _, tc := range []struct{ name, src, q, want string }{
		{"the lines around the match", long + "the Tomatoes are red\n" + long, "tomato", "the Tomatoes are red\n"},
		{"the start without a match", "first line\n" + long, "zebra", "first line\n"},
		{"a folded word found through the analyzer", long + "un café noir\n" + long, "cafe", "un café noir\n"},
		{"a CJK word", long + "서울특별시는\n" + long, "서울", "서울특별시는\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SnippetSource(tc.src, ParseQuery(tc.q))
			if !strings.Contains(got, tc.want) || len(got) > 2*snippetContext+200 {
				t.Fatalf("SnippetSource = %d bytes %.80q…, want the lines around %q", len(got), got, tc.want)
			}
		})
	}
	t.Run("one huge line is cut at words", func(t *testing.T) {
		src := strings.Repeat("word ", 6000) + "needle " + strings.Repeat("word ", 100000)
		got := SnippetSource(src, ParseQuery("needle"))
		if !strings.Contains(got, "needle") || len(got) > 2*snippetContext+10 {
			t.Fatalf("SnippetSource = %d bytes", len(got))
		}
		// Past the part searched, the snippet is the page's start.
		far := strings.Repeat("word ", 100000) + "needle"
		if got := SnippetSource(far, ParseQuery("needle")); !strings.HasPrefix(far, got) || len(got) > 2*snippetContext+10 {
			t.Fatalf("SnippetSource of a far match = %d bytes", len(got))
		}
	})
}

func TestSnippetSourceOffsets(t *testing.T) {
	// Lower case changes these characters' lengths in bytes: offsets
	// found in the lower-cased text are not offsets in the source.
	for _, src := range []string{
		"ȺȺȺȺ abc",
		strings.Repeat("Ⱥ", 2000) + " abc",
		"\xff\xfe abc",
		strings.Repeat("\u212a", 3000) + " abc", // the Kelvin sign shrinks
		strings.Repeat("x", SnippetScan-1) + "é abc",
	} {
		got := SnippetSource(src, ParseQuery("abc"))
		if !strings.Contains(src, got) {
			t.Fatalf("SnippetSource(%.20q…) = %.40q…, not a part of the source", src, got)
		}
		_ = Snippet(got, ParseQuery("abc"))
	}
}

func TestSnippetIgnoresMarksInText(t *testing.T) {
	got := Snippet("a "+wiki.MarkStart+"fake"+wiki.MarkEnd+" b real", ParseQuery("real"))
	if strings.Count(got, wiki.MarkStart) != 1 || !strings.Contains(got, wiki.MarkStart+"real"+wiki.MarkEnd) {
		t.Fatalf("snippet = %q", got)
	}
}

// The snippet of a long text is made from its start up to a little past
// the window: what follows the window changes nothing.
func TestSnippetLongText(t *testing.T) {
	base := "Some intro words. " + strings.Repeat("alpha beta gamma ", 60)
	for _, query := range []string{"gamma", `"beta gamma"`, "gam*", "intro alpha"} {
		q := ParseQuery(query)
		want := Snippet(base, q)
		if !strings.Contains(want, wiki.MarkStart) {
			t.Fatalf("%s: no match marked in %q", query, want)
		}
		if got := Snippet(base+strings.Repeat(" gamma delta", 5000), q); got != want {
			t.Errorf("%s: a longer tail changed the snippet:\n got %q\nwant %q", query, got, want)
		}
	}
}

// A match far into the source, or across the part lower-cased first, is
// found as one at the start is.
func TestSnippetSourceFar(t *testing.T) {
	for _, pad := range []int{10, 4090, 4093, 5000, 16383, 40000} {
		src := strings.Repeat("x", pad) + " Needlework here\n" + strings.Repeat("y ", 100)
		got := SnippetSource(src, ParseQuery("needlework"))
		if !strings.Contains(got, "Needlework") {
			t.Errorf("pad %d: the match is not in %q…", pad, got[:min(len(got), 80)])
		}
		// An earlier match, capitalised, crossing the first part's end.
		src = strings.Repeat("z", pad) + " Needlework one " + strings.Repeat("w ", 3000) + "needlework two"
		if got := SnippetSource(src, ParseQuery("needlework")); !strings.Contains(got, "one") {
			t.Errorf("pad %d: not the first match: %q…", pad, got[:min(len(got), 80)])
		}
	}
}

// A query with an empty word (made by hand: ParseQuery makes none) marks
// nothing and finds nothing, and does not panic.
func TestSnippetEmptyWord(t *testing.T) {
	for _, q := range []Query{{Terms: []QueryTerm{{Words: []string{""}}}}, {Terms: []QueryTerm{{Words: []string{""}, Prefix: true}}}} {
		for _, src := range []string{"", "some text here", strings.Repeat("words and more ", 1000)} {
			if got := SnippetSource(src, q); !strings.HasPrefix(src, got) {
				t.Errorf("SnippetSource(%.20q) = %.20q, not the start", src, got)
			}
			if got := Snippet(src, q); strings.Contains(got, wiki.MarkStart) {
				t.Errorf("Snippet(%.20q) marks %q", src, got)
			}
		}
	}
}

// appendLower lower-cases as strings.ToLower does, and refuses what changes
// a character's length or is not UTF-8.
func TestAppendLower(t *testing.T) {
	for _, s := range []string{"", "Hello WORLD 123", "Ça Été ÅNGSTRÖM", "ΑΒΓ Москва", "서울 東京", "ȺȺ", "\u212a", "a\xffb", "İstanbul", "ǅ ǈ", "ＷＩＫＩ"} {
		got, ok := appendLower([]byte("x"), s)
		want := strings.ToLower(s)
		keeps := utf8.ValidString(s)
		for _, r := range s {
			keeps = keeps && utf8.RuneLen(unicode.ToLower(r)) == utf8.RuneLen(r)
		}
		if ok != keeps || (ok && string(got) != "x"+want) {
			t.Errorf("%q: %q, %v; strings.ToLower %q, keeps lengths %v", s, got, ok, want, keeps)
		}
	}
}

// Bytes that are not UTF-8 where the first part ends neither panic nor
// stop the match being found.
func TestSnippetSourceInvalidUTF8(t *testing.T) {
	for _, pad := range []int{10, 4095, 5000, 20000} {
		src := strings.Repeat("\x80", pad) + " word here"
		if got := SnippetSource(src, ParseQuery("word")); !strings.Contains(got, "word") {
			t.Errorf("pad %d: the match is not in %q…", pad, got[:min(len(got), 40)])
		}
	}
}

// snippetText makes of a text what strings.Fields, Join and a replacer of
// the marks made of it, in one pass, invalid bytes kept as they were.
func TestSnippetText(t *testing.T) {
	want := func(s string) string {
		s = strings.NewReplacer(wiki.MarkStart, "\uFFFD", wiki.MarkEnd, "\uFFFD").Replace(s)
		return strings.Join(strings.Fields(s), " ")
	}
	parts := []string{" ", "\t", "\n", "\v", "\f", "\r", "\u0085", "\u00a0", "\u3000", "\u2028", "a", "é", "日本", wiki.MarkStart, wiki.MarkEnd,
		"\uFFFD", "word", "  \n ", "\xff", "\xe3\x81", "\x00"}
	rng := rand.New(rand.NewPCG(5, 6))
	cases := []string{"", " ", "a", " a ", "a  b", "\ta\nb\u3000c "}
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		if got, w := snippetText(s), want(s); got != w {
			t.Fatalf("snippetText(%q) = %q, want %q", s, got, w)
		}
	}
}

// The characters appendLower copies as they are have no case.
func TestCaselessHasNoCase(t *testing.T) {
	n := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !caseless(r) {
			continue
		}
		n++
		if unicode.ToLower(r) != r || unicode.ToUpper(r) != r || unicode.ToTitle(r) != r {
			t.Fatalf("%U has a case", r)
		}
	}
	if n != 0x9fff-0x3040+1+0xd7a3-0xac00+1 {
		t.Fatalf("%d caseless characters", n)
	}
}

// A query's words are strings of their own, not parts of the query: caches
// keep them (the segment cache's skip lists, by word), and the query is
// part of a request of up to megabytes.
func TestQueryWordsAreTheirOwn(t *testing.T) {
	q := "東京都庁 \"京都 大阪\" tomatoes wiki* " + strings.Repeat("padding ", 1000)
	lo := uintptr(unsafe.Pointer(unsafe.StringData(q)))
	hi := lo + uintptr(len(q))
	words := ParseQuery(q).Words()
	if len(words) < 5 {
		t.Fatalf("words %q", words)
	}
	for _, w := range words {
		if p := uintptr(unsafe.Pointer(unsafe.StringData(w))); p >= lo && p < hi {
			t.Errorf("the word %q is part of the query's string", w)
		}
	}
}
