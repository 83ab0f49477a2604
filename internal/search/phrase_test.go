package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// A phrase over huge pages of one common word (a 2 MiB page is some
// 500,000 terms) must stop soon after its context is done: checking each
// start position against the words after it is long work per document.
func TestPhraseHugeDocumentsStopsWithContext(t *testing.T) {
	body := "of " + strings.Repeat("the ", 200_000)
	var docs []Doc
	for i := range 4 {
		docs = append(docs, Doc{ID: int64(i + 1), Body: body})
	}
	seg := Build(docs)
	words := append(strings.Fields(strings.Repeat("the ", 15)), "of")
	terms := []Term{{Words: words}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	hits, err := MatchContext(ctx, memReader{seg.Blocks}, terms, false)
	d := time.Since(start)
	t.Logf("%v: %d hits, err %v", d, len(hits), err)
	if d > 200*time.Millisecond {
		t.Fatalf("phrase took %v with a context of 20ms", d)
	}
	// Without a deadline, the answer: no page has "the" before "of".
	start = time.Now()
	hits, err = Match(memReader{seg.Blocks}, terms, false)
	t.Logf("without a deadline: %v", time.Since(start))
	if err != nil || len(hits) != 0 {
		t.Fatalf("hits %v, err %v; want none", hits, err)
	}
}

// newestCalls runs MatchNewest with limit, keep keeping what kept says
// of each call's hits, and returns the hits of each call.
func newestCalls(t *testing.T, r Reader, terms []Term, limit int, kept func(call int, hits []Hit) int) [][]Hit {
	t.Helper()
	var calls [][]Hit
	err := MatchNewest(context.Background(), r, terms, false, limit, func(hits []Hit) (int, error) {
		calls = append(calls, hits)
		return kept(len(calls)-1, hits), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return calls
}

// MatchNewest checks a phrase from the highest-numbered candidates down,
// a turn at a time, until keep has kept limit documents; the turns
// together find what Match finds, each document once, with the same
// frequencies.
func TestMatchNewestPhrase(t *testing.T) {
	var docs []Doc
	for id := int64(1); id <= 500; id++ {
		body := "b x a" // both words, not as the phrase
		switch {
		case id%7 == 0:
			body = "x a b"
		case id%7 == 1:
			body = "a b a b y"
		}
		docs = append(docs, Doc{ID: id, Title: "t", Body: body})
	}
	r := memReader{Build(docs).Blocks}
	terms := []Term{{Words: []string{"a", "b"}}}
	all, err := Match(r, terms, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 500/7+500/7+1 {
		t.Fatalf("Match found %d", len(all))
	}
	byDoc := map[int64]Hit{}
	for _, h := range all {
		byDoc[h.Doc] = h
	}
	// check: each turn's hits increasing, below the turn before, as Match
	// has them; together, each of Match's documents at most once.
	check := func(name string, calls [][]Hit) []int64 {
		t.Helper()
		var got []int64
		below := int64(1 << 62)
		for i, hits := range calls {
			if len(hits) == 0 {
				t.Fatalf("%s: turn %d passed no hits", name, i)
			}
			for j, h := range hits {
				want, ok := byDoc[h.Doc]
				if !ok || h.Len != want.Len || !slices.Equal(h.TF, want.TF) {
					t.Fatalf("%s: turn %d: hit %+v, Match has %+v", name, i, h, want)
				}
				if h.Doc >= below || j > 0 && h.Doc <= hits[j-1].Doc {
					t.Fatalf("%s: turn %d: %v out of order (below %d)", name, i, hitDocs(hits), below)
				}
			}
			below = hits[0].Doc
			got = append(hitDocs(hits), got...)
		}
		return got
	}
	// Keeping every hit: the top 6 candidates hold 2 matches, the 12
	// below them 4 more; nothing below is looked at.
	calls := newestCalls(t, r, terms, 3, func(_ int, hits []Hit) int { return len(hits) })
	if got := check("keep all", calls); len(calls) != 2 || !slices.Equal(got, []int64{483, 484, 490, 491, 497, 498}) {
		t.Fatalf("keep all, %d turns: %v", len(calls), got)
	}
	// Keeping one a turn: three turns.
	calls = newestCalls(t, r, terms, 3, func(_ int, hits []Hit) int { return 1 })
	if check("keep one", calls); len(calls) != 3 {
		t.Fatalf("keep one: %d turns", len(calls))
	}
	// Keeping none (every entry stale, or a filter): every candidate is
	// checked once, and the turns find what Match finds.
	calls = newestCalls(t, r, terms, 3, func(_ int, hits []Hit) int { return 0 })
	if got := check("keep none", calls); !slices.Equal(got, hitDocs(all)) || len(calls) < 3 {
		t.Fatalf("keep none, %d turns: %v, want %v", len(calls), got, hitDocs(all))
	}
	// Every candidate holds the phrase: at every limit, no document is
	// skipped or passed twice at a turn's edge.
	var every []Doc
	for id := int64(1); id <= 100; id++ {
		every = append(every, Doc{ID: id, Body: "a b"})
	}
	re := memReader{Build(every).Blocks}
	allEvery, err := Match(re, terms, false)
	if err != nil || len(allEvery) != 100 {
		t.Fatalf("Match: %d, %v", len(allEvery), err)
	}
	for limit := 1; limit <= 10; limit++ {
		var got []int64
		for _, hits := range newestCalls(t, re, terms, limit, func(int, []Hit) int { return 0 }) {
			got = append(hitDocs(hits), got...)
		}
		if !slices.Equal(got, hitDocs(allEvery)) {
			t.Fatalf("limit %d: %v", limit, got)
		}
		calls := newestCalls(t, re, terms, limit, func(_ int, hits []Hit) int { return len(hits) })
		if len(calls) != 1 || len(calls[0]) != 2*limit || calls[0][0].Doc != int64(100-2*limit+1) {
			t.Fatalf("limit %d, keeping all: %d turns, first %v", limit, len(calls), hitDocs(calls[0]))
		}
	}
	// Without a phrase, or without a limit, every match at once.
	for _, q := range [][]Term{{{Words: []string{"a"}}, {Words: []string{"b"}}}, terms} {
		limit := 3
		if len(q) == 1 {
			limit = 0
		}
		want, _ := Match(r, q, false)
		calls := newestCalls(t, r, q, limit, func(_ int, hits []Hit) int { return 0 })
		if len(calls) != 1 || !slices.Equal(hitDocs(calls[0]), hitDocs(want)) {
			t.Fatalf("%v limit %d: %d turns, want one of %d", q, limit, len(calls), len(want))
		}
	}
}

// skipReader is a memReader whose long lists are read through Skips kept
// across lookups, as a segment cache keeps them.
type skipReader struct {
	memReader
	skips map[string]*Skips
}

func (r skipReader) Lookup(key string) (List, bool, error) {
	l, ok, err := r.memReader.Lookup(key)
	if ok && l.Docs() >= SkipsMin {
		if r.skips[key] == nil {
			r.skips[key] = new(Skips)
		}
		l = l.WithSkips(r.skips[key])
	}
	return l, ok, err
}

// RunsOf through Skips passes the same runs as from the list's start,
// whatever the documents wanted, and Skips made from another list are
// not used.
func TestRunsOfSkips(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	var docs []Doc
	for id := int64(1); id <= 5000; id++ {
		var b strings.Builder
		for range 1 + rnd.IntN(30) {
			b.WriteString([]string{"w ", "x ", "w w ", "y "}[rnd.IntN(4)])
		}
		if id%3 != 0 || id > 4000 && id < 4500 {
			b.WriteString("z z ")
		}
		docs = append(docs, Doc{ID: id, Body: b.String() + "w v"})
	}
	r := memReader{Build(docs).Blocks}
	w, _, _ := r.Lookup("w")
	v, _, _ := r.Lookup("v")
	z, _, _ := r.Lookup("z")
	if w.Docs() != 5000 || v.Docs() != 5000 || z.Docs() != 3500 {
		t.Fatalf("lists of %d, %d and %d documents", w.Docs(), v.Docs(), z.Docs())
	}
	collect := func(l List, want []int64) []string {
		t.Helper()
		var out []string
		if err := l.RunsOf(want, func(doc int64, run []byte) error {
			out = append(out, fmt.Sprint(doc, run))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	sk, zsk := new(Skips), new(Skips)
	for try := range 300 {
		var want []int64
		switch try % 3 {
		case 0: // sparse
			for id := int64(1 + rnd.IntN(200)); id <= 5000; id += int64(1 + rnd.IntN(400)) {
				want = append(want, id)
			}
		case 1: // a range at the top
			for id := int64(5000 - rnd.IntN(300)); id <= 5000; id++ {
				want = append(want, id)
			}
		default: // one document, or none of the list's
			want = []int64{int64(1 + rnd.IntN(5001))}
		}
		if got, plain := collect(w.WithSkips(sk), want), collect(w, want); !slices.Equal(got, plain) {
			t.Fatalf("%v: through Skips %v, from the start %v", want, got, plain)
		}
		// A list with gaps: some wanted documents are not in it.
		if got, plain := collect(z.WithSkips(zsk), want), collect(z, want); !slices.Equal(got, plain) {
			t.Fatalf("z, %v: through Skips %v, from the start %v", want, got, plain)
		}
	}
	// Through Skips, the runs of the last documents are read without
	// those before them: with the middle of the list's positions
	// overwritten, it reads the top as before, where from the start it
	// stops on the broken varints.
	data := slices.Clone(w.data)
	broken, bsk := List{data: data}, new(Skips)
	top := []int64{4990, 5000}
	before := collect(broken.WithSkips(bsk), top)
	for i := len(data) / 4; i < len(data)/2; i++ {
		data[i] = 0xff
	}
	if err := broken.RunsOf(top, func(int64, []byte) error { return nil }); err != ErrCorrupt {
		t.Fatalf("from the start, the broken list: %v, want ErrCorrupt", err)
	}
	if got := collect(broken.WithSkips(bsk), top); !slices.Equal(got, before) || len(got) != 2 {
		t.Fatalf("through Skips, the broken list's top: %v, want %v", got, before)
	}
	// Another list's: ignored.
	if got, plain := collect(v.WithSkips(sk), top), collect(v, top); !slices.Equal(got, plain) {
		t.Fatalf("v through w's Skips: %v, want %v", got, plain)
	}
	// Made by one reader while others wait for them.
	shared := new(Skips)
	want := collect(w, top)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := collect(w.WithSkips(shared), top); !slices.Equal(got, want) {
				t.Errorf("concurrent: %v, want %v", got, want)
			}
		})
	}
	wg.Wait()
}

// A phrase checked from the top through Skips finds, turn by turn, what
// it finds with its positions read once from the start.
func TestMatchNewestPhraseSkips(t *testing.T) {
	var docs []Doc
	for id := int64(1); id <= 3000; id++ {
		body := "b x a a x b"
		if id%7 == 0 || id%500 == 3 {
			body = "x a b a"
		}
		docs = append(docs, Doc{ID: id, Body: body})
	}
	plain := memReader{Build(docs).Blocks}
	skipped := skipReader{plain, map[string]*Skips{}}
	terms := []Term{{Words: []string{"a", "b"}}}
	for _, limit := range []int{1, 3, 20, 500} {
		for name, kept := range map[string]func(int, []Hit) int{
			"all":  func(_ int, hits []Hit) int { return len(hits) },
			"one":  func(int, []Hit) int { return 1 },
			"none": func(int, []Hit) int { return 0 },
		} {
			a := newestCalls(t, plain, terms, limit, kept)
			b := newestCalls(t, skipped, terms, limit, kept)
			if len(a) != len(b) {
				t.Fatalf("limit %d, keep %s: %d turns from the start, %d through Skips", limit, name, len(a), len(b))
			}
			for i := range a {
				if !slices.EqualFunc(a[i], b[i], func(x, y Hit) bool { return x.Doc == y.Doc && slices.Equal(x.TF, y.TF) }) {
					t.Fatalf("limit %d, keep %s, turn %d: %v, through Skips %v", limit, name, i, hitDocs(a[i]), hitDocs(b[i]))
				}
			}
		}
	}
	if len(skipped.skips) != 2 {
		t.Fatalf("%d lists read through Skips, want 2", len(skipped.skips))
	}
}

// A list whose IDs do not increase is corrupt: its Skips are not used.
func TestSkipsRefuseListsOutOfOrder(t *testing.T) {
	var docs []Doc
	for id := int64(1); id <= 2*SkipsMin; id++ {
		docs = append(docs, Doc{ID: id, Body: "w"})
	}
	l, _, _ := memReader{Build(docs).Blocks}.Lookup("w")
	if new(Skips).table(l) == nil {
		t.Fatal("no skip table for a good list")
	}
	bad := List{data: slices.Clone(l.data)}
	d, _ := bad.start()
	d.uvarint() // the count; each delta is one byte
	bad.data[len(bad.data)-len(d.b)+1] = 0
	if new(Skips).table(bad) != nil {
		t.Fatal("a skip table for a list with an ID twice")
	}
}

// MatchNewest's turns, from the start of the lists or through Skips,
// find the top of what Match finds, whatever the documents, the query
// (a phrase, with words and prefixes beside it) and what keep keeps.
func TestMatchNewestAgreesWithMatch(t *testing.T) {
	vocab := []string{"a", "b", "c", "ab", "abc", "bd"}
	rnd := rand.New(rand.NewPCG(5, 6))
	for try := range 500 {
		var docs []Doc
		id := int64(0)
		for range 1 + rnd.IntN(2500) {
			id += 1 + int64(rnd.IntN(3))
			var w []string
			for range 1 + rnd.IntN(10) {
				w = append(w, vocab[rnd.IntN(len(vocab))])
			}
			docs = append(docs, Doc{ID: id, Title: vocab[rnd.IntN(len(vocab))], Body: strings.Join(w, " ")})
		}
		plain := memReader{Build(docs).Blocks}
		var phrase []string
		for range 2 + rnd.IntN(2) {
			phrase = append(phrase, vocab[rnd.IntN(4)])
		}
		terms := []Term{{Words: phrase, Prefix: rnd.IntN(4) == 0}}
		if rnd.IntN(3) == 0 {
			terms = append(terms, Term{Words: []string{vocab[rnd.IntN(len(vocab))]}, Prefix: rnd.IntN(2) == 0})
		}
		all, err := Match(plain, terms, false)
		if err != nil {
			t.Fatal(err)
		}
		byDoc := map[int64]Hit{}
		for _, h := range all {
			byDoc[h.Doc] = h
		}
		limit := 1 + rnd.IntN(20)
		policy := rnd.IntN(3)
		for _, r := range []Reader{plain, skipReader{plain, map[string]*Skips{}}} {
			var got []int64
			kept, below := 0, int64(1<<62)
			err := MatchNewest(context.Background(), r, terms, false, limit, func(hits []Hit) (int, error) {
				for j, h := range hits {
					want, ok := byDoc[h.Doc]
					if !ok || h.Len != want.Len || !slices.Equal(h.TF, want.TF) || h.Doc >= below || j > 0 && h.Doc <= hits[j-1].Doc {
						t.Fatalf("try %d: hit %+v (Match: %+v, below %d)", try, h, want, below)
					}
				}
				below = hits[0].Doc
				got = append(hitDocs(hits), got...)
				k := []int{len(hits), 0, rnd.IntN(len(hits) + 1)}[policy]
				kept += k
				return k, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// The turns found the top of Match's documents, and all of
			// them unless keep had kept limit.
			top := hitDocs(all)[len(all)-len(got):]
			if !slices.Equal(got, top) || kept < limit && len(got) != len(all) {
				t.Fatalf("try %d, %v, limit %d, policy %d: turns found %v, Match %v", try, terms, limit, policy, got, hitDocs(all))
			}
		}
	}
}
