package search

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strings"
	"sync"
)

// List is one key's postings in one segment, as stored: decoded on
// demand.
type List struct {
	data  []byte
	skips *Skips // nil: its positions are read from their start
}

// skipEvery: Skips holds where the run of every skipEvery-th document of a
// list starts.
const skipEvery = 64

// SkipsMin: a list of fewer documents is read from its start, where Skips
// would save little.
const SkipsMin = 1024

// Skips remembers where a list can be entered in the middle: for every
// skipEvery-th document, where its ID and its run of positions start. It
// is found the first time RunsOf reads the list through it (WithSkips).
// A list is stored as runs of varints, so that without it reading the
// runs of a list's last documents reads all the others' first, and a
// phrase of common words checked from its newest candidates down would
// read the IDs and positions of tens of thousands for its few. A reader
// keeps a list's Skips across searches. The zero value is ready to use;
// it is safe for concurrent use, and takes SkipsBytes(n) for a list of n
// documents.
type Skips struct {
	once sync.Once
	t    *skipTable // nil: the list did not decode
}

// skipTable is what Skips found in a list of n documents, len(data)
// bytes: for document e*skipEvery, the offset in the list of its ID's
// delta (docAt[e]), the ID before it (before[e]), and the offset in the
// positions section of its run (runAt[e]); where that section starts in
// the list and its length.
type skipTable struct {
	n, size        uint64
	docAt, runAt   []uint32
	before         []int64
	posAt, posSize uint64
}

// SkipsBytes is about what the Skips of a list of n documents take once
// found: 16 bytes per skipEvery documents (25 KB for 100,000).
func SkipsBytes(n int) int {
	return 64 + 16*(n/skipEvery+1)
}

// WithSkips returns l, which RunsOf enters through s: s must not be
// given to another list.
func (l List) WithSkips(s *Skips) List {
	l.skips = s
	return l
}

// table returns l's skip table, finding it the first time (nil if the
// list does not decode, or if s was made from another list).
func (s *Skips) table(l List) *skipTable {
	s.once.Do(func() {
		d, lens := l.start()
		n := d.uvarint()
		if d.err != nil || n > uint64(len(l.data)) {
			return
		}
		t := &skipTable{n: n, size: uint64(len(l.data))}
		blocks := (n + skipEvery - 1) / skipEvery
		t.docAt, t.runAt, t.before = make([]uint32, 0, blocks), make([]uint32, 0, blocks), make([]int64, 0, blocks)
		prev := int64(0)
		for i := range n {
			if i%skipEvery == 0 {
				t.docAt = append(t.docAt, uint32(len(l.data)-len(d.b)))
				t.before = append(t.before, prev)
			}
			// IDs increase: a list whose do not is corrupt, and read
			// from its start, which says so where it matters.
			delta := d.uvarint()
			if delta == 0 && i > 0 || delta > math.MaxInt64-uint64(prev) {
				return
			}
			prev += int64(delta)
		}
		b, ok := skipVarints(d.b, (sections(lens)-1)*n)
		if d.err != nil || !ok {
			return
		}
		d.b = b
		size := d.uvarint()
		if d.err != nil || size > uint64(len(d.b)) {
			return
		}
		t.posAt, t.posSize = uint64(len(l.data)-len(d.b)), size
		section := d.b[:size]
		b = section
		for i := range n {
			if i%skipEvery == 0 {
				t.runAt = append(t.runAt, uint32(len(section)-len(b)))
			}
			c, w := binary.Uvarint(b)
			if w <= 0 || c > uint64(len(b)) {
				return
			}
			if b, ok = skipVarints(b[w:], c); !ok {
				return
			}
		}
		s.t = t
	})
	if s.t == nil || s.t.n != uint64(l.Docs()) || s.t.size != uint64(len(l.data)) {
		return nil
	}
	return s.t
}

// Posting is one document of a list: its weighted term frequency and its
// length in terms (the title's alone for a title key; 0 where the list
// leaves it to the segment, Segment.Lens).
type Posting struct {
	Doc int64
	TF  int32
	Len int32
}

// Docs returns how many documents the list holds.
func (l List) Docs() int {
	d, _ := l.start()
	n, k := binary.Uvarint(d.b)
	if k <= 0 {
		return 0
	}
	return int(n)
}

// noLengths starts a list without its documents' lengths, which the
// segment keeps once each (Segment.Lens). A list that has them starts
// with its document count, never zero.
const noLengths = 0

// start returns a decoder past the list's marker, and whether the list
// holds its documents' lengths (the sections of a list: IDs, frequencies,
// lengths when it has them, then positions).
func (l List) start() (decoder, bool) {
	if len(l.data) > 0 && l.data[0] == noLengths {
		return decoder{b: l.data[1:]}, false
	}
	return decoder{b: l.data}, true
}

// sections is the number of sections of n uvarints after a list's count:
// document IDs, frequencies, and lengths when it has them.
func sections(lens bool) uint64 {
	if lens {
		return 3
	}
	return 2
}

