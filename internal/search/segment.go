// Package search is Wikid's own full-text index: immutable segments of
// postings, built in Go from the analyzer's terms (store.IndexText) on the
// cores that parse pages, stored by a backend as a few large blocks, and
// merged in the background. A segment is written in one statement per
// block, so that indexing costs the database's writer almost nothing; a
// query reads, per segment, the block of each of its words.
//
// A segment holds each document once. Which segment holds a document's
// current entry is the backend's to know (the page row names it): entries
// of other segments are stale, skipped by queries and dropped by merges.
//
// The package knows nothing of SQL: a backend stores Blocks and hands
// them back through a Reader.
package search

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
)

// Doc is one document's entry: its ID (a page ID, above zero) and the
// terms of its title and text, each as store.IndexText returns them
// (terms separated by single spaces).
type Doc struct {
	ID          int64
	Title, Body string
}

// TitleWeight is how much a term of the title counts in a document's
// term frequency, against one for a term of the text.
const TitleWeight = 10

// TitleKey is the key a title's term is indexed under, besides its own:
// title matches then read a short list of their own. A title's terms are
// also terms of the document (under their own key), so that a query
// finds a page by its title and text words together.
func TitleKey(term string) string { return titlePrefix + term }

const titlePrefix = "\x01"

// BlockSize: a block is closed once its encoding passes this size. A
// lookup reads one block; a key's list longer than this is a block alone.
const BlockSize = 16 << 10

// Segment is a built segment: its blocks in key order and its totals, for
// BM25's average document length.
type Segment struct {
	Docs   int   // documents in it
	Tokens int64 // the sum of their lengths in terms (title and text)
	MinDoc int64 // its smallest and largest document IDs
	MaxDoc int64
	Blocks []Block
}

// Block is a run of keys with their lists, in key order: First is its
// first key, by which a backend finds it.
//
// Encoding: uvarint count, then per key uvarint length, the key, uvarint
// length, its list. A list: uvarint n (documents), n uvarint document ID
// deltas (the first ID whole, increasing), n uvarint term frequencies
// (weighted), n uvarint document lengths, uvarint length of the positions
// section, then per document uvarint count and count uvarint position
// deltas (the first whole).
type Block struct {
	First string
	Data  []byte
}

// ErrCorrupt reports a block or list that does not decode.
var ErrCorrupt = errors.New("search: corrupt index block")

// Build makes a segment of docs, whose IDs must differ.
func Build(docs []Doc) Segment {
	docs = slices.Clone(docs)
	slices.SortFunc(docs, func(a, b Doc) int { return cmpInt(a.ID, b.ID) })
	b := builder{lists: map[string]*listBuilder{}}
	var seg Segment
	var touched []*listBuilder // the lists of the document being added
	for _, d := range docs {
		touched = touched[:0]
		// add counts an occurrence of key at pos in d: one map lookup.
		add := func(key string, pos uint32, weight int32, title bool) {
			l := b.lists[key]
			if l == nil {
				l = b.newList(title)
				b.lists[key] = l
			}
			if l.cur.doc != d.ID {
				l.cur = entry{doc: d.ID}
				touched = append(touched, l)
			}
			l.cur.tf += weight
			l.cur.count++
			l.pos = append(l.pos, pos)
		}
		n := uint32(0) // position
		for t := range fields(d.Title) {
			add(t, n, TitleWeight, false)
			add(TitleKey(t), n, 1, true)
			n++
		}
		titleLen := int32(n)
		n++ // a gap: a phrase does not run from the title into the text
		for t := range fields(d.Body) {
			add(t, n, 1, false)
			n++
		}
		length := int32(n) - 1 // the title's terms and the text's
		for _, l := range touched {
			l.cur.len = length
			if l.title {
				l.cur.len = titleLen
			}
			l.entries = append(l.entries, l.cur)
		}
		seg.Docs++
		seg.Tokens += int64(length)
		if seg.MinDoc == 0 || d.ID < seg.MinDoc {
			seg.MinDoc = d.ID
		}
		seg.MaxDoc = max(seg.MaxDoc, d.ID)
	}
	seg.Blocks = b.blocks()
	return seg
}

// fields iterates the space-separated terms of s.
func fields(s string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for s != "" {
			i := strings.IndexByte(s, ' ')
			if i < 0 {
				i = len(s)
			}
			if i > 0 && !yield(s[:i]) {
				return
			}
			s = s[min(i+1, len(s)):]
		}
	}
}

