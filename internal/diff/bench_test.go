package diff

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// benchTexts returns a 30 KB text and a copy with 10 scattered line edits.
func benchTexts(tb testing.TB) (a, b string) {
	tb.Helper()
	r := rand.New(rand.NewPCG(11, 12))
	words := strings.Fields("the wiki page links to another article about history science art and music")
	var lines []string
	size := 0
	for size < 30<<10 {
		var l strings.Builder
		for range 8 + r.IntN(10) {
			l.WriteString(words[r.IntN(len(words))])
			l.WriteByte(' ')
		}
		l.WriteString("end.\n")
		lines = append(lines, l.String())
		size += l.Len()
	}
	edited := append([]string(nil), lines...)
	for k := range 10 {
		i := len(edited) / 10 * k
		edited[i] = "edited " + edited[i]
	}
	return strings.Join(lines, ""), strings.Join(edited, "")
}

func BenchmarkLines(b *testing.B) {
	a, c := benchTexts(b)
	b.SetBytes(int64(len(a)))
	for b.Loop() {
		Lines(a, c)
	}
}

func BenchmarkHTML(b *testing.B) {
	a, c := benchTexts(b)
	b.SetBytes(int64(len(a)))
	for b.Loop() {
		HTML(Lines(a, c))
	}
}

func BenchmarkStat(b *testing.B) {
	a, c := benchTexts(b)
	b.SetBytes(int64(len(a)))
	for b.Loop() {
		Stat(a, c)
	}
}

func BenchmarkMerge(b *testing.B) {
	base, ours := benchTexts(b)
	// theirs edits other lines than ours.
	lines := strings.SplitAfter(base, "\n")
	for k := range 10 {
		i := len(lines)/10*k + 5
		lines[i] = "theirs " + lines[i]
	}
	theirs := strings.Join(lines, "")
	b.SetBytes(int64(len(base)))
	for b.Loop() {
		if _, c := Merge(base, ours, theirs); c {
			b.Fatal("unexpected conflict")
		}
	}
}
