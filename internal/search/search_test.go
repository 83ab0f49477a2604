package search

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// memReader reads a segment held in memory.
type memReader struct{ blocks []Block }

func (m memReader) block(key string) int {
	i, _ := slices.BinarySearchFunc(m.blocks, key, func(b Block, k string) int { return strings.Compare(b.First, k) })
	if i < len(m.blocks) && m.blocks[i].First == key {
		return i
	}
	return i - 1
}

func (m memReader) Lookup(key string) (List, bool, error) {
	i := m.block(key)
	if i < 0 {
		return List{}, false, nil
	}
	return Lookup(m.blocks[i].Data, key)
}

func (m memReader) Range(lo, hi string, each func(string, List) bool) error {
	for i := max(m.block(lo), 0); i < len(m.blocks) && m.blocks[i].First < hi; i++ {
		done, err := Range(m.blocks[i].Data, lo, hi, each)
		if err != nil || done {
			return err
		}
	}
	return nil
}

func source(blocks []Block) BlockSource {
	return func() ([]byte, error) {
		if len(blocks) == 0 {
			return nil, nil
		}
		b := blocks[0].Data
		blocks = blocks[1:]
		return b, nil
	}
}

func hitDocs(hits []Hit) []int64 {
	var out []int64
	for _, h := range hits {
		out = append(out, h.Doc)
	}
	return out
}

func TestBuildAndMatch(t *testing.T) {
	seg := Build([]Doc{
		{ID: 3, Title: "quick fox", Body: "the quick brown fox jump over the lazi dog"},
		{ID: 1, Title: "dog", Body: "a dog is not a fox"},
		{ID: 7, Title: "brown bear", Body: "bear are brown and quick"},
	})
	if seg.Docs != 3 || seg.MinDoc != 1 || seg.MaxDoc != 7 || seg.Tokens != 2+9+1+6+2+5 {
		t.Fatalf("segment totals = %+v", seg)
	}
	r := memReader{seg.Blocks}
	for _, tc := range []struct {
		terms []Term
		title bool
		want  []int64
	}{
		{[]Term{{Words: []string{"fox"}}}, false, []int64{1, 3}},
		{[]Term{{Words: []string{"fox"}}}, true, []int64{3}},
		{[]Term{{Words: []string{"quick", "brown"}}}, false, []int64{3}},
		{[]Term{{Words: []string{"brown", "quick"}}}, false, nil},
		{[]Term{{Words: []string{"brown"}}, {Words: []string{"quick"}}}, false, []int64{3, 7}},
		{[]Term{{Words: []string{"fox", "the"}}}, false, nil}, // no phrase from title into text
		{[]Term{{Words: []string{"qui"}, Prefix: true}}, false, []int64{3, 7}},
		{[]Term{{Words: []string{"lazi", "do"}, Prefix: true}}, false, []int64{3}},
		{[]Term{{Words: []string{"b"}, Prefix: true}}, true, []int64{7}},
		{[]Term{{Words: []string{"zebra"}}}, false, nil},
	} {
		hits, err := Match(r, tc.terms, tc.title)
		if err != nil {
			t.Fatal(err)
		}
		if got := hitDocs(hits); !slices.Equal(got, tc.want) {
			t.Errorf("Match(%+v, title %v) = %v, want %v", tc.terms, tc.title, got, tc.want)
		}
	}
	// The documents' lengths are the segment's; a title key's list has
	// the title's.
	if !slices.Equal(seg.Lens, []int32{7, 11, 7}) {
		t.Errorf("lengths %v, want [7 11 7]", seg.Lens)
	}
	hits, _ := Match(r, []Term{{Words: []string{"fox"}}}, false)
	if hits[0].TF[0] != 1 || hits[1].TF[0] != TitleWeight+1 || hits[1].Len != 0 {
		t.Errorf("fox hits = %+v", hits)
	}
	if hits, _ := Match(r, []Term{{Words: []string{"fox"}}}, true); len(hits) != 1 || hits[0].Len != 2 {
		t.Errorf("fox title hits = %+v", hits)
	}
	// The second word's list is read only where it meets the first's.
	hits, _ = Match(r, []Term{{Words: []string{"fox"}}, {Words: []string{"the"}}}, false)
	if len(hits) != 1 || hits[0].TF[0] != TitleWeight+1 || hits[0].TF[1] != 2 || hits[0].Len != 0 {
		t.Errorf("fox the hits = %+v", hits)
	}
	// A segment written before, with lengths in every list, reads as
	// before.
	checkMarkers(t, seg.Blocks)
	old := memReader{withLengths(t, seg, []int64{1, 3, 7})}
	hits, _ = Match(old, []Term{{Words: []string{"fox"}}, {Words: []string{"the"}}}, false)
	if len(hits) != 1 || hits[0].TF[0] != TitleWeight+1 || hits[0].TF[1] != 2 || hits[0].Len != 11 {
		t.Errorf("fox the hits in the old format = %+v", hits)
	}
	hits, _ = Match(r, []Term{{Words: []string{"the"}}, {Words: []string{"lazi"}}, {Words: []string{"b"}, Prefix: true}}, false)
	if len(hits) != 1 || hits[0].Doc != 3 || !slices.Equal(hits[0].TF, []int32{2, 1, 1}) {
		t.Errorf("the lazi b* hits = %+v", hits)
	}
}

