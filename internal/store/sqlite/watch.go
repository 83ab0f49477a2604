package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"time"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

// activeWatch is the condition that the watchlist row under alias w holds
// at the time bound to its placeholder.
const activeWatch = `(w.expires = 0 OR w.expires > ?)`

// WatchTitles implements wiki.WatchStore.
func (db *DB) WatchTitles(ctx context.Context, userID int64, titles []wiki.Title, expires, at time.Time) error {
	err := db.write(ctx, func(tx *wtx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM watchlist WHERE user_id = ? AND expires <> 0 AND expires <= ?`, userID, ms(at)); err != nil {
			return err
		}
		for _, t := range titles {
			if _, err := tx.ExecContext(ctx, `INSERT INTO watchlist (user_id, title, expires) VALUES (?, ?, ?)
				ON CONFLICT (user_id, title) DO UPDATE SET expires = excluded.expires`, userID, string(t), msOrZero(expires)); err != nil {
				return err
			}
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM watchlist WHERE user_id = ?`, userID).Scan(&n); err != nil {
			return err
		}
		if n > wiki.MaxWatchlist {
			return wiki.ErrWatchlistFull
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: watch: %w", err)
	}
	return nil
}

// UnwatchTitles implements wiki.WatchStore.
func (db *DB) UnwatchTitles(ctx context.Context, userID int64, titles []wiki.Title) error {
	err := db.write(ctx, func(tx *wtx) error {
		for _, t := range titles {
			if _, err := tx.ExecContext(ctx, `DELETE FROM watchlist WHERE user_id = ? AND title = ?`, userID, string(t)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: unwatch: %w", err)
	}
	return nil
}

// Watchlist implements wiki.WatchStore.
func (db *DB) Watchlist(ctx context.Context, userID int64, from wiki.Title, n int, at time.Time) ([]wiki.Watch, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT title, expires FROM watchlist w
		WHERE user_id = ? AND title >= ? AND `+activeWatch+` ORDER BY title LIMIT ?`, userID, string(from), ms(at), limit(n))
	if err != nil {
		return nil, fmt.Errorf("sqlite: watchlist: %w", err)
	}
	defer rows.Close()
	var out []wiki.Watch
	for rows.Next() {
		var title string
		var expires int64
		if err := rows.Scan(&title, &expires); err != nil {
			return nil, fmt.Errorf("sqlite: watchlist: %w", err)
		}
		out = append(out, wiki.Watch{Title: wiki.Title(title), Expires: fromMSOrZero(expires)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: watchlist: %w", err)
	}
	return out, nil
}

// WatchedChanges implements wiki.WatchStore: the user's watchlist rows,
// each joined to its title's changes through changes_title, so that the
// read costs the watched titles' changes (bounded by q.Since), not a scan
// of every change.
func (db *DB) WatchedChanges(ctx context.Context, userID int64, q wiki.ChangeQuery, at time.Time) ([]wiki.Change, error) {
	query, args := watchedChangesQuery(userID, q, at)
	out, err := db.readChanges(ctx, query, args)
	if err != nil {
		return nil, fmt.Errorf("sqlite: watched changes: %w", err)
	}
	return out, nil
}

func watchedChangesQuery(userID int64, q wiki.ChangeQuery, at time.Time) (string, []any) {
	before := q.Before
	if before <= 0 {
		before = 1<<63 - 1
	}
	var args []any
	param := func(v any) string { args = append(args, v); return "?" }
	query := `SELECT ` + changeCols + ` FROM watchlist w CROSS JOIN changes c INDEXED BY changes_title ON c.title = w.title
		WHERE w.user_id = ` + param(userID) + ` AND (w.expires = 0 OR w.expires > ` + param(ms(at)) + `) AND c.id < ` + param(before) +
		store.ChangeFilters("c.", q, liveRevision, param) + ` ORDER BY c.id DESC LIMIT ` + param(limit(q.Limit))
	return query, args
}

// CountWatchers implements wiki.WatchStore.
func (db *DB) CountWatchers(ctx context.Context, t wiki.Title, at time.Time) (int, error) {
	var n int
	err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM watchlist w WHERE title = ? AND `+activeWatch+` LIMIT ?)`,
		string(t), ms(at), wiki.MaxCount).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlite: count watchers: %w", err)
	}
	return n, nil
}

// moveWatchers makes the watchers of a moved page's titles (the page and
// its talk page) watch the new ones too, as MediaWiki does; they keep
// watching the old titles, which now hold the redirects.
func moveWatchers(ctx context.Context, tx *wtx, from, to wiki.Title) error {
	pairs := [][2]wiki.Title{{from, to}}
	if f, ok := from.Pair(); ok {
		if t, ok := to.Pair(); ok {
			pairs = append(pairs, [2]wiki.Title{f, t})
		}
	}
	for _, p := range pairs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO watchlist (user_id, title, expires)
			SELECT user_id, ?, expires FROM watchlist WHERE title = ? ON CONFLICT (user_id, title) DO NOTHING`, string(p[1]), string(p[0])); err != nil {
			return err
		}
	}
	return nil
}

// SetWatchlistToken implements wiki.WatchStore.
func (db *DB) SetWatchlistToken(ctx context.Context, userID int64, hash string) error {
	err := db.write(ctx, func(tx *wtx) error {
		return affected(tx.ExecContext(ctx, `UPDATE users SET watchlist_token = ? WHERE id = ?`, hash, userID))
	})
	if err != nil {
		return fmt.Errorf("sqlite: set watchlist token: %w", err)
	}
	return nil
}

// WatchlistToken implements wiki.WatchStore.
func (db *DB) WatchlistToken(ctx context.Context, userID int64) (string, error) {
	var hash string
	err := db.r.QueryRowContext(ctx, `SELECT watchlist_token FROM users WHERE id = ?`, userID).Scan(&hash)
	if errors.Is(err, sql.ErrNoRows) {
		return "", wiki.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("sqlite: watchlist token: %w", err)
	}
	return hash, nil
}
