package search

import (
	"fmt"
	"slices"
)

// BlockSource returns a segment's blocks in order, one per call, and nil
// after the last.
type BlockSource func() ([]byte, error)

// Merge merges segments into one, streaming: it reads each segment's
// blocks in order and hands the merged segment's blocks to emit as they
// fill. Document doc of segment i becomes document remap(i, doc) of the
// merged one (1 to docs), or is dropped when that is 0 (an entry no
// longer current). length returns the length of document doc of segment
// i, for the lists that leave it out (Segment.Lens): 0 when the segment
// has none for it, which makes the segment corrupt. The returned Segment
// has the totals, the lengths and no Blocks.
func Merge(segs []BlockSource, docs int, remap func(seg int, doc int64) int64, length func(seg int, doc int64) int32, emit func(Block) error) (Segment, error) {
	cursors := make([]*cursor, len(segs))
	for i, src := range segs {
		c := &cursor{src: src}
		if err := c.next(); err != nil {
			return Segment{}, segmentError(i, err)
		}
		cursors[i] = c
	}
	var (
		w     blockWriter
		out   Segment
		lb    = listBuilder{posEnc: []byte{}} // posEnc set: positions come encoded
		enc   []byte
		ps    []Posting
		runs  [][]byte
		items []mergeItem
		lens  = make([]int32, docs+1) // by merged document: its length, if seen
	)
	for {
		key, any := "", false
		for _, c := range cursors {
			if c.ok() && (!any || c.key() < key) {
				key, any = c.key(), true
			}
		}
		if !any {
			break
		}
		items = items[:0]
		for i, c := range cursors {
			if !c.ok() || c.key() != key {
				continue
			}
			l := c.list()
			var err error
			ps, err = l.Postings(ps[:0])
			if err != nil {
				return Segment{}, segmentError(i, err)
			}
			runs, err = l.Runs(runs[:0])
			if err != nil || len(runs) != len(ps) {
				return Segment{}, segmentError(i, ErrCorrupt)
			}
			for j, p := range ps {
				doc := remap(i, p.Doc)
				if doc <= 0 || doc > int64(docs) {
					continue // stale: dropped
				}
				if p.Len == 0 {
					if p.Len = length(i, p.Doc); p.Len <= 0 {
						return Segment{}, segmentError(i, ErrCorrupt)
					}
				}
				p.Doc = doc
				items = append(items, mergeItem{p: p, run: runs[j]})
			}
			if err := c.advance(); err != nil {
				return Segment{}, segmentError(i, err)
			}
		}
		if len(items) == 0 {
			continue
		}
		if byDoc := func(a, b mergeItem) int { return cmpInt(a.p.Doc, b.p.Doc) }; !slices.IsSortedFunc(items, byDoc) {
			slices.SortStableFunc(items, byDoc)
		}
		lb.entries, lb.posEnc = lb.entries[:0], lb.posEnc[:0]
		title := IsTitleKey(key)
		for j, it := range items {
			if j > 0 && items[j-1].p.Doc == it.p.Doc {
				continue // mapped twice: the first segment's
			}
			lb.entries = append(lb.entries, entry{doc: it.p.Doc, tf: it.p.TF, len: it.p.Len})
			lb.posEnc = append(lb.posEnc, it.run...)
			if !title {
				lens[it.p.Doc] = it.p.Len
			}
		}
		enc, _ = lb.encode(enc[:0], nil, title)
		if blk, ok := w.add(key, enc); ok {
			if err := emit(blk); err != nil {
				return Segment{}, err
			}
		}
	}
	if blk, ok := w.flush(); ok {
		if err := emit(blk); err != nil {
			return Segment{}, err
		}
	}
	out.Lens = lens[1:]
	for doc, n := range lens {
		if n == 0 {
			continue
		}
		out.Docs++
		out.Tokens += int64(n)
		if out.MinDoc == 0 || int64(doc) < out.MinDoc {
			out.MinDoc = int64(doc)
		}
		out.MaxDoc = max(out.MaxDoc, int64(doc))
	}
	return out, nil
}

// SegmentError is a merge's failure to read one of its segments (Index,
// in the order given): a backend's error, or ErrCorrupt for a segment
// that does not decode.
type SegmentError struct {
	Index int
	Err   error
}

func (e *SegmentError) Error() string { return fmt.Sprintf("segment %d: %v", e.Index, e.Err) }
func (e *SegmentError) Unwrap() error { return e.Err }

func segmentError(i int, err error) error { return &SegmentError{Index: i, Err: err} }

type mergeItem struct {
	p   Posting
	run []byte // its positions, encoded
}

// cursor walks a segment's keys in order across its blocks.
type cursor struct {
	src  BlockSource
	keys []string
	ls   []List
	i    int
}

func (c *cursor) ok() bool    { return c.i < len(c.keys) }
func (c *cursor) key() string { return c.keys[c.i] }
func (c *cursor) list() List  { return c.ls[c.i] }
func (c *cursor) advance() error {
	c.i++
	if c.i < len(c.keys) {
		return nil
	}
	return c.next()
}

// next loads the next block that has keys.
func (c *cursor) next() error {
	for {
		blk, err := c.src()
		if err != nil {
			return err
		}
		c.keys, c.ls, c.i = c.keys[:0], c.ls[:0], 0
		if blk == nil {
			return nil
		}
		if err := Entries(blk, func(k string, l List) bool {
			c.keys = append(c.keys, k)
			c.ls = append(c.ls, l)
			return true
		}); err != nil {
			return err
		}
		if len(c.keys) > 0 {
			return nil
		}
	}
}
