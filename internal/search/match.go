package search

import (
	"context"
	"math"
	"slices"
)

// Term is one term of a query: its words (analyzer terms) in order, a
// phrase when more than one, the last one a prefix when Prefix.
type Term struct {
	Words  []string
	Prefix bool
}

// Reader reads one segment's lists.
type Reader interface {
	// Lookup returns key's list, if the segment has it.
	Lookup(key string) (List, bool, error)
	// Range calls each for the keys from lo (included) to hi (excluded)
	// in order, until each returns false.
	Range(lo, hi string, each func(key string, l List) bool) error
}

// MaxPrefixKeys bounds the keys one prefix stands for in a segment: the
// first ones in key order are searched.
const MaxPrefixKeys = 2000

// Hit is a document of a segment holding every term of a query: its
// length, and its weighted frequency of each word of the query (the
// terms' words in order, as Words lists them). Its length is the lists'
// (a title's, in titles), or 0 where they leave it to the segment
// (Segment.Lens).
type Hit struct {
	Doc int64
	Len int32
	TF  []int32
}

// Words returns the words of terms in order, as Hit.TF counts them.
func Words(terms []Term) []string {
	var out []string
	for _, t := range terms {
		out = append(out, t.Words...)
	}
	return out
}

// wordList is one word's postings in a segment: a key's list, or for a
// prefix the union of its keys' lists.
type wordList struct {
	key   string // the word's key, with a * for a prefix
	lists []List
	ps    []Posting // increasing Doc, TF summed over lists
}

// Match returns the documents of the segment r reads that hold every
// term, in increasing ID order; with title, the terms of their titles
// (TitleKey).
func Match(r Reader, terms []Term, title bool) ([]Hit, error) {
	return MatchContext(context.Background(), r, terms, title)
}

// checkWork: the positions a phrase looks at between two looks at its
// context.
const checkWork = 1 << 16

// MatchContext is Match, stopping with ctx's error once ctx is done: a
// phrase of common words over a large segment reads every position of
// them, and a query has a budget.
func MatchContext(ctx context.Context, r Reader, terms []Term, title bool) ([]Hit, error) {
	var hits []Hit
	err := MatchNewest(ctx, r, terms, title, 0, func(h []Hit) (int, error) {
		hits = h
		return len(h), nil
	})
	return hits, err
}

// MatchNewest passes the documents MatchContext finds to keep, which
// returns how many of them it keeps. With one phrase in the query and
// limit above 0, the phrase is checked over the highest-numbered
// candidates first (2×limit of them, then twice as many at each turn),
// each turn's matches passed to keep in increasing order, until keep has
// kept limit documents or no candidate is left: a phrase of common words
// has tens of thousands of candidates in a large segment, of which a
// search ranks the newest few. Otherwise keep is called once, with every
// match (several phrases: each checked over the candidates the one before
// kept). The words' positions are read in one pass over their lists
// whatever the turns, or, where the lists can be entered in the middle
// (List.WithSkips), each turn's where they are.
func MatchNewest(ctx context.Context, r Reader, terms []Term, title bool, limit int, keep func([]Hit) (int, error)) error {
	key := func(w string) string { return w }
	if title {
		key = TitleKey
	}
	var words []*wordList
	for _, t := range terms {
		for i, w := range t.Words {
			wl := &wordList{key: key(w)}
			if t.Prefix && i == len(t.Words)-1 {
				wl.key += "*"
				n := 0
				err := r.Range(key(w), PrefixEnd(key(w)), func(_ string, l List) bool {
					wl.lists = append(wl.lists, l)
					n++
					return n < MaxPrefixKeys
				})
				if err != nil {
					return err
				}
			} else {
				l, ok, err := r.Lookup(key(w))
				if err != nil {
					return err
				}
				if ok {
					wl.lists = append(wl.lists, l)
				}
			}
			if len(wl.lists) == 0 {
				return nil // a word the segment lacks: no match
			}
			words = append(words, wl)
		}
	}
	if len(words) == 0 {
		return nil
	}
	// Decode the shortest list first: the candidates only shrink.
	order := make([]int, len(words))
	for i := range order {
		order[i] = i
	}
	size := func(wl *wordList) int {
		n := 0
		for _, l := range wl.lists {
			n += l.Docs()
		}
		return n
	}
	slices.SortStableFunc(order, func(a, b int) int { return size(words[a]) - size(words[b]) })
	var cands []int64 // increasing
	for k, wi := range order {
		if err := ctx.Err(); err != nil {
			return err
		}
		wl := words[wi]
		// The shortest list whole, then each other only where it meets
		// the candidates.
		if err := wl.decode(ctx, cands, k > 0); err != nil {
			return err
		}
		if k == 0 {
			cands = make([]int64, len(wl.ps))
			for i, p := range wl.ps {
				cands[i] = p.Doc
			}
		} else {
			cands = intersect(cands, wl.ps)
		}
		if len(cands) == 0 {
			return nil
		}
	}
	// Phrases: the words must stand one after another.
	var phrases [][]*wordList
	wi := 0
	for _, t := range terms {
		if len(t.Words) > 1 {
			phrases = append(phrases, words[wi:wi+len(t.Words)])
		}
		wi += len(t.Words)
	}
	// holding returns the candidates of cs[lo:hi] in which runs (cs')
	// stand as a phrase.
	holding := func(runs phraseRuns, cs []int64, lo, hi int) ([]int64, error) {
		idx := make([]int, 0, hi-lo)
		for i := lo; i < hi; i++ {
			idx = append(idx, i)
		}
		idx, err := runs.check(ctx, idx)
		if err != nil {
			return nil, err
		}
		out := make([]int64, len(idx))
		for k, i := range idx {
			out[k] = cs[i]
		}
		return out, nil
	}
	if len(phrases) != 1 || limit <= 0 {
		// Each phrase over the candidates the one before kept.
		for _, ws := range phrases {
			runs, err := readPhrase(ctx, cands, ws)
			if err != nil {
				return err
			}
			if cands, err = holding(runs, cands, 0, len(cands)); err != nil || len(cands) == 0 {
				return err
			}
		}
		_, err := keep(hitsOf(cands, words))
		return err
	}
	// The positions of each turn's candidates are read at each turn when
	// every list can be entered near them (Skips, or a short list);
	// otherwise those of all the candidates, once.
	ws := phrases[0]
	var runs phraseRuns
	if slices.ContainsFunc(ws, func(wl *wordList) bool { return !wl.enterable() }) {
		var err error
		if runs, err = readPhrase(ctx, cands, ws); err != nil {
			return err
		}
	}
	kept := 0
	for hi, n := len(cands), 2*limit; hi > 0 && kept < limit; n *= 2 {
		if err := ctx.Err(); err != nil {
			return err
		}
		lo := max(0, hi-n)
		var found []int64
		var err error
		if runs != nil {
			found, err = holding(runs, cands, lo, hi)
		} else {
			var turn phraseRuns
			if turn, err = readPhrase(ctx, cands[lo:hi], ws); err == nil {
				found, err = holding(turn, cands[lo:hi], 0, hi-lo)
			}
		}
		if err != nil {
			return err
		}
		if len(found) > 0 {
			k, err := keep(hitsOf(found, words))
			if err != nil {
				return err
			}
			kept += k
		}
		hi = lo
	}
	return nil
}

