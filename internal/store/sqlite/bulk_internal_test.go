package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

func openBulkTest(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "wikid.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// foreignKeys reads the setting of the pool's writer connection.
func foreignKeys(t *testing.T, db *DB) string {
	t.Helper()
	var v string
	if err := db.w.QueryRowContext(context.Background(), `PRAGMA foreign_keys`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The timer that gives the checkpoints back fires while another write
// holds the writer connection, and the next import batch waits for that
// connection too: both go on once it is free.
func TestBulkTimerAndBatchWaitForTheWriter(t *testing.T) {
	ctx := context.Background()
	for i := range 6 {
		db := openBulkTest(t)
		db.bulk.wait = 20 * time.Millisecond
		if _, err := db.ImportPages(ctx, []wiki.SaveRequest{{Title: "A", Text: "a", SearchText: "a", UserName: "U"}}); err != nil {
			t.Fatal(err)
		}
		held, err := db.w.Conn(ctx) // a write holding the writer when the timer fires
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		done := make(chan error, 1)
		go func() {
			_, err := db.ImportPages(ctx, []wiki.SaveRequest{{Title: "B", Text: "b", SearchText: "b", UserName: "U"}})
			done <- err
		}()
		time.Sleep(20 * time.Millisecond)
		held.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: the import batch and the checkpoint timer wait for each other", i)
		}
	}
}

// endingCtx reports itself done from its n-th look on: an import whose
// context ends at any point of its batch.
type endingCtx struct {
	context.Context
	n, looks atomic.Int64
	done     chan struct{}
}

func (c *endingCtx) Done() <-chan struct{} {
	if c.looks.Add(1) > c.n.Load() {
		return c.done
	}
	return nil
}

func (c *endingCtx) Err() error {
	if c.looks.Load() > c.n.Load() {
		return context.Canceled
	}
	return nil
}

// However an import's context ends, the writer connection goes back to
// the pool with its foreign key checks on (the batch turns them off).
func TestBulkEndedContextLeavesForeignKeysOn(t *testing.T) {
	db := openBulkTest(t)
	for n := range int64(60) {
		ctx := &endingCtx{Context: context.Background(), done: make(chan struct{})}
		close(ctx.done)
		ctx.n.Store(n)
		_, err := db.ImportPages(ctx, []wiki.SaveRequest{{Title: wiki.Title(fmt.Sprint("P", n)), Text: "a", SearchText: "a", UserName: "U"}})
		if v := foreignKeys(t, db); v != "1" {
			t.Fatalf("context ended at look %d (import: %v): the writer's foreign_keys is %s, want 1", n, err, v)
		}
		if err == nil {
			break // the batch went through before its context ended
		}
	}
	// A context cancelled while the batch's transaction is open (the
	// first loop is what caught the checks left off; this one guards the
	// rollback racing the restore).
	for i := range 100 {
		ctx, cancel := context.WithCancel(context.Background())
		err := db.writeBulk(ctx, pagesRestartEvery, func(tx *wtx) error {
			if _, err := tx.ExecContext(context.WithoutCancel(ctx), `INSERT INTO pages (title, ns, touched) VALUES (?, 0, 0)`, fmt.Sprint("Q", i)); err != nil {
				return err
			}
			cancel()
			return ctx.Err()
		})
		if err == nil {
			t.Fatal("a batch whose context ended was committed")
		}
		if v := foreignKeys(t, db); v != "1" {
			t.Fatalf("round %d: the writer's foreign_keys after a cancelled batch is %s, want 1", i, v)
		}
	}
}

// A failed batch gives the writer its checkpoints back at once: failing
// batches, which do not count towards the WAL's restart, must not keep
// them off.
func TestBulkFailedBatchGivesCheckpointsBack(t *testing.T) {
	db := openBulkTest(t)
	db.bulk.wait = time.Hour
	err := db.writeBulk(context.Background(), pagesRestartEvery, func(tx *wtx) error { return fmt.Errorf("refused") })
	if err == nil {
		t.Fatal("the failing batch succeeded")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var v string
		if err := db.w.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		if v == "1000" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("wal_autocheckpoint after a failed import batch: %s, want 1000", v)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A batch whose context ends while it writes is rolled back, even when
// what it runs has not looked at the context since.
func TestBulkEndedContextRollsBack(t *testing.T) {
	db := openBulkTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	err := db.writeBulk(ctx, pagesRestartEvery, func(tx *wtx) error {
		if _, err := tx.ExecContext(context.WithoutCancel(ctx), `INSERT INTO pages (title, ns, touched) VALUES ('Late', 0, 0)`); err != nil {
			return err
		}
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("a batch whose context ended while it wrote: %v, want context.Canceled", err)
	}
	var n int
	if err := db.w.QueryRow(`SELECT count(*) FROM pages WHERE title = 'Late'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("the cancelled batch's page rows: %d (%v), want none", n, err)
	}
}
