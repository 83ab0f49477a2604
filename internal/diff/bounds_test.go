package diff

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/diff/difftest"
	"github.com/wikid/wikid/internal/race"
)

// checkResult fails the test unless res is a faithful, bounded comparison
// of a and b: the counts match the line edits, every row shows (a prefix
// of) the line it names, line numbers only grow, and the table fits o.
func checkResult(tb testing.TB, a, b string, o Options, res *Result) {
	tb.Helper()
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	ta, tb2 := splitText(a), splitText(b)
	edits, exact := lineEdits(&ta, &tb2, lineBudget, gapBudget)
	added, deleted := 0, 0
	for _, e := range edits {
		added += e.NewEnd - e.NewStart
		deleted += e.OldEnd - e.OldStart
	}
	if res.Added != added || res.Deleted != deleted || res.Coarse == exact {
		tb.Fatalf("result says +%d -%d coarse=%v; the edits are +%d -%d exact=%v", res.Added, res.Deleted, res.Coarse, added, deleted, exact)
	}
	shown := func(line, text string, omitted int) {
		tb.Helper()
		if !strings.HasPrefix(line, text) || len(text)+omitted != len(line) || len(text) > maxCell {
			tb.Fatalf("row shows %d bytes and omits %d of a line of %d", len(text), omitted, len(line))
		}
	}
	lastOld, lastNew := 0, 0
	for _, h := range res.Hunks {
		for _, r := range h.Rows {
			if r.OldLine > 0 {
				if r.OldLine <= lastOld || r.OldLine > ta.lines() {
					tb.Fatalf("old line %d after %d (of %d)", r.OldLine, lastOld, ta.lines())
				}
				lastOld = r.OldLine
				shown(ta.line(r.OldLine-1), r.Old, r.OldOmitted)
			}
			if r.NewLine > 0 {
				if r.NewLine <= lastNew || r.NewLine > tb2.lines() {
					tb.Fatalf("new line %d after %d (of %d)", r.NewLine, lastNew, tb2.lines())
				}
				lastNew = r.NewLine
				shown(tb2.line(r.NewLine-1), r.New, r.NewOmitted)
			}
			if r.Kind == Changed {
				if res.Coarse {
					tb.Fatalf("a coarse result has word highlights")
				}
				checkWords(tb, ta.line(r.OldLine-1), r.OldWords)
				checkWords(tb, tb2.line(r.NewLine-1), r.NewWords)
			}
		}
	}
	if len(edits) > 0 && len(res.Hunks) == 0 && !res.Truncated {
		tb.Fatalf("%d edits and no hunk", len(edits))
	}
	if n := len(res.HTML()); n > o.MaxBytes {
		tb.Fatalf("the table has %d bytes, over the cap of %d", n, o.MaxBytes)
	}
}

// checkWords fails unless segs, with their omitted bytes, make up line.
func checkWords(tb testing.TB, line string, segs []Segment) {
	tb.Helper()
	pos := 0
	for _, s := range segs {
		if s.Omitted > 0 {
			pos += s.Omitted
			continue
		}
		if !strings.HasPrefix(line[pos:], s.Text) {
			tb.Fatalf("segment %q is not at byte %d of the line", s.Text, pos)
		}
		pos += len(s.Text)
	}
	if pos != len(line) {
		tb.Fatalf("segments cover %d bytes of a line of %d", pos, len(line))
	}
}

// measure runs f and returns the CPU time it took on its thread (on Linux;
// elsewhere the wall time) and how many bytes it allocated.
func measure(f func()) (time.Duration, uint64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	start := threadCPU()
	f()
	d := threadCPU() - start
	runtime.ReadMemStats(&m1)
	return d, m1.TotalAlloc - m0.TotalAlloc
}

func TestCompareIsBoundedOnAdversarialPairs(t *testing.T) {
	if testing.Short() {
		t.Skip("2 MiB inputs")
	}
	// The target is 200 ms on the reference machine (bench -diff measures
	// it); the test allows for a busy machine. The race detector makes
	// everything several times slower: under it the pairs are smaller.
	limit, size := 1500*time.Millisecond, 2<<20
	if race.Enabled {
		limit, size = 5*time.Second, 256<<10
	}
	for _, p := range difftest.Shapes(size) {
		t.Run(p.Name, func(t *testing.T) {
			var res *Result
			d, alloc := measure(func() { res = Compare(p.Old, p.New, Options{}); res.HTML() })
			t.Logf("%v, %d MiB allocated, coarse=%v truncated=%v, +%d -%d", d, alloc>>20, res.Coarse, res.Truncated, res.Added, res.Deleted)
			if d > limit {
				t.Errorf("took %v, want under %v", d, limit)
			}
			if alloc > 100<<20 {
				t.Errorf("allocated %d MiB, want under 100", alloc>>20)
			}
			checkResult(t, p.Old, p.New, Options{}, res)
		})
	}
}

