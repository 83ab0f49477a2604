package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wikid/wikid/internal/wiki"
)

// msOrZero stores a time that may be unset: the zero time is 0.
func msOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return ms(t)
}

func fromMSOrZero(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return fromMS(v)
}

const blockCols = `b.id, b.user_id, u.name, b.by_id, b.by_name, b.reason, b.created, b.expires`

func scanBlock(row pgx.Row) (wiki.Block, error) {
	var b wiki.Block
	var created, expires int64
	err := row.Scan(&b.ID, &b.UserID, &b.UserName, &b.By.ID, &b.By.Name, &b.Reason, &created, &expires)
	b.Created, b.Expires = fromMS(created), fromMSOrZero(expires)
	return b, err
}

// BlockUser inserts or replaces the user's block and logs it. A block that
// had expired is replaced as a new block (action "block"), one in force as
// a change (action "reblock"). The user's row is locked first, so that two
// blocks of one user at once run one after the other (the second a
// reblock) instead of both inserting.
func (db *DB) BlockUser(ctx context.Context, b wiki.Block) (bool, error) {
	b.Created = now(b.Created)
	var reblock bool
	err := db.write(ctx, func(tx pgx.Tx) error {
		var name string
		if err := tx.QueryRow(ctx, `SELECT name FROM users WHERE id = $1 FOR NO KEY UPDATE`, b.UserID).Scan(&name); err != nil {
			return notFound(err)
		}
		// The old block goes whether in force or not; it was a reblock if
		// it was in force.
		if err := tx.QueryRow(ctx, `WITH old AS (DELETE FROM blocks WHERE user_id = $1 RETURNING expires)
			SELECT count(*) > 0 FROM old WHERE expires = 0 OR expires > $2`, b.UserID, ms(b.Created)).Scan(&reblock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO blocks (user_id, by_id, by_name, reason, created, expires) VALUES ($1, $2, $3, $4, $5, $6)`,
			b.UserID, b.By.ID, b.By.Name, b.Reason, ms(b.Created), msOrZero(b.Expires)); err != nil {
			return err
		}
		action := "block"
		if reblock {
			action = "reblock"
		}
		return insertLog(ctx, tx, wiki.LogEntry{Type: wiki.LogBlock, Action: action, Time: b.Created,
			UserID: b.By.ID, UserName: b.By.Name, Target: userTarget(name), Comment: b.Reason,
			Params: map[string]string{"expiry": b.ExpiryText()}})
	})
	if err != nil {
		return false, fmt.Errorf("postgres: block user %d: %w", b.UserID, err)
	}
	return reblock, nil
}

// UnblockUser deletes the block in force and logs it. The DELETE is the
// check: of two unblocks at once, the second finds no row and is
// ErrNotFound.
func (db *DB) UnblockUser(ctx context.Context, userID int64, by wiki.Actor, reason string, at time.Time) error {
	at = now(at)
	err := db.write(ctx, func(tx pgx.Tx) error {
		var name string
		if err := tx.QueryRow(ctx, `DELETE FROM blocks b USING users u
			WHERE b.user_id = $1 AND u.id = b.user_id AND (b.expires = 0 OR b.expires > $2) RETURNING u.name`,
			userID, ms(at)).Scan(&name); err != nil {
			return notFound(err)
		}
		return insertLog(ctx, tx, wiki.LogEntry{Type: wiki.LogBlock, Action: "unblock", Time: at,
			UserID: by.ID, UserName: by.Name, Target: userTarget(name), Comment: reason})
	})
	if err != nil {
		return fmt.Errorf("postgres: unblock user %d: %w", userID, err)
	}
	return nil
}

// FindBlock returns the user's block in force at at.
func (db *DB) FindBlock(ctx context.Context, userID int64, at time.Time) (wiki.Block, error) {
	b, err := scanBlock(db.pool.QueryRow(ctx, `SELECT `+blockCols+` FROM blocks b JOIN users u ON u.id = b.user_id
		WHERE b.user_id = $1 AND (b.expires = 0 OR b.expires > $2)`, userID, ms(now(at))))
	if err != nil {
		return wiki.Block{}, fmt.Errorf("postgres: find block of user %d: %w", userID, notFound(err))
	}
	return b, nil
}

// ListBlocks pages through the blocks in force at q.At, newest first.
func (db *DB) ListBlocks(ctx context.Context, q wiki.BlockQuery) ([]wiki.Block, error) {
	before := q.Before
	if before <= 0 {
		before = 1<<63 - 1
	}
	rows, err := db.pool.Query(ctx, `SELECT `+blockCols+` FROM blocks b JOIN users u ON u.id = b.user_id
		WHERE b.id < $1 AND (b.expires = 0 OR b.expires > $2) ORDER BY b.id DESC LIMIT $3`, before, ms(now(q.At)), limit(q.Limit))
	if err != nil {
		return nil, fmt.Errorf("postgres: list blocks: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (wiki.Block, error) { return scanBlock(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: list blocks: %w", err)
	}
	return out, nil
}
