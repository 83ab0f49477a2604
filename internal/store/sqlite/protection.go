package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

const protectionCols = `title, edit_level, move_level, expiry, user_id, user_name, reason, ts`

func scanProtection(s scanner) (wiki.Protection, error) {
	var p wiki.Protection
	var title, edit, move string
	var expiry, ts int64
	err := s.Scan(&title, &edit, &move, &expiry, &p.UserID, &p.UserName, &p.Reason, &ts)
	p.Title, p.Edit, p.Move, p.Time = wiki.Title(title), wiki.ProtectionLevel(edit), wiki.ProtectionLevel(move), fromMS(ts)
	if expiry != 0 {
		p.Expiry = fromMS(expiry)
	}
	return p, err
}

// FindProtection returns t's protection row, expired or not.
func (db *DB) FindProtection(ctx context.Context, t wiki.Title) (wiki.Protection, error) {
	p, err := scanProtection(db.r.QueryRowContext(ctx, `SELECT `+protectionCols+` FROM protection WHERE title = ?`, string(t)))
	if err != nil {
		return wiki.Protection{}, fmt.Errorf("sqlite: find protection of %q: %w", t, notFound(err))
	}
	return p, nil
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

// ProtectPage replaces t's protection row (or removes it) and writes the
// protect log entry, in one transaction. An expired row counts as none.
func (db *DB) ProtectPage(ctx context.Context, req wiki.ProtectRequest) (string, error) {
	if !req.Edit.Valid() || !req.Move.Valid() {
		return "", wiki.Errorf(wiki.KindInvalid, "unknown protection level (edit %q, move %q); use one of \"\", users, admins", req.Edit, req.Move)
	}
	at := now(req.Time)
	var action string
	err := db.write(ctx, func(tx *wtx) error {
		old, err := scanProtection(tx.QueryRowContext(ctx, `SELECT `+protectionCols+` FROM protection WHERE title = ?`, string(req.Title)))
		had := err == nil && old.Active(at)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		unprotect := req.Edit == wiki.ProtectNone && req.Move == wiki.ProtectNone
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
		if _, err := tx.ExecContext(ctx, `DELETE FROM protection WHERE title = ?`, string(req.Title)); err != nil {
			return err
		}
		var params map[string]string
		if !unprotect {
			var expiry int64
			if !req.Expiry.IsZero() {
				expiry = ms(req.Expiry)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO protection (`+protectionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				string(req.Title), string(req.Edit), string(req.Move), expiry, req.UserID, req.UserName, req.Reason, ms(at)); err != nil {
				return err
			}
			params = protectionParams(req.Edit, req.Move, req.Expiry)
		}
		var pageID int64
		if p, err := findPageTx(ctx, tx, req.Title); err != nil {
			return err
		} else if p.exists && !p.Deleted {
			pageID = p.ID
		}
		if err := insertLog(ctx, tx, wiki.LogEntry{Type: wiki.LogProtect, Action: action, Time: at, UserID: req.UserID,
			UserName: req.UserName, Target: req.Title, PageID: pageID, Comment: req.Reason, Params: params}); err != nil {
			return err
		}
		return insertJobs(ctx, tx, req.Jobs, at)
	})
	if err != nil {
		return "", fmt.Errorf("sqlite: protect %q: %w", req.Title, err)
	}
	return action, nil
}

// moveProtection makes the protection of from that of to, in a move's
// transaction: a protection follows its page, as in MediaWiki, and a
// protection of to (its creation's) is replaced. The redirect left at from
// is not protected.
func moveProtection(ctx context.Context, tx *wtx, req wiki.MoveRequest, pageID int64, at time.Time) error {
	p, err := scanProtection(tx.QueryRowContext(ctx, `SELECT `+protectionCols+` FROM protection WHERE title = ?`, string(req.From)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM protection WHERE title = ?`, string(req.To)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE protection SET title = ? WHERE title = ?`, string(req.To), string(req.From)); err != nil {
		return err
	}
	if !p.Active(at) {
		return nil
	}
	params := protectionParams(p.Edit, p.Move, p.Expiry)
	params["from"] = string(req.From)
	return insertLog(ctx, tx, wiki.LogEntry{Type: wiki.LogProtect, Action: "move_prot", Time: at, UserID: req.UserID,
		UserName: req.UserName, Target: req.To, PageID: pageID, Comment: req.Reason, Params: params})
}

// allowedTx returns ErrProtected unless t's protection, as it stands in
// tx, lets group g make each of actions at time at. The engine checks the
// same before a change, for its message; this check closes the window
// between that check and the change's transaction.
func allowedTx(ctx context.Context, tx *wtx, t wiki.Title, g wiki.Group, at time.Time, actions ...string) error {
	p, err := scanProtection(tx.QueryRowContext(ctx, `SELECT `+protectionCols+` FROM protection WHERE title = ?`, string(t)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, a := range actions {
		if !p.Level(a, at).Allows(g) {
			return wiki.ErrProtected
		}
	}
	return nil
}
