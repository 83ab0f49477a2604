package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

// The purge log's IDs must go up by one per event and become visible in
// that order: a reader polling for IDs above its last one takes a missing
// ID for events trimmed before it read them, and drops all it caches. A
// sequence would not do: two appends could take IDs 7 and 8 and commit 8
// first, and a reader would skip 7. So an append takes a transaction-scoped
// advisory lock, held until it commits, and numbers its events from the
// newest committed one; the next append cannot number its own until this
// one is visible.

// purgeLock is the advisory lock key that serializes appends to the log.
const purgeLock = 0x77696b69642d70 // "wikid-p"

// purgeChannel is the NOTIFY channel on which an append announces its
// last ID; PostgreSQL delivers it when the append commits.
const purgeChannel = "wikid_purges"

// AppendPurges adds events to the log in one transaction, numbered one by
// one after the newest event, and notifies listeners (ListenPurges).
func (db *DB) AppendPurges(ctx context.Context, events []wiki.PurgeEvent) error {
	if len(events) == 0 {
		return nil
	}
	err := db.write(ctx, func(tx pgx.Tx) error { return appendPurges(ctx, tx, events) })
	if err != nil {
		return fmt.Errorf("postgres: append purges: %w", err)
	}
	return nil
}

// appendPurges appends events in tx, under the log's lock, which tx holds
// until it ends: in a change's transaction, the other appends wait for its
// commit (take it as late in the transaction as can be).
func appendPurges(ctx context.Context, tx pgx.Tx, events []wiki.PurgeEvent) error {
	if len(events) == 0 {
		return nil
	}
	n := len(events)
	origins, titles := make([]string, n), make([]string, n)
	ats, stale := make([]int64, n), make([]bool, n)
	pages, users, sessions := make([]string, n), make([]string, n), make([]string, n)
	for i, ev := range events {
		c := store.EncodePurge(ev)
		origins[i], ats[i], stale[i], titles[i] = ev.Origin, ms(ev.Time), ev.Stale, c.Titles
		pages[i], users[i], sessions[i] = c.Pages, c.Users, c.Sessions
	}
	// The lock comes first, in a statement of its own: the insert's
	// snapshot, taken after it, sees every append committed before.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(purgeLock)); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `WITH added AS (
			INSERT INTO purges (id, origin, at, stale, titles, pages, users, sessions)
			SELECT (SELECT coalesce(max(id), 0) FROM purges) + e.n, e.origin, e.at, e.stale, e.titles, e.pages, e.users, e.sessions
			FROM unnest($1::text[], $2::bigint[], $3::boolean[], $4::text[], $5::text[], $6::text[], $7::text[])
				WITH ORDINALITY AS e(origin, at, stale, titles, pages, users, sessions, n)
			RETURNING id)
		SELECT pg_notify('`+purgeChannel+`', max(id)::text) FROM added`,
		origins, ats, stale, titles, pages, users, sessions)
	return err
}

// PurgesAfter returns up to lim events with an ID above after.
func (db *DB) PurgesAfter(ctx context.Context, after int64, lim int) ([]wiki.PurgeEvent, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, origin, at, stale, titles, pages, users, sessions FROM purges
		WHERE id > $1 ORDER BY id LIMIT $2`, after, limit(lim))
	if err != nil {
		return nil, fmt.Errorf("postgres: purges after %d: %w", after, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (wiki.PurgeEvent, error) {
		var ev wiki.PurgeEvent
		var at int64
		var titles, pages, users, sessions string
		if err := row.Scan(&ev.ID, &ev.Origin, &at, &ev.Stale, &titles, &pages, &users, &sessions); err != nil {
			return ev, err
		}
		ev.Time = fromMS(at)
		err := store.PurgeColumns{Titles: titles, Pages: pages, Users: users, Sessions: sessions}.Decode(&ev)
		return ev, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: purges after %d: %w", after, err)
	}
	return out, nil
}

// LastPurge returns the newest event's ID, 0 when there is none.
func (db *DB) LastPurge(ctx context.Context) (int64, error) {
	var id int64
	if err := db.pool.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM purges`).Scan(&id); err != nil {
		return 0, fmt.Errorf("postgres: last purge: %w", err)
	}
	return id, nil
}

// TrimPurges drops events made before before, but the newest (the next
// append numbers from it, so IDs never go back). It drops the oldest
// events only, up to the first one made since before: never one between
// two it keeps (processes' clocks differ), which a reader would miss
// without seeing a gap. It needs no lock: it never deletes the newest
// event an append numbers from.
func (db *DB) TrimPurges(ctx context.Context, before time.Time) (int, error) {
	return db.deleteCount(ctx, "trim purges", `DELETE FROM purges WHERE id < coalesce(
		(SELECT min(id) FROM purges WHERE at >= $1), (SELECT max(id) FROM purges))`, ms(before))
}

// ListenPurges calls wake once it listens, then for every append to the
// purge log (by any node) until ctx ends, on a connection of its own
// taken from the pool. It
// returns nil when ctx ends, or the error that broke the connection: the
// caller listens again and reads the log for what it may have missed
// meanwhile. Notifications only wake the reader; the log stays the record.
func (db *DB) ListenPurges(ctx context.Context, wake func()) error {
	pc, err := db.pool.Acquire(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("postgres: listen for purges: %w", err)
	}
	// The connection leaves the pool: a LISTEN would otherwise stay on it
	// for whoever borrows it next, and it is busy waiting meanwhile.
	conn := pc.Hijack()
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		conn.Close(closeCtx)
	}()
	if _, err := conn.Exec(ctx, `LISTEN `+purgeChannel); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("postgres: listen for purges: %w", err)
	}
	// Listening: what was appended before this was not notified here,
	// and the caller reads the log now.
	wake()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("postgres: listen for purges: %w", err)
		}
		wake()
	}
}
