package postgres

import (
	"context"
	"fmt"
)

// TableSpace is the disk space of one table: its rows, its TOAST
// (compressed or out-of-line large values) and its indexes.
type TableSpace struct {
	Name                 string
	Rows, Toast, Indexes int64
}

// Total is the table's bytes with its TOAST and indexes.
func (t TableSpace) Total() int64 { return t.Rows + t.Toast + t.Indexes }

// Space returns the space of every table of the wiki, largest first.
func (db *DB) Space(ctx context.Context) ([]TableSpace, error) {
	rows, err := db.pool.Query(ctx, `SELECT c.relname, pg_relation_size(c.oid),
			coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0), pg_indexes_size(c.oid)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind = 'r' AND n.nspname = current_schema()
		ORDER BY pg_total_relation_size(c.oid) DESC, c.relname`)
	if err != nil {
		return nil, fmt.Errorf("postgres: space: %w", err)
	}
	defer rows.Close()
	var out []TableSpace
	for rows.Next() {
		var t TableSpace
		if err := rows.Scan(&t.Name, &t.Rows, &t.Toast, &t.Indexes); err != nil {
			return nil, fmt.Errorf("postgres: space: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: space: %w", err)
	}
	return out, nil
}
