package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/store/postgres/pgtest"
	"github.com/wikid/wikid/internal/wiki"
)

// More searches at once than the pool has connections all finish: a
// search gives its connection back before it takes another, and one that
// runs out of budget leaves nothing running on the server.
func TestSearchesBeyondThePool(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t) // a pool of 8
	var reqs []wiki.SaveRequest
	for i := range 300 {
		text := fmt.Sprintf("Common words on page %d, and zq%dx once.", i, i%40)
		reqs = append(reqs, wiki.SaveRequest{Title: wiki.Title(fmt.Sprintf("Page %d", i)), Text: text, SearchText: text, UserName: "U", Time: time.Now()})
	}
	if _, err := db.ImportPages(ctx, reqs); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			hits, err := db.Search(ctx, wiki.SearchQuery{Text: fmt.Sprintf("zq%dx", i%40), Limit: 20})
			if err != nil {
				errs <- err
			} else if len(hits) == 0 {
				errs <- fmt.Errorf("search zq%dx found nothing", i%40)
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("64 searches on a pool of 8 did not finish within 60 s: searches wait for each other's connections")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var active int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()`).Scan(&active); err != nil {
		t.Fatal(err)
	}
	if active != 0 {
		t.Fatalf("%d statements still running on the server after every search returned", active)
	}
}
