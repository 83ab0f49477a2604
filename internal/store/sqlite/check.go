package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"runtime"

	"github.com/wikid/wikid/internal/store"
)

// OpenReadOnly opens an existing database for reading only, beside a
// server that may be writing it: no migration runs and nothing is written
// (the connections are read-only and query_only; a write method returns an
// error). The schema must be the one this build expects.
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "query_only(1)")
	r, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	db := &DB{path: path, r: &readPool{DB: r}, w: r, mergeTurn: make(chan struct{}, 1)}
	have, err := db.SchemaVersion(ctx)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if want := latestMigration(); have != want {
		r.Close()
		return nil, fmt.Errorf("sqlite: open %s: the schema is at version %d, this wikid expects %d; "+
			"start this version of wikid once (wikid serve) to migrate it", path, have, want)
	}
	if err := db.prepare(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	return db, nil
}

// latestMigration is the version of the newest embedded migration.
func latestMigration() int {
	names, _ := fs.Glob(migrations, "migrations/*.sql")
	v := 0
	for _, name := range names {
		var n int
		if _, err := fmt.Sscanf(name, "migrations/%d_", &n); err == nil {
			v = max(v, n)
		}
	}
	return v
}

// EachPageTitle calls fn for every page, live and deleted, in id order,
// reading titles only. It stops at fn's first error and returns it.
func (db *DB) EachPageTitle(ctx context.Context, fn func(store.CheckTitle) error) error {
	rows, err := db.r.QueryContext(ctx, `SELECT id, title, ns, deleted FROM pages ORDER BY id`)
	if err != nil {
		return fmt.Errorf("sqlite: page titles: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t store.CheckTitle
		if err := rows.Scan(&t.PageID, &t.Title, &t.NS, &t.Deleted); err != nil {
			return fmt.Errorf("sqlite: page titles: %w", err)
		}
		if err := fn(t); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: page titles: %w", err)
	}
	return nil
}

// EachUserName calls fn for every user in id order, reading names only.
// It stops at fn's first error and returns it.
func (db *DB) EachUserName(ctx context.Context, fn func(store.CheckUser) error) error {
	rows, err := db.r.QueryContext(ctx, `SELECT id, name, skeleton FROM users ORDER BY id`)
	if err != nil {
		return fmt.Errorf("sqlite: user names: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var u store.CheckUser
		if err := rows.Scan(&u.ID, &u.Name, &u.Skeleton); err != nil {
			return fmt.Errorf("sqlite: user names: %w", err)
		}
		if err := fn(u); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: user names: %w", err)
	}
	return nil
}

// EachInconsistency runs the structural checks and calls fn for every row
// that breaks one, streaming. It stops at fn's first error and returns it.
func (db *DB) EachInconsistency(ctx context.Context, fn func(store.Inconsistency) error) error {
	for _, q := range store.StructuralChecks {
		if err := db.eachInconsistency(ctx, q, fn); err != nil {
			return err
		}
	}
	return nil
}

func (db *DB) eachInconsistency(ctx context.Context, q string, fn func(store.Inconsistency) error) error {
	rows, err := db.r.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("sqlite: structural check: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var in store.Inconsistency
		if err := rows.Scan(&in.PageID, &in.Title, &in.RevID, &in.Problem); err != nil {
			return fmt.Errorf("sqlite: structural check: %w", err)
		}
		if err := fn(in); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: structural check: %w", err)
	}
	return nil
}

// SetPageNamespace sets page id's ns column: the repair of `wikid
// fix-titles` for a page whose title today's rules put in another
// namespace than the one recorded when it was saved. The title is left
// as it is.
func (db *DB) SetPageNamespace(ctx context.Context, id int64, ns string) error {
	err := db.write(ctx, func(tx *wtx) error {
		return affected(tx.ExecContext(ctx, `UPDATE pages SET ns = ? WHERE id = ?`, ns, id))
	})
	if err != nil {
		return fmt.Errorf("sqlite: set the namespace of page %d: %w", id, err)
	}
	return nil
}
