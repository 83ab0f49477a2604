package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

// A search's read transaction holds a connection of the reader pool; the
// statements it has not kept yet are prepared after it, not during it,
// when preparing on the pool would wait for a connection that every such
// transaction holds. With one reader connection, a first search of a
// fresh database finds its pages (and keeps its statements), where it
// waited for its context's deadline.
func TestReadTransactionKeepsStatementsAfterIt(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 5 {
		text := fmt.Sprintf("pooled words number %d", i)
		if _, err := db.SavePage(ctx, wiki.SaveRequest{Title: wiki.Title(fmt.Sprintf("Page %d", i)), Text: text, SearchText: text, UserName: "U"}); err != nil {
			t.Fatal(err)
		}
	}
	db.r.SetMaxOpenConns(1)
	for round := range 2 {
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		hits, err := db.Search(sctx, wiki.SearchQuery{Text: "pooled words", Limit: 10, Namespaces: []string{""}})
		cancel()
		if err != nil || len(hits) != 5 {
			t.Fatalf("search %d with one reader connection: %d hits, %v; want 5", round, len(hits), err)
		}
		if round == 0 && db.r.n.Load() == 0 {
			t.Fatal("the first search kept no statement")
		}
	}
}
