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

// MatchNewest checks a phrase from the highest-numbered candidates down
// and stops once limit documents hold it; calls going on below next find
// the rest, the same documents as Match.
func TestMatchNewestPhrase(t *testing.T) {
	var docs []Doc
	for id := int64(1); id <= 500; id++ {
		body := "b x a" // both words, not as the phrase
		if id%7 == 0 {
			body = "x a b"
		}
		docs = append(docs, Doc{ID: id, Title: "t", Body: body})
	}
	r := memReader{Build(docs).Blocks}
	terms := []Term{{Words: []string{"a", "b"}}}
	all, err := Match(r, terms, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 500/7 {
		t.Fatalf("Match found %d, want %d", len(all), 500/7)
	}
	var got []int64
	calls := 0
	for before := int64(0); ; calls++ {
		hits, next, err := MatchNewest(context.Background(), r, terms, false, before, 3)
		if err != nil {
			t.Fatal(err)
		}
		if calls == 0 {
			// The first call checks the top candidates only, and finds
			// at least the 3 newest.
			if next == 0 || len(hits) < 3 || len(hits) > 30 || hits[len(hits)-1].Doc != 497 {
				t.Fatalf("first call: %v, next %d", hitDocs(hits), next)
			}
		}
		for _, h := range hits {
			if before > 0 && h.Doc >= before {
				t.Fatalf("hit %d not below %d", h.Doc, before)
			}
		}
		got = append(hitDocs(hits), got...)
		if next == 0 {
			break
		}
		before = next
	}
	if !slices.Equal(got, hitDocs(all)) || calls < 2 {
		t.Fatalf("in %d calls: %v, want %v", calls+1, got, hitDocs(all))
	}
	// Without a phrase, or without a limit, every match at once.
	for _, q := range [][]Term{{{Words: []string{"a"}}, {Words: []string{"b"}}}, terms} {
		limit := 3
		if len(q) == 1 {
			limit = 0
		}
		hits, next, err := MatchNewest(context.Background(), r, q, false, 0, limit)
		want, _ := Match(r, q, false)
		if err != nil || next != 0 || !slices.Equal(hitDocs(hits), hitDocs(want)) {
			t.Fatalf("%v limit %d: %v next %d (%v), want %v", q, limit, hitDocs(hits), next, err, hitDocs(want))
		}
	}
}
