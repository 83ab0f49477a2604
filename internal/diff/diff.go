// Package diff compares page texts: line diffs with word-level highlights for
// display, line statistics, and three-way merges for edit conflicts.
//
// The core is Myers' O(ND) algorithm on interned lines with a work budget.
// When the budget runs out (large, very different inputs) it falls back to
// unique-line anchors (patience style) and, failing that, to replacing the
// unmatched region wholesale, so time and memory stay bounded for any input.
package diff

import "sort"

// Edit says that Old[OldStart:OldEnd] was replaced by New[NewStart:NewEnd].
// Either range may be empty (a pure insertion or deletion). Everything between
// two consecutive edits is unchanged.
type Edit struct {
	OldStart, OldEnd int
	NewStart, NewEnd int
}

// Limits on a single comparison. maxD bounds the edit distance Myers explores
// (its trace needs about maxD² int32s, 4 MB at 1000); budget bounds the steps.
const (
	maxD   = 1000
	budget = 1 << 24
)

// Edits returns the edits that turn a into b, in order. Elements are compared
// as whole strings, so a and b may hold lines, words or any other tokens.
func Edits(a, b []string) []Edit {
	ids := make(map[string]int32, len(a)+len(b))
	return diffIDs(intern(ids, a), intern(ids, b))
}

// intern maps each string to a small integer shared across calls with ids.
func intern(ids map[string]int32, ss []string) []int32 {
	out := make([]int32, len(ss))
	for i, s := range ss {
		id, ok := ids[s]
		if !ok {
			id = int32(len(ids))
			ids[s] = id
		}
		out[i] = id
	}
	return out
}

// diffIDs computes the edits between two interned sequences.
func diffIDs(a, b []int32) []Edit {
	work := budget
	var out []Edit
	return diffRange(a, b, 0, 0, &work, true, out)
}

// diffRange appends to out the edits between a and b, whose first elements sit
// at aOff and bOff in the original sequences.
func diffRange(a, b []int32, aOff, bOff int, work *int, anchor bool, out []Edit) []Edit {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	a, b = a[pre:], b[pre:]
	aOff, bOff = aOff+pre, bOff+pre
	suf := 0
	for suf < len(a) && suf < len(b) && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	a, b = a[:len(a)-suf], b[:len(b)-suf]
	switch {
	case len(a) == 0 && len(b) == 0:
		return out
	case len(a) == 0 || len(b) == 0:
		return append(out, Edit{aOff, aOff + len(a), bOff, bOff + len(b)})
	}
	if es, ok := myers(a, b, work); ok {
		for _, e := range es {
			out = append(out, Edit{e.OldStart + aOff, e.OldEnd + aOff, e.NewStart + bOff, e.NewEnd + bOff})
		}
		return out
	}
	if anchor {
		fresh := budget
		return anchored(a, b, aOff, bOff, &fresh, out)
	}
	return append(out, Edit{aOff, aOff + len(a), bOff, bOff + len(b)})
}

// myers runs the greedy forward Myers algorithm, keeping the frontier of every
// step for the backtrack. It gives up (ok=false) past maxD or the work budget.
func myers(a, b []int32, work *int) (edits []Edit, ok bool) {
	n, m := len(a), len(b)
	var trace [][]int32 // trace[d][k+d] = furthest x on diagonal k after d edits
	for d := 0; ; d++ {
		if d > maxD || *work <= 0 {
			return nil, false
		}
		*work -= d + 1
		v := make([]int32, 2*d+1)
		var prev []int32
		if d > 0 {
			prev = trace[d-1]
		}
		for k := -d; k <= d; k += 2 {
			var x int
			switch {
			case d == 0:
				x = 0
			case k == -d || (k != d && prev[k-1+d-1] < prev[k+1+d-1]):
				x = int(prev[k+1+d-1]) // down: insertion from b
			default:
				x = int(prev[k-1+d-1]) + 1 // right: deletion from a
			}
			y := x - k
			start := x
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			*work -= x - start
			v[k+d] = int32(x)
			if x == n && y == m {
				trace = append(trace, v)
				return backtrack(trace, n, m), true
			}
		}
		trace = append(trace, v)
	}
}

// backtrack walks the trace from (n, m) back to (0, 0) and turns the path
// into edits.
func backtrack(trace [][]int32, n, m int) []Edit {
	type snake struct{ x, y, n int }
	var snakes []snake
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1]
		k := x - y
		var pk, sx, sy int
		if k == -d || (k != d && prev[k-1+d-1] < prev[k+1+d-1]) {
			pk = k + 1
			px := int(prev[pk+d-1])
			sx, sy = px, px-pk+1
		} else {
			pk = k - 1
			px := int(prev[pk+d-1])
			sx, sy = px+1, px-pk
		}
		if x > sx {
			snakes = append(snakes, snake{sx, sy, x - sx})
		}
		x = int(prev[pk+d-1])
		y = x - pk
	}
	if x > 0 {
		snakes = append(snakes, snake{0, 0, x})
	}
	var edits []Edit
	ax, by := 0, 0
	for i := len(snakes) - 1; i >= 0; i-- {
		s := snakes[i]
		if s.x > ax || s.y > by {
			edits = append(edits, Edit{ax, s.x, by, s.y})
		}
		ax, by = s.x+s.n, s.y+s.n
	}
	if ax < n || by < m {
		edits = append(edits, Edit{ax, n, by, m})
	}
	return edits
}

// anchored matches lines that occur exactly once in each of a and b, keeps the
// longest increasing run of such pairs (patience diff) and diffs the gaps
// between them without further anchoring, so the recursion depth is one.
func anchored(a, b []int32, aOff, bOff int, work *int, out []Edit) []Edit {
	maxID := int32(0)
	for _, s := range [][]int32{a, b} {
		for _, id := range s {
			maxID = max(maxID, id)
		}
	}
	countA := make([]int32, maxID+1)
	countB := make([]int32, maxID+1)
	posB := make([]int32, maxID+1)
	for _, id := range a {
		countA[id]++
	}
	for j, id := range b {
		countB[id]++
		posB[id] = int32(j)
	}
	type pair struct{ i, j int }
	var cand []pair
	for i, id := range a {
		if countA[id] == 1 && countB[id] == 1 {
			cand = append(cand, pair{i, int(posB[id])})
		}
	}
	// Longest increasing subsequence of cand by j (i is already increasing).
	var tails []int // indexes into cand
	back := make([]int, len(cand))
	for c, p := range cand {
		t := sort.Search(len(tails), func(t int) bool { return cand[tails[t]].j >= p.j })
		back[c] = -1
		if t > 0 {
			back[c] = tails[t-1]
		}
		if t == len(tails) {
			tails = append(tails, c)
		} else {
			tails[t] = c
		}
	}
	anchors := make([]pair, len(tails))
	if len(tails) > 0 {
		for c, k := tails[len(tails)-1], len(tails)-1; c >= 0; c, k = back[c], k-1 {
			anchors[k] = cand[c]
		}
	}
	i, j := 0, 0
	for _, p := range anchors {
		out = diffRange(a[i:p.i], b[j:p.j], aOff+i, bOff+j, work, false, out)
		i, j = p.i+1, p.j+1
	}
	return diffRange(a[i:], b[j:], aOff+i, bOff+j, work, false, out)
}
