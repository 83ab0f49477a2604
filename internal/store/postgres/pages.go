package postgres

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

const (
	pageCols = `p.id, p.title, p.latest_rev, p.redirect, p.deleted, p.touched, p.size, p.model`
	// revCols needs: revisions r JOIN pages p, LEFT JOIN revisions pr (the parent).
	revCols = `r.id, r.page_id, p.title, r.parent_id, r.user_id, r.user_name, r.ts, r.summary, r.size, r.sha1, r.minor, coalesce(pr.size, 0), r.tags, r.model`
	// revColsFrom is the FROM clause revCols reads.
	revColsFrom = ` FROM revisions r JOIN pages p ON p.id = r.page_id LEFT JOIN revisions pr ON pr.id = r.parent_id`
)

// scanPage scans pageCols.
func scanPage(row pgx.Row) (wiki.Page, error) {
	var p wiki.Page
	var title, redirect, model string
	var touched int64
	err := row.Scan(&p.ID, &title, &p.LatestID, &redirect, &p.Deleted, &touched, &p.Size, &model)
	p.Title, p.Redirect, p.Touched, p.Model = wiki.Title(title), wiki.Title(redirect), fromMS(touched), wiki.ContentModel(model)
	return p, err
}

// scanRevision scans revCols, plus r.text when withText.
func scanRevision(row pgx.Row, withText bool) (wiki.Revision, error) {
	var r wiki.Revision
	var title string
	var ts int64
	var tags, model string
	dest := []any{&r.ID, &r.PageID, &title, &r.ParentID, &r.UserID, &r.UserName, &ts, &r.Summary, &r.Size, &r.SHA1, &r.Minor, &r.ParentSize, &tags, &model}
	if withText {
		dest = append(dest, &r.Text)
	}
	err := row.Scan(dest...)
	r.Title, r.Time, r.Tags, r.Model = wiki.Title(title), fromMS(ts), wiki.SplitTags(tags), wiki.ContentModel(model)
	return r, err
}

// FindPage returns the page with title t, deleted or not. For a deleted
// page, LatestID is the revision that was latest when it was deleted.
func (db *DB) FindPage(ctx context.Context, t wiki.Title) (wiki.Page, error) {
	p, err := scanPage(db.pool.QueryRow(ctx, `SELECT `+pageCols+` FROM pages p WHERE p.title = $1`, string(t)))
	if err != nil {
		return wiki.Page{}, fmt.Errorf("postgres: find page %q: %w", t, notFound(err))
	}
	return p, nil
}

// FindPageByID returns the page with the given ID, deleted or not, with its
// title as stored (a title today's rules refuse included).
func (db *DB) FindPageByID(ctx context.Context, id int64) (wiki.Page, error) {
	p, err := scanPage(db.pool.QueryRow(ctx, `SELECT `+pageCols+` FROM pages p WHERE p.id = $1`, id))
	if err != nil {
		return wiki.Page{}, fmt.Errorf("postgres: find page %d: %w", id, notFound(err))
	}
	return p, nil
}

// FindRevision returns a visible revision with its text; deleted
// revisions are ErrNotFound.
func (db *DB) FindRevision(ctx context.Context, id int64) (wiki.Revision, error) {
	r, err := scanRevision(db.pool.QueryRow(ctx, `SELECT `+revCols+`, r.text`+revColsFrom+` WHERE r.id = $1 AND NOT r.deleted`, id), true)
	if err != nil {
		return wiki.Revision{}, fmt.Errorf("postgres: find revision %d: %w", id, notFound(err))
	}
	return r, nil
}

