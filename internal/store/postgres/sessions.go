package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wikid/wikid/internal/wiki"
)

// Sessions, API tokens and password resets. A statement that changes one
// row by its key runs on its own, outside an explicit transaction: one
// round trip.

// CreateSession stores a session; ErrExists if its ID is taken.
func (db *DB) CreateSession(ctx context.Context, s wiki.Session) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO sessions (id, user_id, csrf, created, expires, token_id) VALUES ($1, $2, $3, $4, $5, $6)`,
		s.ID, s.UserID, s.CSRF, ms(now(s.Created)), ms(s.Expires), s.TokenID)
	if isUnique(err, "sessions_pkey") {
		err = wiki.ErrExists
	}
	if err != nil {
		return fmt.Errorf("postgres: create session: %w", err)
	}
	return nil
}

const sessionCols = `id, user_id, csrf, created, expires`

func scanSession(row pgx.Row) (wiki.Session, error) {
	var s wiki.Session
	var created, expires int64
	err := row.Scan(&s.ID, &s.UserID, &s.CSRF, &created, &expires)
	s.Created, s.Expires = fromMS(created), fromMS(expires)
	return s, err
}

// FindSession returns an unexpired session; ErrNotFound when missing or
// expired. Every logged-in view asks: one primary-key lookup, its
// statement prepared once per connection.
func (db *DB) FindSession(ctx context.Context, id string) (wiki.Session, error) {
	s, err := scanSession(db.pool.QueryRow(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = $1 AND expires > $2`, id, ms(time.Now())))
	if err != nil {
		return wiki.Session{}, fmt.Errorf("postgres: find session: %w", notFound(err))
	}
	return s, nil
}

// DeleteSession removes a session; removing a missing one is not an error.
func (db *DB) DeleteSession(ctx context.Context, id string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM sessions WHERE id = $1`, id); err != nil {
		return fmt.Errorf("postgres: delete session: %w", err)
	}
	return nil
}

// DeleteExpiredSessions removes sessions expired at at and says how many.
func (db *DB) DeleteExpiredSessions(ctx context.Context, at time.Time) (int, error) {
	n, err := db.deleteRows(ctx, `DELETE FROM sessions WHERE expires <= $1`, ms(at))
	if err != nil {
		return 0, fmt.Errorf("postgres: delete expired sessions: %w", err)
	}
	return n, nil
}

// ListSessions returns the user's unexpired sessions, newest first.
func (db *DB) ListSessions(ctx context.Context, userID int64, at time.Time) ([]wiki.Session, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+sessionCols+` FROM sessions
		WHERE user_id = $1 AND expires > $2 ORDER BY created DESC, id`, userID, ms(now(at)))
	if err != nil {
		return nil, fmt.Errorf("postgres: list sessions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (wiki.Session, error) { return scanSession(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: list sessions: %w", err)
	}
	return out, nil
}

// DeleteUserSessions deletes the user's sessions but except.
func (db *DB) DeleteUserSessions(ctx context.Context, userID int64, except string) (int, error) {
	n, err := db.deleteRows(ctx, `DELETE FROM sessions WHERE user_id = $1 AND id <> $2`, userID, except)
	if err != nil {
		return 0, fmt.Errorf("postgres: delete sessions of user %d: %w", userID, err)
	}
	return n, nil
}

// deleteRows runs a DELETE of many rows through write, which runs it again
// if it lost a deadlock to another transaction deleting some of the same
// rows in another order, and says how many rows it deleted.
func (db *DB) deleteRows(ctx context.Context, sql string, args ...any) (int, error) {
	var n int64
	err := db.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, sql, args...)
		n = tag.RowsAffected()
		return err
	})
	return int(n), err
}

// CreateToken stores an API token; ErrExists if its ID is taken.
func (db *DB) CreateToken(ctx context.Context, t wiki.Token) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO tokens (id, user_id, name, created, expires, last_used) VALUES ($1, $2, $3, $4, $5, $6)`,
		t.ID, t.UserID, t.Name, ms(now(t.Created)), msOrZero(t.Expires), msOrZero(t.LastUsed))
	if isUnique(err, "tokens_pkey") {
		err = wiki.ErrExists
	}
	if err != nil {
		return fmt.Errorf("postgres: create token: %w", err)
	}
	return nil
}

const tokenCols = `id, user_id, name, created, expires, last_used`

func scanToken(row pgx.Row) (wiki.Token, error) {
	var t wiki.Token
	var created, expires, used int64
	err := row.Scan(&t.ID, &t.UserID, &t.Name, &created, &expires, &used)
	t.Created, t.Expires, t.LastUsed = fromMS(created), fromMSOrZero(expires), fromMSOrZero(used)
	return t, err
}

