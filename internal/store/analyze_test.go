package store

import (
	"fmt"
	"hash/maphash"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

func TestIndexText(t *testing.T) {
	for in, want := range map[string]string{
		"Don't stop, DON’T STOP":        "dont stop dont stop",
		"Café crème Ångström naïve":     "cafe creme angstrom naiv",
		"Cafe\u0301 (decomposed)":       "cafe decompos",
		"Straße Æsir Øre Łódź":          "strass aesir ore lodz",
		"Tomatoes, running cities":      "tomato run citi",
		"ＷＩＫＩ ２０２４":                     "wiki 2024",
		"e-mail snake_case a.b":         "e mail snake case a b",
		"서울특별시 위키":                      "서울 울특 특별 별시 시 위키 키",
		"東京2020年":                       "東京 京 2020 年",
		"ｶﾀｶﾅ カタカナ":                     "カタ タカ カナ ナ カタ タカ カナ ナ",
		"ｶタ カﾀ ｶ カ":                     "カタ タ カタ タ カ カ",
		"हिन्दी भाषा":                   "हिन्दी भाषा",
		"Ελληνικά Ωμέγα Москва Ёлка":    "ελληνικα ωμεγα москва елка",
		"'quoted' it's o'clock 'tis":    "quot its oclock tis",
		"x " + strings.Repeat("a", 100): "x " + strings.Repeat("a", MaxTermBytes),
		// Where ASCII meets other characters.
		"a' 'b c'd' l'été l’été":          "a b cd lete lete",
		"ポケモンGO 東京-2020 東'a":              "ポケ ケモ モン ン go 東京 京 2020 東 a",
		"ab\xffcd \xef\xbf\xbdx é\u0301e": "ab cd x ee",
	} {
		if got := IndexText(in); got != want {
			t.Errorf("IndexText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTokenizeOffsets(t *testing.T) {
	s := "Grüße, 위키백과!"
	var got []string
	Tokenize(s, func(tok Token) { got = append(got, tok.Term+"="+s[tok.Start:tok.End]) })
	want := "gruss=Grüße 위키=위키 키백=키백 백과=백과 과=과"
	if strings.Join(got, " ") != want {
		t.Fatalf("tokens = %q, want %q", strings.Join(got, " "), want)
	}
}

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"Don’t Panic":    "dont panic",
		"Éclair/Ünïcode": "eclair/unicode",
		"위키 Main_Page":   "위키 main_page",
	} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseQuery(t *testing.T) {
	show := func(q Query) string {
		var parts []string
		for _, t := range q.Terms {
			s := strings.Join(t.Words, "+")
			if t.Prefix {
				s += "*"
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, " ")
	}
	for q, want := range map[string]string{
		`  위키  "quoted" Foo foo a b c d e f g h i j `: "위키 quot foo a b c d e",
		`"quick  brown fox" jumps`:                    "quick+brown+fox jump",
		`“Don’t panic” don't`:                         "dont+panic dont",
		`say "hello`:                                  "say hello",
		`hello" "" "  " x"y`:                          "hello x+y",
		`"a b"c`:                                      "a+b c",
		`wik* a* wi* 위*  ** NEAR AND`:                 "wik* a wi 위* near and",
		`서울특별시`:                                       "서울+울특+특별+별시",
		`!!! ...`:                                     "",
	} {
		if got := show(ParseQuery(q)); got != want {
			t.Errorf("ParseQuery(%q) = %q, want %q", q, got, want)
		}
	}
}

func BenchmarkIndexText(b *testing.B) {
	for _, c := range []struct{ name, text string }{
		{"English", "The quick brown foxes were jumping over the lazy dogs, which didn't notice the running tomatoes. "},
		{"Cyrillic and Greek", "Съешь же ещё этих мягких французских булок, да выпей чаю. Ἄνδρα μοι ἔννεπε, Μοῦσα. "},
	} {
		b.Run(c.name, func(b *testing.B) {
			text := strings.Repeat(c.text, 60)
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				IndexText(text)
			}
		})
	}
}

func TestTokensStops(t *testing.T) {
	var got []string
	for tok := range Tokens("one two three four 日本語") {
		got = append(got, tok.Term)
		if len(got) == 2 {
			break
		}
	}
	if strings.Join(got, " ") != "one two" {
		t.Fatalf("Tokens after a break = %v", got)
	}
	var all []string
	for tok := range Tokens("one two 日本語") {
		all = append(all, tok.Term)
	}
	var want []string
	Tokenize("one two 日本語", func(tok Token) { want = append(want, tok.Term) })
	if strings.Join(all, " ") != strings.Join(want, " ") {
		t.Fatalf("Tokens = %v, Tokenize = %v", all, want)
	}
}

// A tokenizer's stem cache gives every word its own term, whether the word
// is new to it, found in it, or took the slot of another (more words than
// slots, each seen twice).
func TestStemCache(t *testing.T) {
	c := readStemCaches.New().(*stemCache)
	words := []string{"tomatoes", "tomato", "running", "runs", "don", "a", "été", strings.Repeat("x", maxStemmed), strings.Repeat("y", maxStemmed+1)}
	for i := range 3 * len(c.slots) {
		words = append(words, fmt.Sprintf("word%dings", i))
	}
	want := map[string]string{"tomatoes": "tomato", "tomato": "tomato", "running": "run", "runs": "run", "don": "don", "a": "a", "été": "été"}
	for round := range 2 {
		for _, w := range words {
			got := c.stem([]byte(w))
			if len(w) <= maxStemmed && got != stemHashed([]byte(w), maphash.Bytes(stemSeed, []byte(w))) {
				t.Fatalf("round %d: %q: cache says %q, the table %q", round, w, got, stemHashed([]byte(w), maphash.Bytes(stemSeed, []byte(w))))
			}
			if len(w) > maxStemmed && got != w {
				t.Fatalf("round %d: %q, longer than any stemmed word, became %q", round, w, got)
			}
			if none := (*stemCache)(nil).stem([]byte(w)); none != got {
				t.Fatalf("round %d: %q: %q without a cache, %q with one", round, w, none, got)
			}
			if x, ok := want[w]; ok && got != x {
				t.Errorf("round %d: %q → %q, want %q", round, w, got, x)
			}
		}
	}
}

// A stem keeps its word's first letter, which tokensFrom relies on: every
// word of four letters (the shortest stemmed) starting with y, which the
// stemmer marks as a consonant and restores, a sample of the others, every
// two-letter start with each of Porter2's suffixes and special words (the
// exceptions list, the words its steps cut most).
func TestStemKeepsFirstLetter(t *testing.T) {
	letters := "abcdefghijklmnopqrstuvwxyz"
	suffixes := []string{"s", "ss", "sses", "ied", "ies", "us", "eed", "eedly", "ed", "edly", "ing", "ingly",
		"y", "ly", "ational", "tional", "enci", "anci", "abli", "entli", "izer", "ization", "ation", "ator",
		"alism", "aliti", "alli", "fulness", "ousli", "ousness", "iveness", "iviti", "biliti", "bli", "ogi",
		"fulli", "lessli", "li", "alize", "icate", "iciti", "ical", "ful", "ness", "ative", "al", "ance",
		"ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ism", "ate", "iti", "ous", "ive",
		"ize", "ion", "sion", "tion", "e", "le", "yes", "ying", "at", "bl", "iz"}
	var words []string
	for i, a := range letters {
		for j, b := range letters {
			for k, c := range letters {
				for l, d := range letters {
					if a == 'y' || (i+j+k+l)%11 == 0 {
						words = append(words, string([]rune{a, b, c, d}))
					}
				}
			}
			for _, s := range suffixes {
				words = append(words, string([]rune{a, b})+s, "y"+string(b)+s, string(a)+s)
			}
		}
	}
	words = append(words, "skis", "skies", "dying", "lying", "tying", "idly", "gently", "ugly", "early",
		"only", "singly", "news", "howe", "atlas", "cosmos", "bias", "andes", "inning", "outing", "canning",
		"herring", "earring", "proceed", "exceed", "succeed", "generate", "generously", "communism", "arsenal")
	stemmed := 0
	for _, w := range words {
		if len(w) <= 3 || !isLowerASCII([]byte(w)) {
			continue
		}
		st := english.Stem(w, false)
		if st != w {
			stemmed++
		}
		if st == "" || st[0] != w[0] {
			t.Errorf("%q stems to %q", w, st)
		}
	}
	if stemmed < 10000 {
		t.Fatalf("only %d words changed by the stemmer", stemmed)
	}
}

// tokensFrom yields the tokens Tokens does, at the same places, with the
// terms of the words starting with a marked byte and an empty one for the
// others; CJK characters are always terms.
func TestTokensFromMarkedFirsts(t *testing.T) {
	text := "Tomatoes and running cities, l’été Ångström don't 東京2020年 ｗｉｋｉ états-unis zebra"
	var firsts [256]bool
	for _, c := range "tre" {
		firsts[c] = true
	}
	var all, some []Token
	for tok := range Tokens(text) {
		all = append(all, tok)
	}
	for tok := range tokensFrom(text, &firsts) {
		some = append(some, tok)
	}
	if len(all) != len(some) {
		t.Fatalf("%d tokens, %d with firsts", len(all), len(some))
	}
	for i, a := range all {
		s := some[i]
		want := a.Term
		if r, _ := utf8.DecodeRuneInString(a.Term); !isCJK(r) && !firsts[a.Term[0]] {
			want = ""
		}
		if s.Start != a.Start || s.End != a.End || s.Term != want {
			t.Errorf("token %d: %+v, want %q at %d–%d", i, s, want, a.Start, a.End)
		}
	}
}

// foldRune's and isWordRune's tables give every rune of their ranges what
// foldSlow and isWordRuneSlow do (the edges included), and the runes past
// them fold as before.
func TestFoldTable(t *testing.T) {
	check := func(r rune) {
		t.Helper()
		if got, want := string(foldRune(nil, r)), string(foldSlow(nil, r)); r >= utf8.RuneSelf && got != want {
			t.Fatalf("foldRune(%U) = %q, foldSlow %q", r, got, want)
		}
		if got, want := isWordRune(r), isWordRuneSlow(r); got != want {
			t.Fatalf("isWordRune(%U) = %v, isWordRuneSlow %v", r, got, want)
		}
	}
	for r := range rune(foldLow + 1) {
		check(r)
	}
	for r := rune(foldHigh - 1); r <= foldHigh+foldHighN; r++ {
		check(r)
	}
	for r, want := range map[rune]string{'É': "e", 'Ж': "ж", 'Ά': "α", 'ς': "σ", 'ẞ': "ss", 'Ỳ': "y", 'ᾏ': "α", 'Ω': "ω", '가': "가"} {
		if got := string(foldRune(nil, r)); got != want {
			t.Errorf("foldRune(%q) = %q, want %q", r, got, want)
		}
	}
}
