package search

import (
	"context"
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
