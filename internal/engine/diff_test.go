package engine_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/wikid/wikid/internal/diff/difftest"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/store/sqlite/sqlitetest"
	"github.com/wikid/wikid/internal/wiki"
)

func TestDiffIsComputedOncePerRevisionPair(t *testing.T) {
	db := sqlitetest.Open(t)
	e := engine.New(engine.Options{Store: db})
	ctx := context.Background()
	ed := engine.Editor{UserName: "Alice"}
	// A pair that takes a while to compare, so concurrent requests overlap.
	p := difftest.Shape("shuffled", 256<<10)
	first, err := e.Save(ctx, engine.Edit{Title: "Big", Text: p.Old, Editor: ed})
	if err != nil {
		t.Fatal(err)
	}
	second, err := e.Save(ctx, engine.Edit{Title: "Big", Text: p.New, BaseRevID: first.Revision.ID, Editor: ed})
	if err != nil {
		t.Fatal(err)
	}
	old, err := db.FindRevision(ctx, first.Revision.ID)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := db.FindRevision(ctx, second.Revision.ID)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("concurrent requests for one pair share one computation", func(t *testing.T) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		seen := map[any]bool{}
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := e.Diff(ctx, old, cur)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen[r] = true
				mu.Unlock()
			}()
		}
		wg.Wait()
		if n := e.DiffsComputed(); n != 1 {
			t.Fatalf("computed %d times, want 1", n)
		}
		if len(seen) != 1 {
			t.Fatalf("%d different results for one pair", len(seen))
		}
	})
	t.Run("a later request without the texts loaded is a cache hit", func(t *testing.T) {
		o, c := old, cur
		o.Text, c.Text = "", ""
		r, err := e.Diff(ctx, o, c)
		if err != nil {
			t.Fatal(err)
		}
		if n := e.DiffsComputed(); n != 1 || r.Added == 0 {
			t.Fatalf("computed %d times (+%d), want 1", n, r.Added)
		}
	})
	t.Run("another pair is computed, reading texts that were not loaded", func(t *testing.T) {
		c := cur
		c.Text = ""
		r, err := e.Diff(ctx, wiki.Revision{}, c)
		if err != nil {
			t.Fatal(err)
		}
		if n := e.DiffsComputed(); n != 2 {
			t.Fatalf("computed %d times, want 2", n)
		}
		if want := strings.Count(p.New, "\n"); r.Added != want || r.Deleted != 0 {
			t.Fatalf("the creation diff adds %d and deletes %d lines, want %d and 0", r.Added, r.Deleted, want)
		}
	})
}