// ExistingTitles returns which of titles name live pages, in one query
// (the titles travel as one array parameter).
func (db *DB) ExistingTitles(ctx context.Context, titles []wiki.Title) (map[wiki.Title]bool, error) {
	out := make(map[wiki.Title]bool, len(titles))
	if len(titles) == 0 {
		return out, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT title FROM pages WHERE title = ANY($1) AND NOT deleted`, titlesArg(titles))
	if err != nil {
		return nil, fmt.Errorf("postgres: existing titles: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("postgres: existing titles: %w", err)
		}
		out[wiki.Title(t)] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: existing titles: %w", err)
	}
	return out, nil
}

func titlesArg(ts []wiki.Title) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

func sha1Hex(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// pageRow is the page row as a write transaction sees it, locked.
type pageRow struct {
	wiki.Page
	exists    bool
	latestSHA string // of the latest revision
}

// lockPage reads the page row titled t and locks it until the end of tx
// (FOR UPDATE): a save, move, delete or undelete of the same title waits
// for tx, then reads the row as tx left it. A missing title locks nothing;
// the unique title index settles a concurrent creation.
//
// The latest revision's SHA-1 comes from a subquery, not a join: after
// waiting for the lock, PostgreSQL checks the row's new version against the
// join with the row of revisions it had read, and a join whose revision is
// no longer the latest would drop the page. The subquery reads the
// statement's snapshot, so a revision committed while it waited reads as
// "" (no null edit); that revision is then not the base anyway.
func lockPage(ctx context.Context, tx pgx.Tx, t wiki.Title) (pageRow, error) {
	var pr pageRow
	var title, redirect, model string
	var touched int64
	err := tx.QueryRow(ctx, `SELECT `+pageCols+`, coalesce((SELECT r.sha1 FROM revisions r WHERE r.id = p.latest_rev), '')
		FROM pages p WHERE p.title = $1 FOR UPDATE`, string(t)).
		Scan(&pr.ID, &title, &pr.LatestID, &redirect, &pr.Deleted, &touched, &pr.Size, &model, &pr.latestSHA)
	if errors.Is(err, pgx.ErrNoRows) {
		return pageRow{}, nil
	}
	if err != nil {
		return pageRow{}, err
	}
	pr.Title, pr.Redirect, pr.Touched, pr.Model, pr.exists = wiki.Title(title), wiki.Title(redirect), fromMS(touched), wiki.ContentModel(model), true
	return pr, nil
}

// newRevision is what insertRevision writes.
type newRevision struct {
	pageID, parentID, userID int64
	userName, summary, text  string
	sha1                     string
	minor                    bool
	at                       time.Time
	tags                     string // wiki.JoinTags
	model                    wiki.ContentModel
}

func insertRevision(ctx context.Context, tx pgx.Tx, nr newRevision) (wiki.Revision, error) {
	r := wiki.Revision{
		PageID: nr.pageID, ParentID: nr.parentID, UserID: nr.userID, UserName: nr.userName,
		Time: nr.at, Summary: nr.summary, Size: len(nr.text), SHA1: nr.sha1, Minor: nr.minor,
		Tags: wiki.SplitTags(nr.tags), Model: nr.model.Or(wiki.ModelMarkdown),
	}
	err := tx.QueryRow(ctx, `INSERT INTO revisions
		(page_id, parent_id, user_id, user_name, ts, summary, text, size, sha1, minor, tags, model)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id`,
		r.PageID, r.ParentID, r.UserID, r.UserName, ms(r.Time), r.Summary, nr.text, r.Size, r.SHA1, r.Minor, nr.tags, string(r.Model),
	).Scan(&r.ID)
	return r, err
}

const insertChangeSQL = `INSERT INTO changes
	(kind, title, new_title, page_id, rev_id, old_rev_id, user_id, user_name, ts, summary, size, old_size, minor, tags)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id`

func changeArgs(c wiki.Change) []any {
	return []any{string(c.Kind), string(c.Title), string(c.NewTitle), c.PageID, c.RevID, c.OldRevID, c.UserID, c.UserName,
		ms(c.Time), c.Summary, c.Size, c.OldSize, c.Minor, wiki.JoinTags(c.Tags)}
}

// insertChange writes a recent-changes entry in tx and returns its ID.
func insertChange(ctx context.Context, tx pgx.Tx, c wiki.Change) (int64, error) {
	var id int64
	err := tx.QueryRow(ctx, insertChangeSQL, changeArgs(c)...).Scan(&id)
	return id, err
}

// searchTerms returns the terms of req's search entry.
func searchTerms(req wiki.SaveRequest) string { return store.IndexText(req.SearchText) }

// SavePage stores an edit in one transaction: revision, page row, links,
// search entry (req.SearchText), recent change and the request's jobs. The
// page row is locked before the base revision is compared, so that of
// concurrent saves on one base exactly one wins. A page deleted earlier is
// created again on its old row (its deleted revisions stay hidden until an
// undelete). An edit whose text equals the latest revision's is a null
// edit: it refreshes the links but stores no revision or change, and
// returns the latest revision; with req.NullRevision it stores both as an
// edit does.
func (db *DB) SavePage(ctx context.Context, req wiki.SaveRequest) (wiki.SaveResult, error) {
	var res wiki.SaveResult
	terms, sha := searchTerms(req), sha1Hex(req.Text)
	err := db.write(ctx, func(tx pgx.Tx) (err error) {
		res, err = savePageTx(ctx, tx, req, sha, terms)
		return err
	})
	if err != nil {
		return wiki.SaveResult{}, fmt.Errorf("postgres: save page %q: %w", req.Title, err)
	}
	return res, nil
}

// savePageTx is SavePage's work inside tx; sha is the SHA-1 of req.Text
// and terms its search entry's text, both made before the transaction.
func savePageTx(ctx context.Context, tx pgx.Tx, req wiki.SaveRequest, sha, terms string) (wiki.SaveResult, error) {
	at := now(req.Time)
	cur, err := lockPage(ctx, tx, req.Title)
	if err != nil {
		return wiki.SaveResult{}, err
	}
	prot, err := readProtection(ctx, tx, "SHARE", req.Title)
	if err != nil {
		return wiki.SaveResult{}, err
	}
	if !protectionAllows(prot, req.Title, req.Group, at, wiki.ProtectEdit) {
		return wiki.SaveResult{}, wiki.ErrProtected
	}
	live := cur.exists && !cur.Deleted
	switch {
	case req.BaseRevID == 0 && live:
		return wiki.SaveResult{}, wiki.ErrExists
	case req.BaseRevID != 0 && (!live || cur.LatestID != req.BaseRevID):
		return wiki.SaveResult{}, wiki.ErrConflict
	}
	var parentID int64
	oldSize := 0
	model := req.Model
	if model == "" {
		model = cur.Model.Or(wiki.ModelMarkdown) // a deleted page's too
	}
	if live {
		parentID, oldSize = cur.LatestID, cur.Size
		// The same text is a null edit, unless the request asks for a
		// revision anyway (an upload's, as a move's): that one goes on as
		// any edit.
		if cur.latestSHA == sha && model == cur.Model && !req.NullRevision {
			if err := replaceLinks(ctx, tx, cur.ID, req.Title, req.Links, at); err != nil {
				return wiki.SaveResult{}, err
			}
			if err := insertJobs(ctx, tx, req.Jobs, at); err != nil {
				return wiki.SaveResult{}, err
			}
			rev, err := scanRevision(tx.QueryRow(ctx, `SELECT `+revCols+revColsFrom+` WHERE r.id = $1`, cur.LatestID), false)
			return wiki.SaveResult{Page: cur.Page, Revision: rev, Unchanged: true}, err
		}
	}
	pageID := cur.ID
	if !cur.exists {
		// A concurrent creation of the title that committed first leaves
		// no row here: the title is taken.
		err := tx.QueryRow(ctx, `INSERT INTO pages (title, ns, touched) VALUES ($1, $2, $3)
			ON CONFLICT (title) DO NOTHING RETURNING id`,
			string(req.Title), req.Title.Namespace(), ms(at)).Scan(&pageID)
		if errors.Is(err, pgx.ErrNoRows) {
			return wiki.SaveResult{}, wiki.ErrExists
		}
		if err != nil {
			return wiki.SaveResult{}, err
		}
	}
	rev, err := insertRevision(ctx, tx, newRevision{
		pageID: pageID, parentID: parentID, userID: req.UserID, userName: req.UserName,
		summary: req.Summary, text: req.Text, sha1: sha, minor: req.Minor, at: at, tags: wiki.JoinTags(req.Tags), model: model,
	})
	if err != nil {
		return wiki.SaveResult{}, err
	}
	rev.Title, rev.ParentSize = req.Title, oldSize
	page := wiki.Page{ID: pageID, Title: req.Title, LatestID: rev.ID, Redirect: req.Links.Redirect, Touched: at, Size: rev.Size, Model: model}
	kind := wiki.ChangeEdit
	if !live {
		kind = wiki.ChangeNew
	}
	// The rest needs no answer but success: one round trip.
	var b pgx.Batch
	b.Queue(`UPDATE pages SET latest_rev = $1, redirect = $2, deleted = false, touched = $3, size = $4, model = $5 WHERE id = $6`,
		page.LatestID, string(page.Redirect), ms(at), page.Size, string(model), pageID)
	queueReplaceLinks(&b, pageID, req.Title, req.Links, at)
	b.Queue(insertChangeSQL, changeArgs(wiki.Change{
		Kind: kind, Title: req.Title, PageID: pageID, RevID: rev.ID, OldRevID: parentID,
		UserID: req.UserID, UserName: req.UserName, Time: at, Summary: req.Summary,
		Size: rev.Size, OldSize: oldSize, Minor: req.Minor, Tags: rev.Tags,
	})...)
	if old := cur.Model.Or(wiki.ModelMarkdown); live && model != old {
		if err := queueLog(&b, store.ModelLog(req, pageID, old, model, at)); err != nil {
			return wiki.SaveResult{}, err
		}
	}
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return wiki.SaveResult{}, err
	}
	if err := writeSearch(ctx, tx, []searchEntry{{pageID: pageID, revID: rev.ID, title: req.Title, terms: terms}}); err != nil {
		return wiki.SaveResult{}, err
	}
	// Last: a purge log event among the jobs holds the log's lock until
	// the commit.
	if err := insertJobs(ctx, tx, req.Jobs, at); err != nil {
		return wiki.SaveResult{}, err
	}
	return wiki.SaveResult{Page: page, Revision: rev, Created: !live}, nil
}

// lockPages locks the page rows of titles (FOR UPDATE) in title order, so
// that two transactions locking the same titles cannot deadlock, and
// returns them by title; a missing title is absent.
func lockPages(ctx context.Context, tx pgx.Tx, titles ...wiki.Title) (map[wiki.Title]pageRow, error) {
	rows, err := tx.Query(ctx, `SELECT `+pageCols+` FROM pages p WHERE p.title = ANY($1) ORDER BY p.title FOR UPDATE`, titlesArg(titles))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[wiki.Title]pageRow, len(titles))
	for rows.Next() {
		p, err := scanPage(rows)
		if err != nil {
			return nil, err
		}
		out[p.Title] = pageRow{Page: p, exists: true}
	}
	return out, rows.Err()
}

// MovePage renames a live page. To may not name a live page (ErrExists).
// A deleted page at To is absorbed: its hidden revisions join the moved
// page (an undelete at To restores them into its history), and so do its
// file versions, hidden too (an undelete at To shows them again, the
// newest of all the page's versions then current), and its row goes.
// Both titles' page rows and protections are locked first.
func (db *DB) MovePage(ctx context.Context, req wiki.MoveRequest) (wiki.Page, error) {
	var page wiki.Page
	at := now(req.Time)
	redirectSHA := sha1Hex(req.RedirectText)
	// A title that names no page cannot be locked: another transaction may
	// create it (To, or From after it moved away) between the check and
	// this one's write, which then breaks the titles' uniqueness. Run
	// again, it sees that page and answers as for any page there.
	err := db.writeRetrying(ctx, "pages_title_key", func(tx pgx.Tx) error {
		if req.From == req.To {
			return wiki.Errorf(wiki.KindInvalid, "the page is already called %q; choose a different new title", req.To)
		}
		pages, err := lockPages(ctx, tx, req.From, req.To)
		if err != nil {
			return err
		}
		// The protections are locked for update: moveProtection changes them.
		prot, err := readProtection(ctx, tx, "UPDATE", req.From, req.To)
		if err != nil {
			return err
		}
		if !protectionAllows(prot, req.From, req.Group, at, wiki.ProtectMove, wiki.ProtectEdit) ||
			!protectionAllows(prot, req.To, req.Group, at, wiki.ProtectEdit) {
			return wiki.ErrProtected
		}
		from, to := pages[req.From], pages[req.To]
		if !from.exists || from.Deleted {
			return wiki.ErrNotFound
		}
		if to.exists {
			if !to.Deleted {
				return wiki.ErrExists
			}
			var b pgx.Batch
			b.Queue(`UPDATE revisions SET page_id = $1 WHERE page_id = $2`, from.ID, to.ID)
			// Its file versions too, hidden: deleting its row would drop
			// them.
			b.Queue(`UPDATE file_versions SET page_id = $1, hidden = true WHERE page_id = $2`, from.ID, to.ID)
			b.Queue(`DELETE FROM links WHERE from_page = $1`, to.ID)
			b.Queue(`DELETE FROM pages WHERE id = $1`, to.ID)
			if err := tx.SendBatch(ctx, &b).Close(); err != nil {
				return err
			}
		}
		// The moved page's new revision has the latest one's text, copied
		// in the database.
		var revID int64
		if err := tx.QueryRow(ctx, `INSERT INTO revisions
			(page_id, parent_id, user_id, user_name, ts, summary, text, size, sha1, minor, model)
			SELECT $1, id, $2, $3, $4, $5, text, size, sha1, true, model FROM revisions WHERE id = $6 RETURNING id`,
			from.ID, req.UserID, req.UserName, ms(at), req.Reason, from.LatestID).Scan(&revID); err != nil {
			return err
		}
		page = from.Page
		page.Title, page.LatestID, page.Touched = req.To, revID, at
		params := map[string]string{"to": string(req.To)}
		if !req.LeaveRedirect {
			params["noredirect"] = "1"
		}
		// The folded title moves now (title completion, the exact match of
		// a search); the search entry follows with the page's search job.
		var b pgx.Batch
		b.Queue(`UPDATE pages SET title = $1, title_fold = $2, ns = $3, latest_rev = $4, touched = $5 WHERE id = $6`,
			string(req.To), store.Fold(string(req.To)), req.To.Namespace(), revID, ms(at), from.ID)
		b.Queue(insertChangeSQL, changeArgs(wiki.Change{
			Kind: wiki.ChangeMove, Title: req.From, NewTitle: req.To, PageID: from.ID, RevID: revID, OldRevID: from.LatestID,
			UserID: req.UserID, UserName: req.UserName, Time: at, Summary: req.Reason, Size: from.Size, OldSize: from.Size, Minor: true,
		})...)
		if err := queueLog(&b, wiki.LogEntry{Type: wiki.LogMove, Action: "move", Time: at, UserID: req.UserID,
			UserName: req.UserName, Target: req.From, PageID: from.ID, Comment: req.Reason, Params: params}); err != nil {
			return err
		}
		if err := queueMoveProtection(&b, prot, req, from.ID, at); err != nil {
			return err
		}
		queueMoveWatchers(&b, req.From, req.To)
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			return err
		}
		if !req.LeaveRedirect {
			// Last: a purge log event among the jobs holds the log's lock
			// until the commit.
			return insertJobs(ctx, tx, req.Jobs, at)
		}
		var redirID int64
		if err := tx.QueryRow(ctx, `INSERT INTO pages (title, title_fold, ns, touched) VALUES ($1, $2, $3, $4) RETURNING id`,
			string(req.From), store.Fold(string(req.From)), req.From.Namespace(), ms(at)).Scan(&redirID); err != nil {
			return err
		}
		rr, err := insertRevision(ctx, tx, newRevision{
			pageID: redirID, userID: req.UserID, userName: req.UserName, summary: req.Reason,
			text: req.RedirectText, sha1: redirectSHA, at: at, model: from.Model,
		})
		if err != nil {
			return err
		}
		b = pgx.Batch{}
		b.Queue(`UPDATE pages SET latest_rev = $1, redirect = $2, size = $3, model = $4 WHERE id = $5`,
			rr.ID, string(req.RedirectLinks.Redirect), rr.Size, string(rr.Model), redirID)
		queueReplaceLinks(&b, redirID, req.From, req.RedirectLinks, at)
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			return err
		}
		return insertJobs(ctx, tx, req.Jobs, at)
	})
	if err != nil {
		return wiki.Page{}, fmt.Errorf("postgres: move page %q to %q: %w", req.From, req.To, err)
	}
	return page, nil
}

// DeletePage hides a live page, all its revisions and file versions and
// takes it out of the search index at once (a deleted page must not be
// found while its jobs wait). Its link rows stay (listings skip deleted
// pages) so that an undelete needs no re-parse.
func (db *DB) DeletePage(ctx context.Context, t wiki.Title, userID int64, userName, reason string, at time.Time, jobs ...wiki.JobSpec) error {
	at = now(at)
	err := db.write(ctx, func(tx pgx.Tx) error {
		p, err := lockPage(ctx, tx, t)
		if err != nil {
			return err
		}
		if !p.exists || p.Deleted {
			return wiki.ErrNotFound
		}
		var b pgx.Batch
		b.Queue(`UPDATE pages SET deleted = true, touched = $1 WHERE id = $2`, ms(at), p.ID)
		b.Queue(`UPDATE revisions SET deleted = true WHERE page_id = $1 AND NOT deleted`, p.ID)
		b.Queue(`UPDATE file_versions SET hidden = true WHERE page_id = $1 AND NOT hidden`, p.ID)
		b.Queue(insertChangeSQL, changeArgs(wiki.Change{
			Kind: wiki.ChangeDelete, Title: t, PageID: p.ID, OldRevID: p.LatestID,
			UserID: userID, UserName: userName, Time: at, Summary: reason, OldSize: p.Size,
		})...)
		if err := queueLog(&b, wiki.LogEntry{Type: wiki.LogDelete, Action: "delete", Time: at, UserID: userID,
			UserName: userName, Target: t, PageID: p.ID, Comment: reason}); err != nil {
			return err
		}
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			return err
		}
		if err := unindexPage(ctx, tx, p.ID); err != nil {
			return err
		}
		return insertJobs(ctx, tx, jobs, at)
	})
	if err != nil {
		return fmt.Errorf("postgres: delete page %q: %w", t, err)
	}
	return nil
}

// UndeletePage restores a page's deleted revisions and hidden file
// versions, and the page itself if it is deleted. ErrNotFound when there
// is nothing to restore. The latest revision becomes the newest of the
// page's revisions (and its current file the newest of its versions). The
// search index follows through a job.
func (db *DB) UndeletePage(ctx context.Context, t wiki.Title, userID int64, userName, reason string, at time.Time, jobs ...wiki.JobSpec) (wiki.Page, error) {
	at = now(at)
	var page wiki.Page
	err := db.write(ctx, func(tx pgx.Tx) error {
		p, err := lockPage(ctx, tx, t)
		if err != nil {
			return err
		}
		if !p.exists {
			return wiki.ErrNotFound
		}
		tag, err := tx.Exec(ctx, `UPDATE revisions SET deleted = false WHERE page_id = $1 AND deleted`, p.ID)
		if err != nil {
			return err
		}
		files, err := tx.Exec(ctx, `UPDATE file_versions SET hidden = false WHERE page_id = $1 AND hidden`, p.ID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 && files.RowsAffected() == 0 && !p.Deleted {
			return wiki.ErrNotFound
		}
		var latest int64
		var size int
		var model string
		if err := tx.QueryRow(ctx, `SELECT id, size, model FROM revisions WHERE page_id = $1 ORDER BY id DESC LIMIT 1`, p.ID).
			Scan(&latest, &size, &model); err != nil {
			return err
		}
		page = p.Page
		page.Deleted, page.LatestID, page.Size, page.Touched, page.Model = false, latest, size, at, wiki.ContentModel(model)
		var b pgx.Batch
		b.Queue(`UPDATE pages SET deleted = false, latest_rev = $1, size = $2, touched = $3, model = $4 WHERE id = $5`,
			latest, size, ms(at), model, p.ID)
		b.Queue(insertChangeSQL, changeArgs(wiki.Change{
			Kind: wiki.ChangeUndelete, Title: t, PageID: p.ID, RevID: latest,
			UserID: userID, UserName: userName, Time: at, Summary: reason, Size: size,
		})...)
		if err := queueLog(&b, wiki.LogEntry{Type: wiki.LogDelete, Action: "restore", Time: at, UserID: userID,
			UserName: userName, Target: t, PageID: p.ID, Comment: reason}); err != nil {
			return err
		}
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			return err
		}
		return insertJobs(ctx, tx, jobs, at)
	})
	if err != nil {
		return wiki.Page{}, fmt.Errorf("postgres: undelete page %q: %w", t, err)
	}
	return page, nil
}

// FindRevisions returns the revisions with the given IDs with their
// texts, in one query.
func (db *DB) FindRevisions(ctx context.Context, ids []int64) ([]wiki.Revision, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT `+revCols+`, r.text`+revColsFrom+` WHERE r.id = ANY($1) AND NOT r.deleted`, ids)
	if err != nil {
		return nil, fmt.Errorf("postgres: find revisions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (wiki.Revision, error) {
		return scanRevision(row, true)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: find revisions: %w", err)
	}
	return out, nil
}
