package sqlite_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/store/sqlite/sqlitetest"
	"github.com/wikid/wikid/internal/wiki"
)

// Every edit writes a search segment of its own: merges keep their number
// down, drop the entries edits and deletions made stale, and never change
// what a search finds, also while searches run.
func TestSearchSegmentsMerge(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	words := []string{"apple", "pear", "plum", "cherry", "quince"}
	want := map[string]string{} // title → text now
	save := func(title, text string) {
		t.Helper()
		var base int64
		if p, err := db.FindPage(ctx, wiki.Title(title)); err == nil {
			base = p.LatestID
		}
		if _, err := db.SavePage(ctx, wiki.SaveRequest{Title: wiki.Title(title), Text: text, SearchText: text, UserName: "U", BaseRevID: base}); err != nil {
			t.Fatal(err)
		}
		want[title] = text
	}
	for i := range 120 {
		save(fmt.Sprintf("Page %03d", i), fmt.Sprintf("%s and %s number%d", words[i%5], words[(i+1)%5], i))
	}
	// Edits and deletions make older entries stale.
	for i := 0; i < 120; i += 3 {
		save(fmt.Sprintf("Page %03d", i), fmt.Sprintf("rewritten %s number%d", words[(i+2)%5], i))
	}
	for i := 1; i < 120; i += 10 {
		title := fmt.Sprintf("Page %03d", i)
		if err := db.DeletePage(ctx, wiki.Title(title), 0, "U", "", time.Now()); err != nil {
			t.Fatal(err)
		}
		delete(want, title)
	}
	check := func(when string) {
		t.Helper()
		for _, w := range append(slices.Clone(words), "rewritten", "number7", `"apple and"`, "numb*") {
			var got, exp []string
			for off := 0; ; off += 50 {
				hits, err := db.Search(ctx, wiki.SearchQuery{Text: w, Offset: off, Limit: 50})
				if err != nil {
					t.Fatal(err)
				}
				for _, h := range hits {
					got = append(got, string(h.Title))
				}
				if len(hits) < 50 {
					break
				}
			}
			for title, text := range want {
				q, match := strings.Trim(w, `"*`), false
				switch {
				case strings.HasSuffix(w, "*"):
					match = slices.ContainsFunc(strings.Fields(text), func(f string) bool { return strings.HasPrefix(f, q) })
				default: // a word, or a phrase: words in a row
					match = strings.Contains(" "+text+" ", " "+q+" ")
				}
				if match {
					exp = append(exp, title)
				}
			}
			slices.Sort(got)
			slices.Sort(exp)
			if !slices.Equal(got, exp) {
				t.Fatalf("%s: search %q = %v, want %v", when, w, got, exp)
			}
		}
	}
	check("before merging")
	// Searches run beside the merges.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := db.Search(ctx, wiki.SearchQuery{Text: "apple", Limit: 100}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	if err := db.MergeSearch(ctx); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	check("after merging")
	segs, docs, indexed, err := sqlite.SearchSegments(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if indexed != len(want) {
		t.Errorf("%d pages indexed, want %d", indexed, len(want))
	}
	if segs > 4*(8-1) { // fewer than eight per tier, of at most four tiers here
		t.Errorf("%d segments after merging 160 edits' segments", segs)
	}
	if docs > indexed+indexed/2 {
		t.Errorf("the segments hold %d entries for %d pages: merges keep stale entries", docs, indexed)
	}
}

// A phrase is checked from a segment's newest pages down: when the
// newest of them are stale (edited since), the search goes on below them
// and still finds the newest pages that hold it.
func TestSearchPhraseNewestBelowStale(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	sqlite.SetSearchRare(t, 10)            // both words common: newest first
	sqlite.SetSearchBudget(t, time.Minute) // the same answer on a loaded machine
	var reqs []wiki.SaveRequest
	for i := range 300 {
		text := fmt.Sprintf("red blue page%d", i)
		reqs = append(reqs, wiki.SaveRequest{Title: wiki.Title(fmt.Sprintf("Page %03d", i)), Text: text, SearchText: text, UserName: "U"})
	}
	res, err := db.ImportPages(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	// The newest 150 lose the phrase (their words stay, apart).
	for i := 150; i < 300; i++ {
		text := fmt.Sprintf("blue red page%d", i)
		if _, err := db.SavePage(ctx, wiki.SaveRequest{Title: reqs[i].Title, Text: text, SearchText: text, UserName: "U", BaseRevID: res[i].Revision.ID}); err != nil {
			t.Fatal(err)
		}
	}
	hits, err := db.Search(ctx, wiki.SearchQuery{Text: `"red blue"`, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, string(h.Title))
	}
	var want []string
	for i := 149; i > 129; i-- {
		want = append(want, fmt.Sprintf("Page %03d", i))
	}
	if !slices.Equal(got, want) {
		t.Fatalf(`"red blue" finds %v, want %v`, got, want)
	}
}

// An import batch's segment numbers its documents in the order of its
// requests, not of their pages: a phrase is checked over all of it, and
// the newest page holding it comes first.
func TestSearchPhraseImportBatchOutOfPageOrder(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	sqlite.SetSearchRare(t, 10)
	sqlite.SetSearchBudget(t, time.Minute) // the same answer on a loaded machine
	var reqs []wiki.SaveRequest
	for i := range 300 {
		text := fmt.Sprintf("red blue page%d", i)
		reqs = append(reqs, wiki.SaveRequest{Title: wiki.Title(fmt.Sprintf("Page %03d", i)), Text: text, SearchText: text, UserName: "U"})
	}
	if _, err := db.ImportPages(ctx, reqs); err != nil {
		t.Fatal(err)
	}
	// Second batch: the new page first, then updates of pages 0..99.
	batch := []wiki.SaveRequest{{Title: "Zed", Text: "red blue zed", SearchText: "red blue zed", UserName: "U"}}
	for i := range 100 {
		text := fmt.Sprintf("red blue again%d", i)
		batch = append(batch, wiki.SaveRequest{Title: reqs[i].Title, Text: text, SearchText: text, UserName: "U"})
	}
	if _, err := db.ImportPages(ctx, batch); err != nil {
		t.Fatal(err)
	}
	hits, err := db.Search(ctx, wiki.SearchQuery{Text: `"red blue"`, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, string(h.Title))
	}
	want := []string{"Zed", "Page 299", "Page 298", "Page 297", "Page 296"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// A namespace filter that keeps a few of a phrase's many matches: the
// search goes down the segment, checking more candidates at each turn,
// and finds them all under its budget.
func TestSearchPhraseNamespaceKeepsFew(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	sqlite.SetSearchRare(t, 10)
	sqlite.SetSearchBudget(t, time.Minute) // the same answer on a loaded machine
	var reqs []wiki.SaveRequest
	for i := range 3 {
		text := fmt.Sprintf("red blue help%d", i)
		reqs = append(reqs, wiki.SaveRequest{Title: wiki.Title(fmt.Sprintf("Help:Page %d", i)), Text: text, SearchText: text, UserName: "U"})
	}
	for i := range 3000 {
		text := fmt.Sprintf("red blue page%d", i)
		reqs = append(reqs, wiki.SaveRequest{Title: wiki.Title(fmt.Sprintf("Page %04d", i)), Text: text, SearchText: text, UserName: "U"})
	}
	if _, err := db.ImportPages(ctx, reqs); err != nil {
		t.Fatal(err)
	}
	hits, err := db.Search(ctx, wiki.SearchQuery{Text: `"red blue"`, Limit: 20, Namespaces: []string{"Help"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, string(h.Title))
	}
	if want := []string{"Help:Page 2", "Help:Page 1", "Help:Page 0"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