// hitsOf returns the hits of docs (increasing), with the words'
// frequencies and the lists' length.
func hitsOf(docs []int64, words []*wordList) []Hit {
	hits := make([]Hit, len(docs))
	tfs := make([]int32, len(docs)*len(words))
	for i, d := range docs {
		hits[i] = Hit{Doc: d, TF: tfs[i*len(words) : (i+1)*len(words) : (i+1)*len(words)]}
	}
	for j, wl := range words {
		// From the first hit's posting: docs may be the top of many.
		k := 0
		at, _ := slices.BinarySearchFunc(wl.ps, docs[0], func(p Posting, d int64) int { return cmpInt(p.Doc, d) })
		for _, p := range wl.ps[at:] {
			for k < len(hits) && hits[k].Doc < p.Doc {
				k++
			}
			if k == len(hits) {
				break
			}
			if hits[k].Doc == p.Doc {
				hits[k].TF[j] = p.TF
				hits[k].Len = p.Len
			}
		}
	}
	return hits
}

// decode sets wl.ps from its lists (with only, those of the documents of
// want), summing a document's frequencies over a prefix's keys.
func (wl *wordList) decode(ctx context.Context, want []int64, only bool) error {
	var ps []Posting
	for i, l := range wl.lists {
		// A prefix (one CJK character: every bigram it starts) stands
		// for up to MaxPrefixKeys lists.
		if i%64 == 63 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var err error
		if only {
			ps, err = l.PostingsOf(ps, want)
		} else {
			ps, err = l.Postings(ps)
		}
		if err != nil {
			return err
		}
	}
	if len(wl.lists) > 1 {
		slices.SortStableFunc(ps, func(a, b Posting) int { return cmpInt(a.Doc, b.Doc) })
		n := 0
		for _, p := range ps {
			if n > 0 && ps[n-1].Doc == p.Doc {
				ps[n-1].TF = min(ps[n-1].TF+p.TF, math.MaxInt32/2)
				continue
			}
			ps[n] = p
			n++
		}
		ps = ps[:n]
	}
	wl.ps = ps
	if wl.ps == nil {
		wl.ps = []Posting{}
	}
	return nil
}

// intersect keeps the documents of cands that ps holds.
func intersect(cands []int64, ps []Posting) []int64 {
	out := cands[:0]
	j := 0
	for _, d := range cands {
		for j < len(ps) && ps[j].Doc < d {
			j++
		}
		if j < len(ps) && ps[j].Doc == d {
			out = append(out, d)
		}
	}
	return out
}

