package sqlite_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/race"
	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/store/sqlite/sqlitetest"
	"github.com/wikid/wikid/internal/wiki"
)

// A merge whose unfinished segment is removed under it (another process
// took it for abandoned: its merge ran past an hour, or its clock is
// ahead) must not publish: its pages would name a segment that does not
// exist and no search would find them.
func TestSearchMergeSegmentRemovedMidway(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	// Once, as the first block of a segment being written goes in, remove
	// that segment as the abandoned-segment cleanup would.
	for _, q := range []string{
		`CREATE TABLE review_fire (x)`,
		`INSERT INTO review_fire VALUES (1)`,
		`CREATE TRIGGER review_cleanup AFTER INSERT ON search_blocks
		WHEN EXISTS (SELECT 1 FROM review_fire) AND (SELECT state FROM search_segments WHERE id = NEW.seg) = 1
		BEGIN
			DELETE FROM search_blocks WHERE seg = NEW.seg;
			DELETE FROM search_segments WHERE id = NEW.seg;
			DELETE FROM review_fire;
		END`,
	} {
		if err := sqlite.Exec(ctx, db, q); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 8 {
		title := fmt.Sprintf("Page %d", i)
		if _, err := db.SavePage(ctx, wiki.SaveRequest{Title: wiki.Title(title), Text: "orchard", SearchText: "orchard", UserName: "U"}); err != nil {
			t.Fatal(err)
		}
	}
	_ = db.MergeSearch(ctx) // may report the lost merge; what matters is what is left
	var dangling int
	if err := sqlite.QueryRow(ctx, db, `SELECT count(*) FROM pages WHERE search_seg <> 0 AND search_seg NOT IN (SELECT id FROM search_segments WHERE state = 0)`, nil, &dangling); err != nil {
		t.Fatal(err)
	}
	hits, err := db.Search(ctx, wiki.SearchQuery{Text: "orchard", Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if dangling != 0 || len(hits) != 8 {
		t.Fatalf("%d pages name a segment that is not live; search finds %d pages, want 8", dangling, len(hits))
	}
}

// A search stops reading the index once its budget is spent: a phrase of
// the commonest words over one large segment must not run for long past
// it.
func TestSearchBudgetHonouredInsideSegment(t *testing.T) {
	switch {
	case testing.Short():
		t.Skip("builds a large index")
	case race.Enabled:
		t.Skip("builds a large index: .ci/run runs it without the race detector")
	}
	ctx := context.Background()
	db := sqlitetest.Open(t)
	words := strings.Fields("the of and to in a is that for it as was with be by on not he this are")
	// Each page: the words over and over, never in the phrase's order.
	var b strings.Builder
	for b.Len() < 24<<10 {
		for _, w := range words {
			b.WriteString(w)
			b.WriteByte(' ')
		}
	}
	text := b.String()
	const pages = 4000
	for start := 0; start < pages; start += 1000 {
		var reqs []wiki.SaveRequest
		for i := start; i < start+1000; i++ {
			reqs = append(reqs, wiki.SaveRequest{Title: wiki.Title(fmt.Sprintf("Page %d", i)), Text: text, SearchText: text, UserName: "U"})
		}
		if _, err := db.ImportPages(ctx, reqs); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.MergeSearch(ctx); err != nil {
		t.Fatal(err)
	}
	// A common word alone: every page of the merged segment is a match,
	// though 20 are wanted.
	// cost runs query q and returns its time and the bytes it allocated.
	cost := func(q string) (time.Duration, uint64) {
		t.Helper()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start := time.Now()
		if _, err := db.Search(ctx, wiki.SearchQuery{Text: q, Limit: 20}); err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		runtime.ReadMemStats(&m1)
		return took, m1.TotalAlloc - m0.TotalAlloc
	}
	for _, q := range []string{"the", "the of and to in a is that"} {
		took, alloc := cost(q)
		t.Logf("%q: took %v, allocated %d KB", q, took, alloc>>10)
	}
	budget := 20 * time.Millisecond
	sqlite.SetSearchBudget(t, budget)
	segs, docs, indexed, _ := sqlite.SearchSegments(ctx, db)
	t.Logf("segments %d docs %d indexed %d", segs, docs, indexed)
	// Sixteen words, reversed: every page holds them all, none in order.
	phrase := make([]string, 16)
	for i := range phrase {
		phrase[i] = words[15-i]
	}
	q := `"` + strings.Join(phrase, " ") + `"`
	_, _ = db.Search(ctx, wiki.SearchQuery{Text: q, Limit: 20}) // warm the block cache
	d, alloc := cost(q)
	t.Logf("took %v, allocated %d MB", d, alloc>>20)
	if d > budget+100*time.Millisecond || alloc > 64<<20 {
		t.Fatalf("search took %v with a budget of %v, allocated %d MB", d, budget, alloc>>20)
	}
}

// The page whose title is the query comes first even when the search's
// budget runs out before the index is read (README: "an exact title
// before all"; a search "ranks what it found").
func TestSearchExactTitleSurvivesBudget(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	for _, title := range []string{"Orchard", "Orchard keeping", "Field"} {
		if _, err := db.SavePage(ctx, wiki.SaveRequest{Title: wiki.Title(title), Text: "an orchard", SearchText: "an orchard", UserName: "U"}); err != nil {
			t.Fatal(err)
		}
	}
	sqlite.SetSearchBudget(t, time.Nanosecond)
	hits, err := db.Search(ctx, wiki.SearchQuery{Text: "orchard", Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Title != "Orchard" {
		t.Fatalf("hits %v with the budget spent at once, want Orchard first", hits)
	}
}

// A block that does not decode (a torn write, a bad disk sector) neither
// fails the searches that read it nor stalls the merges of its tier (the
// plan would pick the same segments again and again): its segment is
// rebuilt from its pages' search jobs.
func TestSearchCorruptBlockRebuilt(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	save := func(i int) {
		t.Helper()
		title := fmt.Sprintf("Page %d", i)
		if _, err := db.SavePage(ctx, wiki.SaveRequest{Title: wiki.Title(title), Text: "orchard", SearchText: "orchard", UserName: "U"}); err != nil {
			t.Fatal(err)
		}
	}
	save(0)
	if err := sqlite.Exec(ctx, db, `UPDATE search_blocks SET data = x'05' WHERE seg = (SELECT min(id) FROM search_segments)`); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 40; i++ {
		save(i)
	}
	mergeErr := db.MergeSearch(ctx)
	segs, _, _, err := sqlite.SearchSegments(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	hits, searchErr := db.Search(ctx, wiki.SearchQuery{Text: "orchard", Limit: 50})
	t.Logf("merge: %v; %d segments; search: %d hits, %v", mergeErr, segs, len(hits), searchErr)
	if searchErr != nil || mergeErr != nil || segs > 16 {
		t.Fatalf("one corrupt block: search error %v, merge error %v, %d segments left unmerged", searchErr, mergeErr, segs)
	}
	var queued int
	if err := sqlite.QueryRow(ctx, db, `SELECT count(*) FROM jobs WHERE kind = 'search' AND dedupe_key = 'search:Page 0' AND state = 'queued'`, nil, &queued); err != nil {
		t.Fatal(err)
	}
	if queued != 1 {
		t.Fatalf("the corrupt segment's page has %d search jobs queued, want 1", queued)
	}
}
