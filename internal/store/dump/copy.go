package dump

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
)

// Store is one engine's side of a copy.
type Store interface {
	// CountRows counts t's rows (those t.Where selects).
	CountRows(ctx context.Context, t *Table) (int64, error)
	// ReadRows returns t's rows that q selects (its Columns are the
	// engine's to fill), decoded to neutral values.
	ReadRows(ctx context.Context, t *Table, q Query) ([]Row, error)
	// WriteRows inserts rows of t, in key order, in one transaction: all
	// of them or none.
	WriteRows(ctx context.Context, t *Table, rows []Row) error
	// FinishCopy readies a store a copy filled: identity sequences past
	// the copied IDs, and every live page's search entry to be rebuilt
	// (pages.search_rev 0 and a search job per page, unless one is
	// queued). It returns how many jobs it queued, and may run again.
	FinishCopy(ctx context.Context) (int, error)
}

// DefaultBatch is how many rows a transaction of the copy writes.
const DefaultBatch = 1000

// Options of Copy and Verify.
type Options struct {
	Tables    []*Table // Selected(…)
	BatchSize int      // rows per transaction; 0 for DefaultBatch
	// Progress, if set, is told after each batch, and when a table is
	// done. Calls come one at a time.
	Progress func(Progress)
	// StopAfter ends the copy with ErrStopped after so many batches (0:
	// never), as an interruption would: for tests of resumption.
	StopAfter int
}

// Progress is where a copy or verification is.
type Progress struct {
	Verb     string // "copy" or "verify"
	Table    string
	Done     int64 // rows copied (or read) so far, an earlier run's included
	Total    int64 // rows the source has
	Finished bool  // the table is done
}

// ErrStopped ends a copy that Options.StopAfter stopped.
var ErrStopped = errors.New("dump: stopped after the batches asked for")

// Result tells what Copy did.
type Result struct {
	Resumed    bool  // the destination held an earlier run's rows
	Rows       int64 // copied by this run
	SearchJobs int   // queued by FinishCopy
}

// Copy copies opt.Tables from src to dst, in order, each in key order a
// batch per transaction, then finishes dst (FinishCopy).
//
// dst must be empty or hold an interrupted earlier copy of src: each
// table's copy resumes after the destination's largest key, once the
// destination's row there is found equal to the source's (otherwise dst
// holds another wiki, or the source changed since, and Copy refuses
// before writing anything). Keys compare alike in both engines (integers
// by value, text by bytes), so the rows a batch wrote are exactly those
// up to that key.
func Copy(ctx context.Context, src, dst Store, opt Options) (Result, error) {
	var res Result
	batch := opt.BatchSize
	if batch <= 0 {
		batch = DefaultBatch
	}
	after := make([]Key, len(opt.Tables))
	for i, t := range opt.Tables {
		until, none, err := appendedBound(ctx, src, t)
		if err != nil {
			return res, err
		}
		if none {
			continue
		}
		last, err := lastRow(ctx, dst, t, until)
		if err != nil {
			return res, fmt.Errorf("destination: %w", err)
		}
		if last == nil {
			continue
		}
		k := t.KeyOf(last)
		theirs, err := findRow(ctx, src, t, k)
		if err != nil {
			return res, fmt.Errorf("source: %w", err)
		}
		if theirs == nil || !equalRows(theirs, last) {
			why := "differs from the source's"
			if theirs == nil {
				why = "is not in the source"
			}
			return res, fmt.Errorf("the destination is neither empty nor an interrupted copy of this source: its %s row %s %s; "+
				"copy into an empty database (a new SQLite file, or createdb for PostgreSQL), or, if the source changed since the interrupted copy, start that copy again in an empty one",
				t.Name, FormatKey(k), why)
		}
		after[i] = k
		res.Resumed = true
	}
	batches := 0
	for i, t := range opt.Tables {
		total, err := src.CountRows(ctx, t)
		if err != nil {
			return res, fmt.Errorf("source: %w", err)
		}
		var done int64
		if after[i] != nil {
			if done, err = dst.CountRows(ctx, t); err != nil {
				return res, fmt.Errorf("destination: %w", err)
			}
			done = min(done, total) // an appended table's own rows
		}
		report(opt, Progress{Verb: "copy", Table: t.Name, Done: done, Total: total})
		for {
			rows, err := src.ReadRows(ctx, t, Query{After: after[i], Limit: t.batchOf(batch)})
			if err != nil {
				return res, fmt.Errorf("source: %w", err)
			}
			if len(rows) == 0 {
				break
			}
			if err := dst.WriteRows(ctx, t, rows); err != nil {
				return res, fmt.Errorf("destination: %w", err)
			}
			after[i] = t.KeyOf(rows[len(rows)-1])
			done += int64(len(rows))
			res.Rows += int64(len(rows))
			report(opt, Progress{Verb: "copy", Table: t.Name, Done: done, Total: max(total, done)})
			if batches++; opt.StopAfter > 0 && batches >= opt.StopAfter {
				return res, ErrStopped
			}
			if len(rows) < t.batchOf(batch) {
				break
			}
		}
		report(opt, Progress{Verb: "copy", Table: t.Name, Done: done, Total: max(total, done), Finished: true})
	}
	n, err := dst.FinishCopy(ctx)
	if err != nil {
		return res, fmt.Errorf("destination: %w", err)
	}
	res.SearchJobs = n
	return res, nil
}

