package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wikid/wikid/internal/wiki"
)

// Lock order: a transaction that locks page rows locks them before
// protection rows (saves and moves), and ProtectPage, which locks a
// protection row, reads the page row without locking it, so that the two
// never wait for each other in a cycle.

const protectionCols = `title, edit_level, move_level, expiry, user_id, user_name, reason, ts`

func scanProtection(row pgx.Row) (wiki.Protection, error) {
	var p wiki.Protection
	var title, edit, move string
	var expiry, ts int64
	err := row.Scan(&title, &edit, &move, &expiry, &p.UserID, &p.UserName, &p.Reason, &ts)
	p.Title, p.Edit, p.Move, p.Time = wiki.Title(title), wiki.ProtectionLevel(edit), wiki.ProtectionLevel(move), fromMS(ts)
	if expiry != 0 {
		p.Expiry = fromMS(expiry)
	}
	return p, err
}

// FindProtection returns t's protection row, expired or not.
func (db *DB) FindProtection(ctx context.Context, t wiki.Title) (wiki.Protection, error) {
	p, err := scanProtection(db.pool.QueryRow(ctx, `SELECT `+protectionCols+` FROM protection WHERE title = $1`, string(t)))
	if err != nil {
		return wiki.Protection{}, fmt.Errorf("postgres: find protection of %q: %w", t, notFound(err))
	}
	return p, nil
}

// readProtection reads the protection rows of titles in tx and locks them
// (lock is "SHARE" to check them, "UPDATE" to change them), so that a
// protection changed meanwhile is either seen or waits for tx. A title
// without protection is absent from the map.
func readProtection(ctx context.Context, tx pgx.Tx, lock string, titles ...wiki.Title) (map[wiki.Title]wiki.Protection, error) {
	if lock != "SHARE" && lock != "UPDATE" {
		return nil, fmt.Errorf("read protection: unknown lock %q", lock)
	}
	rows, err := tx.Query(ctx, `SELECT `+protectionCols+` FROM protection WHERE title = ANY($1) ORDER BY title FOR `+lock, titlesArg(titles))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[wiki.Title]wiki.Protection{}
	for rows.Next() {
		p, err := scanProtection(rows)
		if err != nil {
			return nil, err
		}
		out[p.Title] = p
	}
	return out, rows.Err()
}

// protectionAllows reports whether t's protection in prot lets group g make each of
// actions at time at. The engine checks the same before a change, for its
// message; this check, in the change's transaction, closes the window
// between the two.
func protectionAllows(prot map[wiki.Title]wiki.Protection, t wiki.Title, g wiki.Group, at time.Time, actions ...string) bool {
	p, ok := prot[t]
	if !ok {
		return true
	}
	for _, a := range actions {
		if !p.Level(a, at).Allows(g) {
			return false
		}
	}
	return true
}

// protectionParams are the log entry params of a protection: its levels
// and its expiry ("infinite" or RFC 3339).
func protectionParams(edit, move wiki.ProtectionLevel, expiry time.Time) map[string]string {
	exp := "infinite"
	if !expiry.IsZero() {
		exp = expiry.UTC().Format(time.RFC3339)
	}
	return map[string]string{"edit": string(edit), "move": string(move), "expiry": exp}
}

// ProtectPage sets t's protection row (or removes it) and writes the
// protect log entry, in one transaction. An expired row counts as none.
func (db *DB) ProtectPage(ctx context.Context, req wiki.ProtectRequest) (string, error) {
	if !req.Edit.Valid() || !req.Move.Valid() {
		return "", wiki.Errorf(wiki.KindInvalid, "unknown protection level (edit %q, move %q); use one of \"\", users, admins", req.Edit, req.Move)
	}
	at := now(req.Time)
	unprotect := req.Edit == wiki.ProtectNone && req.Move == wiki.ProtectNone
	var expiry int64
	if !req.Expiry.IsZero() {
		expiry = ms(req.Expiry)
	}
	var action string
	err := db.write(ctx, func(tx pgx.Tx) error {
		// A protection of a title that had none is an insert, which a
		// concurrent one may beat: then its row is read and changed.
		for done := false; !done; {
			old, err := scanProtection(tx.QueryRow(ctx, `SELECT `+protectionCols+` FROM protection WHERE title = $1 FOR UPDATE`, string(req.Title)))
			exists := err == nil
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			had := exists && old.Active(at)
			switch {
			case unprotect && !had:
				return wiki.ErrNotFound
			case unprotect:
				action = "unprotect"
			case had:
				action = "modify"
			default:
				action = "protect"
			}
			switch {
			case unprotect:
				_, err = tx.Exec(ctx, `DELETE FROM protection WHERE title = $1`, string(req.Title))
				done = true
			case exists:
				_, err = tx.Exec(ctx, `UPDATE protection SET edit_level = $2, move_level = $3, expiry = $4, user_id = $5,
					user_name = $6, reason = $7, ts = $8 WHERE title = $1`,
					string(req.Title), string(req.Edit), string(req.Move), expiry, req.UserID, req.UserName, req.Reason, ms(at))
				done = true
			default:
				var tag pgconn.CommandTag
				tag, err = tx.Exec(ctx, `INSERT INTO protection (`+protectionCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
					ON CONFLICT (title) DO NOTHING`,
					string(req.Title), string(req.Edit), string(req.Move), expiry, req.UserID, req.UserName, req.Reason, ms(at))
				done = err == nil && tag.RowsAffected() == 1
			}
			if err != nil {
				return err
			}
		}
		var params map[string]string
		if !unprotect {
			params = protectionParams(req.Edit, req.Move, req.Expiry)
		}
		var pageID int64
		err := tx.QueryRow(ctx, `SELECT id FROM pages WHERE title = $1 AND NOT deleted`, string(req.Title)).Scan(&pageID)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if err := insertLog(ctx, tx, wiki.LogEntry{Type: wiki.LogProtect, Action: action, Time: at, UserID: req.UserID,
			UserName: req.UserName, Target: req.Title, PageID: pageID, Comment: req.Reason, Params: params}); err != nil {
			return err
		}
		return insertJobs(ctx, tx, req.Jobs, at)
	})
	if err != nil {
		return "", fmt.Errorf("postgres: protect %q: %w", req.Title, err)
	}
	return action, nil
}

// queueMoveProtection queues on b what makes the protection of req.From
// that of req.To, in a move's transaction (prot holds both titles'
// protections, locked for update): a protection follows its page, as in
// MediaWiki, and a protection of To (its creation's) is replaced. The
// redirect left at From is not protected.
func queueMoveProtection(b *pgx.Batch, prot map[wiki.Title]wiki.Protection, req wiki.MoveRequest, pageID int64, at time.Time) error {
	p, ok := prot[req.From]
	if !ok {
		return nil
	}
	b.Queue(`DELETE FROM protection WHERE title = $1`, string(req.To))
	b.Queue(`UPDATE protection SET title = $1 WHERE title = $2`, string(req.To), string(req.From))
	if !p.Active(at) {
		return nil
	}
	params := protectionParams(p.Edit, p.Move, p.Expiry)
	params["from"] = string(req.From)
	return queueLog(b, wiki.LogEntry{Type: wiki.LogProtect, Action: "move_prot", Time: at, UserID: req.UserID,
		UserName: req.UserName, Target: req.To, PageID: pageID, Comment: req.Reason, Params: params})
}