// enterable reports whether the positions of wl's word in a few
// documents can be read without reading those of the documents before
// them: each of its lists has Skips, or is short.
func (wl *wordList) enterable() bool {
	for _, l := range wl.lists {
		if l.skips == nil && l.Docs() >= SkipsMin {
			return false
		}
	}
	return true
}

// runs returns the positions of wl's word in each document of cands, as
// encoded (List.Runs: one run per key of a prefix holding it), indexed
// like cands; the other documents' are skipped. The runs point into the
// blocks: a phrase decodes one document's at a time, so that what it
// holds does not grow with the positions of common words.
func (wl *wordList) runs(cands []int64) ([][][]byte, error) {
	out := make([][][]byte, len(cands))
	// A document's first run goes into one array for all of them: a
	// word that is not a prefix has one run in each.
	first := make([][]byte, len(cands))
	for i := range out {
		out[i] = first[i : i : i+1]
	}
	for _, l := range wl.lists {
		i := 0
		err := l.RunsOf(cands, func(doc int64, run []byte) error {
			for i < len(cands) && cands[i] < doc {
				i++
			}
			if i == len(cands) || cands[i] != doc {
				return ErrCorrupt
			}
			out[i] = append(out[i], run)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// decodeRuns sets dst to the positions of runs (a document's, one per key
// of a prefix), increasing.
func decodeRuns(dst []uint32, runs [][]byte) ([]uint32, error) {
	dst = dst[:0]
	for _, run := range runs {
		var err error
		if dst, err = decodeRun(dst, run); err != nil {
			return dst, err
		}
	}
	if len(runs) > 1 {
		slices.Sort(dst)
	}
	return dst, nil
}

// decodeRun appends the positions of one document's run (List.Runs).
func decodeRun(dst []uint32, run []byte) ([]uint32, error) {
	d := decoder{b: run}
	n := d.uvarint()
	p := uint32(0)
	for range min(n, uint64(len(run))) {
		p += uint32(d.uvarint())
		dst = append(dst, p)
	}
	if d.err != nil {
		return dst, ErrCorrupt
	}
	return dst, nil
}

// phraseRuns is a phrase's words' positions in each of some candidates
// (wordList.runs), which check reads a part at a time.
type phraseRuns [][][][]byte // by word, then candidate

// readPhrase reads the positions of words (a phrase) in each of cands.
func readPhrase(ctx context.Context, cands []int64, words []*wordList) (phraseRuns, error) {
	runs := make(phraseRuns, len(words))
	for i, wl := range words {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// A word repeated in the phrase is read once.
		for j := range i {
			if words[j].key == wl.key {
				runs[i] = runs[j]
				break
			}
		}
		if runs[i] != nil {
			continue
		}
		var err error
		if runs[i], err = wl.runs(cands); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// check keeps the candidates of idx (indexes into the candidates, in
// order) in which the words stand one after another.
func (runs phraseRuns) check(ctx context.Context, idx []int) ([]int, error) {
	var (
		pos   []uint32 // the word's positions in the document, reused
		at    []uint32 // the phrase's start positions still possible
		work  int      // positions looked at since ctx was
		other []uint32
	)
	out := idx[:0]
	for _, c := range idx {
		if work >= checkWork {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			work = 0
		}
		// The start positions of the phrase, kept while each word stands
		// at its place after them: one pass over each word's positions,
		// where looking each start up in every word's cost the start
		// positions times the words (and a 2 MiB page of one word has
		// half a million of them).
		var err error
		if at, err = decodeRuns(at, runs[0][c]); err != nil {
			return nil, err
		}
		work += len(at)
		for i := 1; i < len(runs) && len(at) > 0; i++ {
			if pos, err = decodeRuns(pos, runs[i][c]); err != nil {
				return nil, err
			}
			work += len(at) + len(pos)
			other = at[:0]
			j := 0
			for _, p := range at {
				want := p + uint32(i)
				for j < len(pos) && pos[j] < want {
					j++
				}
				if j < len(pos) && pos[j] == want {
					other = append(other, p)
				}
			}
			at = other
			if work >= checkWork {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				work = 0
			}
		}
		if len(at) > 0 {
			out = append(out, c)
		}
	}
	return out, nil
}

// BM25 is the Okapi BM25 weight of one word in a document (k1 1.2, b
// 0.75): docs documents hold the word out of total, whose lengths average
// avg.
func BM25(tf, length int32, docs, total int, avg float64) float64 {
	if tf <= 0 {
		return 0
	}
	idf := math.Log((float64(total)-float64(docs)+0.5)/(float64(docs)+0.5) + 1)
	const k1, b = 1.2, 0.75
	f := float64(tf)
	norm := 1.0
	if avg > 0 {
		norm = 1 - b + b*float64(length)/avg
	}
	return idf * f * (k1 + 1) / (f + k1*norm)
}
