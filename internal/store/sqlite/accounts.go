package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

// userTarget is the log target of an action on an account.
func userTarget(name string) wiki.Title { return wiki.Title("User:" + name) }

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

// affected turns "no row changed" into ErrNotFound.
func affected(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return wiki.ErrNotFound
	}
	return nil
}

// ListUsers pages through accounts by name (byte order).
func (db *DB) ListUsers(ctx context.Context, q wiki.UserQuery) ([]wiki.User, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+userCols+` FROM users WHERE name >= ? ORDER BY name LIMIT ?`, q.From, limit(q.Limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: list users: %w", err)
	}
	defer rows.Close()
	var out []wiki.User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list users: %w", err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list users: %w", err)
	}
	return out, nil
}

// SetUserGroup changes the group and logs it in one transaction.
func (db *DB) SetUserGroup(ctx context.Context, c wiki.GroupChange) (wiki.Group, error) {
	var old wiki.Group
	err := db.write(ctx, func(tx *wtx) error {
		var name, grp string
		if err := tx.QueryRowContext(ctx, `SELECT name, grp FROM users WHERE id = ?`, c.UserID).Scan(&name, &grp); err != nil {
			return notFound(err)
		}
		old = wiki.Group(grp)
		if old == c.Group {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET grp = ? WHERE id = ?`, string(c.Group), c.UserID); err != nil {
			return err
		}
		return insertLog(ctx, tx, wiki.LogEntry{Type: wiki.LogRights, Action: "rights", Time: c.Time,
			UserID: c.By.ID, UserName: c.By.Name, Target: userTarget(name), Comment: c.Reason,
			Params: map[string]string{"old": string(old), "new": string(c.Group)}})
	})
	if err != nil {
		return "", fmt.Errorf("sqlite: set group of user %d: %w", c.UserID, err)
	}
	return old, nil
}

// SetPassword stores the hash and ends the user's other sessions in one
// transaction, so that no request sees the new password with the old
// sessions.
func (db *DB) SetPassword(ctx context.Context, userID int64, hash, keepSession string) error {
	err := db.write(ctx, func(tx *wtx) error {
		if err := affected(tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, hash, userID)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ? AND id <> ?`, userID, keepSession); err != nil {
			return err
		}
		// A reset link sent before the change must not undo it.
		_, err := tx.ExecContext(ctx, `DELETE FROM password_resets WHERE user_id = ?`, userID)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: set password of user %d: %w", userID, err)
	}
	return nil
}

// UpdatePrefs saves the user's preferences.
func (db *DB) UpdatePrefs(ctx context.Context, userID int64, p wiki.Prefs) error {
	err := db.write(ctx, func(tx *wtx) error {
		return affected(tx.ExecContext(ctx, `UPDATE users SET time_zone = ?, date_format = ?, minor_default = ?, no_autowatch = ?, signature = ? WHERE id = ?`,
			p.TimeZone, p.DateFormat, b2i(p.MinorDefault), b2i(p.NoAutoWatch), p.Signature, userID))
	})
	if err != nil {
		return fmt.Errorf("sqlite: update preferences of user %d: %w", userID, err)
	}
	return nil
}

const blockCols = `b.id, b.user_id, u.name, b.by_id, b.by_name, b.reason, b.created, b.expires`

func scanBlock(s scanner) (wiki.Block, error) {
	var b wiki.Block
	var created, expires int64
	err := s.Scan(&b.ID, &b.UserID, &b.UserName, &b.By.ID, &b.By.Name, &b.Reason, &created, &expires)
	b.Created, b.Expires = fromMS(created), fromMSOrZero(expires)
	return b, err
}

// BlockUser inserts or replaces the user's block and logs it. A block that
// had expired is replaced as a new block (action "block"), one in force as
// a change (action "reblock").
func (db *DB) BlockUser(ctx context.Context, b wiki.Block) (bool, error) {
	b.Created = now(b.Created)
	var reblock bool
	err := db.write(ctx, func(tx *wtx) error {
		var name string
		if err := tx.QueryRowContext(ctx, `SELECT name FROM users WHERE id = ?`, b.UserID).Scan(&name); err != nil {
			return notFound(err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM blocks WHERE user_id = ? AND (expires = 0 OR expires > ?)`,
			b.UserID, ms(b.Created)).Scan(&n); err != nil {
			return err
		}
		reblock = n > 0
		if _, err := tx.ExecContext(ctx, `DELETE FROM blocks WHERE user_id = ?`, b.UserID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO blocks (user_id, by_id, by_name, reason, created, expires) VALUES (?, ?, ?, ?, ?, ?)`,
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
		return false, fmt.Errorf("sqlite: block user %d: %w", b.UserID, err)
	}
	return reblock, nil
}

// UnblockUser deletes the block in force and logs it.
func (db *DB) UnblockUser(ctx context.Context, userID int64, by wiki.Actor, reason string, at time.Time) error {
	at = now(at)
	err := db.write(ctx, func(tx *wtx) error {
		var name string
		if err := tx.QueryRowContext(ctx, `SELECT u.name FROM blocks b JOIN users u ON u.id = b.user_id
			WHERE b.user_id = ? AND (b.expires = 0 OR b.expires > ?)`, userID, ms(at)).Scan(&name); err != nil {
			return notFound(err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM blocks WHERE user_id = ?`, userID); err != nil {
			return err
		}
		return insertLog(ctx, tx, wiki.LogEntry{Type: wiki.LogBlock, Action: "unblock", Time: at,
			UserID: by.ID, UserName: by.Name, Target: userTarget(name), Comment: reason})
	})
	if err != nil {
		return fmt.Errorf("sqlite: unblock user %d: %w", userID, err)
	}
	return nil
}

// FindBlock returns the user's block in force at at.
func (db *DB) FindBlock(ctx context.Context, userID int64, at time.Time) (wiki.Block, error) {
	b, err := scanBlock(db.r.QueryRowContext(ctx, `SELECT `+blockCols+` FROM blocks b JOIN users u ON u.id = b.user_id
		WHERE b.user_id = ? AND (b.expires = 0 OR b.expires > ?)`, userID, ms(now(at))))
	if err != nil {
		return wiki.Block{}, fmt.Errorf("sqlite: find block of user %d: %w", userID, notFound(err))
	}
	return b, nil
}

// ListBlocks pages through the blocks in force at q.At, newest first.
func (db *DB) ListBlocks(ctx context.Context, q wiki.BlockQuery) ([]wiki.Block, error) {
	before := q.Before
	if before <= 0 {
		before = 1<<63 - 1
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+blockCols+` FROM blocks b JOIN users u ON u.id = b.user_id
		WHERE b.id < ? AND (b.expires = 0 OR b.expires > ?) ORDER BY b.id DESC LIMIT ?`, before, ms(now(q.At)), limit(q.Limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: list blocks: %w", err)
	}
	defer rows.Close()
	var out []wiki.Block
	for rows.Next() {
		b, err := scanBlock(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list blocks: %w", err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list blocks: %w", err)
	}
	return out, nil
}

// ListSessions returns the user's unexpired sessions, newest first.
func (db *DB) ListSessions(ctx context.Context, userID int64, at time.Time) ([]wiki.Session, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, user_id, csrf, created, expires FROM sessions
		WHERE user_id = ? AND expires > ? ORDER BY created DESC, id`, userID, ms(now(at)))
	if err != nil {
		return nil, fmt.Errorf("sqlite: list sessions: %w", err)
	}
	defer rows.Close()
	var out []wiki.Session
	for rows.Next() {
		var s wiki.Session
		var created, expires int64
		if err := rows.Scan(&s.ID, &s.UserID, &s.CSRF, &created, &expires); err != nil {
			return nil, fmt.Errorf("sqlite: list sessions: %w", err)
		}
		s.Created, s.Expires = fromMS(created), fromMS(expires)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list sessions: %w", err)
	}
	return out, nil
}

// DeleteUserSessions deletes the user's sessions but except.
func (db *DB) DeleteUserSessions(ctx context.Context, userID int64, except string) (int, error) {
	var n int64
	err := db.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ? AND id <> ?`, userID, except)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete sessions of user %d: %w", userID, err)
	}
	return int(n), nil
}

// ListTokens returns the user's tokens, newest first.
func (db *DB) ListTokens(ctx context.Context, userID int64) ([]wiki.Token, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+tokenCols+` FROM tokens WHERE user_id = ? ORDER BY created DESC, id`, userID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list tokens: %w", err)
	}
	defer rows.Close()
	var out []wiki.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list tokens: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list tokens: %w", err)
	}
	return out, nil
}

// DeleteToken revokes one token.
func (db *DB) DeleteToken(ctx context.Context, id string) error {
	err := db.write(ctx, func(tx *wtx) error {
		if err := affected(tx.ExecContext(ctx, `DELETE FROM tokens WHERE id = ?`, id)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE token_id = ?`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete token: %w", err)
	}
	return nil
}

// DeleteUserTokens revokes every token of the user.
func (db *DB) DeleteUserTokens(ctx context.Context, userID int64) (int, error) {
	var n int64
	err := db.write(ctx, func(tx *wtx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ? AND token_id <> ''`, userID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM tokens WHERE user_id = ?`, userID)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete tokens of user %d: %w", userID, err)
	}
	return int(n), nil
}

// TouchToken records the token's last use.
func (db *DB) TouchToken(ctx context.Context, id string, at time.Time) error {
	err := db.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `UPDATE tokens SET last_used = ? WHERE id = ?`, ms(now(at)), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: touch token: %w", err)
	}
	return nil
}

// CreatePasswordReset stores a reset; ErrExists if its ID is taken.
func (db *DB) CreatePasswordReset(ctx context.Context, pr wiki.PasswordReset) error {
	err := db.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO password_resets (id, user_id, created, expires) VALUES (?, ?, ?, ?)`,
			pr.ID, pr.UserID, ms(now(pr.Created)), ms(pr.Expires))
		return err
	})
	if isUnique(err) {
		err = wiki.ErrExists
	}
	if err != nil {
		return fmt.Errorf("sqlite: create password reset: %w", err)
	}
	return nil
}

// FindPasswordReset returns an unused reset valid at at.
func (db *DB) FindPasswordReset(ctx context.Context, id string, at time.Time) (wiki.PasswordReset, error) {
	var pr wiki.PasswordReset
	var created, expires int64
	err := db.r.QueryRowContext(ctx, `SELECT id, user_id, created, expires FROM password_resets WHERE id = ? AND expires > ?`,
		id, ms(now(at))).Scan(&pr.ID, &pr.UserID, &created, &expires)
	if err != nil {
		return wiki.PasswordReset{}, fmt.Errorf("sqlite: find password reset: %w", notFound(err))
	}
	pr.Created, pr.Expires = fromMS(created), fromMS(expires)
	return pr, nil
}

// ResetPassword consumes the reset and sets the password in one
// transaction: of two requests with the same link, one wins and the other
// finds no reset.
func (db *DB) ResetPassword(ctx context.Context, id, hash string, at time.Time) (wiki.User, error) {
	var u wiki.User
	err := db.write(ctx, func(tx *wtx) error {
		var userID int64
		if err := tx.QueryRowContext(ctx, `SELECT user_id FROM password_resets WHERE id = ? AND expires > ?`, id, ms(now(at))).Scan(&userID); err != nil {
			return notFound(err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, hash, userID); err != nil {
			return err
		}
		// A reset recovers an account: whoever held its sessions or its
		// API tokens loses them.
		for _, q := range []string{`DELETE FROM password_resets WHERE user_id = ?`, `DELETE FROM sessions WHERE user_id = ?`,
			`DELETE FROM tokens WHERE user_id = ?`} {
			if _, err := tx.ExecContext(ctx, q, userID); err != nil {
				return err
			}
		}
		var err error
		u, err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE id = ?`, userID))
		return err
	})
	if err != nil {
		return wiki.User{}, fmt.Errorf("sqlite: reset password: %w", err)
	}
	return u, nil
}
