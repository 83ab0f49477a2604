package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/cores"
	"github.com/wikid/wikid/internal/search"
)

func TestMergePlan(t *testing.T) {
	seg := func(id, docs, live int64) segmentLive { return segmentLive{id: id, docs: docs, live: live} }
	for _, tc := range []struct {
		name string
		segs []segmentLive
		want []int64
	}{
		{"nothing to do", []segmentLive{seg(1, 1000, 1000), seg(2, 8000, 8000)}, nil},
		{"eight of a tier, the smallest tier first", []segmentLive{
			seg(1, 1, 1), seg(2, 1, 1), seg(3, 1, 1), seg(4, 1, 1), seg(5, 1, 1), seg(6, 1, 1), seg(7, 1, 1), seg(8, 1, 1),
			seg(9, 900, 900), seg(10, 900, 900), seg(11, 900, 900), seg(12, 900, 900), seg(13, 900, 900), seg(14, 900, 900), seg(15, 900, 900), seg(16, 900, 900),
		}, []int64{1, 2, 3, 4, 5, 6, 7, 8}},
		{"at most sixteen at once", func() []segmentLive {
			var s []segmentLive
			for i := range 20 {
				s = append(s, seg(int64(20-i), 3, 3))
			}
			return s
		}(), []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},
		{"the tier counts current entries, not stale ones", []segmentLive{
			seg(1, 5000, 2), seg(2, 2, 2), seg(3, 2, 2), seg(4, 2, 2), seg(5, 2, 2), seg(6, 2, 2), seg(7, 2, 2), seg(8, 2, 2),
		}, []int64{1, 2, 3, 4, 5, 6, 7, 8}},
		{"a segment mostly stale is rewritten alone", []segmentLive{seg(1, 1000, 1000), seg(2, 4000, 1500)}, []int64{2}},
		{"one barely stale is left", []segmentLive{seg(2, 4000, 2500)}, nil},
	} {
		if got := mergePlan(tc.segs); !slices.Equal(got, tc.want) {
			t.Errorf("%s: plan %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A MergeSearch waiting for its turn behind a merge under way (the
// merger's) stops when its context ends: `wikid import` interrupted does
// not wait for the merger's merge.
func TestMergeSearchTurnEndsWithContext(t *testing.T) {
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "wikid.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.mergeTurn <- struct{}{} // a merge under way
	defer func() { <-db.mergeTurn }()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := db.MergeSearch(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("MergeSearch behind a merge under way, its context ended: %v, want context.Canceled", err)
	}
}

// openMergeTest opens a database whose merges are the test's own (no
// background merger).
func openMergeTest(t *testing.T) *DB {
	t.Helper()
	db := openBulkTest(t)
	db.merger.close()
	return db
}

// mergeTestBlock is a block of a chunk of its own (mergeChunk bytes).
func mergeTestBlock(i int) search.Block {
	return search.Block{First: fmt.Sprintf("key%03d", i), Data: make([]byte, mergeChunk)}
}

// holdWriter holds the writer connection, as an import's batch does,
// until the returned function is called.
func holdWriter(t *testing.T, db *DB) (release func()) {
	t.Helper()
	held, free := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- db.write(context.Background(), func(*wtx) error { close(held); <-free; return nil })
	}()
	<-held
	return sync.OnceFunc(func() {
		close(free)
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}

func countBlocks(t *testing.T, db *DB, seg int64) int {
	t.Helper()
	var n int
	if err := db.r.QueryRowContext(context.Background(), `SELECT count(*) FROM search_blocks WHERE seg = ?`, seg).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// addChunks adds n chunks to w, the writer held: it fails when the merge
// waits for the writer meanwhile.
func addChunks(t *testing.T, w *mergeWriter, n int) {
	t.Helper()
	added := make(chan error, 1)
	go func() {
		for i := range n {
			if err := w.add(mergeTestBlock(i)); err != nil {
				added <- err
				return
			}
		}
		added <- nil
	}()
	recvErr(t, added, 30*time.Second, "the merge waited for the held writer within its first %d chunks", n)
}

// While the writer is held, a merge goes on for the chunk being written
// and mergeBacklog more, then waits; every chunk is written once the
// writer is free.
func TestMergeWriterMergesAheadOfItsWrites(t *testing.T) {
	db := openMergeTest(t)
	release := holdWriter(t, db)
	defer release()
	w := db.newMergeWriter(context.Background(), 77)
	ahead := mergeBacklog + 1
	addChunks(t, w, ahead)
	next := make(chan error, 1)
	go func() { next <- w.add(mergeTestBlock(ahead)) }()
	select {
	case <-next:
		t.Fatalf("the merge went on past %d chunks while the writer was held", ahead)
	case <-time.After(200 * time.Millisecond):
	}
	if n := countBlocks(t, db, 77); n != 0 {
		t.Fatalf("%d blocks written while the writer was held", n)
	}
	release()
	if err := <-next; err != nil {
		t.Fatal(err)
	}
	if err := w.close(true); err != nil {
		t.Fatal(err)
	}
	if n := countBlocks(t, db, 77); n != ahead+1 {
		t.Errorf("%d blocks written, want %d", n, ahead+1)
	}
}

// A write that fails stops the merge at its next block, and close
// returns the failure.
func TestMergeWriterStopsAtAFailedWrite(t *testing.T) {
	db := openMergeTest(t)
	w := db.newMergeWriter(context.Background(), 78)
	if err := w.add(mergeTestBlock(1)); err != nil {
		t.Fatal(err)
	}
	if err := w.add(mergeTestBlock(1)); err != nil { // its key again: the write fails
		t.Fatal(err)
	}
	select {
	case <-w.failed:
	case <-time.After(30 * time.Second):
		t.Fatal("writing a block of a key already written did not fail")
	}
	if err := w.add(mergeTestBlock(2)); err == nil {
		t.Error("the merge went on after a write failed")
	}
	if err := w.close(false); err == nil || !strings.Contains(err.Error(), "UNIQUE") {
		t.Errorf("close after a failed write: %v, want the write's failure", err)
	}
}

// A merge that failed leaves unwritten the chunks still waiting for the
// writer, and close returns once the chunk being written is (so that
// nothing is written after the merge drops its segment).
func TestMergeWriterDropsWhatAFailedMergeLeft(t *testing.T) {
	db := openMergeTest(t)
	release := holdWriter(t, db)
	defer release()
	waits := db.w.Stats().WaitCount
	w := db.newMergeWriter(context.Background(), 79)
	addChunks(t, w, 3)
	// The first chunk is being written: its transaction waits for the
	// writer connection (database/sql counts the wait; a chunk only taken
	// from the backlog may still be dropped). The other two wait in the
	// backlog.
	for deadline := time.Now().Add(30 * time.Second); len(w.chunks) != 2 || db.w.Stats().WaitCount == waits; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d chunks in the backlog and %d waits for the writer, want 2 and 1", len(w.chunks), db.w.Stats().WaitCount-waits)
		}
	}
	closed := make(chan error, 1)
	go func() { closed <- w.close(false) }()
	select {
	case <-closed:
		t.Fatal("close returned while a chunk was being written")
	case <-time.After(200 * time.Millisecond):
	}
	release()
	recvErr(t, closed, 30*time.Second, "close did not return once the writer was free")
	if n := countBlocks(t, db, 79); n != 1 {
		t.Errorf("%d blocks written after the merge failed, want 1 (the chunk being written then)", n)
	}
}

// The merge gives its core back at every chunk: work waiting for the
// core (the batch's segment build, beside an import's writer) gets it
// after the merge's next chunk, not once its backlog is full.
func TestMergeWriterGivesItsCoreBackAtEveryChunk(t *testing.T) {
	db := openMergeTest(t)
	g := cores.New(1)
	db.ShareCores(g)
	release := holdWriter(t, db)
	defer release()
	w := db.newMergeWriter(context.Background(), 80)
	g.Acquire() // the merge's, as mergeSegments takes it
	asking, got := make(chan struct{}), make(chan struct{})
	go func() {
		close(asking)
		g.Acquire()
		close(got)
		g.Release()
	}()
	<-asking
	added := make(chan int, 1)
	go func() {
		for i := range 3 {
			time.Sleep(20 * time.Millisecond) // the other work's turn is queued
			if err := w.add(mergeTestBlock(i)); err != nil {
				t.Error(err)
			}
			select {
			case <-got:
				added <- i + 1
				return
			default:
			}
		}
		added <- 3
	}()
	select {
	case <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("work waiting for the merge's core did not get it within the merge's first 3 chunks")
	}
	<-added
	g.Release()
	release()
	if err := w.close(true); err != nil {
		t.Fatal(err)
	}
}
