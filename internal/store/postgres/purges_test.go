package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/store/postgres"
	"github.com/wikid/wikid/internal/store/postgres/pgtest"
	"github.com/wikid/wikid/internal/wiki"
)

// Appends from many connections at once: a reader polling for IDs above
// its last one sees them one by one, never a later ID before an earlier
// one (which it would take for a gap), and in the end sees them all.
func TestPurgeLogConcurrentAppends(t *testing.T) {
	db := pgtest.Open(t)
	ctx := context.Background()
	const writers, each = 8, 50

	var done atomic.Bool
	readErr := make(chan error, 1)
	var seen int64
	go func() {
		defer close(readErr)
		var last int64
		for {
			finished := done.Load() // read before the poll: the poll after the last append sees all
			evs, err := db.PurgesAfter(ctx, last, 7)
			if err != nil {
				readErr <- err
				return
			}
			for _, ev := range evs {
				if ev.ID != last+1 {
					readErr <- fmt.Errorf("after ID %d the reader saw %d", last, ev.ID)
					return
				}
				last = ev.ID
			}
			if finished && len(evs) == 0 {
				seen = last
				return
			}
		}
	}()

	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				// Some appends carry two events: their IDs are consecutive too.
				evs := []wiki.PurgeEvent{{Origin: fmt.Sprintf("w%d", w), Titles: []wiki.Title{wiki.Title(fmt.Sprintf("P%d", i))}, Time: time.Now()}}
				if i%5 == 0 {
					evs = append(evs, wiki.PurgeEvent{Origin: fmt.Sprintf("w%d", w), PageIDs: []int64{int64(i)}, Time: time.Now()})
				}
				if err := db.AppendPurges(ctx, evs); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	done.Store(true)
	if err := <-readErr; err != nil {
		t.Fatal(err)
	}
	want := int64(writers * (each + each/5))
	if seen != want {
		t.Fatalf("the reader saw %d events, want %d", seen, want)
	}
	if last, err := db.LastPurge(ctx); err != nil || last != want {
		t.Fatalf("last purge = %d, %v; want %d", last, err, want)
	}
}

// A listener is woken by an append made on another connection.
func TestListenPurges(t *testing.T) {
	db := pgtest.Open(t)
	ctx, cancel := context.WithCancel(context.Background())
	woken := make(chan struct{}, 100)
	listened := make(chan error, 1)
	go func() {
		listened <- db.ListenPurges(ctx, func() { woken <- struct{}{} })
	}()

	// LISTEN takes effect once its statement has run, which the test cannot
	// see: append until a wake comes.
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for woke := false; !woke; {
		if err := db.AppendPurges(context.Background(), []wiki.PurgeEvent{{Origin: "other", Titles: []wiki.Title{"A"}, Time: time.Now()}}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-woken:
			woke = true
		case err := <-listened:
			t.Fatalf("the listener stopped: %v", err)
		case <-tick.C:
		case <-deadline:
			t.Fatal("no wake within 10s of appending")
		}
	}

	cancel()
	select {
	case err := <-listened:
		if err != nil {
			t.Fatalf("the listener ended with %v, want nil when its context ends", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the listener did not return after its context ended")
	}
}

// A database whose default isolation is REPEATABLE READ (an operator's
// default_transaction_isolation): saves carrying their purge log event
// still number it after every committed one, because the store's write
// transactions are READ COMMITTED whatever the default.
func TestOutboxUnderAnotherDefaultIsolation(t *testing.T) {
	ctx := context.Background()
	db, err := postgres.Open(ctx, pgtest.DSN(t)+"&default_transaction_isolation=repeatable%20read")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var iso string
	if err := db.Pool().QueryRow(ctx, `SHOW default_transaction_isolation`).Scan(&iso); err != nil || iso != "repeatable read" {
		t.Fatalf("default isolation %q (%v), want repeatable read", iso, err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for w := range 8 {
		wg.Go(func() {
			title := wiki.Title(fmt.Sprintf("Page %d", w))
			var base int64
			for i := range 25 {
				ev := wiki.PurgeSpec(wiki.PurgeEvent{Origin: "x", Titles: []wiki.Title{title}, Time: time.Now()})
				r, err := db.SavePage(ctx, wiki.SaveRequest{Title: title, Text: fmt.Sprintf("Text %d.", i), UserName: "U", BaseRevID: base, Jobs: []wiki.JobSpec{ev}})
				if err != nil {
					errs <- err
					return
				}
				base = r.Revision.ID
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	evs, err := db.PurgesAfter(ctx, 0, 1000)
	if err != nil || len(evs) != 200 || evs[199].ID != evs[0].ID+199 {
		t.Fatalf("%d events (%v), want 200 numbered one by one", len(evs), err)
	}
}
