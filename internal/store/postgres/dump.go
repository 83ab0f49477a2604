package postgres

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wikid/wikid/internal/store/dump"
)

// The store's side of a copy between stores (package dump): rows as
// neutral values, written with COPY, a batch per transaction.

var _ dump.Store = (*DB)(nil)

// CountRows counts t's rows.
func (db *DB) CountRows(ctx context.Context, t *dump.Table) (int64, error) {
	var n int64
	if err := db.pool.QueryRow(ctx, t.CountSQL()).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: count %s: %w", t.Name, err)
	}
	return n, nil
}

func placeholder(i int) string { return "$" + strconv.Itoa(i) }

// ReadRows returns t's rows that q selects. Renders are stored as is
// (codec 0); one with another codec is refused, as FindRender does.
func (db *DB) ReadRows(ctx context.Context, t *dump.Table, q dump.Query) ([]dump.Row, error) {
	q.Columns = t.ColumnNames()
	if t.Name == "renders" {
		q.Columns += ", codec"
	}
	query, args := t.SQL(q, placeholder)
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: read %s: %w", t.Name, err)
	}
	defer rows.Close()
	var out []dump.Row
	for rows.Next() {
		vals := make([]any, len(t.Columns), len(t.Columns)+1)
		for i, c := range t.Columns {
			switch c.Kind {
			case dump.Int:
				vals[i] = new(int64)
			case dump.Bool:
				vals[i] = new(bool)
			case dump.Bytes:
				vals[i] = new([]byte)
			default:
				vals[i] = new(string)
			}
		}
		var codec int
		if t.Name == "renders" {
			vals = append(vals, &codec)
		}
		if err := rows.Scan(vals...); err != nil {
			return nil, fmt.Errorf("postgres: read %s: %w", t.Name, err)
		}
		r := make(dump.Row, len(t.Columns))
		for i, c := range t.Columns {
			switch v := vals[i].(type) {
			case *int64:
				r[i] = *v
			case *bool:
				r[i] = *v
			case *[]byte:
				if *v == nil {
					*v = []byte{}
				}
				r[i] = *v
			case *string:
				r[i] = *v
				if c.Kind == dump.JSON {
					if r[i], err = dump.CanonicalJSON(*v); err != nil {
						return nil, fmt.Errorf("postgres: read %s row %s: %s: %w", t.Name, dump.FormatKey(t.KeyOf(r)), c.Name, err)
					}
				}
			}
		}
		if codec != 0 {
			return nil, fmt.Errorf("postgres: read renders row %s: stored with codec %d, which this store does not read", dump.FormatKey(t.KeyOf(r)), codec)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: read %s: %w", t.Name, err)
	}
	return out, nil
}

// WriteRows inserts rows of t with COPY in one transaction. PostgreSQL
// refuses text with a NUL or bytes that are not UTF-8, which an old
// SQLite file may hold: the error names the batch's keys.
func (db *DB) WriteRows(ctx context.Context, t *dump.Table, rows []dump.Row) error {
	if len(rows) == 0 {
		return nil
	}
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	src := make([][]any, len(rows))
	for i, r := range rows {
		src[i] = r
	}
	err := pgx.BeginTxFunc(ctx, db.pool, writeTx, func(tx pgx.Tx) error {
		_, err := tx.CopyFrom(ctx, pgx.Identifier{t.Name}, names, pgx.CopyFromRows(src))
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: write %d rows of %s (keys %s to %s): %w", len(rows), t.Name,
			dump.FormatKey(t.KeyOf(rows[0])), dump.FormatKey(t.KeyOf(rows[len(rows)-1])), err)
	}
	return nil
}

// FinishCopy sets every identity sequence past the largest ID its table
// holds (the copy wrote the IDs itself, which leaves the sequences
// behind), resets every page's search entry and queues a search job for
// each live page that has none queued, in one transaction.
func (db *DB) FinishCopy(ctx context.Context) (int, error) {
	var n int64
	at := time.Now().UnixMilli()
	err := db.write(ctx, func(tx pgx.Tx) error {
		for _, t := range dump.Tables {
			if t.Key != 1 || t.Columns[0].Name != "id" || t.Columns[0].Kind != dump.Int {
				continue
			}
			if _, err := tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence($1, 'id'), coalesce(max(id), 0) + 1, false) FROM `+t.Name, t.Name); err != nil {
				return fmt.Errorf("set the sequence of %s: %w", t.Name, err)
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE pages SET search_rev = 0 WHERE search_rev <> 0`); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO jobs (kind, payload, dedupe_key, run_at, created, updated)
			SELECT 'search', jsonb_build_object('title', title)::text, 'search:' || title, $1, $1, $1
			FROM pages WHERE NOT deleted ORDER BY id
			ON CONFLICT (dedupe_key) WHERE state = 'queued' AND dedupe_key <> '' DO NOTHING`, at)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: finish the copy: %w", err)
	}
	return int(n), nil
}
