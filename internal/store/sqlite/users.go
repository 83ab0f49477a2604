package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"golang.org/x/text/cases"

	"github.com/wikid/wikid/internal/wiki"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// nameKey folds a user name so that names differing only in case collide.
func nameKey(name string) string { return cases.Fold().String(name) }

// isUnique reports whether err is a UNIQUE or PRIMARY KEY violation.
func isUnique(err error) bool {
	var e *sqlite.Error
	if errors.As(err, &e) {
		c := e.Code()
		return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

const userCols = `id, name, password_hash, grp, created, time_zone, date_format, minor_default, no_autowatch, signature`

func scanUser(s scanner) (wiki.User, error) {
	var u wiki.User
	var grp string
	var created int64
	err := s.Scan(&u.ID, &u.Name, &u.PasswordHash, &grp, &created, &u.Prefs.TimeZone, &u.Prefs.DateFormat, &u.Prefs.MinorDefault, &u.Prefs.NoAutoWatch, &u.Prefs.Signature)
	u.Group, u.Created = wiki.Group(grp), fromMS(created)
	return u, err
}

// CreateUser stores a new account and returns it with its ID, and logs its
// creation in the same transaction. Names are unique case-insensitively
// (Unicode case folding): ErrExists otherwise.
// A name whose skeleton (wiki.UserNameSkeleton) is an existing account's is
// refused with wiki.TooSimilarError. The lookup and the insert share the
// write transaction, and writes are serialized on the one writer connection,
// so two look-alike registrations at once cannot both succeed.
func (db *DB) CreateUser(ctx context.Context, u wiki.User) (wiki.User, error) {
	u.Created = now(u.Created)
	if u.Group == "" {
		u.Group = wiki.GroupUser
	}
	keys := wiki.UserNameLookAlikeKeys(u.Name)
	keys = append(keys, keys[0]) // two parameters, one or two distinct keys
	err := db.write(ctx, func(tx *wtx) error {
		var existing string
		err := tx.QueryRowContext(ctx, `SELECT name FROM users WHERE skeleton IN (?, ?) ORDER BY name_key = ? DESC, id LIMIT 1`,
			keys[0], keys[1], nameKey(u.Name)).Scan(&existing)
		switch {
		case err == nil && nameKey(existing) == nameKey(u.Name):
			return wiki.ErrExists
		case err == nil:
			return wiki.TooSimilarError(u.Name, existing)
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		err = tx.QueryRowContext(ctx, `INSERT INTO users (name, name_key, skeleton, password_hash, grp, created, time_zone, date_format, minor_default, no_autowatch, signature)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			u.Name, nameKey(u.Name), keys[0], u.PasswordHash, string(u.Group), ms(u.Created),
			u.Prefs.TimeZone, u.Prefs.DateFormat, b2i(u.Prefs.MinorDefault), b2i(u.Prefs.NoAutoWatch), u.Prefs.Signature).Scan(&u.ID)
		if err != nil {
			return err
		}
		return insertLog(ctx, tx, wiki.LogEntry{Type: wiki.LogNewUsers, Action: "create", Time: u.Created,
			UserID: u.ID, UserName: u.Name, Target: userTarget(u.Name)})
	})
	if isUnique(err) {
		err = wiki.ErrExists
	}
	if err != nil {
		return wiki.User{}, fmt.Errorf("sqlite: create user %q: %w", u.Name, err)
	}
	return u, nil
}

// fillSkeletons computes the skeleton of users that have none: those created
// before the column existed (SQL cannot compute it). Run at open.
func (db *DB) fillSkeletons(ctx context.Context) error {
	return db.write(ctx, func(tx *wtx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, name FROM users WHERE skeleton = ''`)
		if err != nil {
			return err
		}
		type row struct {
			id   int64
			name string
		}
		var todo []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.name); err != nil {
				rows.Close()
				return err
			}
			todo = append(todo, r)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		for _, r := range todo {
			if _, err := tx.ExecContext(ctx, `UPDATE users SET skeleton = ? WHERE id = ?`, wiki.UserNameSkeleton(r.name), r.id); err != nil {
				return err
			}
		}
		return nil
	})
}

// FindUser returns the user with the given ID.
func (db *DB) FindUser(ctx context.Context, id int64) (wiki.User, error) {
	u, err := scanUser(db.r.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE id = ?`, id))
	if err != nil {
		return wiki.User{}, fmt.Errorf("sqlite: find user %d: %w", id, notFound(err))
	}
	return u, nil
}

// FindUserByName returns the user whose name equals name case-insensitively.
func (db *DB) FindUserByName(ctx context.Context, name string) (wiki.User, error) {
	u, err := scanUser(db.r.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE name_key = ?`, nameKey(name)))
	if err != nil {
		return wiki.User{}, fmt.Errorf("sqlite: find user %q: %w", name, notFound(err))
	}
	return u, nil
}

// UpdateUser saves u's name, password hash and group. ErrNotFound if there
// is no such user, ErrExists if the new name is taken.
func (db *DB) UpdateUser(ctx context.Context, u wiki.User) error {
	err := db.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE users SET name = ?, name_key = ?, skeleton = ?, password_hash = ?, grp = ? WHERE id = ?`,
			u.Name, nameKey(u.Name), wiki.UserNameSkeleton(u.Name), u.PasswordHash, string(u.Group), u.ID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return wiki.ErrNotFound
		}
		return nil
	})
	if isUnique(err) {
		err = wiki.ErrExists
	}
	if err != nil {
		return fmt.Errorf("sqlite: update user %d: %w", u.ID, err)
	}
	return nil
}

// CountUsers returns the number of accounts.
func (db *DB) CountUsers(ctx context.Context) (int, error) {
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: count users: %w", err)
	}
	return n, nil
}

// CreateSession stores a session; ErrExists if its ID is taken.
func (db *DB) CreateSession(ctx context.Context, s wiki.Session) error {
	err := db.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, user_id, csrf, created, expires, token_id) VALUES (?, ?, ?, ?, ?, ?)`,
			s.ID, s.UserID, s.CSRF, ms(now(s.Created)), ms(s.Expires), s.TokenID)
		return err
	})
	if isUnique(err) {
		err = wiki.ErrExists
	}
	if err != nil {
		return fmt.Errorf("sqlite: create session: %w", err)
	}
	return nil
}

