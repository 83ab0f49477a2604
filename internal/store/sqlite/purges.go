package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

// AppendPurges adds events to the purge log in one transaction.
func (db *DB) AppendPurges(ctx context.Context, events []wiki.PurgeEvent) error {
	if len(events) == 0 {
		return nil
	}
	err := db.write(ctx, func(tx *wtx) error { return appendPurges(ctx, tx, events) })
	if err != nil {
		return fmt.Errorf("sqlite: append purges: %w", err)
	}
	return nil
}

// appendPurges appends events to the log in tx (the single writer numbers
// them in commit order).
func appendPurges(ctx context.Context, tx *wtx, events []wiki.PurgeEvent) error {
	for _, ev := range events {
		c := store.EncodePurge(ev)
		if _, err := tx.ExecContext(ctx, `INSERT INTO purges (origin, at, stale, titles, pages, users, sessions) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			ev.Origin, ms(ev.Time), ev.Stale, c.Titles, c.Pages, c.Users, c.Sessions); err != nil {
			return err
		}
	}
	return nil
}

// PurgesAfter returns up to limit events with an ID above after.
func (db *DB) PurgesAfter(ctx context.Context, after int64, limit int) ([]wiki.PurgeEvent, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, origin, at, stale, titles, pages, users, sessions FROM purges WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: purges after %d: %w", after, err)
	}
	defer rows.Close()
	var out []wiki.PurgeEvent
	for rows.Next() {
		var ev wiki.PurgeEvent
		var at int64
		var titles, pages, users, sessions string
		if err := rows.Scan(&ev.ID, &ev.Origin, &at, &ev.Stale, &titles, &pages, &users, &sessions); err != nil {
			return nil, fmt.Errorf("sqlite: purges after %d: %w", after, err)
		}
		ev.Time = fromMS(at)
		cols := store.PurgeColumns{Titles: titles, Pages: pages, Users: users, Sessions: sessions}
		if err := cols.Decode(&ev); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: purges after %d: %w", after, err)
	}
	return out, nil
}

// LastPurge returns the newest event's ID, 0 when there is none.
func (db *DB) LastPurge(ctx context.Context) (int64, error) {
	var id int64
	if err := db.r.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM purges`).Scan(&id); err != nil {
		return 0, fmt.Errorf("sqlite: last purge: %w", err)
	}
	return id, nil
}

// TrimPurges drops events made before before, but the newest. It drops
// the oldest events only, up to the first one made since before: never one
// between two it keeps (processes' clocks differ), which a reader would
// miss without seeing a gap.
func (db *DB) TrimPurges(ctx context.Context, before time.Time) (int, error) {
	return db.deleteWhere(ctx, "trim purges", `DELETE FROM purges WHERE id < coalesce(
		(SELECT min(id) FROM purges WHERE at >= ?), (SELECT max(id) FROM purges))`, ms(before))
}