// builder gathers lists in document order.
type builder struct {
	lists map[string]*listBuilder
	slab  []listBuilder // lists not yet used (newList)
}

// listBuilder is a key's list being built (Build) or merged (Merge).
type listBuilder struct {
	title   bool  // a title key: lengths are the title's
	cur     entry // the document being added (Build), then appended
	entries []entry
	pos     []uint32 // the documents' positions, one after another (Build)
	posEnc  []byte   // the positions section, encoded (Merge)
	// Room for a list of one document and two positions, the most
	// common kind: entries and pos start there, allocating nothing.
	oneEntry [1]entry
	twoPos   [2]uint32
}

// newList returns a new list, from a slab of them: most of a segment's
// keys are in one document or two, and a list allocated alone costs more
// than the rest of its building.
func (b *builder) newList(title bool) *listBuilder {
	if len(b.slab) == 0 {
		b.slab = make([]listBuilder, 1024)
	}
	l := &b.slab[0]
	b.slab = b.slab[1:]
	l.title = title
	l.entries = l.oneEntry[:0:1]
	l.pos = l.twoPos[:0:2]
	return l
}

// entry is one document of a list being built; count is the number of its
// positions (Build).
type entry struct {
	doc            int64
	tf, len, count int32
}

func appendPositions(dst []byte, pos []uint32) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(pos)))
	prev := uint32(0)
	for _, p := range pos {
		dst = binary.AppendUvarint(dst, uint64(p-prev))
		prev = p
	}
	return dst
}

// encode appends the list's encoding to dst; scratch is reused for the
// positions section, and returned.
func (l *listBuilder) encode(dst, scratch []byte) ([]byte, []byte) {
	dst = binary.AppendUvarint(dst, uint64(len(l.entries)))
	prev := int64(0)
	for _, e := range l.entries {
		dst = binary.AppendUvarint(dst, uint64(e.doc-prev))
		prev = e.doc
	}
	for _, e := range l.entries {
		dst = binary.AppendUvarint(dst, uint64(e.tf))
	}
	for _, e := range l.entries {
		dst = binary.AppendUvarint(dst, uint64(e.len))
	}
	posEnc := l.posEnc
	if l.posEnc == nil {
		scratch = scratch[:0]
		start := 0
		for _, e := range l.entries {
			scratch = appendPositions(scratch, l.pos[start:start+int(e.count)])
			start += int(e.count)
		}
		posEnc = scratch
	}
	dst = binary.AppendUvarint(dst, uint64(len(posEnc)))
	return append(dst, posEnc...), scratch
}

// blocks encodes the lists in key order.
func (b *builder) blocks() []Block {
	type keyed struct {
		key string
		l   *listBuilder
	}
	lists := make([]keyed, 0, len(b.lists))
	for k, l := range b.lists {
		lists = append(lists, keyed{k, l})
	}
	slices.SortFunc(lists, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
	var w blockWriter
	var out []Block
	var list, scratch []byte
	for _, kl := range lists {
		list, scratch = kl.l.encode(list[:0], scratch)
		if blk, ok := w.add(kl.key, list); ok {
			out = append(out, blk)
		}
	}
	if blk, ok := w.flush(); ok {
		out = append(out, blk)
	}
	return out
}

// blockWriter packs keys and lists into blocks of about BlockSize.
type blockWriter struct {
	first string
	n     int
	body  []byte
}

// add appends a key and its list; when that closes the block, it returns
// the block.
func (w *blockWriter) add(key string, list []byte) (Block, bool) {
	if w.n == 0 {
		w.first = key
	}
	w.n++
	w.body = binary.AppendUvarint(w.body, uint64(len(key)))
	w.body = append(w.body, key...)
	w.body = binary.AppendUvarint(w.body, uint64(len(list)))
	w.body = append(w.body, list...)
	if len(w.body) >= BlockSize {
		return w.flush()
	}
	return Block{}, false
}

func (w *blockWriter) flush() (Block, bool) {
	if w.n == 0 {
		return Block{}, false
	}
	data := binary.AppendUvarint(make([]byte, 0, len(w.body)+binary.MaxVarintLen64), uint64(w.n))
	data = append(data, w.body...)
	blk := Block{First: w.first, Data: data}
	w.n, w.body = 0, w.body[:0]
	return blk, true
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
