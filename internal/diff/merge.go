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
func Merge(base, ours, theirs string) (merged string, conflicts bool) {
	bl, bNL := mergeLines(base)
	ol, oNL := mergeLines(ours)
	tl, tNL := mergeLines(theirs)
	ids := make(map[string]int32, len(bl)+len(ol)+len(tl))
	bi, oi, ti := intern(ids, bl), intern(ids, ol), intern(ids, tl)

	type chunk struct {
		Edit
		theirs bool
	}
	var chunks []chunk
	for _, e := range diffIDs(bi, oi) {
		chunks = append(chunks, chunk{e, false})
	}
	for _, e := range diffIDs(bi, ti) {
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
				conflict := e >= 0 && (c.OldStart < e || (c.OldStart == e && (empty || insAtEnd[other])))
				if !conflict {
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
		// Keep lines both sides agree on outside the markers.
		pre := 0
		for pre < len(o) && pre < len(t) && o[pre] == t[pre] {
			pre++
		}
		suf := 0
		for suf < len(o)-pre && suf < len(t)-pre && o[len(o)-1-suf] == t[len(t)-1-suf] {
			suf++
		}
		conflicts = true
		out = append(out, o[:pre]...)
		out = append(out, MarkerOurs+"\n")
		out = append(out, o[pre:len(o)-suf]...)
		out = append(out, MarkerSep+"\n")
		out = append(out, t[pre:len(t)-suf]...)
		out = append(out, MarkerTheirs+"\n")
		out = append(out, o[len(o)-suf:]...)
	}
	out = append(out, bl[pos:]...)

	merged = strings.Join(out, "")
	finalNL := tNL
	if oNL != bNL {
		finalNL = oNL
	}
	if !finalNL {
		merged = strings.TrimSuffix(merged, "\n")
	}
	return merged, conflicts
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
