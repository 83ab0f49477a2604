package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

// WatchTitles implements wiki.WatchStore. The user's row is locked first,
// so that two concurrent additions cannot both pass the size check.
func (db *DB) WatchTitles(ctx context.Context, userID int64, titles []wiki.Title, expires, at time.Time) error {
	err := db.write(ctx, func(tx pgx.Tx) error {
		var id int64
		if err := tx.QueryRow(ctx, `SELECT id FROM users WHERE id = $1 FOR UPDATE`, userID).Scan(&id); err != nil {
			if err == pgx.ErrNoRows {
				return wiki.ErrNotFound
			}
			return err
		}
		var b pgx.Batch
		b.Queue(`DELETE FROM watchlist WHERE user_id = $1 AND expires <> 0 AND expires <= $2`, userID, ms(at))
		for _, t := range titles {
			b.Queue(`INSERT INTO watchlist (user_id, title, expires) VALUES ($1, $2, $3)
				ON CONFLICT (user_id, title) DO UPDATE SET expires = excluded.expires`, userID, string(t), msOrZero(expires))
		}
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM watchlist WHERE user_id = $1`, userID).Scan(&n); err != nil {
			return err
		}
		if n > wiki.MaxWatchlist {
			return wiki.ErrWatchlistFull
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: watch: %w", err)
	}
	return nil
}

// UnwatchTitles implements wiki.WatchStore.
func (db *DB) UnwatchTitles(ctx context.Context, userID int64, titles []wiki.Title) error {
	names := make([]string, len(titles))
	for i, t := range titles {
		names[i] = string(t)
	}
	if _, err := db.pool.Exec(ctx, `DELETE FROM watchlist WHERE user_id = $1 AND title = ANY($2)`, userID, names); err != nil {
		return fmt.Errorf("postgres: unwatch: %w", err)
	}
	return nil
}

// Watchlist implements wiki.WatchStore.
func (db *DB) Watchlist(ctx context.Context, userID int64, from wiki.Title, n int, at time.Time) ([]wiki.Watch, error) {
	rows, err := db.pool.Query(ctx, `SELECT title, expires FROM watchlist
		WHERE user_id = $1 AND title >= $2 AND (expires = 0 OR expires > $3) ORDER BY title LIMIT $4`,
		userID, string(from), ms(at), limit(n))
	if err != nil {
		return nil, fmt.Errorf("postgres: watchlist: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (wiki.Watch, error) {
		var title string
		var expires int64
		err := row.Scan(&title, &expires)
		return wiki.Watch{Title: wiki.Title(title), Expires: fromMSOrZero(expires)}, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: watchlist: %w", err)
	}
	return out, nil
}

// WatchedChanges implements wiki.WatchStore: the user's watchlist rows,
// each joined to its title's changes (changes_title), so that the read
// costs the watched titles' changes, not a scan of every change.
func (db *DB) WatchedChanges(ctx context.Context, userID int64, q wiki.ChangeQuery, at time.Time) ([]wiki.Change, error) {
	before := q.Before
	if before <= 0 {
		before = noCursor
	}
	var args []any
	param := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	query := `SELECT ` + changeCols + ` FROM watchlist w JOIN changes c ON c.title = w.title
		WHERE w.user_id = ` + param(userID) + ` AND (w.expires = 0 OR w.expires > ` + param(ms(at)) + `) AND c.id < ` + param(before) +
		store.ChangeFilters("c.", q, liveRevision, param) + ` ORDER BY c.id DESC LIMIT ` + param(limit(q.Limit))
	out, err := db.readChanges(ctx, query, args)
	if err != nil {
		return nil, fmt.Errorf("postgres: watched changes: %w", err)
	}
	return out, nil
}

// CountWatchers implements wiki.WatchStore.
func (db *DB) CountWatchers(ctx context.Context, t wiki.Title, at time.Time) (int, error) {
	var n int
	err := db.pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM watchlist WHERE title = $1 AND (expires = 0 OR expires > $2) LIMIT $3) w`,
		string(t), ms(at), wiki.MaxCount).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("postgres: count watchers: %w", err)
	}
	return n, nil
}

// queueMoveWatchers makes the watchers of a moved page's titles (the page
// and its talk page) watch the new ones too, as MediaWiki does; they keep
// watching the old titles, which now hold the redirects.
func queueMoveWatchers(b *pgx.Batch, from, to wiki.Title) {
	b.Queue(`INSERT INTO watchlist (user_id, title, expires) SELECT user_id, $1, expires FROM watchlist WHERE title = $2
		ON CONFLICT (user_id, title) DO NOTHING`, string(to), string(from))
	if f, ok := from.Pair(); ok {
		if t, ok := to.Pair(); ok {
			b.Queue(`INSERT INTO watchlist (user_id, title, expires) SELECT user_id, $1, expires FROM watchlist WHERE title = $2
				ON CONFLICT (user_id, title) DO NOTHING`, string(t), string(f))
		}
	}
}

// SetWatchlistToken implements wiki.WatchStore.
func (db *DB) SetWatchlistToken(ctx context.Context, userID int64, hash string) error {
	tag, err := db.pool.Exec(ctx, `UPDATE users SET watchlist_token = $1 WHERE id = $2`, hash, userID)
	if err == nil && tag.RowsAffected() == 0 {
		err = wiki.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("postgres: set watchlist token: %w", err)
	}
	return nil
}

// WatchlistToken implements wiki.WatchStore.
func (db *DB) WatchlistToken(ctx context.Context, userID int64) (string, error) {
	var hash string
	err := db.pool.QueryRow(ctx, `SELECT watchlist_token FROM users WHERE id = $1`, userID).Scan(&hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", wiki.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("postgres: watchlist token: %w", err)
	}
	return hash, nil
}
