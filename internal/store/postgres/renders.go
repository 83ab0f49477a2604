package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wikid/wikid/internal/wiki"
)

// Renders are stored as is (codec 0): PostgreSQL compresses large values
// itself (TOAST), so the zstd codec of the SQLite store is not used here.

// FindRender returns the stored render of a revision; ErrNotFound if none.
// A render stored with a codec this store does not write is an error.
func (db *DB) FindRender(ctx context.Context, revID int64, version int) ([]byte, error) {
	var data []byte
	var codec int
	err := db.pool.QueryRow(ctx, `SELECT data, codec FROM renders WHERE rev_id = $1 AND version = $2`, revID, version).Scan(&data, &codec)
	if err != nil {
		return nil, fmt.Errorf("postgres: find render of revision %d: %w", revID, notFound(err))
	}
	if codec != 0 {
		return nil, fmt.Errorf("postgres: find render of revision %d: stored with codec %d, which this store does not read", revID, codec)
	}
	return data, nil
}

// SaveRender stores (or replaces) the render of a revision. A render that
// exists is replaced, as the contract asks: the caller's render is the
// newer one (a render saved with old link colours before DeleteRenders ran
// is then superseded, not kept). When two nodes render the same revision
// and version they store the same bytes, and the second write changes
// nothing: the row is rewritten only if its bytes differ, which spares a
// new row version, its TOAST chunks and their WAL. A render of a revision
// that does not exist (the foreign key) is refused with ErrNotFound; the
// caller logs it and serves the render it made.
func (db *DB) SaveRender(ctx context.Context, revID int64, version int, data []byte) error {
	if data == nil {
		data = []byte{} // data is NOT NULL
	}
	err := db.write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO renders (rev_id, version, codec, data) VALUES ($1, $2, 0, $3)
			ON CONFLICT (rev_id, version) DO UPDATE SET codec = 0, data = excluded.data
			WHERE renders.codec <> 0 OR renders.data <> excluded.data`, revID, version, data)
		return err
	})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23503" {
		return fmt.Errorf("postgres: save render of revision %d: no such revision: %w", revID, wiki.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("postgres: save render of revision %d: %w", revID, err)
	}
	return nil
}

// DeleteRenders drops the renders of every revision of the given pages
// (found through revisions_page, then the renders key).
func (db *DB) DeleteRenders(ctx context.Context, pageIDs []int64) error {
	if len(pageIDs) == 0 {
		return nil
	}
	err := db.write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM renders WHERE rev_id IN
			(SELECT id FROM revisions WHERE page_id = ANY($1))`, pageIDs)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: delete renders: %w", err)
	}
	return nil
}