func TestCompareFallsBackPastTheBudget(t *testing.T) {
	shapes := map[string]difftest.Pair{}
	size := 1 << 20
	if race.Enabled {
		size = 256 << 10
	}
	for _, p := range difftest.Shapes(size) {
		shapes[p.Name] = p
	}
	t.Run("shuffled lines give a coarse diff without word highlights", func(t *testing.T) {
		p := shapes["shuffled"]
		res := Compare(p.Old, p.New, Options{})
		if !res.Coarse {
			t.Fatal("a diff of shuffled lines is not marked coarse")
		}
		checkResult(t, p.Old, p.New, Options{}, res)
		al, bl := splitLines(p.Old), splitLines(p.New)
		checkEdits(t, al, bl, Edits(al, bl))
	})
	t.Run("lines from a two-line alphabet give a coarse diff", func(t *testing.T) {
		p := shapes["two-line-alphabet"]
		if res := Compare(p.Old, p.New, Options{}); !res.Coarse {
			t.Fatal("not marked coarse")
		}
	})
	t.Run("every line edited stays exact, with word highlights", func(t *testing.T) {
		p := shapes["every-line-edited"]
		res := Compare(p.Old, p.New, Options{})
		if res.Coarse {
			t.Fatal("marked coarse")
		}
		if res.Hunks[0].Rows[0].Kind != Changed {
			t.Fatalf("first row is %v, want a changed row", res.Hunks[0].Rows[0].Kind)
		}
		checkResult(t, p.Old, p.New, Options{}, res)
	})
	t.Run("texts with nothing in common are exact whatever the budget", func(t *testing.T) {
		p := shapes["different"]
		ta, tb := splitText(p.Old), splitText(p.New)
		if _, exact := lineEdits(&ta, &tb, 0, 0); !exact {
			t.Fatal("marked inexact")
		}
	})
	t.Run("a page with scattered edits stays exact", func(t *testing.T) {
		lines := strings.SplitAfter(shapes["different"].Old, "\n")
		r := rand.New(rand.NewPCG(1, 1))
		for range 200 {
			i := r.IntN(len(lines))
			switch r.IntN(3) {
			case 0:
				lines[i] = "edited " + lines[i]
			case 1:
				lines[i] = ""
			case 2:
				lines[i] += lines[r.IntN(len(lines))] // a copy of another line
			}
		}
		b := strings.Join(lines, "")
		res := Compare(shapes["different"].Old, b, Options{})
		if res.Coarse {
			t.Fatal("marked coarse")
		}
		checkResult(t, shapes["different"].Old, b, Options{}, res)
	})
	t.Run("no budget falls back to a valid script, marked inexact", func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		inexact := 0
		for range 300 {
			a := randomLines(r, 5+r.IntN(40), "abcdefg")
			b := randomLines(r, 5+r.IntN(40), "abcdefg")
			ids := map[string]int32{}
			ai, bi := intern(ids, a), intern(ids, b)
			edits, exact := diffIDs(ai, bi, len(ids), 0, 0)
			checkEdits(t, a, b, edits)
			if !exact {
				inexact++
			}
			cost := 0
			for _, e := range edits {
				cost += e.OldEnd - e.OldStart + e.NewEnd - e.NewStart
			}
			if exact && cost != len(a)+len(b)-2*lcs(a, b) {
				t.Fatalf("marked exact but not minimal: %q → %q", a, b)
			}
		}
		if inexact == 0 {
			t.Fatal("no comparison fell back")
		}
	})
}

func TestEditsAreMinimalOnLongerRandomInputs(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for range 300 {
		alphabet := "abcdefghijklmnopqrstuvwxyz"[:2+r.IntN(24)]
		a := randomLines(r, r.IntN(120), alphabet)
		b := randomLines(r, r.IntN(120), alphabet)
		ids := map[string]int32{}
		ai, bi := intern(ids, a), intern(ids, b)
		edits, exact := diffIDs(ai, bi, len(ids), lineBudget, gapBudget)
		if !exact {
			t.Fatalf("a comparison of %d and %d lines ran out of budget", len(a), len(b))
		}
		checkEdits(t, a, b, edits)
		cost := 0
		for _, e := range edits {
			cost += e.OldEnd - e.OldStart + e.NewEnd - e.NewStart
		}
		if want := len(a) + len(b) - 2*lcs(a, b); cost != want {
			t.Fatalf("Edits(%q, %q) costs %d, minimum is %d", a, b, cost, want)
		}
	}
}

