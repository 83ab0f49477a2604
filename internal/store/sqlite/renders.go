package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
)

// FindRender returns the stored render of a revision; ErrNotFound if none.
// A stored render that does not decode is an error.
func (db *DB) FindRender(ctx context.Context, revID int64, version int) ([]byte, error) {
	var data []byte
	var codec int
	if err := db.findRender.QueryRowContext(ctx, revID, version).Scan(&data, &codec); err != nil {
		return nil, fmt.Errorf("sqlite: find render of revision %d: %w", revID, notFound(err))
	}
	data, err := decodeRender(data, codec)
	if err != nil {
		return nil, fmt.Errorf("sqlite: find render of revision %d: %w", revID, err)
	}
	return data, nil
}

// SaveRender stores (or replaces) the render of a revision, compressed
// before the write transaction begins.
func (db *DB) SaveRender(ctx context.Context, revID int64, version int, data []byte) error {
	stored, codec := encodeRender(data)
	err := db.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO renders (rev_id, version, data, codec) VALUES (?, ?, ?, ?)`,
			revID, version, stored, codec)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: save render of revision %d: %w", revID, err)
	}
	return nil
}

// DeleteRenders drops the renders of every revision of the given pages.
func (db *DB) DeleteRenders(ctx context.Context, pageIDs []int64) error {
	if len(pageIDs) == 0 {
		return nil
	}
	arg, err := json.Marshal(pageIDs)
	if err != nil {
		return fmt.Errorf("sqlite: delete renders: %w", err)
	}
	err = db.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM renders WHERE rev_id IN
			(SELECT id FROM revisions WHERE page_id IN (SELECT value FROM json_each(?)))`, string(arg))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete renders: %w", err)
	}
	return nil
}