// Postings appends the list's documents to dst, in increasing ID order;
// their Len is 0 when the list leaves lengths to the segment.
func (l List) Postings(dst []Posting) ([]Posting, error) {
	d, lens := l.start()
	n := d.uvarint()
	if d.err != nil || n > uint64(len(l.data)) {
		return dst, ErrCorrupt
	}
	start := len(dst)
	dst = append(dst, make([]Posting, n)...)
	ps := dst[start:]
	prev := int64(0)
	for i := range ps {
		prev += int64(d.uvarint())
		ps[i].Doc = prev
	}
	for i := range ps {
		ps[i].TF = int32(d.uvarint())
	}
	if lens {
		for i := range ps {
			ps[i].Len = int32(d.uvarint())
		}
	}
	if d.err != nil {
		return dst[:start], ErrCorrupt
	}
	return dst, nil
}

// Runs appends to dst, for each document of the list in order, its
// positions as encoded (the count, then the deltas): a merge copies them
// without decoding.
func (l List) Runs(dst [][]byte) ([][]byte, error) {
	d, lens := l.start()
	n := d.uvarint()
	if d.err != nil || n > uint64(len(l.data)) {
		return dst, ErrCorrupt
	}
	for range sections(lens) * n {
		d.uvarint()
	}
	size := d.uvarint()
	if d.err != nil || size > uint64(len(d.b)) {
		return dst, ErrCorrupt
	}
	b := d.b[:size]
	for range n {
		start := len(b)
		c, k := binary.Uvarint(b)
		if k <= 0 || c > uint64(len(b)) {
			return dst, ErrCorrupt
		}
		var ok bool
		if b, ok = skipVarints(b[k:], c); !ok {
			return dst, ErrCorrupt
		}
		run := d.b[size-uint64(start) : size-uint64(len(b))]
		dst = append(dst, run)
	}
	return dst, nil
}

// PostingsOf appends to dst the postings of the documents of want
// (increasing IDs) that the list holds, in order: an intersection with a
// short list of candidates, which skips over the others' frequencies and
// lengths without decoding them. Len is as Postings sets it.
func (l List) PostingsOf(dst []Posting, want []int64) ([]Posting, error) {
	d, lens := l.start()
	n := d.uvarint()
	if d.err != nil || n > uint64(len(l.data)) {
		return dst, ErrCorrupt
	}
	start := len(dst)
	var idx []int
	prev, j := int64(0), 0
	i := 0
	for ; i < int(n) && j < len(want); i++ {
		prev += int64(d.uvarint())
		for j < len(want) && want[j] < prev {
			j++
		}
		if j < len(want) && want[j] == prev {
			idx = append(idx, i)
			dst = append(dst, Posting{Doc: prev})
		}
	}
	if d.err != nil {
		return dst[:start], ErrCorrupt
	}
	if len(idx) == 0 {
		return dst, nil
	}
	b, ok := skipVarints(d.b, n-uint64(i)) // the documents not read
	if !ok {
		return dst[:start], ErrCorrupt
	}
	ps := dst[start:]
	for section := range sections(lens) - 1 { // frequencies, then lengths
		k, at := 0, 0
		for k < len(idx) {
			var skipped bool
			if b, skipped = skipVarints(b, uint64(idx[k]-at)); !skipped {
				return dst[:start], ErrCorrupt
			}
			v, w := binary.Uvarint(b)
			if w <= 0 {
				return dst[:start], ErrCorrupt
			}
			if section == 0 {
				ps[k].TF = int32(v)
			} else {
				ps[k].Len = int32(v)
			}
			b, at, k = b[w:], idx[k]+1, k+1
		}
		if b, ok = skipVarints(b, n-uint64(at)); !ok {
			return dst[:start], ErrCorrupt
		}
	}
	return dst, nil
}

// RunsOf calls fn for each document of want (increasing IDs) that the
// list holds, with its positions as encoded (see Runs), decoding nothing
// of the other documents but their IDs.
func (l List) RunsOf(want []int64, fn func(doc int64, run []byte) error) error {
	if l.skips != nil {
		if t := l.skips.table(l); t != nil {
			return l.runsOfSkipping(t, want, fn)
		}
	}
	d, lens := l.start()
	n := d.uvarint()
	if d.err != nil || n > uint64(len(l.data)) {
		return ErrCorrupt
	}
	// The indexes of the wanted documents in the list, increasing, and
	// their IDs.
	idx := make([]int, 0, min(uint64(len(want)), n))
	docs := make([]int64, 0, cap(idx))
	idx, docs, _ = wanted(&d, 0, 0, int(n), want, 0, idx, docs)
	if d.err != nil {
		return ErrCorrupt
	}
	if len(idx) == 0 {
		return nil
	}
	b, ok := skipVarints(d.b, (sections(lens)-1)*n) // frequencies (and lengths)
	if !ok {
		return ErrCorrupt
	}
	d.b = b
	size := d.uvarint()
	if d.err != nil || size > uint64(len(d.b)) {
		return ErrCorrupt
	}
	return eachRun(d.b[:size], 0, idx, docs, fn)
}

