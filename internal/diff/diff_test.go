package diff

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// checkEdits fails the test unless edits are ordered, separated by at least one
// unchanged element, and turn a into b.
func checkEdits(tb testing.TB, a, b []string, edits []Edit) {
	tb.Helper()
	var got []string
	i, j := 0, 0
	for n, e := range edits {
		if e.OldStart < i || e.NewStart < j || e.OldEnd < e.OldStart || e.NewEnd < e.NewStart {
			tb.Fatalf("edit %d %+v out of order", n, e)
		}
		if n > 0 && e.OldStart == i && e.NewStart == j {
			tb.Fatalf("edit %d %+v touches the previous one", n, e)
		}
		if e.OldStart == e.OldEnd && e.NewStart == e.NewEnd {
			tb.Fatalf("edit %d is empty", n)
		}
		if e.OldStart-i != e.NewStart-j {
			tb.Fatalf("edit %d %+v: unequal unchanged run before it", n, e)
		}
		for k := 0; k < e.OldStart-i; k++ {
			if a[i+k] != b[j+k] {
				tb.Fatalf("edit %d: unchanged run differs at old %d", n, i+k)
			}
		}
		got = append(got, a[i:e.OldStart]...)
		got = append(got, b[e.NewStart:e.NewEnd]...)
		i, j = e.OldEnd, e.NewEnd
	}
	got = append(got, a[i:]...)
	if strings.Join(got, "\x00") != strings.Join(b, "\x00") || len(got) != len(b) {
		tb.Fatalf("applying edits gives %q, want %q", got, b)
	}
}

func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

func randomLines(r *rand.Rand, n int, alphabet string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = string(alphabet[r.IntN(len(alphabet))])
	}
	return out
}

func TestEdits(t *testing.T) {
	tests := []struct {
		name string
		a, b []string
		want []Edit
	}{
		{"equal inputs give no edits", []string{"a", "b"}, []string{"a", "b"}, nil},
		{"both empty give no edits", nil, nil, nil},
		{"everything inserted is one edit", nil, []string{"a", "b"}, []Edit{{0, 0, 0, 2}}},
		{"everything deleted is one edit", []string{"a", "b"}, nil, []Edit{{0, 2, 0, 0}}},
		{"a middle line replaced", []string{"a", "b", "c"}, []string{"a", "x", "c"}, []Edit{{1, 2, 1, 2}}},
		{"two separate insertions", []string{"a", "b", "c"}, []string{"x", "a", "b", "y", "c"}, []Edit{{0, 0, 0, 1}, {2, 2, 3, 4}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Edits(tt.a, tt.b)
			checkEdits(t, tt.a, tt.b, got)
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %+v, want %+v", got, tt.want)
				}
			}
		})
	}
}

func TestEditsAreMinimalOnRandomInputs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		a := randomLines(r, r.IntN(30), "abcd")
		b := randomLines(r, r.IntN(30), "abcd")
		edits := Edits(a, b)
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

func TestFallbacksStayCorrect(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		a := randomLines(r, r.IntN(40), "abcdefghijklmnop")
		b := randomLines(r, r.IntN(40), "abcdefghijklmnop")
		ids := map[string]int32{}
		ai, bi := intern(ids, a), intern(ids, b)
		for _, tc := range []struct {
			name        string
			budget, gap int
		}{
			{"no budget: anchors, gaps with a budget", 0, gapBudget},
			{"no budget at all: anchors, gaps replaced", 0, 0},
			{"a budget for part of the search", 40, 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				edits, _ := diffIDs(ai, bi, len(ids), tc.budget, tc.gap)
				checkEdits(t, a, b, edits)
			})
		}
	}
}

// splitLines is splitText as strings.
func splitLines(s string) []string {
	t := splitText(s)
	out := make([]string, t.lines())
	for i := range out {
		out[i] = t.line(i)
	}
	return out
}
