// Package diff compares page texts: line diffs with word-level highlights for
// display, line statistics, and three-way merges for edit conflicts.
//
// The core is Myers' O(ND) algorithm in its linear-space form (bisect at the
// middle snake, recurse on both halves) on interned lines, after two steps
// that keep the result exact and shrink the problem: the common prefix and
// suffix are cut off, and lines that occur on one side only are set aside
// (they cannot be part of any common subsequence), so that texts with
// nothing in common, or with every line edited, cost linear time.
//
// Myers' search is bounded by a work budget. Past it, the unfinished part is
// compared coarsely: lines unique to both sides are matched in order
// (patience diff), the gaps between them get a small budget of their own,
// and what still does not fit is replaced wholesale. Time and memory stay
// linear in the input for any pair of texts; a Result says when the diff is
// coarse, and Merge never merges on one.
package diff

// Edit says that Old[OldStart:OldEnd] was replaced by New[NewStart:NewEnd].
// Either range may be empty (a pure insertion or deletion). Everything between
// two consecutive edits is unchanged.
type Edit struct {
	OldStart, OldEnd int
	NewStart, NewEnd int
}

// Budgets, in steps: one step is a diagonal visited or an element matched
// by Myers' search, or an element of a frontier reset. A step costs 5 to
// 10 ns (on lines from a small alphabet most comparisons mispredict), so
// lineBudget is 25 to 50 ms of search on the reference machine (2 cores,
// see bench -diff); the gap budget, a fifth of that, is shared by every gap
// of the coarse pass. With the linear steps around them, the worst pair at
// the size limit takes 80 to 110 ms there, under the 200 ms target.
const (
	lineBudget = 5 << 20
	gapBudget  = 1 << 20
)