// wanted reads with d the ID deltas of a list's documents lo to hi-1,
// the ID before them being prev, and appends to idx and docs the indexes
// and IDs of those that want[j:] (increasing) holds; it returns the index
// in want it got to.
func wanted(d *decoder, prev int64, lo, hi int, want []int64, j int, idx []int, docs []int64) ([]int, []int64, int) {
	for i := lo; i < hi; i++ {
		prev += int64(d.uvarint())
		for j < len(want) && want[j] < prev {
			j++
		}
		if j < len(want) && want[j] == prev {
			idx = append(idx, i)
			docs = append(docs, prev)
		}
	}
	return idx, docs, j
}

// eachRun reads b, the runs of a list's documents from document lo on,
// and calls fn with the run of each document of idx (their indexes in the
// list, increasing, lo or more), whose IDs are docs.
func eachRun(b []byte, lo int, idx []int, docs []int64, fn func(doc int64, run []byte) error) error {
	k := 0
	for i := lo; k < len(idx); i++ {
		c, w := binary.Uvarint(b)
		if w <= 0 || c > uint64(len(b)) {
			return ErrCorrupt
		}
		rest, ok := skipVarints(b[w:], c)
		if !ok {
			return ErrCorrupt
		}
		if i == idx[k] {
			if err := fn(docs[k], b[:len(b)-len(rest)]); err != nil {
				return err
			}
			k++
		}
		b = rest
	}
	return nil
}

// runsOfSkipping is RunsOf through the list's skip table t: it reads the
// IDs and runs of the blocks of skipEvery documents that may hold wanted
// documents, and nothing of the others.
func (l List) runsOfSkipping(t *skipTable, want []int64, fn func(doc int64, run []byte) error) error {
	section := l.data[t.posAt : t.posAt+t.posSize]
	var idx []int
	var docs []int64
	j := 0
	for e := 0; e < len(t.docAt) && j < len(want); e++ {
		// Block e holds the IDs after before[e], up to before[e+1].
		for e+1 < len(t.before) && t.before[e+1] < want[j] {
			e++
		}
		lo := e * skipEvery
		hi := min(lo+skipEvery, int(t.n))
		d := decoder{b: l.data[t.docAt[e]:]}
		idx, docs, j = wanted(&d, t.before[e], lo, hi, want, j, idx[:0], docs[:0])
		if d.err != nil {
			return ErrCorrupt
		}
		if err := eachRun(section[t.runAt[e]:], lo, idx, docs, fn); err != nil {
			return err
		}
	}
	return nil
}

// skipVarints returns b after its first n uvarints. Each byte below
// 0x80 ends one: while more than eight are left, eight bytes are counted
// at a time (a common word's run has dozens of positions).
func skipVarints(b []byte, n uint64) ([]byte, bool) {
	i := 0
	for n > 8 && len(b)-i >= 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		n -= uint64(bits.OnesCount64(^w & 0x8080808080808080))
		i += 8
	}
	for n > 0 {
		if i == len(b) {
			return nil, false
		}
		if b[i] < 0x80 {
			n--
		}
		i++
	}
	return b[i:], true
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.err = ErrCorrupt
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = ErrCorrupt
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

// Entries calls each for every key of a block and its list, in key order,
// until each returns false.
func Entries(block []byte, each func(key string, l List) bool) error {
	return entries(block, func(k []byte, l List) bool { return each(string(k), l) })
}

func entries(block []byte, each func(key []byte, l List) bool) error {
	d := decoder{b: block}
	n := d.uvarint()
	for range n {
		key := d.bytes()
		list := d.bytes()
		if d.err != nil {
			return d.err
		}
		if !each(key, List{data: list}) {
			return nil
		}
	}
	return d.err
}

// Lookup returns key's list in block, if there.
func Lookup(block []byte, key string) (List, bool, error) {
	var out List
	found := false
	err := entries(block, func(k []byte, l List) bool {
		if string(k) >= key {
			out, found = l, string(k) == key
			return false
		}
		return true
	})
	return out, found, err
}

// Range calls each for the keys of block from lo (included) to hi
// (excluded), in order, until each returns false; it reports whether the
// block has keys past hi or each stopped, so that the caller need not read
// the next block.
func Range(block []byte, lo, hi string, each func(key string, l List) bool) (done bool, err error) {
	err = entries(block, func(k []byte, l List) bool {
		switch {
		case string(k) < lo:
			return true
		case string(k) >= hi:
			done = true
			return false
		}
		if !each(string(k), l) {
			done = true
			return false
		}
		return true
	})
	return done, err
}

// PrefixEnd returns the first key after every key starting with p.
func PrefixEnd(p string) string {
	return p + string([]byte{0xff})
}

// IsTitleKey reports whether key is a title key (TitleKey).
func IsTitleKey(key string) bool { return strings.HasPrefix(key, titlePrefix) }
