package search

import (
	"context"
	"slices"
	"strings"
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
