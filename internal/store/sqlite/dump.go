package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wikid/wikid/internal/store/dump"
)

// The store's side of a copy between stores (package dump): rows as
// neutral values, booleans stored as 0 and 1, revision texts and renders
// decoded on reading and compressed on writing as the store's own writes
// do (codec.go).

var _ dump.Store = (*DB)(nil)

// CountRows counts t's rows.
func (db *DB) CountRows(ctx context.Context, t *dump.Table) (int64, error) {
	var n int64
	if err := db.r.QueryRowContext(ctx, t.CountSQL()).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: count %s: %w", t.Name, err)
	}
	return n, nil
}

// ReadRows returns t's rows that q selects, revision texts and renders
// decoded. Renders are read with their codec, after the neutral columns.
func (db *DB) ReadRows(ctx context.Context, t *dump.Table, q dump.Query) ([]dump.Row, error) {
	q.Columns = t.ColumnNames()
	if t.Name == "renders" {
		q.Columns += ", codec"
	}
	query, args := t.SQL(q, func(int) string { return "?" })
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: read %s: %w", t.Name, err)
	}
	defer rows.Close()
	var out []dump.Row
	for rows.Next() {
		dest := make([]any, len(t.Columns), len(t.Columns)+1)
		ints := make([]int64, len(t.Columns)+1)
		strs := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			switch {
			case t.Name == "revisions" && c.Name == "text":
				dest[i] = textColumn{&strs[i]}
			case c.Kind == dump.Int || c.Kind == dump.Bool:
				dest[i] = &ints[i]
			case c.Kind == dump.Bytes:
				dest[i] = new([]byte)
			default:
				dest[i] = &strs[i]
			}
		}
		if t.Name == "renders" {
			dest = append(dest, &ints[len(t.Columns)])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("sqlite: read %s: %w", t.Name, err)
		}
		r := make(dump.Row, len(t.Columns))
		for i, c := range t.Columns {
			switch c.Kind {
			case dump.Int:
				r[i] = ints[i]
			case dump.Bool:
				r[i] = ints[i] != 0
			case dump.Text:
				r[i] = strs[i]
			case dump.JSON:
				if r[i], err = dump.CanonicalJSON(strs[i]); err != nil {
					return nil, fmt.Errorf("sqlite: read %s row %s: %s: %w", t.Name, dump.FormatKey(t.KeyOf(r)), c.Name, err)
				}
			case dump.Bytes:
				b := *dest[i].(*[]byte)
				if b == nil {
					b = []byte{}
				}
				r[i] = b
			}
		}
		if t.Name == "renders" {
			data, err := decodeRender(r[2].([]byte), int(ints[len(t.Columns)]))
			if err != nil {
				return nil, fmt.Errorf("sqlite: read renders row %s: %w", dump.FormatKey(t.KeyOf(r)), err)
			}
			r[2] = data
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: read %s: %w", t.Name, err)
	}
	return out, nil
}

// WriteRows inserts rows of t in one transaction, revision texts and
// renders compressed (before the transaction begins, so that the writer
// is not held while zstd runs).
func (db *DB) WriteRows(ctx context.Context, t *dump.Table, rows []dump.Row) error {
	if len(rows) == 0 {
		return nil
	}
	names := t.ColumnNames()
	n := len(t.Columns)
	if t.Name == "renders" {
		names += ", codec"
		n++
	}
	query := `INSERT INTO ` + t.Name + ` (` + names + `) VALUES (?` + strings.Repeat(", ?", n-1) + `)`
	args := make([][]any, len(rows))
	for j, r := range rows {
		a := make([]any, len(r), n)
		for i, c := range t.Columns {
			switch v := r[i].(type) {
			case bool:
				a[i] = b2i(v)
			case string:
				if t.Name == "revisions" && c.Name == "text" {
					a[i] = encodeText(v).value
				} else {
					a[i] = v
				}
			default:
				a[i] = v
			}
		}
		if t.Name == "renders" {
			data, codec := encodeRender(r[2].([]byte))
			a[2] = data
			a = append(a, codec)
		}
		args[j] = a
	}
	err := db.write(ctx, func(tx *wtx) error {
		for _, a := range args {
			if _, err := tx.ExecContext(ctx, query, a...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: write %d rows of %s (keys %s to %s): %w", len(rows), t.Name,
			dump.FormatKey(t.KeyOf(rows[0])), dump.FormatKey(t.KeyOf(rows[len(rows)-1])), err)
	}
	return nil
}

// queueSearchJobs queues a search job for each live page matching cond
// (SQL over pages, with args) that has none queued, and returns how many
// it queued. The job's kind, payload and key are those of migrations 0009
// and 0021, which queue the same.
func queueSearchJobs(ctx context.Context, tx *wtx, cond string, args ...any) (int64, error) {
	at := time.Now().UnixMilli()
	res, err := tx.ExecContext(ctx, `INSERT INTO jobs (kind, payload, dedupe_key, run_at, created, updated)
		SELECT 'search', json_object('title', title), 'search:' || title, ?, ?, ?
		FROM pages WHERE deleted = 0 AND (`+cond+`) ORDER BY id
		ON CONFLICT (dedupe_key) WHERE state = 'queued' AND dedupe_key <> '' DO NOTHING`, append([]any{at, at, at}, args...)...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// FinishCopy resets every page's search entry and queues a search job for
// each live page that has none queued, in one transaction. The file has
// no sequences to set: a new row's ID is one more than the largest.
func (db *DB) FinishCopy(ctx context.Context) (int, error) {
	var n int64
	err := db.write(ctx, func(tx *wtx) (err error) {
		if _, err := tx.ExecContext(ctx, `UPDATE pages SET search_rev = 0 WHERE search_rev <> ?`, 0); err != nil {
			return err
		}
		n, err = queueSearchJobs(ctx, tx, `1`)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: finish the copy: %w", err)
	}
	return int(n), nil
}
