package sqlite

import (
	"context"
	"fmt"
)

// CompressResult counts what CompressOld rewrote.
type CompressResult struct {
	Revisions, Renders int   // rows compressed
	Before, After      int64 // bytes of their stored values before and after
}

// compressBatchRows and compressBatchBytes bound one batch of CompressOld: rows, and bytes of their
// values as read, so that a batch of large pages stays small in memory and
// its write transaction short.
const (
	compressBatchRows  = 256
	compressBatchBytes = 8 << 20
)

// CompressOld compresses the revision texts and renders stored before
// compression existed (codec.go). Rows are read and compressed outside any
// transaction and written a batch per write transaction, so a running
// server's edits wait for one batch at most, never for the whole pass. Each
// compressed value is decoded again and compared with the original before
// it is written. progress, if not nil, is called after each batch with the
// counts so far. It can be stopped at any time and run again: it resumes
// with the rows still stored as they were.
//
// The file does not shrink by itself: the pages freed are reused by later
// writes, and Vacuum gives them back to the file system.
func (db *DB) CompressOld(ctx context.Context, progress func(CompressResult)) (CompressResult, error) {
	var res CompressResult
	report := func() {
		if progress != nil {
			progress(res)
		}
	}
	// Revisions: values still stored as TEXT, long enough to be worth it.
	// typeof() needs only the record header, so compressed rows are passed
	// over without reading their text.
	for after := int64(0); ; {
		batch, last, err := db.oldRows(ctx, `SELECT id, text FROM revisions
			WHERE id > ? AND typeof(text) = 'text' AND size >= ? ORDER BY id`, after, minCompress)
		if err != nil {
			return res, fmt.Errorf("sqlite: compress revisions: %w", err)
		}
		if len(batch) == 0 {
			break
		}
		after = last
		var todo []compressed
		for _, r := range batch {
			text := string(r.value)
			st := encodeText(text)
			z, ok := st.value.([]byte)
			if !ok {
				continue // not smaller compressed: stays as is
			}
			if back, err := decodeText(z); err != nil || back != text {
				return res, fmt.Errorf("sqlite: compress revision %d: the compressed text does not decode to the original (%v)", r.id, err)
			}
			todo = append(todo, compressed{id: r.id, value: z, before: len(r.value)})
		}
		n, err := db.writeCompressed(ctx, todo, `UPDATE revisions SET text = ? WHERE id = ? AND typeof(text) = 'text'`, &res)
		if err != nil {
			return res, fmt.Errorf("sqlite: compress revisions: %w", err)
		}
		res.Revisions += n
		report()
	}
	// Renders: rows of codec 0. A render replaced meanwhile is a new row
	// (INSERT OR REPLACE) and no longer matches its old rowid.
	for after := int64(0); ; {
		batch, last, err := db.oldRows(ctx, `SELECT rowid, data FROM renders
			WHERE rowid > ? AND codec = 0 AND length(data) >= ? ORDER BY rowid`, after, minCompress)
		if err != nil {
			return res, fmt.Errorf("sqlite: compress renders: %w", err)
		}
		if len(batch) == 0 {
			break
		}
		after = last
		var todo []compressed
		for _, r := range batch {
			z, codec := encodeRender(r.value)
			if codec != codecZstd {
				continue
			}
			if back, err := decodeRender(z, codec); err != nil || string(back) != string(r.value) {
				return res, fmt.Errorf("sqlite: compress render row %d: the compressed render does not decode to the original (%v)", r.id, err)
			}
			todo = append(todo, compressed{id: r.id, value: z, before: len(r.value)})
		}
		n, err := db.writeCompressed(ctx, todo, `UPDATE renders SET data = ?, codec = 1 WHERE rowid = ? AND codec = 0`, &res)
		if err != nil {
			return res, fmt.Errorf("sqlite: compress renders: %w", err)
		}
		res.Renders += n
		report()
	}
	return res, nil
}

type oldRow struct {
	id    int64
	value []byte
}

type compressed struct {
	id     int64
	value  []byte
	before int
}

// oldRows reads the next batch of (id, value) rows of q, whose parameters
// are the id to start after and the minimum size, and returns the batch
// and the last id read.
func (db *DB) oldRows(ctx context.Context, q string, after int64, minSize int) ([]oldRow, int64, error) {
	rows, err := db.r.QueryContext(ctx, q, after, minSize)
	if err != nil {
		return nil, after, err
	}
	defer rows.Close()
	var batch []oldRow
	bytes := 0
	for len(batch) < compressBatchRows && bytes < compressBatchBytes && rows.Next() {
		var r oldRow
		if err := rows.Scan(&r.id, &r.value); err != nil {
			return nil, after, err
		}
		batch = append(batch, r)
		bytes += len(r.value)
		after = r.id
	}
	return batch, after, rows.Err()
}

// writeCompressed runs update (value, id) for each row in one write
// transaction and adds the rows it changed to res.
func (db *DB) writeCompressed(ctx context.Context, todo []compressed, update string, res *CompressResult) (int, error) {
	if len(todo) == 0 {
		return 0, nil
	}
	var n int
	var before, after int64
	err := db.write(ctx, func(tx *wtx) error {
		st, err := tx.PrepareContext(ctx, update)
		if err != nil {
			return err
		}
		defer st.Close()
		n, before, after = 0, 0, 0
		for _, c := range todo {
			r, err := st.ExecContext(ctx, c.value, c.id)
			if err != nil {
				return err
			}
			if k, err := r.RowsAffected(); err != nil {
				return err
			} else if k > 0 {
				n++
				before += int64(c.before)
				after += int64(len(c.value))
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	res.Before += before
	res.After += after
	return n, nil
}

// Vacuum rebuilds the database file without its free pages, giving the
// space they hold back to the file system, then truncates the WAL (which
// the rebuild passes through). It writes a new copy of every page: the disk
// needs free space about the size of the database, and other writers wait
// until it ends (a running server's edits fail after its busy timeout).
// It reports whether the WAL could be truncated: not while a reader of
// another process is in the middle of a read.
func (db *DB) Vacuum(ctx context.Context) (walTruncated bool, err error) {
	if _, err := db.w.ExecContext(ctx, `VACUUM`); err != nil {
		return false, fmt.Errorf("sqlite: vacuum: %w", err)
	}
	var busy, logFrames, checkpointed int
	if err := db.w.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &checkpointed); err != nil {
		return false, fmt.Errorf("sqlite: vacuum: checkpoint: %w", err)
	}
	return busy == 0, nil
}