// Edits returns the edits that turn a into b, in order. Elements are compared
// as whole strings, so a and b may hold lines, words or any other tokens.
// The edits are minimal unless the inputs are large and very different; then
// they are a valid but coarser script.
func Edits(a, b []string) []Edit {
	ids := make(map[string]int32, len(a)+len(b))
	ai, bi := intern(ids, a), intern(ids, b)
	es, _ := diffIDs(ai, bi, len(ids), lineBudget, gapBudget)
	return es
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

// diffIDs computes the edits between two interned sequences whose ids are
// below nIDs. exact reports whether the edits are minimal: false when the
// budget ran out and part of the comparison was done coarsely.
func diffIDs(a, b []int32, nIDs, budget, gap int) (edits []Edit, exact bool) {
	return diffIDsBudget(a, b, nIDs, &budget, gap)
}

// diffIDsBudget is diffIDs drawing on *work, which it leaves with what
// remains.
func diffIDsBudget(a, b []int32, nIDs int, work *int, gap int) (edits []Edit, exact bool) {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	a, b = a[pre:len(a)-suf], b[pre:len(b)-suf]
	switch {
	case len(a) == 0 && len(b) == 0:
		return nil, true
	case len(a) == 0 || len(b) == 0:
		return []Edit{{pre, pre + len(a), pre, pre + len(b)}}, true
	}

	// Set aside the elements that have no equal on the other side: they are
	// edits in every script, so the minimal script of what remains, mapped
	// back, is a minimal script of the whole.
	d := &differ{work: *work, gap: gap, exact: true, cntA: make([]int32, nIDs), cntB: make([]int32, nIDs)}
	for _, id := range a {
		d.cntA[id]++
	}
	for _, id := range b {
		d.cntB[id]++
	}
	ra, xa := keep(a, d.cntB)
	rb, xb := keep(b, d.cntA)
	clear(d.cntA)
	clear(d.cntB)
	if len(xa) > 0 && len(xb) > 0 {
		d.front = make([]int32, len(xa)+len(xb)+4)
		d.back = make([]int32, len(xa)+len(xb)+4)
		d.diff(xa, xb, 0, 0, true)
	}
	*work = d.work
	return d.edits(ra, rb, len(a), len(b), pre), d.exact
}

// keep returns the positions and ids of the elements of s whose count in
// the other sequence is not zero.
func keep(s []int32, other []int32) (pos, ids []int32) {
	n := 0
	for _, id := range s {
		if other[id] > 0 {
			n++
		}
	}
	pos, ids = make([]int32, 0, n), make([]int32, 0, n)
	for i, id := range s {
		if other[id] > 0 {
			pos = append(pos, int32(i))
			ids = append(ids, id)
		}
	}
	return pos, ids
}

// differ holds the state of one comparison of two reduced sequences.
type differ struct {
	work  int  // steps left for Myers' search
	gap   int  // steps for the coarse pass's gaps, granted once work runs out
	exact bool // false once a part was compared coarsely

	front, back []int32 // Myers' frontiers, forward and backward (reused)
	runs        []int32 // matched runs as (x, y, n) triples, in order

	cntA, cntB, posB []int32 // the coarse pass's counts, indexed by id (kept zeroed)
}

// match records that a[x:x+n] equals b[y:y+n] in the reduced sequences.
func (d *differ) match(x, y, n int) {
	if k := len(d.runs); k > 0 {
		px, py, pn := int(d.runs[k-3]), int(d.runs[k-2]), int(d.runs[k-1])
		if px+pn == x && py+pn == y {
			d.runs[k-1] += int32(n)
			return
		}
	}
	d.runs = append(d.runs, int32(x), int32(y), int32(n))
}

// diff matches a against b, whose first elements are at x0 and y0. With
// anchor, a part that the budget cannot afford is compared coarsely;
// without (inside the coarse pass), it is replaced wholesale.
func (d *differ) diff(a, b []int32, x0, y0 int, anchor bool) {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	if p > 0 {
		d.match(x0, y0, p)
	}
	a, b, x0, y0 = a[p:], b[p:], x0+p, y0+p
	s := 0
	for s < len(a) && s < len(b) && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	a, b = a[:len(a)-s], b[:len(b)-s]
	if len(a) > 0 && len(b) > 0 {
		x, y, found := d.bisect(a, b)
		switch {
		case found == split && (x > 0 || y > 0) && (x < len(a) || y < len(b)):
			d.diff(a[:x], b[:y], x0, y0, anchor)
			d.diff(a[x:], b[y:], x0+x, y0+y, anchor)
		case found == disjoint:
			// Nothing in common: replaced wholesale, which is minimal.
		case anchor:
			d.anchored(a, b, x0, y0)
		default:
			d.exact = false
		}
	}
	if s > 0 {
		d.match(x0+len(a), y0+len(b), s)
	}
}

// What bisect found.
const (
	split     = iota // a point on a shortest path
	disjoint         // no element in common
	tooCostly        // the budget ran out first
)

// bisect finds a point (x, y) on a shortest edit path from (0, 0) to
// (len(a), len(b)) near its middle, searching forward from the start and
// backward from the end at once (Myers 1986, section 4b), in space linear in
// len(a)+len(b). a and b are non-empty and differ in their first and in their
// last elements.
func (d *differ) bisect(a, b []int32) (x, y, found int) {
	n, m := len(a), len(b)
	maxD := (n + m + 1) / 2
	off := maxD
	size := 2*maxD + 2
	d.work -= size
	if d.work <= 0 {
		return 0, 0, tooCostly
	}
	v1, v2 := d.front[:size], d.back[:size]
	for i := range v1 {
		v1[i], v2[i] = -1, -1
	}
	v1[off+1], v2[off+1] = 0, 0
	delta := n - m
	// Paths of odd delta meet on a forward step, of even delta on a backward one.
	odd := delta&1 != 0
	// Diagonals that ran off the grid's edges are skipped from then on.
	k1start, k1end, k2start, k2end := 0, 0, 0, 0
	for dd := 0; dd < maxD; dd++ {
		if d.work <= 0 {
			return 0, 0, tooCostly
		}
		for k1 := -dd + k1start; k1 <= dd-k1end; k1 += 2 {
			i := off + k1
			var x1 int
			if k1 == -dd || (k1 != dd && v1[i-1] < v1[i+1]) {
				x1 = int(v1[i+1])
			} else {
				x1 = int(v1[i-1]) + 1
			}
			y1 := x1 - k1
			s := x1
			for x1 < n && y1 < m && a[x1] == b[y1] {
				x1++
				y1++
			}
			d.work -= x1 - s + 1
			v1[i] = int32(x1)
			switch {
			case x1 > n:
				k1end += 2 // off the right edge
			case y1 > m:
				k1start += 2 // off the bottom edge
			case odd:
				j := off + delta - k1
				if j >= 0 && j < size && v2[j] != -1 && x1 >= n-int(v2[j]) {
					return x1, y1, split
				}
			}
		}
		for k2 := -dd + k2start; k2 <= dd-k2end; k2 += 2 {
			i := off + k2
			var x2 int
			if k2 == -dd || (k2 != dd && v2[i-1] < v2[i+1]) {
				x2 = int(v2[i+1])
			} else {
				x2 = int(v2[i-1]) + 1
			}
			y2 := x2 - k2
			s := x2
			for x2 < n && y2 < m && a[n-x2-1] == b[m-y2-1] {
				x2++
				y2++
			}
			d.work -= x2 - s + 1
			v2[i] = int32(x2)
			switch {
			case x2 > n:
				k2end += 2
			case y2 > m:
				k2start += 2
			case !odd:
				j := off + delta - k2
				if j >= 0 && j < size && v1[j] != -1 {
					x1 := int(v1[j])
					y1 := off + x1 - j
					if x1 >= n-x2 {
						return x1, y1, split
					}
				}
			}
		}
	}
	return 0, 0, disjoint
}

// anchored is the coarse pass for a part Myers' search could not afford:
// elements that occur exactly once in each of a and b are matched when they
// keep their order (the longest increasing run of such pairs, as in patience
// diff), and each gap between them is compared with what remains of the gap
// budget, else replaced wholesale. Time O(n log n) plus the gap budget.
func (d *differ) anchored(a, b []int32, x0, y0 int) {
	d.exact = false
	if d.work <= 0 && d.gap > 0 {
		d.work, d.gap = d.gap, 0
	}
	if d.posB == nil {
		d.posB = make([]int32, len(d.cntA))
	}
	for _, id := range a {
		d.cntA[id]++
	}
	for j, id := range b {
		d.cntB[id]++
		d.posB[id] = int32(j)
	}
	type pair struct{ i, j int32 }
	var cand []pair
	for i, id := range a {
		if d.cntA[id] == 1 && d.cntB[id] == 1 {
			cand = append(cand, pair{int32(i), d.posB[id]})
		}
	}
	for _, id := range a {
		d.cntA[id] = 0
	}
	for _, id := range b {
		d.cntB[id] = 0
	}
	// Longest increasing subsequence of cand by j (i is already increasing):
	// tails[t] is the candidate ending the best run of length t+1 so far.
	tails := make([]int32, 0, 64)
	back := make([]int32, len(cand))
	for c, p := range cand {
		lo, hi := 0, len(tails)
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if cand[tails[mid]].j < p.j {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		back[c] = -1
		if lo > 0 {
			back[c] = tails[lo-1]
		}
		if lo == len(tails) {
			tails = append(tails, int32(c))
		} else {
			tails[lo] = int32(c)
		}
	}
	if len(tails) == 0 {
		return // no anchor: the gap is the part that just failed; replaced wholesale
	}
	anchors := make([]pair, len(tails))
	for c, k := tails[len(tails)-1], len(tails)-1; c >= 0; c, k = back[c], k-1 {
		anchors[k] = cand[c]
	}
	i, j := 0, 0
	for _, p := range anchors {
		d.diff(a[i:p.i], b[j:p.j], x0+i, y0+j, false)
		d.match(x0+int(p.i), y0+int(p.j), 1)
		i, j = int(p.i)+1, int(p.j)+1
	}
	d.diff(a[i:], b[j:], x0+i, y0+j, false)
}

// edits turns the matched runs, in reduced coordinates, into edits of the
// full sequences of lengths n and m: ra and rb map reduced positions to full
// ones, and pre is added to every position.
func (d *differ) edits(ra, rb []int32, n, m, pre int) []Edit {
	var out []Edit
	i, j := 0, 0 // the next unmatched positions in the full sequences
	for r := 0; r < len(d.runs); r += 3 {
		x, y, k := int(d.runs[r]), int(d.runs[r+1]), int(d.runs[r+2])
		for t := range k {
			p, q := int(ra[x+t]), int(rb[y+t])
			if p != i || q != j {
				out = append(out, Edit{pre + i, pre + p, pre + j, pre + q})
			}
			i, j = p+1, q+1
		}
	}
	if i < n || j < m {
		out = append(out, Edit{pre + i, pre + n, pre + j, pre + m})
	}
	return out
}
