package search

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/store"
)

var analyzer = Analyzer{Tokens: store.IndexTokens, Term: store.WordTerm}

// textDocs returns n documents of generated text: words of a vocabulary
// of about 8,000 (more than the word table's first size), each often
// written in another form of the same stem, and the analyzer's hard
// cases among them.
func textDocs(n int, seed uint64) []Doc {
	rng := rand.New(rand.NewPCG(seed, 7))
	hard := []string{
		"don't", "don’t", "DON'T", "tomatoes", "tomato", "Tomato's", "running", "runs", "ran",
		"Élan", "ÉLAN", "straße", "ﬁne", "ＡＢＣ１２３", "naïve", "café", "Ω", "ǅ",
		"서울특별시", "東京都", "ポケモンGO", "東京-2020", "日本語の文章です", "한", "字",
		strings.Repeat("x", 24), strings.Repeat("y", 25), strings.Repeat("abc", 30), strings.Repeat("é", 40),
		"2024", "a", "I", "--", "...", "\x00", "\xff\xfe", "e\u0301t\u0301e\u0301",
		"hyphen-ated", "under_score", "dot.ted", "[[Link|label]]", "'quoted'", "rock'n'roll",
	}
	suffixes := []string{"", "s", "es", "ing", "ed", "ly", "ation", "ational", "ness"}
	var docs []Doc
	for i := range n {
		var b strings.Builder
		for range 50 + rng.IntN(400) {
			switch r := rng.IntN(20); {
			case r == 0:
				b.WriteString(hard[rng.IntN(len(hard))])
			case r == 1:
				b.WriteString("\n\n")
			default:
				fmt.Fprintf(&b, "w%sq%s", strings.Repeat("o", 1+int(rng.ExpFloat64()*3)%5), fmt.Sprint(int(rng.ExpFloat64()*800))+"x"+suffixes[rng.IntN(len(suffixes))])
			}
			b.WriteByte(" ,.;\n"[rng.IntN(5)])
		}
		docs = append(docs, Doc{ID: int64(1 + i*3), Title: store.IndexText(fmt.Sprintf("Page %d tomatoes 東京", i)), Body: b.String()})
	}
	docs = append(docs, Doc{ID: 100000, Title: "empty"}, Doc{ID: 100001, Title: "punctuation", Body: "... --- !!!"})
	return docs
}

// BuildText makes the segment Build makes of the same texts through
// store.IndexText: the same blocks, byte for byte, and the same totals.
func TestBuildTextIsBuildOfIndexText(t *testing.T) {
	for _, n := range []int{1, 3, 200} {
		docs := textDocs(n, uint64(n))
		terms := make([]Doc, len(docs))
		for i, d := range docs {
			terms[i] = Doc{ID: d.ID, Title: d.Title, Body: store.IndexText(d.Body)}
		}
		got, want := BuildText(docs, analyzer), Build(terms)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%d documents: BuildText's segment differs from Build's of IndexText: %d/%d blocks, %d/%d tokens, %d/%d docs",
				n, len(got.Blocks), len(want.Blocks), got.Tokens, want.Tokens, got.Docs, want.Docs)
		}
		if n == 200 && len(want.Blocks) < 2 {
			t.Fatalf("%d blocks: the test should span blocks", len(want.Blocks))
		}
	}
}

// BenchmarkBuildText against BenchmarkBuildIndexText: a batch of pages
// indexed from their texts, the terms made by the batch (BuildText) or
// by each text apart (store.IndexText, then Build).
func BenchmarkBuildText(b *testing.B) {
	docs := textDocs(1000, 1)
	for b.Loop() {
		BuildText(docs, analyzer)
	}
}

func BenchmarkBuildIndexText(b *testing.B) {
	docs := textDocs(1000, 1)
	for b.Loop() {
		terms := make([]Doc, len(docs))
		for i, d := range docs {
			terms[i] = Doc{ID: d.ID, Title: d.Title, Body: store.IndexText(d.Body)}
		}
		Build(terms)
	}
}

// Whatever the texts (any bytes: invalid UTF-8, CJK runs, apostrophes,
// words past the term's size), BuildText makes Build's segment of their
// IndexText terms.
func FuzzBuildText(f *testing.F) {
	f.Add("Tomatoes don't run; tomato runs.", "東京都の서울특별시 ポケモンGO café ÉLAN")
	f.Add(strings.Repeat("abc", 30)+" "+strings.Repeat("abc", 31), strings.Repeat("é", 40)+"x")
	f.Add("\xff\xfe'a'b’c ＡＢＣ１２３", "e\u0301t\u0301e\u0301 rock'n'roll")
	f.Fuzz(func(t *testing.T, a, b string) {
		docs := []Doc{{ID: 1, Title: "a", Body: a}, {ID: 4, Title: "b c", Body: b}, {ID: 9, Title: "", Body: a + " " + b}}
		terms := make([]Doc, len(docs))
		for i, d := range docs {
			terms[i] = Doc{ID: d.ID, Title: d.Title, Body: store.IndexText(d.Body)}
		}
		if got, want := BuildText(docs, analyzer), Build(terms); !reflect.DeepEqual(got, want) {
			t.Fatalf("BuildText(%q, %q) differs from Build of their IndexText", a, b)
		}
	})
}