// A random corpus, cut into segments, merged, and matched: the same
// documents as matching each document's terms directly.
func TestMergeKeepsCurrentEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
	text := func(n int) string {
		var w []string
		for range n {
			w = append(w, vocab[rng.IntN(len(vocab))])
		}
		return strings.Join(w, " ")
	}
	current := map[int64]Doc{}
	owner := map[int64]int{}
	var segs []Segment
	var built [][]int64 // each segment's document IDs
	for s := range 5 {
		var docs []Doc
		var ids []int64
		for range 40 {
			id := int64(1 + rng.IntN(100))
			if slices.ContainsFunc(docs, func(d Doc) bool { return d.ID == id }) {
				continue
			}
			d := Doc{ID: id, Title: text(2), Body: text(1 + rng.IntN(3000))}
			docs = append(docs, d)
			ids = append(ids, id)
			current[id], owner[id] = d, s
		}
		segs = append(segs, Build(docs))
		built = append(built, ids)
	}
	for id := range current {
		if rng.IntN(10) == 0 {
			delete(current, id) // deleted: no segment keeps it
			delete(owner, id)
		}
	}
	// Each segment's lengths by document ID.
	lens := make([]map[int64]int32, len(segs))
	for i, s := range segs {
		lens[i] = map[int64]int32{}
		for j, id := range slices.Sorted(slices.Values(built[i])) {
			lens[i][id] = s.Lens[j]
		}
	}
	remap := func(seg int, doc int64) int64 {
		if o, ok := owner[doc]; ok && o == seg {
			return doc
		}
		return 0
	}
	length := func(seg int, doc int64) int32 { return lens[seg][doc] }
	merge := func(segs []Segment) (Segment, []Block) {
		var srcs []BlockSource
		for _, s := range segs {
			srcs = append(srcs, source(s.Blocks))
		}
		var merged []Block
		total, err := Merge(srcs, 100, remap, length, func(b Block) error { merged = append(merged, b); return nil })
		if err != nil {
			t.Fatal(err)
		}
		return total, merged
	}
	total, merged := merge(segs)
	if total.Docs != len(current) {
		t.Fatalf("merged docs = %d, want %d", total.Docs, len(current))
	}
	if len(merged) < 2 {
		t.Fatalf("merged into %d blocks: the test should cross blocks", len(merged))
	}
	checkMarkers(t, merged)
	// A title match has its title's length, from the title key's list.
	hits, err := Match(memReader{merged}, []Term{{Words: []string{"e"}, Prefix: true}}, true)
	if err != nil || len(hits) == 0 {
		t.Fatalf("title hits %v, %v", hits, err)
	}
	for _, h := range hits {
		if want := int32(len(strings.Fields(current[h.Doc].Title))); h.Len != want {
			t.Fatalf("title length of %d = %d, want %d", h.Doc, h.Len, want)
		}
	}
	for id := int64(1); id <= 100; id++ {
		var want int32
		if d, ok := current[id]; ok {
			want = int32(len(strings.Fields(d.Title)) + len(strings.Fields(d.Body)))
		}
		if total.Lens[id-1] != want {
			t.Fatalf("merged length of %d = %d, want %d", id, total.Lens[id-1], want)
		}
	}
	// Segments written before, with lengths in every list, merge into the
	// same blocks, whichever of them are old.
	mixed := slices.Clone(segs)
	for i := range mixed {
		if i%2 == 0 {
			mixed[i].Blocks = withLengths(t, mixed[i], built[i])
		}
	}
	if _, again := merge(mixed); !slices.EqualFunc(again, merged, func(a, b Block) bool {
		return a.First == b.First && string(a.Data) == string(b.Data)
	}) {
		t.Fatal("merging old-format segments wrote other blocks")
	}
	r := memReader{merged}
	for _, q := range [][]Term{
		{{Words: []string{"alpha"}}},
		{{Words: []string{"alpha", "beta"}}},
		{{Words: []string{"gamma"}}, {Words: []string{"eta", "theta", "zeta"}}},
		{{Words: []string{"e"}, Prefix: true}},
	} {
		hits, err := Match(r, q, false)
		if err != nil {
			t.Fatal(err)
		}
		var want []int64
		for id, d := range current {
			s := " " + d.Title + " \x00 " + d.Body + " "
			ok := true
			for _, term := range q {
				p := " " + strings.Join(term.Words, " ")
				if !term.Prefix {
					p += " "
				}
				ok = ok && strings.Contains(s, p)
			}
			if ok {
				want = append(want, id)
			}
		}
		slices.Sort(want)
		if got := hitDocs(hits); !slices.Equal(got, want) {
			t.Errorf("%v: got %v, want %v", q, got, want)
		}
	}
}