// FindToken returns the token with the given ID, expired or not.
func (db *DB) FindToken(ctx context.Context, id string) (wiki.Token, error) {
	t, err := scanToken(db.pool.QueryRow(ctx, `SELECT `+tokenCols+` FROM tokens WHERE id = $1`, id))
	if err != nil {
		return wiki.Token{}, fmt.Errorf("postgres: find token: %w", notFound(err))
	}
	return t, nil
}

// ListTokens returns the user's tokens, newest first.
func (db *DB) ListTokens(ctx context.Context, userID int64) ([]wiki.Token, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+tokenCols+` FROM tokens WHERE user_id = $1 ORDER BY created DESC, id`, userID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list tokens: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (wiki.Token, error) { return scanToken(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: list tokens: %w", err)
	}
	return out, nil
}

// DeleteToken revokes one token.
func (db *DB) DeleteToken(ctx context.Context, id string) error {
	// One statement: the token and the sessions started with it go
	// together.
	var n int
	err := db.pool.QueryRow(ctx, `WITH t AS (DELETE FROM tokens WHERE id = $1 RETURNING id),
		s AS (DELETE FROM sessions WHERE token_id = $1 AND EXISTS (SELECT 1 FROM t))
		SELECT count(*) FROM t`, id).Scan(&n)
	if err == nil && n == 0 {
		err = wiki.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("postgres: delete token: %w", err)
	}
	return nil
}

// DeleteUserTokens revokes every token of the user.
func (db *DB) DeleteUserTokens(ctx context.Context, userID int64) (int, error) {
	n, err := db.deleteRows(ctx, `WITH s AS (DELETE FROM sessions WHERE user_id = $1 AND token_id <> '')
		DELETE FROM tokens WHERE user_id = $1`, userID)
	if err != nil {
		return 0, fmt.Errorf("postgres: delete tokens of user %d: %w", userID, err)
	}
	return n, nil
}

// TouchToken records the token's last use.
func (db *DB) TouchToken(ctx context.Context, id string, at time.Time) error {
	if _, err := db.pool.Exec(ctx, `UPDATE tokens SET last_used = $1 WHERE id = $2`, ms(now(at)), id); err != nil {
		return fmt.Errorf("postgres: touch token: %w", err)
	}
	return nil
}

// CreatePasswordReset stores a reset; ErrExists if its ID is taken.
func (db *DB) CreatePasswordReset(ctx context.Context, pr wiki.PasswordReset) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO password_resets (id, user_id, created, expires) VALUES ($1, $2, $3, $4)`,
		pr.ID, pr.UserID, ms(now(pr.Created)), ms(pr.Expires))
	if isUnique(err, "password_resets_pkey") {
		err = wiki.ErrExists
	}
	if err != nil {
		return fmt.Errorf("postgres: create password reset: %w", err)
	}
	return nil
}

// FindPasswordReset returns an unused reset valid at at.
func (db *DB) FindPasswordReset(ctx context.Context, id string, at time.Time) (wiki.PasswordReset, error) {
	var pr wiki.PasswordReset
	var created, expires int64
	err := db.pool.QueryRow(ctx, `SELECT id, user_id, created, expires FROM password_resets WHERE id = $1 AND expires > $2`,
		id, ms(now(at))).Scan(&pr.ID, &pr.UserID, &created, &expires)
	if err != nil {
		return wiki.PasswordReset{}, fmt.Errorf("postgres: find password reset: %w", notFound(err))
	}
	pr.Created, pr.Expires = fromMS(created), fromMS(expires)
	return pr, nil
}

// ResetPassword consumes the reset and sets the password in one
// transaction. The reset is taken by deleting it: of two requests with the
// same link, the second waits on the row, finds it gone and is
// ErrNotFound.
func (db *DB) ResetPassword(ctx context.Context, id, hash string, at time.Time) (wiki.User, error) {
	var u wiki.User
	err := db.write(ctx, func(tx pgx.Tx) error {
		var userID int64
		if err := tx.QueryRow(ctx, `DELETE FROM password_resets WHERE id = $1 AND expires > $2 RETURNING user_id`,
			id, ms(now(at))).Scan(&userID); err != nil {
			return notFound(err)
		}
		// A reset recovers an account: whoever held its sessions, its API
		// tokens or its other reset links loses them.
		var b pgx.Batch
		b.Queue(`DELETE FROM password_resets WHERE user_id = $1`, userID)
		b.Queue(`DELETE FROM sessions WHERE user_id = $1`, userID)
		b.Queue(`DELETE FROM tokens WHERE user_id = $1`, userID)
		b.Queue(`UPDATE users SET password_hash = $1 WHERE id = $2 RETURNING `+userCols, hash, userID).QueryRow(func(row pgx.Row) error {
			var err error
			u, err = scanUser(row)
			return err
		})
		return tx.SendBatch(ctx, &b).Close()
	})
	if err != nil {
		return wiki.User{}, fmt.Errorf("postgres: reset password: %w", err)
	}
	return u, nil
}