func TestCompareCapsItsOutput(t *testing.T) {
	t.Run("the table stops at MaxBytes and says so", func(t *testing.T) {
		p := difftest.Shape("every-line-edited", 256<<10)
		o := Options{MaxBytes: 20 << 10}
		res := Compare(p.Old, p.New, o)
		if !res.Truncated {
			t.Fatal("not marked truncated")
		}
		if added, deleted := Stat(p.Old, p.New); res.Added != added || res.Deleted != deleted || added < 1000 {
			t.Errorf("counts +%d -%d, want those of the whole comparison, +%d -%d", res.Added, res.Deleted, added, deleted)
		}
		checkResult(t, p.Old, p.New, o, res)
	})
	t.Run("a small diff is not truncated", func(t *testing.T) {
		res := Compare("a\nb\nc\n", "a\nB\nc\n", Options{})
		if res.Truncated || res.Coarse {
			t.Fatalf("truncated=%v coarse=%v", res.Truncated, res.Coarse)
		}
	})
	t.Run("a long deleted line is cut with a mark", func(t *testing.T) {
		long := strings.Repeat("wiki ", 20000)
		res := Compare("keep\n"+long+"\n", "keep\n", Options{})
		r := res.Hunks[0].Rows[1]
		if r.Kind != Deleted || len(r.Old) > maxCell || r.OldOmitted != len(long)-len(r.Old) {
			t.Fatalf("row %v shows %d bytes and omits %d", r.Kind, len(r.Old), r.OldOmitted)
		}
		if !res.Truncated || !strings.Contains(res.HTML(), "bytes not shown") {
			t.Fatal("the cut is not marked")
		}
	})
	t.Run("a one-character change in a long line is highlighted with the rest left out", func(t *testing.T) {
		long := strings.Repeat("narrow gauge railway ", 50000) // 1 MB, no newline
		edited := long[:len(long)/2] + "X" + long[len(long)/2+1:]
		res := Compare(long, edited, Options{})
		if len(res.Hunks) != 1 || len(res.Hunks[0].Rows) != 1 {
			t.Fatalf("got %d hunks", len(res.Hunks))
		}
		r := res.Hunks[0].Rows[0]
		if r.Kind != Changed {
			t.Fatalf("row is %v, want changed", r.Kind)
		}
		var changed []string
		size := 0
		for _, s := range r.NewWords {
			if s.Changed {
				changed = append(changed, s.Text)
			}
			size += len(s.Text)
		}
		if len(changed) != 1 || !strings.Contains(changed[0], "X") || len(changed[0]) > 20 {
			t.Errorf("changed words %q, want the one word holding X", changed)
		}
		if size > 4*elideKeep+100 {
			t.Errorf("the row shows %d bytes of a %d-byte line", size, len(long))
		}
		checkResult(t, long, edited, Options{}, res)
	})
}

func TestMergeConflictsRatherThanMergingOnACoarseDiff(t *testing.T) {
	// ours moves a line, which takes the search to find; theirs edits
	// another. With a budget, they merge; without, they must conflict.
	base := "a\nb\nc\nd\ne\nf\ng\n"
	ours := "b\na\nc\nd\ne\nf\ng\n"
	theirs := "a\nb\nc\nd\ne\nF\ng\n"
	if got, c := Merge(base, ours, theirs); c || got != "b\na\nc\nd\ne\nF\ng\n" {
		t.Fatalf("with the budget: %q, conflict %v", got, c)
	}
	got, c := merge(base, ours, theirs, 0)
	if !c {
		t.Fatalf("with no budget the merge succeeded: %q", got)
	}
	for _, want := range []string{MarkerOurs, MarkerSep, MarkerTheirs, "F\n", "b\na\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("conflict text lacks %q:\n%s", want, got)
		}
	}

	t.Run("a 1 MiB page with its lines shuffled conflicts quickly", func(t *testing.T) {
		p := difftest.Shape("shuffled", 1<<20)
		lines := strings.SplitAfter(p.Old, "\n")
		lines[10] = "an edit of theirs\n"
		var c bool
		d, _ := measure(func() { _, c = Merge(p.Old, p.New, strings.Join(lines, "")) })
		if !c {
			t.Fatal("merged on a coarse diff")
		}
		if limit := 2 * time.Second; d > limit && !race.Enabled {
			t.Errorf("took %v, want under %v", d, limit)
		}
	})
}