func TestCorruptBlocks(t *testing.T) {
	seg := Build([]Doc{{ID: 1, Title: "a", Body: strings.Repeat("word ", 100)}})
	data := seg.Blocks[0].Data
	for i := range len(data) {
		b := slices.Clone(data[:i])
		// Whatever a cut block holds, reading it returns or errors.
		_ = Entries(b, func(k string, l List) bool {
			_, _ = l.Postings(nil)
			_, _ = l.Runs(nil)
			return true
		})
	}
}

func BenchmarkBuild(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var docs []Doc
	for i := range 1000 {
		var w []string
		for range 500 {
			w = append(w, fmt.Sprintf("w%d", int(rng.ExpFloat64()*2000)))
		}
		docs = append(docs, Doc{ID: int64(i + 1), Title: "page " + w[0], Body: strings.Join(w, " ")})
	}
	b.ResetTimer()
	for range b.N {
		Build(docs)
	}
}

// decodeList returns l's postings and their runs of positions.
func decodeList(t *testing.T, l List) ([]Posting, [][]byte) {
	t.Helper()
	ps, err := l.Postings(nil)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := l.Runs(nil)
	if err != nil {
		t.Fatal(err)
	}
	return ps, runs
}

// checkMarkers checks that the lists of blocks are as Block says: a
// text key's without lengths, a title key's with them.
func checkMarkers(t *testing.T, blocks []Block) {
	t.Helper()
	for _, b := range blocks {
		if err := Entries(b.Data, func(key string, l List) bool {
			if _, lens := l.start(); lens != IsTitleKey(key) {
				t.Fatalf("%q: list with lengths %v", key, lens)
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// withLengths returns seg's blocks as segments were written before their
// lengths table: every list with its documents' lengths. ids are the
// IDs of the documents seg was built of.
func withLengths(t *testing.T, seg Segment, ids []int64) []Block {
	t.Helper()
	ids = slices.Sorted(slices.Values(ids))
	length := map[int64]int32{}
	for j, id := range ids {
		length[id] = seg.Lens[j]
	}
	var w blockWriter
	var out []Block
	for _, b := range seg.Blocks {
		if err := Entries(b.Data, func(key string, l List) bool {
			ps, runs := decodeList(t, l)
			lb := listBuilder{posEnc: []byte{}}
			for j, p := range ps {
				if p.Len == 0 {
					p.Len = length[p.Doc]
				}
				lb.entries = append(lb.entries, entry{doc: p.Doc, tf: p.TF, len: p.Len})
				lb.posEnc = append(lb.posEnc, runs[j]...)
			}
			enc, _ := lb.encode(nil, nil, true)
			if blk, ok := w.add(key, enc); ok {
				out = append(out, blk)
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
	}
	if blk, ok := w.flush(); ok {
		out = append(out, blk)
	}
	return out
}

// Build's lists are those of the documents read plainly: for every key,
// its documents in ID order, with their weighted term frequency, the
// length their entry records and their positions; and its totals. The
// documents come out of ID order, repeat terms in the title and the text,
// and hold enough keys that the builder's table grows several times; then
// a few small cases: no document, one without terms, spaces doubled.
func TestBuildLists(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	word := func() string { return fmt.Sprintf("w%d", int(rng.ExpFloat64()*3000)) }
	var docs []Doc
	for i := range 300 {
		var title, body []string
		for range rng.IntN(4) {
			title = append(title, word())
		}
		for range rng.IntN(200) {
			body = append(body, word())
		}
		docs = append(docs, Doc{ID: int64(1000 - 3*i), Title: strings.Join(title, " "), Body: strings.Join(body, " ")})
	}
	for _, docs := range [][]Doc{
		docs,
		nil,
		{{ID: 7}},
		{{ID: 7, Title: "a a", Body: "a  b a "}},
		{{ID: 9, Body: "x"}, {ID: 4, Title: "x y"}, {ID: 5}},
		// Keys alike in their first 16 bytes (termKey.head), or but for
		// their length.
		{
			{ID: 3, Title: "abcdefghijklmnop abcdefghijklmnopq", Body: "abcdefghijklmnopq abcdefghijklmnopr abcdefghijklmno abcdefghijklmnop " +
				"abcdefghijklmnopqrstuvwxyz0123456789 abcdefghijklmnopqrstuvwxyz0123456788 a"},
			{ID: 8, Body: "abcdefghijklmnopr a\x00 a abcdefghijklmnop\x00 abcdefghijklmnopqrstuvwxyz0123456789"},
		},
	} {
		checkBuild(t, docs)
	}
}

func checkBuild(t *testing.T, docs []Doc) {
	t.Helper()
	type occ struct {
		tf, len int32
		pos     []uint32
	}
	want := map[string]map[int64]*occ{}
	add := func(key string, doc int64, pos uint32, weight, length int32) {
		if want[key] == nil {
			want[key] = map[int64]*occ{}
		}
		o := want[key][doc]
		if o == nil {
			o = &occ{len: length}
			want[key][doc] = o
		}
		o.tf += weight
		o.pos = append(o.pos, pos)
	}
	var tokens int64
	for _, d := range docs {
		title, body := strings.Fields(d.Title), strings.Fields(d.Body)
		length := int32(len(title) + len(body))
		tokens += int64(length)
		for i, w := range title {
			add(w, d.ID, uint32(i), TitleWeight, length)
			add(TitleKey(w), d.ID, uint32(i), 1, int32(len(title)))
		}
		for i, w := range body {
			add(w, d.ID, uint32(len(title)+1+i), 1, length)
		}
	}
	seg := Build(docs)
	var keys []string
	for _, b := range seg.Blocks {
		err := Entries(b.Data, func(key string, l List) bool {
			keys = append(keys, key)
			ps, runs := decodeList(t, l)
			if len(ps) != len(want[key]) {
				t.Fatalf("%q: %d documents, want %d", key, len(ps), len(want[key]))
			}
			for j, p := range ps {
				o := want[key][p.Doc]
				if o == nil || (j > 0 && ps[j-1].Doc >= p.Doc) {
					t.Fatalf("%q: document %d unexpected or out of order", key, p.Doc)
				}
				pos, err := decodeRun(nil, runs[j])
				if err != nil {
					t.Fatal(err)
				}
				wantLen := o.len // a title key's list has the title's
				if !IsTitleKey(key) {
					wantLen = 0 // the segment's (seg.Lens)
				}
				if p.TF != o.tf || p.Len != wantLen || !slices.Equal(pos, o.pos) {
					t.Fatalf("%q in %d: tf %d len %d positions %v, want %d %d %v", key, p.Doc, p.TF, p.Len, pos, o.tf, o.len, o.pos)
				}
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	wantKeys := slices.Sorted(maps.Keys(want))
	if !slices.Equal(keys, wantKeys) {
		t.Fatalf("keys %q, want %q", keys, wantKeys)
	}
	ids := make([]int64, len(docs))
	lens := map[int64]int32{}
	for i, d := range docs {
		ids[i] = d.ID
		lens[d.ID] = int32(len(strings.Fields(d.Title)) + len(strings.Fields(d.Body)))
	}
	slices.Sort(ids)
	if len(seg.Lens) != len(ids) {
		t.Fatalf("%d lengths for %d documents", len(seg.Lens), len(ids))
	}
	for i, id := range ids {
		if seg.Lens[i] != lens[id] {
			t.Fatalf("length of %d = %d, want %d", id, seg.Lens[i], lens[id])
		}
	}
	var minDoc, maxDoc int64
	if len(ids) > 0 {
		minDoc, maxDoc = slices.Min(ids), slices.Max(ids)
	}
	if seg.Docs != len(docs) || seg.Tokens != tokens || seg.MinDoc != minDoc || seg.MaxDoc != maxDoc {
		t.Fatalf("segment totals %d docs, %d tokens, %d..%d; want %d, %d, %d..%d", seg.Docs, seg.Tokens, seg.MinDoc, seg.MaxDoc, len(docs), tokens, minDoc, maxDoc)
	}
}

// skipVarints, eight bytes at a time, stops where one byte at a time
// does, and fails where it does, at every count of every length.
func TestSkipVarints(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b []byte
		for range rnd.IntN(40) {
			b = binary.AppendUvarint(b, rnd.Uint64N(1<<uint(rnd.IntN(40))))
		}
		if rnd.IntN(4) == 0 && len(b) > 0 {
			b[len(b)-1] |= 0x80 // cut short
		}
		for n := range uint64(45) {
			want, wantOK := b, true
			for k := n; k > 0; {
				if len(want) == 0 {
					want, wantOK = nil, false
					break
				}
				if want[0] < 0x80 {
					k--
				}
				want = want[1:]
			}
			got, ok := skipVarints(b, n)
			if ok != wantOK || ok && len(got) != len(want) {
				t.Fatalf("%x, %d: got %d bytes left (%v), want %d (%v)", b, n, len(got), ok, len(want), wantOK)
			}
		}
	}
}

// The term table tells keys apart by their bytes, not their hashes: keys
// alike in their first 16 bytes, or but for their length, or in all but
// their last byte, hashed alike, keep numbers of their own.
func TestTermTableKeysOfOneHash(t *testing.T) {
	keys := []string{"a", "a\x00", "abcdefghijklmnop", "abcdefghijklmnop\x00", "abcdefghijklmnopq",
		"abcdefghijklmnopr", "abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz0123456788", ""}
	tab := newTermTable()
	for round := range 2 {
		for i, k := range keys {
			if n := tab.countHashed(k, 42, int32(round)); n != int32(i) {
				t.Fatalf("round %d: %q numbered %d, want %d", round, k, n, i)
			}
		}
	}
	for i, k := range tab.keys {
		if c := tab.counts[i]; k.key != keys[i] || c.n != 2 || c.docs != 2 {
			t.Fatalf("key %d: %q counted %d times in %d documents, want %q twice in 2", i, k.key, c.n, c.docs, keys[i])
		}
	}
	// The words of BuildText alike, each under its term's key: two words
	// of one term share it.
	tab = newTermTable()
	words := newWordTable(tab.seed)
	term := func(w []byte) string { return strings.TrimSuffix(string(w), "s") }
	for round := range 2 {
		for _, k := range append(keys, "abcdefghijklmnopqrstuvwxyz0123456789s") {
			n := words.countHashed([]byte(k), 42, term, tab, int32(2+round))
			if want := int32(slices.Index(keys, term([]byte(k)))); n != want {
				t.Fatalf("round %d: word %q numbered %d, want %d", round, k, n, want)
			}
		}
	}
	if len(tab.keys) != len(keys) || len(words.words) != len(keys)+1 {
		t.Fatalf("%d keys for %d words, want %d for %d", len(tab.keys), len(words.words), len(keys), len(keys)+1)
	}
	for i, k := range tab.keys {
		want := int32(2)
		if i == 6 {
			want = 4 // and its plural
		}
		if c := tab.counts[i]; k.key != keys[i] || c.n != want || c.docs != 2 {
			t.Fatalf("key %d: %q counted %d times in %d documents, want %q %d times in 2", i, k.key, c.n, c.docs, keys[i], want)
		}
	}
}
