package diff

import (
	"hash/maphash"
	"strings"
)

// text is a page text cut into lines without their "\n": line i is
// s[off[i]:off[i+1]-1]. The last line's end is stored as len(s)+1 when s
// does not end in a newline, so the formula holds for it too. Offsets take
// 4 bytes a line where a []string would take 16.
type text struct {
	s   string
	off []int32
}

// maxText is the longest text the int32 offsets can address (pages are
// limited far below).
const maxText = 1<<31 - 2

// splitText cuts s, at most maxText bytes, into lines. A final newline does
// not start another line, so "a\n" and "a" both have one line, and "" has
// none.
func splitText(s string) text {
	n := strings.Count(s, "\n")
	if s != "" && s[len(s)-1] != '\n' {
		n++
	}
	off := make([]int32, 0, n+1)
	for i := 0; i < len(s); {
		off = append(off, int32(i))
		// Short lines are scanned here: a call per line costs more.
		j := i
		for j < len(s) && j < i+16 && s[j] != '\n' {
			j++
		}
		if j == i+16 {
			if k := strings.IndexByte(s[j:], '\n'); k >= 0 {
				j += k
			} else {
				j = len(s)
			}
		}
		i = j + 1
	}
	if len(s) > 0 {
		end := len(s)
		if s[len(s)-1] != '\n' {
			end++
		}
		off = append(off, int32(end))
	} else {
		off = append(off, 0)
	}
	return text{s: s, off: off}
}

func (t *text) lines() int { return len(t.off) - 1 }

func (t *text) line(i int) string { return t.s[t.off[i] : t.off[i+1]-1] }

// interner gives equal strings equal small ids. It is an open-addressing
// table of ids with the hash of each id kept beside its first string, so
// that growing the table rehashes nothing, and a lookup compares strings
// only when the hashes agree.
type interner struct {
	seed   maphash.Seed
	seed64 uint64  // derived from seed, for short strings
	slots  []int32 // id+1, or 0 for an empty slot
	hash   []uint64
	reps   []string
}

func newInterner(hint int) *interner {
	n := 64
	for n < 2*hint {
		n <<= 1
	}
	seed := maphash.MakeSeed()
	return &interner{seed: seed, seed64: maphash.Comparable(seed, 0), slots: make([]int32, n)}
}

// mix is the finalizer of splitmix64: every input bit flips about half of
// the output bits.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// id returns the id of s, giving it the next one if it is new.
func (in *interner) id(s string) int32 {
	var h uint64
	if len(s) <= 8 {
		// Short lines and words are most of the calls: hash them inline.
		// The bytes and the length go through a multiply-xorshift mix,
		// seeded so that no input can aim at the table's collisions.
		k := uint64(len(s))
		for i := 0; i < len(s); i++ {
			k = k<<8 | uint64(s[i])
		}
		h = mix(k ^ in.seed64)
	} else {
		h = maphash.String(in.seed, s)
	}
	mask := uint64(len(in.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		v := in.slots[i]
		if v == 0 {
			id := int32(len(in.reps))
			in.slots[i] = id + 1
			in.hash = append(in.hash, h)
			in.reps = append(in.reps, s)
			if 2*len(in.reps) > len(in.slots) {
				in.grow()
			}
			return id
		}
		if id := v - 1; in.hash[id] == h && in.reps[id] == s {
			return id
		}
	}
}

func (in *interner) grow() {
	in.slots = make([]int32, 2*len(in.slots))
	mask := uint64(len(in.slots) - 1)
	for id, h := range in.hash {
		i := h & mask
		for in.slots[i] != 0 {
			i = (i + 1) & mask
		}
		in.slots[i] = int32(id) + 1
	}
}

// lineIDs returns the ids of lines [from, to) of t.
func (in *interner) lineIDs(t *text, from, to int) []int32 {
	ids := make([]int32, to-from)
	prev, prevID := "", int32(-1)
	for i := range ids {
		l := t.line(from + i)
		// Runs of equal lines (blank lines, table rows) skip the hashing.
		if prevID < 0 || l != prev {
			prev, prevID = l, in.id(l)
		}
		ids[i] = prevID
	}
	return ids
}

// size is the number of distinct strings seen.
func (in *interner) size() int { return len(in.reps) }

// lineEdits compares two texts line by line. Lines equal at the start and
// end are cut off first without hashing, so a small edit to a large page
// costs little more than comparing the bytes.
func lineEdits(ta, tb *text, budget, gap int) (edits []Edit, exact bool) {
	na, nb := ta.lines(), tb.lines()
	pre := 0
	for pre < na && pre < nb && ta.line(pre) == tb.line(pre) {
		pre++
	}
	suf := 0
	for suf < na-pre && suf < nb-pre && ta.line(na-1-suf) == tb.line(nb-1-suf) {
		suf++
	}
	in := newInterner(0)
	ai, bi := in.lineIDs(ta, pre, na-suf), in.lineIDs(tb, pre, nb-suf)
	edits, exact = diffIDs(ai, bi, in.size(), budget, gap)
	for i := range edits {
		edits[i].OldStart += pre
		edits[i].OldEnd += pre
		edits[i].NewStart += pre
		edits[i].NewEnd += pre
	}
	return edits, exact
}
