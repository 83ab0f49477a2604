package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"golang.org/x/text/cases"

	"github.com/wikid/wikid/internal/wiki"
)

// nameKey folds a user name so that names differing only in case collide.
func nameKey(name string) string { return cases.Fold().String(name) }

// userTarget is the log target of an action on an account.
func userTarget(name string) wiki.Title { return wiki.Title("User:" + name) }

// lookAlikeLock is the first key of the transaction-scoped advisory locks
// CreateUser takes on look-alike keys (the second is the key's hashtext),
// a key space of its own.
const lookAlikeLock int32 = 0x75736572 // "user"

const userCols = `id, name, password_hash, grp, created, time_zone, date_format, minor_default, no_autowatch, signature`

func scanUser(row pgx.Row) (wiki.User, error) {
	var u wiki.User
	var grp string
	var created int64
	err := row.Scan(&u.ID, &u.Name, &u.PasswordHash, &grp, &created, &u.Prefs.TimeZone, &u.Prefs.DateFormat, &u.Prefs.MinorDefault, &u.Prefs.NoAutoWatch, &u.Prefs.Signature)
	u.Group, u.Created = wiki.Group(grp), fromMS(created)
	return u, err
}

// CreateUser stores a new account and returns it with its ID, and logs its
// creation in the same transaction. Names are unique case-insensitively
// (Unicode case folding): ErrExists otherwise. A name whose look-alike
// keys (wiki.UserNameLookAlikeKeys) include an existing account's skeleton
// is refused with wiki.TooSimilarError.
//
// At READ COMMITTED two registrations could both look, find nothing and
// both insert; so the transaction first takes an advisory lock on each of
// the name's look-alike keys, in key order. Two names that would find each
// other share a key (the stored skeleton is the first key of its name), so
// the second waits until the first commits, and its lookup, a new
// statement with a new snapshot, then sees the first.
func (db *DB) CreateUser(ctx context.Context, u wiki.User) (wiki.User, error) {
	u.Created = now(u.Created)
	if u.Group == "" {
		u.Group = wiki.GroupUser
	}
	skeleton := wiki.UserNameSkeleton(u.Name)
	keys := wiki.UserNameLookAlikeKeys(u.Name)
	locks := slices.Clone(keys)
	slices.Sort(locks)
	locks = append(locks, locks[0]) // two parameters, one or two distinct keys
	keys = append(keys, keys[0])
	err := db.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2)), pg_advisory_xact_lock($1, hashtext($3))`,
			lookAlikeLock, locks[0], locks[1]); err != nil {
			return err
		}
		var existing string
		err := tx.QueryRow(ctx, `SELECT name FROM users WHERE skeleton IN ($1, $2) ORDER BY name_key = $3 DESC, id LIMIT 1`,
			keys[0], keys[1], nameKey(u.Name)).Scan(&existing)
		switch {
		case err == nil && nameKey(existing) == nameKey(u.Name):
			return wiki.ErrExists
		case err == nil:
			return wiki.TooSimilarError(u.Name, existing)
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		err = tx.QueryRow(ctx, `INSERT INTO users (name, name_key, skeleton, password_hash, grp, created, time_zone, date_format, minor_default, no_autowatch, signature)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
			u.Name, nameKey(u.Name), skeleton, u.PasswordHash, string(u.Group), ms(u.Created),
			u.Prefs.TimeZone, u.Prefs.DateFormat, u.Prefs.MinorDefault, u.Prefs.NoAutoWatch, u.Prefs.Signature).Scan(&u.ID)
		if err != nil {
			return err
		}
		return insertLog(ctx, tx, wiki.LogEntry{Type: wiki.LogNewUsers, Action: "create", Time: u.Created,
			UserID: u.ID, UserName: u.Name, Target: userTarget(u.Name)})
	})
	if isUnique(err, "users_name_key_key") {
		err = wiki.ErrExists
	}
	if err != nil {
		return wiki.User{}, fmt.Errorf("postgres: create user %q: %w", u.Name, err)
	}
	return u, nil
}

// FindUser returns the user with the given ID.
func (db *DB) FindUser(ctx context.Context, id int64) (wiki.User, error) {
	u, err := scanUser(db.pool.QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE id = $1`, id))
	if err != nil {
		return wiki.User{}, fmt.Errorf("postgres: find user %d: %w", id, notFound(err))
	}
	return u, nil
}

// FindUserByName returns the user whose name equals name case-insensitively.
func (db *DB) FindUserByName(ctx context.Context, name string) (wiki.User, error) {
	u, err := scanUser(db.pool.QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE name_key = $1`, nameKey(name)))
	if err != nil {
		return wiki.User{}, fmt.Errorf("postgres: find user %q: %w", name, notFound(err))
	}
	return u, nil
}

