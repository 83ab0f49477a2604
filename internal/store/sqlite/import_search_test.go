package sqlite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/cores"
	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/store/sqlite/sqlitetest"
	"github.com/wikid/wikid/internal/wiki"
)

// An import batch saving a title twice indexes its last text only, and
// the others' documents stay their own pages.
func TestImportTitleTwiceSearch(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	var reqs []wiki.SaveRequest
	add := func(title, text string) {
		reqs = append(reqs, wiki.SaveRequest{Title: wiki.Title(title), Text: text, SearchText: text, UserName: "U"})
	}
	for i := range 9 {
		add(fmt.Sprintf("P%d", i), fmt.Sprintf("word%d common", i))
		if i == 4 {
			add("Twice", "firsttext common")
		}
	}
	add("Twice", "secondtext common")
	if _, err := db.ImportPages(ctx, reqs); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]int{"firsttext": 0, "secondtext": 1, "common": 10, "word7": 1} {
		hits, err := db.Search(ctx, wiki.SearchQuery{Text: q, Limit: 50})
		if err != nil || len(hits) != want {
			t.Errorf("%s: %d hits (%v), want %d", q, len(hits), err, want)
		}
		if q == "word7" && len(hits) == 1 && hits[0].Title != "P7" {
			t.Errorf("word7 found %s", hits[0].Title)
		}
	}
	if err := db.MergeSearch(ctx); err != nil {
		t.Fatal(err)
	}
}

// An import whose writer keeps the only core of its gate still builds its
// segments and merges them: the writer holds none of the cores the work
// that feeds it waits for.
func TestImportOnOneCore(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	db.ShareCores(cores.New(1))
	for batch := range 10 { // enough segments for a merge
		var reqs []wiki.SaveRequest
		for i := range 3 {
			text := fmt.Sprintf("batch%d page%d shared", batch, i)
			reqs = append(reqs, wiki.SaveRequest{Title: wiki.Title(fmt.Sprintf("B%d P%d", batch, i)), Text: text, SearchText: text, UserName: "U"})
		}
		if _, err := db.ImportPages(ctx, reqs); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.MergeSearch(ctx); err != nil {
		t.Fatal(err)
	}
	hits, err := db.Search(ctx, wiki.SearchQuery{Text: "shared", Limit: 50})
	if err != nil || len(hits) != 30 {
		t.Errorf("shared: %d hits (%v), want 30", len(hits), err)
	}
	segs, _, indexed, err := sqlite.SearchSegments(ctx, db)
	if err != nil || segs > 3 || indexed != 30 {
		t.Errorf("%d search segments, %d pages indexed after the merges (%v), want the ten batches' merged and 30", segs, indexed, err)
	}
}

// While an import's batches follow each other, the writer connection does
// not checkpoint (the import restarts the WAL every few batches); once the
// import pauses, it checkpoints the other writes as before.
func TestImportBatchLeavesCheckpointsOn(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	sqlite.SetBulkIdle(db, 50*time.Millisecond)
	checkpoints := func() string {
		t.Helper()
		v, err := sqlite.Pragma(ctx, db, "wal_autocheckpoint", false)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, title := range []wiki.Title{"A", "B"} {
		if _, err := db.ImportPages(ctx, []wiki.SaveRequest{{Title: title, Text: "a", SearchText: "a", UserName: "U"}}); err != nil {
			t.Fatal(err)
		}
		// While the batches follow each other, the import checkpoints.
		if v := checkpoints(); v != "0" {
			t.Errorf("the writer's wal_autocheckpoint right after an import batch: %q, want 0", v)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for checkpoints() != "1000" {
		if time.Now().After(deadline) {
			t.Fatalf("the writer's wal_autocheckpoint once the import paused: %q, want 1000", checkpoints())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An import batch runs without foreign key checks (its rows refer to the
// pages it writes): it leaves none broken, and the writer connection
// checks them again after it.
func TestImportBatchKeepsForeignKeys(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	links := wiki.LinkSet{Links: []wiki.Title{"B", "Missing"}, Categories: []wiki.Title{"Category:Things"}}
	if _, err := db.ImportPages(ctx, []wiki.SaveRequest{
		{Title: "A", Text: "[[B]] [[Missing]]", SearchText: "a", UserName: "U", Links: links},
		{Title: "B", Text: "b", SearchText: "b", UserName: "U"},
		{Title: "A", Text: "[[B]] [[Missing]] again", SearchText: "a again", UserName: "U", Links: links},
	}); err != nil {
		t.Fatal(err)
	}
	if n, err := sqlite.ForeignKeyViolations(ctx, db); err != nil || n != 0 {
		t.Errorf("foreign key violations after an import batch: %d (%v), want none", n, err)
	}
	if v, err := sqlite.Pragma(ctx, db, "foreign_keys", false); err != nil || v != "1" {
		t.Errorf("the writer's foreign_keys after an import batch: %q (%v), want 1", v, err)
	}
	// The checks are on: a row referring to no page fails.
	if err := sqlite.Exec(ctx, db, `INSERT INTO links (from_page, kind, target_title) VALUES (999999, 'link', 'X')`); err == nil {
		t.Error("a link row of no page was written after an import batch: the foreign key checks are off")
	}
}
