package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
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

// recvErr fails t with ch's error, or with the message when nothing
// comes within the bound.
func recvErr(t *testing.T, ch <-chan error, within time.Duration, format string, args ...any) {
	t.Helper()
	select {
	case err := <-ch:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(within):
		t.Fatalf(format, args...)
	}
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
		recvErr(t, done, 20*time.Second, "round %d: the import batch and the checkpoint timer wait for each other", i)
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

// A batch whose search segment is not built within its wait rolls back and
// frees the writer: other writes (a server's edits) go on while the
// segment is built, and the batch is then written once, indexed.
func TestImportBatchFreesTheWriterForASlowSegment(t *testing.T) {
	ctx := context.Background()
	db := openBulkTest(t)
	if _, err := db.ImportPages(ctx, []wiki.SaveRequest{{Title: "Before", Text: "earlier", SearchText: "earlier", UserName: "U"}}); err != nil {
		t.Fatal(err)
	}
	db.buildWait = 20 * time.Millisecond
	building, slow := make(chan struct{}), make(chan struct{})
	db.buildHook = func() { close(building); <-slow }
	reqs := []wiki.SaveRequest{
		{Title: "Slow A", Text: "alpha common", SearchText: "alpha common", UserName: "U"},
		{Title: "Slow B", Text: "beta common", SearchText: "beta common", UserName: "U"},
		{Title: "Slow A", Text: "alpha again common", SearchText: "alpha again common", UserName: "U"},
	}
	imported := make(chan error, 1)
	go func() {
		_, err := db.ImportPages(ctx, reqs)
		imported <- err
	}()
	<-building
	// Once the batch's transaction holds the database (another process's
	// connection, which does not wait, meets SQLITE_BUSY), the write below
	// waits for it.
	other, err := sql.Open("sqlite", db.path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.SetMaxOpenConns(1) // its BEGIN and ROLLBACK on one connection
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		_, err := other.ExecContext(ctx, `BEGIN IMMEDIATE`)
		if isBusy(err) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.ExecContext(ctx, `ROLLBACK`); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			close(slow)
			t.Fatal("the import batch did not take the writer")
		}
	}
	waits := db.w.Stats().WaitCount
	wrote := make(chan error, 1)
	go func() {
		wrote <- db.write(ctx, func(tx *wtx) error {
			_, err := tx.ExecContext(ctx, `UPDATE pages SET touched = touched WHERE title = 'Before'`)
			return err
		})
	}()
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		close(slow)
		t.Fatal("another write waited for the writer while the import batch's segment was being built")
	}
	if db.w.Stats().WaitCount == waits {
		t.Error("the write did not wait for the import batch: the test did not see the batch hold the writer")
	}
	close(slow)
	recvErr(t, imported, 30*time.Second, "the import batch was not written once its segment was built")
	for q, want := range map[string][]string{"common": {"Slow A", "Slow B"}, "again": {"Slow A"}, "beta": {"Slow B"}, "earlier": {"Before"}} {
		hits, err := db.Search(ctx, wiki.SearchQuery{Text: q, Limit: 10})
		var got []string
		for _, h := range hits {
			got = append(got, string(h.Title))
		}
		slices.Sort(got)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: found %v (%v), want %v", q, got, err, want)
		}
	}
	var pages, revs, changes int
	if err := db.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM pages), (SELECT count(*) FROM revisions), (SELECT count(*) FROM changes)`).Scan(&pages, &revs, &changes); err != nil {
		t.Fatal(err)
	}
	if pages != 3 || revs != 4 || changes != 4 {
		t.Errorf("%d pages, %d revisions, %d changes, want 3, 4 and 4: the batch was written once", pages, revs, changes)
	}
}

// A write that finds the database locked past the busy timeout (another
// process's long write) fails as unavailable, with a message that says
// what to do and when to try again, and keeps its cause.
func TestBusyWriteIsUnavailable(t *testing.T) {
	ctx := context.Background()
	db := openBulkTest(t)
	// Another process's connection, which does not wait: it meets the
	// lock the store's writer holds with SQLITE_BUSY at once.
	other, err := sql.Open("sqlite", db.path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var busy error
	if err := db.write(ctx, func(*wtx) error {
		_, busy = other.ExecContext(ctx, `BEGIN IMMEDIATE`)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !isBusy(busy) {
		t.Fatalf("a second writer: %v, want SQLITE_BUSY", busy)
	}
	err = db.write(ctx, func(*wtx) error { return fmt.Errorf("save page: %w", busy) })
	var we *wiki.Error
	if !errors.As(err, &we) || we.Kind != wiki.KindUnavailable || we.RetryAfter <= 0 || !strings.Contains(we.Msg, "Try again") || !isBusy(err) {
		t.Errorf("a write that met SQLITE_BUSY: %#v, want unavailable, with a retry time and a message, its cause kept", err)
	}
	if err := db.write(ctx, func(*wtx) error { return errors.New("other") }); wiki.KindOf(err) != wiki.KindInternal {
		t.Errorf("another failure: kind %v, want internal", wiki.KindOf(err))
	}
}