func report(opt Options, p Progress) {
	if opt.Progress != nil {
		opt.Progress(p)
	}
}

// appendedBound returns, for an appended table, the source's largest key:
// the destination's rows above it are its own. none is set when the
// source has no rows of t, so all the destination's are its own.
func appendedBound(ctx context.Context, src Store, t *Table) (until Key, none bool, err error) {
	if !t.Appended {
		return nil, false, nil
	}
	last, err := lastRow(ctx, src, t, nil)
	if err != nil {
		return nil, false, fmt.Errorf("source: %w", err)
	}
	if last == nil {
		return nil, true, nil
	}
	return t.KeyOf(last), false, nil
}

// lastRow returns t's row with the largest key not above until (nil: of
// all rows); nil if there is none.
func lastRow(ctx context.Context, s Store, t *Table, until Key) (Row, error) {
	rows, err := s.ReadRows(ctx, t, Query{Until: until, Desc: true, Limit: 1})
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return rows[0], nil
}

// findRow returns t's row with key k; nil if there is none.
func findRow(ctx context.Context, s Store, t *Table, k Key) (Row, error) {
	r, err := lastRow(ctx, s, t, k)
	if err != nil || r == nil || compareKeys(t.KeyOf(r), k) != 0 {
		return nil, err
	}
	return r, nil
}

func equalRows(a, b Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if x, ok := a[i].([]byte); ok {
			y, ok := b[i].([]byte)
			if !ok || !bytes.Equal(x, y) {
				return false
			}
		} else if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Check is the verification of one table.
type Check struct {
	Table                string
	SourceRows, DestRows int64
	SourceSum, DestSum   [sha256.Size]byte
}

// Match reports whether both sides hold the same rows.
func (c Check) Match() bool {
	return c.SourceRows == c.DestRows && c.SourceSum == c.DestSum
}

// Verify reads opt.Tables on both sides in key order, both at once, and
// returns each side's row count and checksum: SHA-256 over the rows, each
// value in a neutral form (integers in decimal, booleans 0 or 1, text and
// bytes as they are, JSON canonical, revision texts and renders decoded),
// each preceded by its length. Rows of an appended table above the
// source's largest key are the destination's own and not compared.
func Verify(ctx context.Context, src, dst Store, opt Options) ([]Check, error) {
	batch := opt.BatchSize
	if batch <= 0 {
		batch = DefaultBatch
	}
	var out []Check
	for _, t := range opt.Tables {
		c := Check{Table: t.Name}
		until, none, err := appendedBound(ctx, src, t)
		if err != nil {
			return out, err
		}
		total, err := src.CountRows(ctx, t)
		if err != nil {
			return out, fmt.Errorf("source: %w", err)
		}
		report(opt, Progress{Verb: "verify", Table: t.Name, Total: total})
		srcErr := make(chan error, 1)
		go func() {
			var err error
			c.SourceRows, c.SourceSum, err = checksum(ctx, src, t, nil, batch, nil)
			srcErr <- err
		}()
		var dstErr error
		if !none {
			c.DestRows, c.DestSum, dstErr = checksum(ctx, dst, t, until, batch, func(n int64) {
				report(opt, Progress{Verb: "verify", Table: t.Name, Done: n, Total: max(total, n)})
			})
		} else {
			c.DestSum = sha256.Sum256(nil)
		}
		if err := <-srcErr; err != nil {
			return out, fmt.Errorf("source: %w", err)
		}
		if dstErr != nil {
			return out, fmt.Errorf("destination: %w", dstErr)
		}
		report(opt, Progress{Verb: "verify", Table: t.Name, Done: c.DestRows, Total: max(total, c.DestRows), Finished: true})
		out = append(out, c)
	}
	return out, nil
}

// checksum counts and hashes t's rows in s up to until (nil: all).
func checksum(ctx context.Context, s Store, t *Table, until Key, batch int, progress func(int64)) (int64, [sha256.Size]byte, error) {
	h := sha256.New()
	var n int64
	var after Key
	for {
		rows, err := s.ReadRows(ctx, t, Query{After: after, Until: until, Limit: t.batchOf(batch)})
		if err != nil {
			return 0, [sha256.Size]byte{}, err
		}
		for _, r := range rows {
			hashRow(h, r)
		}
		n += int64(len(rows))
		if progress != nil && len(rows) > 0 {
			progress(n)
		}
		if len(rows) < t.batchOf(batch) {
			break
		}
		after = t.KeyOf(rows[len(rows)-1])
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return n, sum, nil
}

func hashRow(h hash.Hash, r Row) {
	var num [20]byte
	var size [binary.MaxVarintLen64]byte
	field := func(n int) { h.Write(size[:binary.PutUvarint(size[:], uint64(n))]) }
	for _, v := range r {
		switch v := v.(type) {
		case int64:
			b := strconv.AppendInt(num[:0], v, 10)
			field(len(b))
			h.Write(b)
		case bool:
			field(1)
			if v {
				io.WriteString(h, "1")
			} else {
				io.WriteString(h, "0")
			}
		case string:
			field(len(v))
			io.WriteString(h, v)
		case []byte:
			field(len(v))
			h.Write(v)
		default:
			panic(fmt.Sprintf("dump: a value of type %T in a row", v))
		}
	}
}
