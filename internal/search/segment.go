// Package search is Wikid's own full-text index: immutable segments of
// postings, built in Go from the analyzer's terms (store.IndexText, or
// the texts themselves with the analyzer: BuildText) beside the writer of
// the pages they index, stored by a backend as a few large blocks, and
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
	"hash/maphash"
	"slices"
	"strings"
)

// Doc is one document's entry: its ID (a page ID, above zero) and the
// terms of its title and text, each as store.IndexText returns them
// (terms separated by single spaces); for BuildText, Body is the text.
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
	// Lens are its documents' lengths in terms (title and text), in
	// increasing ID order: what the lists of text keys leave out. Merge
	// returns those of documents 1 to its docs.
	Lens []int32
}

// Block is a run of keys with their lists, in key order: First is its
// first key, by which a backend finds it.
//
// Encoding: uvarint count, then per key uvarint length, the key, uvarint
// length, its list. A list: uvarint n (documents), n uvarint document ID
// deltas (the first ID whole, increasing), n uvarint term frequencies
// (weighted), n uvarint document lengths, uvarint length of the positions
// section, then per document uvarint count and count uvarint position
// deltas (the first whole). A list of a key of the text is preceded by a
// zero byte and has no lengths section: they are the documents' own,
// which the segment keeps once each (Segment.Lens), where they made a
// fifth of its bytes. A title key's list has them: a title's length.
// Segments written before have lengths in every list, and no table.
type Block struct {
	First string
	Data  []byte
}

// ErrCorrupt reports a block or list that does not decode.
var ErrCorrupt = errors.New("search: corrupt index block")

// Build makes a segment of docs, whose IDs must differ.
//
// It reads the documents' keys twice. The first pass numbers each key
// (termTable, whose keys but the title keys stay in the documents'
// strings, or in the analyzer's for BuildText) and counts its documents and positions; the second places the
// entries and positions into one array each, every key's run after the
// one before. An import's batch has millions of occurrences of tens of
// thousands of keys, most of them seen again only pages later: with a Go
// map of strings and a list per key grown by appends, a batch of 4,000
// pages took 1.3 to 1.9 times as long to build and allocated 1.8 times as
// much.
func Build(docs []Doc) Segment { return build(docs, nil) }

// Analyzer is how BuildText makes a text's terms (the store's analyzer:
// store.IndexTokens and store.WordTerm).
type Analyzer struct {
	// Tokens calls yield with text's terms in order, but for its words,
	// which it yields as they are (term "", word not nil, valid during
	// the call only) for Term to make terms of.
	Tokens func(text string, yield func(term string, word []byte))
	Term   func(word []byte) string
}

// BuildText is Build of documents whose Body is their text, not its
// terms, which it makes with a. A word of the batch's texts is made a
// term once, when it is first met, where making each text's terms apart
// looked each word up in the analyzer's tables of stems, then joined
// them into a string that Build read again: a batch of pages builds in
// about half the time (an import of 100,000 pages: 25 s of CPU, where
// the analyzer's and Build's took 46 s). Title is terms, as Build's.
func BuildText(docs []Doc, a Analyzer) Segment { return build(docs, &a) }

