package diff

import (
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/diff/difftest"
	"github.com/wikid/wikid/internal/race"
)

// amplify repeats s rep times, up to about limit bytes, so that short fuzz
// inputs reach the sizes where superlinear behaviour shows.
func amplify(s string, rep uint16, limit int) string {
	n := int(rep)
	if n <= 1 || s == "" {
		return s
	}
	return strings.Repeat(s, max(min(n, limit/len(s)), 1))
}

// FuzzCompare checks that every comparison is faithful and bounded: a case
// that takes over a second or allocates over 100 MiB fails, whatever the
// texts. Inputs are repeated up to 128 KiB a side (rep times), so that
// the budgets, not the input's size, bound the work.
func FuzzCompare(f *testing.F) {
	for _, p := range difftest.Shapes(256) {
		f.Add(p.Old, p.New, uint16(128))
	}
	f.Add("a\nb\nc\n", "a\nB\nc\n", uint16(0))
	f.Add("yes\nno\n", "no\nyes\n", uint16(60000))
	f.Add("", "维基百科是自由的\n", uint16(3))
	f.Add("\xff\xfe<a href='x'>&amp;\n", "\xff<a href=\"y\">&\n", uint16(7))
	f.Fuzz(func(t *testing.T, a, b string, rep uint16) {
		a, b = amplify(a, rep, 128<<10), amplify(b, rep/2+1, 128<<10)
		o := Options{MaxBytes: 64 << 10}
		if rep%3 == 0 {
			o = Options{}
		}
		var res *Result
		d, alloc := measure(func() {
			res = Compare(a, b, o)
			res.HTML()
		})
		if d > time.Second && !race.Enabled {
			t.Fatalf("comparing %d and %d bytes took %v of CPU", len(a), len(b), d)
		}
		if alloc > 100<<20 {
			t.Fatalf("comparing %d and %d bytes allocated %d MiB", len(a), len(b), alloc>>20)
		}
		checkResult(t, a, b, o, res)
		if len(a)+len(b) < 64<<10 {
			al, bl := splitLines(a), splitLines(b)
			checkEdits(t, al, bl, Edits(al, bl))
		}
	})
}
