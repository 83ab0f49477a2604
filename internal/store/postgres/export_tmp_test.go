// TEMPORARY (deleted at merge): a minimal page writer in plain SQL for lists_tmp_test.go, until SavePage exists.
package postgres

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

// TmpPage is a page write for TmpSave.
type TmpPage struct {
	Title, Text, User string
	Time              time.Time
	Minor             bool
	Redirect          string
	Links, Categories []string
	Unindexed         bool // no search entry (as a move leaves it to a job)
}

// TmpSave creates or edits a page, with its revision, change, links and
// search entry, in one transaction.
func TmpSave(ctx context.Context, db *DB, p TmpPage) (pageID, revID int64, err error) {
	t := wiki.Title(p.Title)
	at := now(p.Time)
	sum := sha1.Sum([]byte(p.Text))
	err = db.write(ctx, func(tx pgx.Tx) error {
		var latest, parentSize int64
		var deleted bool
		err := tx.QueryRow(ctx, `SELECT p.id, p.latest_rev, p.deleted, coalesce(r.size, 0) FROM pages p LEFT JOIN revisions r ON r.id = p.latest_rev
			WHERE p.title = $1 FOR UPDATE OF p`, p.Title).Scan(&pageID, &latest, &deleted, &parentSize)
		kind := "edit"
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			kind = "new"
			latest = 0
			if err := tx.QueryRow(ctx, `INSERT INTO pages (title, ns, touched, title_fold) VALUES ($1, $2, $3, $4) RETURNING id`,
				p.Title, t.Namespace(), ms(at), store.Fold(p.Title)).Scan(&pageID); err != nil {
				return err
			}
		case err != nil:
			return err
		case deleted:
			kind, latest, parentSize = "new", 0, 0
		}
		if err := tx.QueryRow(ctx, `INSERT INTO revisions (page_id, parent_id, user_name, ts, summary, text, size, sha1, minor)
			VALUES ($1, $2, $3, $4, 'edit', $5, $6, $7, $8) RETURNING id`,
			pageID, latest, p.User, ms(at), p.Text, len(p.Text), hex.EncodeToString(sum[:]), p.Minor).Scan(&revID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE pages SET latest_rev = $1, redirect = $2, deleted = false, touched = $3, size = $4, title_fold = $5 WHERE id = $6`,
			revID, p.Redirect, ms(at), len(p.Text), store.Fold(p.Title), pageID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO changes (kind, title, page_id, rev_id, old_rev_id, user_name, ts, summary, size, old_size, minor)
			VALUES ($1, $2, $3, $4, $5, $6, $7, 'edit', $8, $9, $10)`,
			kind, p.Title, pageID, revID, latest, p.User, ms(at), len(p.Text), parentSize, p.Minor); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM links WHERE from_page = $1`, pageID); err != nil {
			return err
		}
		add := func(kind string, targets []string) error {
			for _, target := range targets {
				if _, err := tx.Exec(ctx, `INSERT INTO links (from_page, kind, target_title) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
					pageID, kind, target); err != nil {
					return err
				}
			}
			return nil
		}
		if err := add("link", p.Links); err != nil {
			return err
		}
		if err := add("category", p.Categories); err != nil {
			return err
		}
		if p.Redirect != "" {
			if err := add("redirect", []string{p.Redirect}); err != nil {
				return err
			}
		}
		if p.Unindexed {
			return nil
		}
		return writeSearch(ctx, tx, []searchEntry{{pageID: pageID, revID: revID, title: t, terms: store.IndexText(p.Text)}})
	})
	return pageID, revID, err
}

// TmpDelete deletes a page and drops its search entry.
func TmpDelete(ctx context.Context, db *DB, title string) error {
	return db.write(ctx, func(tx pgx.Tx) error {
		var id int64
		if err := tx.QueryRow(ctx, `UPDATE pages SET deleted = true WHERE title = $1 RETURNING id`, title).Scan(&id); err != nil {
			return err
		}
		return unindexPage(ctx, tx, id)
	})
}

// TmpMove renames a page (its search entry is left to UpdateSearchIndex),
// without a redirect.
func TmpMove(ctx context.Context, db *DB, from, to string) error {
	_, err := db.pool.Exec(ctx, `UPDATE pages SET title = $2, ns = $3, title_fold = $4 WHERE title = $1`,
		from, to, wiki.Title(to).Namespace(), store.Fold(to))
	return err
}

// SetSearchRare and SetSearchBudget set the search's bounds until the
// test ends.
func SetSearchRare(t interface{ Cleanup(func()) }, n int) {
	old := searchRare
	searchRare = n
	t.Cleanup(func() { searchRare = old })
}

func SetSearchBudget(t interface{ Cleanup(func()) }, d time.Duration) {
	old := searchBudget
	searchBudget = d
	t.Cleanup(func() { searchBudget = old })
}