// FindSession returns an unexpired session; ErrNotFound when missing or expired.
func (db *DB) FindSession(ctx context.Context, id string) (wiki.Session, error) {
	var s wiki.Session
	var created, expires int64
	err := db.findSession.QueryRowContext(ctx, id, ms(time.Now())).Scan(&s.ID, &s.UserID, &s.CSRF, &created, &expires)
	if err != nil {
		return wiki.Session{}, fmt.Errorf("sqlite: find session: %w", notFound(err))
	}
	s.Created, s.Expires = fromMS(created), fromMS(expires)
	return s, nil
}

// DeleteSession removes a session; removing a missing one is not an error.
func (db *DB) DeleteSession(ctx context.Context, id string) error {
	err := db.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete session: %w", err)
	}
	return nil
}

// DeleteExpiredSessions removes sessions expired at now and says how many.
func (db *DB) DeleteExpiredSessions(ctx context.Context, at time.Time) (int, error) {
	var n int64
	err := db.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE expires <= ?`, ms(at))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete expired sessions: %w", err)
	}
	return int(n), nil
}

// CreateToken stores an API token; ErrExists if its ID is taken.
func (db *DB) CreateToken(ctx context.Context, t wiki.Token) error {
	err := db.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO tokens (id, user_id, name, created, expires, last_used) VALUES (?, ?, ?, ?, ?, ?)`,
			t.ID, t.UserID, t.Name, ms(now(t.Created)), msOrZero(t.Expires), msOrZero(t.LastUsed))
		return err
	})
	if isUnique(err) {
		err = wiki.ErrExists
	}
	if err != nil {
		return fmt.Errorf("sqlite: create token: %w", err)
	}
	return nil
}

const tokenCols = `id, user_id, name, created, expires, last_used`

func scanToken(s scanner) (wiki.Token, error) {
	var t wiki.Token
	var created, expires, used int64
	err := s.Scan(&t.ID, &t.UserID, &t.Name, &created, &expires, &used)
	t.Created, t.Expires, t.LastUsed = fromMS(created), fromMSOrZero(expires), fromMSOrZero(used)
	return t, err
}

// FindToken returns the token with the given ID, expired or not.
func (db *DB) FindToken(ctx context.Context, id string) (wiki.Token, error) {
	t, err := scanToken(db.r.QueryRowContext(ctx, `SELECT `+tokenCols+` FROM tokens WHERE id = ?`, id))
	if err != nil {
		return wiki.Token{}, fmt.Errorf("sqlite: find token: %w", notFound(err))
	}
	return t, nil
}
