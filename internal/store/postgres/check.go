package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

// OpenForCheck connects to the database dsn names for reading, beside the
// nodes serving it: no migration runs. The schema must be the one this
// build expects.
func OpenForCheck(ctx context.Context, dsn string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: the database setting is not a valid PostgreSQL connection string: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect to %s: %w", redact(cfg), err)
	}
	db := &DB{pool: pool}
	have, err := db.SchemaVersion(ctx)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %s: %w", redact(cfg), err)
	}
	if want := LatestMigration(); have != want {
		pool.Close()
		return nil, fmt.Errorf("postgres: %s: the schema is at version %d, this wikid expects %d; "+
			"start this version of wikid once (wikid serve or wikid migrate up) to migrate it", redact(cfg), have, want)
	}
	return db, nil
}

// EachPageTitle calls fn for every page, live and deleted, in id order,
// reading titles only. It stops at fn's first error and returns it.
func (db *DB) EachPageTitle(ctx context.Context, fn func(store.CheckTitle) error) error {
	rows, err := db.pool.Query(ctx, `SELECT id, title, ns, deleted FROM pages ORDER BY id`)
	if err != nil {
		return fmt.Errorf("postgres: page titles: %w", err)
	}
	var t store.CheckTitle
	_, err = pgx.ForEachRow(rows, []any{&t.PageID, &t.Title, &t.NS, &t.Deleted}, func() error { return fn(t) })
	if err != nil {
		return fmt.Errorf("postgres: page titles: %w", err)
	}
	return nil
}

// EachUserName calls fn for every user in id order, reading names only.
// It stops at fn's first error and returns it.
func (db *DB) EachUserName(ctx context.Context, fn func(store.CheckUser) error) error {
	rows, err := db.pool.Query(ctx, `SELECT id, name, skeleton FROM users ORDER BY id`)
	if err != nil {
		return fmt.Errorf("postgres: user names: %w", err)
	}
	var u store.CheckUser
	_, err = pgx.ForEachRow(rows, []any{&u.ID, &u.Name, &u.Skeleton}, func() error { return fn(u) })
	if err != nil {
		return fmt.Errorf("postgres: user names: %w", err)
	}
	return nil
}

// EachInconsistency runs the structural checks and calls fn for every row
// that breaks one, streaming. It stops at fn's first error and returns it.
func (db *DB) EachInconsistency(ctx context.Context, fn func(store.Inconsistency) error) error {
	for _, q := range store.StructuralChecks {
		rows, err := db.pool.Query(ctx, q)
		if err != nil {
			return fmt.Errorf("postgres: structural check: %w", err)
		}
		var in store.Inconsistency
		if _, err := pgx.ForEachRow(rows, []any{&in.PageID, &in.Title, &in.RevID, &in.Problem}, func() error { return fn(in) }); err != nil {
			return fmt.Errorf("postgres: structural check: %w", err)
		}
	}
	return nil
}

// SetPageNamespace sets page id's ns column: the repair of `wikid
// fix-titles` for a page whose title today's rules put in another
// namespace than the one recorded when it was saved. The title is left
// as it is.
func (db *DB) SetPageNamespace(ctx context.Context, id int64, ns string) error {
	tag, err := db.pool.Exec(ctx, `UPDATE pages SET ns = $1 WHERE id = $2`, ns, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = wiki.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("postgres: set the namespace of page %d: %w", id, err)
	}
	return nil
}
