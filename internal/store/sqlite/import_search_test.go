package sqlite_test

import (
	"context"
	"fmt"
	"testing"

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