// UpdateUser saves u's name, password hash and group. ErrNotFound if there
// is no such user, ErrExists if the new name is taken.
func (db *DB) UpdateUser(ctx context.Context, u wiki.User) error {
	tag, err := db.pool.Exec(ctx, `UPDATE users SET name = $1, name_key = $2, skeleton = $3, password_hash = $4, grp = $5 WHERE id = $6`,
		u.Name, nameKey(u.Name), wiki.UserNameSkeleton(u.Name), u.PasswordHash, string(u.Group), u.ID)
	switch {
	case isUnique(err, "users_name_key_key"):
		err = wiki.ErrExists
	case err == nil && tag.RowsAffected() == 0:
		err = wiki.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("postgres: update user %d: %w", u.ID, err)
	}
	return nil
}

// CountUsers returns the number of accounts.
func (db *DB) CountUsers(ctx context.Context) (int, error) {
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM users`).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: count users: %w", err)
	}
	return n, nil
}

// ListUsers pages through accounts by name (byte order, index users_name).
func (db *DB) ListUsers(ctx context.Context, q wiki.UserQuery) ([]wiki.User, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+userCols+` FROM users WHERE name >= $1 ORDER BY name LIMIT $2`, q.From, limit(q.Limit))
	if err != nil {
		return nil, fmt.Errorf("postgres: list users: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (wiki.User, error) { return scanUser(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: list users: %w", err)
	}
	return out, nil
}

// SetUserGroup changes the group and logs it in one transaction. The
// user's row is locked first, so that of two changes at once the second
// reads, and logs as old, the group the first set.
func (db *DB) SetUserGroup(ctx context.Context, c wiki.GroupChange) (wiki.Group, error) {
	var old wiki.Group
	err := db.write(ctx, func(tx pgx.Tx) error {
		var name, grp string
		if err := tx.QueryRow(ctx, `SELECT name, grp FROM users WHERE id = $1 FOR NO KEY UPDATE`, c.UserID).Scan(&name, &grp); err != nil {
			return notFound(err)
		}
		old = wiki.Group(grp)
		if old == c.Group {
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE users SET grp = $1 WHERE id = $2`, string(c.Group), c.UserID); err != nil {
			return err
		}
		return insertLog(ctx, tx, wiki.LogEntry{Type: wiki.LogRights, Action: "rights", Time: c.Time,
			UserID: c.By.ID, UserName: c.By.Name, Target: userTarget(name), Comment: c.Reason,
			Params: map[string]string{"old": string(old), "new": string(c.Group)}})
	})
	if err != nil {
		return "", fmt.Errorf("postgres: set group of user %d: %w", c.UserID, err)
	}
	return old, nil
}

// SetPassword stores the hash and ends the user's other sessions in one
// transaction, so that no request sees the new password with the old
// sessions. The three statements go in one round trip.
func (db *DB) SetPassword(ctx context.Context, userID int64, hash, keepSession string) error {
	err := db.write(ctx, func(tx pgx.Tx) error {
		var b pgx.Batch
		b.Queue(`UPDATE users SET password_hash = $1 WHERE id = $2`, hash, userID)
		b.Queue(`DELETE FROM sessions WHERE user_id = $1 AND id <> $2`, userID, keepSession)
		// A reset link sent before the change must not undo it.
		b.Queue(`DELETE FROM password_resets WHERE user_id = $1`, userID)
		br := tx.SendBatch(ctx, &b)
		tag, err := br.Exec()
		if err != nil {
			br.Close()
			return err
		}
		if err := br.Close(); err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return wiki.ErrNotFound
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: set password of user %d: %w", userID, err)
	}
	return nil
}

// UpdatePrefs saves the user's preferences.
func (db *DB) UpdatePrefs(ctx context.Context, userID int64, p wiki.Prefs) error {
	tag, err := db.pool.Exec(ctx, `UPDATE users SET time_zone = $1, date_format = $2, minor_default = $3, no_autowatch = $4, signature = $5 WHERE id = $6`,
		p.TimeZone, p.DateFormat, p.MinorDefault, p.NoAutoWatch, p.Signature, userID)
	if err == nil && tag.RowsAffected() == 0 {
		err = wiki.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("postgres: update preferences of user %d: %w", userID, err)
	}
	return nil
}
