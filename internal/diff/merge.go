package diff

import (
	"slices"
	"strings"
)

// Conflict markers written into a merged text. "Your version" is the edit
// being saved (ours); "current version" is the latest stored revision (theirs).
const (
	MarkerOurs   = "<<<<<<< your version"
	MarkerSep    = "======="
	MarkerTheirs = ">>>>>>> current version"
)

// Merge applies the changes from base to ours and from base to theirs to base,
// line by line with diff3 semantics. Changes to different lines merge cleanly,
// and so do identical changes on both sides. Changes that overlap, and any
// insertion touching the other side's change (including two different
// insertions at one spot), conflict: conflicts is true and merged holds both
// versions of each such region between git-style markers.
//
// Unlike git, two changes to adjacent but distinct lines merge cleanly: each
// side's replacement lands where its own lines were, so the result does not
// depend on an ordering choice. Insertions next to a change do depend on one,
// which is why they conflict.
//
// Whether the result ends in a newline is merged separately as a yes/no
// value: it follows ours if ours changed it from base, theirs otherwise.
//
// Merge only merges on exact diffs: when base and one side differ too much
// for an exact diff within the work budget, the whole texts conflict (the
// lines they share at their start and end stay outside the markers).
func Merge(base, ours, theirs string) (merged string, conflicts bool) {
	return merge(base, ours, theirs, lineBudget)
}

func merge(base, ours, theirs string, budget int) (merged string, conflicts bool) {
	switch {
	case theirs == base || ours == theirs:
		return ours, false
	case ours == base:
		return theirs, false
	}
	bl, bNL := mergeLines(base)
	ol, oNL := mergeLines(ours)
	tl, tNL := mergeLines(theirs)
	in := newInterner(len(bl) + len(ol) + len(tl))
	ids := func(lines []string) []int32 {
		out := make([]int32, len(lines))
		for i, l := range lines {
			out[i] = in.id(l)
		}
		return out
	}
	bi, oi, ti := ids(bl), ids(ol), ids(tl)
	finalNL := tNL
	if oNL != bNL {
		finalNL = oNL
	}
	toOurs, exactO := diffIDs(bi, oi, in.size(), budget, 0)
	toTheirs, exactT := diffIDs(bi, ti, in.size(), budget, 0)
	if !exactO || !exactT {
		return joinLines(conflict(nil, ol, tl), finalNL), true
	}

	type chunk struct {
		Edit
		theirs bool
	}
	var chunks []chunk
	for _, e := range toOurs {
		chunks = append(chunks, chunk{e, false})
	}
	for _, e := range toTheirs {
		chunks = append(chunks, chunk{e, true})
	}
	// Stable order by base position; at equal starts insertions come first.
	slices.SortStableFunc(chunks, func(x, y chunk) int {
		if x.OldStart != y.OldStart {
			return x.OldStart - y.OldStart
		}
		return x.OldEnd - y.OldEnd
	})

	var out []string
	pos := 0 // next base line to copy
	for len(chunks) > 0 {
		// Grow a group while the next chunk conflicts with a chunk of the other
		// side already in it. Chunks of one side never conflict with each other
		// (a diff separates them by at least one unchanged line), so it is enough
		// to remember, per side, the furthest end and whether an insertion sits
		// there.
		var end [2]int
		var insAtEnd [2]bool
		end[0], end[1] = -1, -1
		n := 0
		for ; n < len(chunks); n++ {
			c := chunks[n]
			side, other := 0, 1
			if c.theirs {
				side, other = 1, 0
			}
			empty := c.OldStart == c.OldEnd
			if n > 0 {
				e := end[other]
				clash := e >= 0 && (c.OldStart < e || (c.OldStart == e && (empty || insAtEnd[other])))
				if !clash {
					break
				}
			}
			switch {
			case c.OldEnd > end[side]:
				end[side], insAtEnd[side] = c.OldEnd, empty
			case c.OldEnd == end[side]:
				insAtEnd[side] = insAtEnd[side] || empty
			}
		}
		group := chunks[:n]
		chunks = chunks[n:]

		lo, hi := group[0].OldStart, max(end[0], end[1])
		out = append(out, bl[pos:lo]...)
		pos = hi
		// Each side's version of base[lo:hi].
		var versions [2][]string
		for s := range 2 {
			side := ol
			if s == 1 {
				side = tl
			}
			p := lo
			for _, c := range group {
				if c.theirs != (s == 1) {
					continue
				}
				versions[s] = append(versions[s], bl[p:c.OldStart]...)
				versions[s] = append(versions[s], side[c.NewStart:c.NewEnd]...)
				p = c.OldEnd
			}
			versions[s] = append(versions[s], bl[p:hi]...)
		}
		if end[0] < 0 || end[1] < 0 {
			// One side only: take it.
			if end[0] < 0 {
				out = append(out, versions[1]...)
			} else {
				out = append(out, versions[0]...)
			}
			continue
		}
		o, t := versions[0], versions[1]
		if slices.Equal(o, t) {
			out = append(out, o...)
			continue
		}
		conflicts = true
		out = conflict(out, o, t)
	}
	out = append(out, bl[pos:]...)
	return joinLines(out, finalNL), conflicts
}

// conflict appends to out the versions o and t between conflict markers,
// keeping the lines both agree on at their start and end outside.
func conflict(out, o, t []string) []string {
	pre := 0
	for pre < len(o) && pre < len(t) && o[pre] == t[pre] {
		pre++
	}
	suf := 0
	for suf < len(o)-pre && suf < len(t)-pre && o[len(o)-1-suf] == t[len(t)-1-suf] {
		suf++
	}
	out = append(out, o[:pre]...)
	out = append(out, MarkerOurs+"\n")
	out = append(out, o[pre:len(o)-suf]...)
	out = append(out, MarkerSep+"\n")
	out = append(out, t[pre:len(t)-suf]...)
	out = append(out, MarkerTheirs+"\n")
	return append(out, o[len(o)-suf:]...)
}

// joinLines joins lines that each end in "\n", dropping the last newline
// unless finalNL.
func joinLines(lines []string, finalNL bool) string {
	s := strings.Join(lines, "")
	if !finalNL {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

// mergeLines splits s into lines that each end in "\n", adding one to the last
// line if it lacks it, and reports whether s ended in a newline. The empty text
// counts as ending in one, so that creating a text does not change the flag.
func mergeLines(s string) (lines []string, finalNL bool) {
	if s == "" {
		return nil, true
	}
	finalNL = strings.HasSuffix(s, "\n")
	if !finalNL {
		s += "\n"
	}
	return strings.SplitAfter(s, "\n")[:strings.Count(s, "\n")], finalNL
}