func build(docs []Doc, a *Analyzer) Segment {
	docs = slices.Clone(docs)
	slices.SortFunc(docs, func(a, b Doc) int { return cmpInt(a.ID, b.ID) })
	tab := newTermTable()
	var words *wordTable
	if a != nil {
		words = newWordTable(tab.seed)
	}
	type docLen struct{ title, body int32 }
	lens := make([]docLen, len(docs))
	size := 0
	for _, d := range docs {
		size += len(d.Title) + len(d.Body)
	}
	// The occurrences' keys in document order: a title's term is two, its
	// key and its title key, at the same position.
	occ := make([]int32, 0, size/6)
	for di, d := range docs {
		var l docLen
		for t := range fields(d.Title) {
			occ = append(occ, tab.count(t, int32(di)), tab.count(TitleKey(t), int32(di)))
			l.title++
		}
		if a == nil {
			for t := range fields(d.Body) {
				occ = append(occ, tab.count(t, int32(di)))
				l.body++
			}
		} else {
			a.Tokens(d.Body, func(term string, word []byte) {
				if word != nil {
					occ = append(occ, words.count(word, a.Term, tab, int32(di)))
				} else {
					occ = append(occ, tab.count(term, int32(di)))
				}
				l.body++
			})
		}
		lens[di] = l
	}
	var nent, npos int32
	tab.runs = make([]keyRun, len(tab.keys))
	for i, c := range tab.counts {
		tab.runs[i] = keyRun{entAt: nent, posAt: npos, last: -1}
		nent += c.docs
		npos += c.n
	}
	entries := make([]entry, nent)
	pos := make([]uint32, npos)
	seg := Segment{Lens: make([]int32, 0, len(docs))}
	o := 0
	for di, d := range docs {
		l := lens[di]
		length := l.title + l.body // the title's terms and the text's
		at := uint32(0)            // position
		for range l.title {
			tab.place(occ[o], int32(di), d.ID, at, TitleWeight, length, entries, pos)
			tab.place(occ[o+1], int32(di), d.ID, at, 1, l.title, entries, pos)
			o += 2
			at++
		}
		at++ // a gap: a phrase does not run from the title into the text
		for range l.body {
			tab.place(occ[o], int32(di), d.ID, at, 1, length, entries, pos)
			o++
			at++
		}
		seg.Docs++
		seg.Tokens += int64(length)
		seg.Lens = append(seg.Lens, length)
		if seg.MinDoc == 0 || d.ID < seg.MinDoc {
			seg.MinDoc = d.ID
		}
		seg.MaxDoc = max(seg.MaxDoc, d.ID)
	}
	seg.Blocks = tab.blocks(entries, pos)
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

// termTable numbers the keys of a segment being built: an open-addressing
// hash table (linear probing, at most half full) of indexes into keys.
type termTable struct {
	seed   maphash.Seed
	slots  []int32 // 1 + a key's index; 0: empty
	keys   []termKey
	counts []keyCount // the keys' counts, in the first pass
	runs   []keyRun   // the keys' runs, made after the first pass
}

// termKey is a key of a segment being built (Build), as the first pass
// counts it (the second places it through its keyRun).
type termKey struct {
	hash uint64
	key  string
	// head is the key's first 16 bytes (zeros after a shorter key's end):
	// a key of up to 16 bytes, most of them, is compared here, without
	// reading its bytes where they stand in an earlier document's terms.
	head [2]uint64
}

// keyCount is what the first pass of Build counts of a key, apart from
// termKey (under a third of its size): a word of a text (BuildText) reaches its
// key's count through its own entry (wordTable), without reading the key.
type keyCount struct {
	docs int32 // documents holding it
	n    int32 // positions
	last int32 // the document last counted
}

// keyRun is where the second pass of Build places a key's entries and
// positions, apart from termKey: under a third of its size, so that the
// scattered writes of that pass read less memory.
type keyRun struct {
	last int32 // the document last placed
	// Where its next entry and position go; after the pass, the end of
	// its runs (blocks).
	entAt int32
	posAt int32
}

func newTermTable() *termTable {
	return &termTable{seed: maphash.MakeSeed(), slots: make([]int32, 1<<12)}
}

// count counts an occurrence of key in document doc and returns the key's
// number.
func (t *termTable) count(key string, doc int32) int32 {
	return t.countHashed(key, maphash.String(t.seed, key), doc)
}

// countHashed is count of a key whose hash is h.
func (t *termTable) countHashed(key string, h uint64, doc int32) int32 {
	head := keyHead(key)
	k, slot, found := t.lookup(key, h, head)
	if found {
		return t.countKey(k, doc)
	}
	return t.add(termKey{hash: h, key: key, head: head}, slot, keyCount{docs: 1, n: 1, last: doc})
}

// key returns the number of key, adding it uncounted if it is new.
func (t *termTable) key(key string) int32 {
	h, head := maphash.String(t.seed, key), keyHead(key)
	k, slot, found := t.lookup(key, h, head)
	if found {
		return k
	}
	return t.add(termKey{hash: h, key: key, head: head}, slot, keyCount{last: -1})
}

// lookup finds key, whose hash is h and head head: its number, or else
// the free slot where it goes.
func (t *termTable) lookup(key string, h uint64, head [2]uint64) (k int32, slot uint64, found bool) {
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for {
		s := t.slots[i]
		if s == 0 {
			return 0, i, false
		}
		if is(&t.keys[s-1], h, head, key) {
			return s - 1, 0, true
		}
		i = (i + 1) & mask
	}
}

// add adds key in the free slot lookup found, with its counts so far,
// and returns its number.
func (t *termTable) add(key termKey, slot uint64, c keyCount) int32 {
	t.keys = append(t.keys, key)
	t.counts = append(t.counts, c)
	n := int32(len(t.keys))
	t.slots[slot] = n
	if 2*len(t.keys) > len(t.slots) {
		t.slots = rehash(2*len(t.slots), len(t.keys), func(k int) uint64 { return t.keys[k].hash })
	}
	return n - 1
}

// countKey counts an occurrence of key number k in document doc.
func (t *termTable) countKey(k, doc int32) int32 {
	c := &t.counts[k]
	c.n++
	if c.last != doc {
		c.last = doc
		c.docs++
	}
	return k
}

// wordTable numbers the words of the texts of a segment being built
// (BuildText) by their terms' keys: an open-addressing hash table as
// termTable, of the words met so far. Words of one stem share their key
// (tomato, tomatoes).
type wordTable struct {
	seed  maphash.Seed
	slots []int32 // 1 + a word's index; 0: empty
	words []wordKey
}

type wordKey struct {
	termKey       // the word, hashed as a term's key
	term    int32 // its term's key in the termTable
}

func newWordTable(seed maphash.Seed) *wordTable {
	return &wordTable{seed: seed, slots: make([]int32, 1<<12)}
}

// count counts an occurrence of word in document doc under its term's key
// in tab, made by term when the word is new, and returns the key's number.
func (t *wordTable) count(word []byte, term func([]byte) string, tab *termTable, doc int32) int32 {
	return t.countHashed(word, maphash.Bytes(t.seed, word), term, tab, doc)
}

// countHashed is count of a word whose hash is h.
func (t *wordTable) countHashed(word []byte, h uint64, term func([]byte) string, tab *termTable, doc int32) int32 {
	head := keyHead(word)
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for {
		s := t.slots[i]
		if s == 0 {
			break
		}
		if w := &t.words[s-1]; is(&w.termKey, h, head, word) {
			return tab.countKey(w.term, doc)
		}
		i = (i + 1) & mask
	}
	k := tab.key(term(word))
	t.words = append(t.words, wordKey{termKey{hash: h, key: string(word), head: head}, k})
	t.slots[i] = int32(len(t.words))
	if 2*len(t.words) > len(t.slots) {
		t.slots = rehash(2*len(t.slots), len(t.words), func(w int) uint64 { return t.words[w].hash })
	}
	return tab.countKey(k, doc)
}

// rehash returns size slots (a power of two) holding entries 0 to n-1 of
// a table, placed by their hashes.
func rehash(size, n int, hash func(int) uint64) []int32 {
	slots := make([]int32, size)
	mask := uint64(size - 1)
	for k := range n {
		i := hash(k) & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = int32(k + 1)
	}
	return slots
}

// is reports whether k is key, whose hash is h and head head.
func is[T string | []byte](k *termKey, h uint64, head [2]uint64, key T) bool {
	return k.hash == h && k.head == head && len(k.key) == len(key) && (len(key) <= 16 || k.key[16:] == string(key[16:]))
}

// keyHead returns the first 16 bytes of key, as termKey.head.
func keyHead[T string | []byte](key T) (h [2]uint64) {
	var b [16]byte
	copy(b[:], key)
	h[0] = binary.LittleEndian.Uint64(b[:8])
	h[1] = binary.LittleEndian.Uint64(b[8:])
	return h
}

// place adds key k's occurrence at position at of document doc (the
// doc-th, whose ID is id) to entries and pos, with weight and the length
// its entry records.
func (t *termTable) place(k, doc int32, id int64, at uint32, weight, length int32, entries []entry, pos []uint32) {
	r := &t.runs[k]
	if r.last != doc {
		r.last = doc
		entries[r.entAt] = entry{doc: id, len: length}
		r.entAt++
	}
	e := &entries[r.entAt-1]
	e.tf += weight
	e.count++
	pos[r.posAt] = at
	r.posAt++
}

// blocks encodes the keys' lists in key order, once placed in entries and
// pos.
func (t *termTable) blocks(entries []entry, pos []uint32) []Block {
	type keyed struct {
		key string
		k   int32
	}
	order := make([]keyed, len(t.keys))
	for i := range t.keys {
		order[i] = keyed{t.keys[i].key, int32(i)}
	}
	slices.SortFunc(order, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
	var w blockWriter
	var out []Block
	var l listBuilder
	var list, scratch []byte
	for _, o := range order {
		r := &t.runs[o.k]
		l.entries = entries[r.entAt-t.counts[o.k].docs : r.entAt]
		l.pos = pos[r.posAt-t.counts[o.k].n : r.posAt]
		list, scratch = l.encode(list[:0], scratch, IsTitleKey(o.key))
		if blk, ok := w.add(o.key, list); ok {
			out = append(out, blk)
		}
	}
	if blk, ok := w.flush(); ok {
		out = append(out, blk)
	}
	return out
}

// listBuilder is a key's list being encoded: placed by Build, or merged
// (Merge).
type listBuilder struct {
	entries []entry
	pos     []uint32 // the documents' positions, one after another (Build)
	posEnc  []byte   // the positions section, encoded (Merge)
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

// encode appends the list's encoding to dst, with the entries' lengths
// when lens (a title key's list); scratch is reused for the positions
// section, and returned.
func (l *listBuilder) encode(dst, scratch []byte, lens bool) ([]byte, []byte) {
	if !lens {
		dst = append(dst, noLengths)
	}
	dst = binary.AppendUvarint(dst, uint64(len(l.entries)))
	prev := int64(0)
	for _, e := range l.entries {
		dst = binary.AppendUvarint(dst, uint64(e.doc-prev))
		prev = e.doc
	}
	for _, e := range l.entries {
		dst = binary.AppendUvarint(dst, uint64(e.tf))
	}
	if lens {
		for _, e := range l.entries {
			dst = binary.AppendUvarint(dst, uint64(e.len))
		}
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
