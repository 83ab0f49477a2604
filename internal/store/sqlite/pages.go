package sqlite

import (
	"cmp"
	"context"
	"crypto/sha1"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/wikid/wikid/internal/search"
	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

const (
	pageCols = `p.id, p.title, p.latest_rev, p.redirect, p.deleted, p.touched, p.size, p.model`
	// revCols needs: revisions r JOIN pages p, LEFT JOIN revisions pr (the parent).
	revCols = `r.id, r.page_id, p.title, r.parent_id, r.user_id, r.user_name, r.ts, r.summary, r.size, r.sha1, r.minor, coalesce(pr.size, 0), r.tags, r.model`
)

type scanner interface{ Scan(dest ...any) error }

func scanPage(s scanner) (wiki.Page, error) {
	var p wiki.Page
	var title, redirect, model string
	var touched int64
	err := s.Scan(&p.ID, &title, &p.LatestID, &redirect, &p.Deleted, &touched, &p.Size, &model)
	p.Title, p.Redirect, p.Touched, p.Model = wiki.Title(title), wiki.Title(redirect), fromMS(touched), wiki.ContentModel(model)
	return p, err
}

// scanRevision scans revCols, plus text when withText.
func scanRevision(s scanner, withText bool) (wiki.Revision, error) {
	var r wiki.Revision
	var title string
	var ts int64
	var tags, model string
	dest := []any{&r.ID, &r.PageID, &title, &r.ParentID, &r.UserID, &r.UserName, &ts, &r.Summary, &r.Size, &r.SHA1, &r.Minor, &r.ParentSize, &tags, &model}
	if withText {
		dest = append(dest, textColumn{&r.Text})
	}
	err := s.Scan(dest...)
	r.Title, r.Time, r.Tags, r.Model = wiki.Title(title), fromMS(ts), wiki.SplitTags(tags), wiki.ContentModel(model)
	return r, err
}

// FindPage returns the page with title t, deleted or not. For a deleted
// page, LatestID is the revision that was latest when it was deleted.
func (db *DB) FindPage(ctx context.Context, t wiki.Title) (wiki.Page, error) {
	p, err := scanPage(db.findPage.QueryRowContext(ctx, string(t)))
	if err != nil {
		return wiki.Page{}, fmt.Errorf("sqlite: find page %q: %w", t, notFound(err))
	}
	return p, nil
}

// FindPageByID returns the page with the given ID, deleted or not, with its
// title as stored (a title today's rules refuse included).
func (db *DB) FindPageByID(ctx context.Context, id int64) (wiki.Page, error) {
	p, err := scanPage(db.r.QueryRowContext(ctx, `SELECT `+pageCols+` FROM pages p WHERE p.id = ?`, id))
	if err != nil {
		return wiki.Page{}, fmt.Errorf("sqlite: find page %d: %w", id, notFound(err))
	}
	return p, nil
}

// FindRevision returns a visible revision with its text; deleted
// revisions are ErrNotFound.
func (db *DB) FindRevision(ctx context.Context, id int64) (wiki.Revision, error) {
	r, err := scanRevision(db.findRevision.QueryRowContext(ctx, id), true)
	if err != nil {
		return wiki.Revision{}, fmt.Errorf("sqlite: find revision %d: %w", id, notFound(err))
	}
	return r, nil
}

// ExistingTitles returns which of titles name live pages, in one query
// (the titles travel as one JSON array parameter).
func (db *DB) ExistingTitles(ctx context.Context, titles []wiki.Title) (map[wiki.Title]bool, error) {
	out := make(map[wiki.Title]bool, len(titles))
	if len(titles) == 0 {
		return out, nil
	}
	arg, err := json.Marshal(titles)
	if err != nil {
		return nil, fmt.Errorf("sqlite: existing titles: %w", err)
	}
	rows, err := db.existingTitles.QueryContext(ctx, string(arg))
	if err != nil {
		return nil, fmt.Errorf("sqlite: existing titles: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("sqlite: existing titles: %w", err)
		}
		out[wiki.Title(t)] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: existing titles: %w", err)
	}
	return out, nil
}

func sha1Hex(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// pageRow is the page row as a write transaction sees it.
type pageRow struct {
	wiki.Page
	exists bool
}

func findPageTx(ctx context.Context, tx *wtx, t wiki.Title) (pageRow, error) {
	p, err := scanPage(tx.QueryRowContext(ctx, `SELECT `+pageCols+` FROM pages p WHERE p.title = ?`, string(t)))
	if errors.Is(err, sql.ErrNoRows) {
		return pageRow{}, nil
	}
	if err != nil {
		return pageRow{}, err
	}
	return pageRow{Page: p, exists: true}, nil
}

// newRevision is what insertRevision writes. The text comes encoded
// (encodeText), so that it is compressed before the write transaction.
type newRevision struct {
	pageID, parentID, userID int64
	userName, summary        string
	text                     storedText
	minor                    bool
	at                       time.Time
	tags                     string // wiki.JoinTags
	model                    wiki.ContentModel
}

func insertRevision(ctx context.Context, tx *wtx, nr newRevision) (wiki.Revision, error) {
	r := wiki.Revision{
		PageID: nr.pageID, ParentID: nr.parentID, UserID: nr.userID, UserName: nr.userName,
		Time: nr.at, Summary: nr.summary, Size: nr.text.size, SHA1: nr.text.sha1, Minor: nr.minor,
		Tags: wiki.SplitTags(nr.tags), Model: nr.model.Or(wiki.ModelMarkdown),
	}
	var err error
	r.ID, err = insertID(ctx, tx, `INSERT INTO revisions
		(page_id, parent_id, user_id, user_name, ts, summary, text, size, sha1, minor, tags, model)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.PageID, r.ParentID, r.UserID, r.UserName, ms(r.Time), r.Summary, nr.text.value, r.Size, r.SHA1, b2i(r.Minor), nr.tags, string(r.Model))
	return r, err
}

// insertID runs query, a plain INSERT of one row into a rowid table
// whose INTEGER PRIMARY KEY it leaves to SQLite, and returns the row's ID.
// It asks the connection for the last row inserted, where RETURNING id has
// SQLite buffer the row and the driver read it back as a result set: 12 µs
// more a row (in a benchmark of the driver), three rows a page created. In
// a 100,000-page import, the writer's rows of the pages themselves (page,
// revision, change) took 6.3 s of CPU against 15.3 s with RETURNING. The
// last row inserted is not the statement's when it inserts none (OR
// IGNORE, an upsert that updates) or when the table is WITHOUT ROWID: an
// insert that wrote no row is an error.
func insertID(ctx context.Context, tx *wtx, query string, args ...any) (int64, error) {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	if n != 1 {
		return 0, fmt.Errorf("an insert that gives its row's ID wrote %d rows", n)
	}
	return res.LastInsertId()
}

// replaceLinks makes the link rows of page pageID, titled page, those of
// ls, written at time at (zero: now).
func replaceLinks(ctx context.Context, tx *wtx, pageID int64, page wiki.Title, ls wiki.LinkSet, at time.Time) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM links WHERE from_page = ?`, pageID); err != nil {
		return err
	}
	rows := store.LinkRows{At: at}
	rows.Add(pageID, page, ls)
	return insertLinkRows(ctx, tx, &rows)
}

// insertLinkRows writes the rows in the order of the target index
// (LinkRows.Sort), linkChunk rows per statement; OR IGNORE drops
// duplicates. A statement writing many rows keeps a journal of its own
// when its foreign key may abort it (not in an import, which runs without
// the checks: writeBulk), a copy of each page it changes: rows in index
// order change few pages each, so that the journal of 64 rows costs less
// than the 63 statements it saves, each of which costs about as much as
// its row. The rows after the last full chunk go one per statement, so
// that the writer prepares two texts, not one per length.
func insertLinkRows(ctx context.Context, tx *wtx, rs *store.LinkRows) error {
	rs.Sort()
	args := make([]any, 0, 5*linkChunk)
	n := 0
	for _, r := range rs.Rows {
		if r.Title == "" {
			continue
		}
		args = append(args, r.From, r.Kind, r.Title, r.SortKey, b2i(r.Subcat))
		if n++; n == linkChunk {
			if _, err := tx.ExecContext(ctx, insertLinkChunk, args...); err != nil {
				return err
			}
			args, n = args[:0], 0
		}
	}
	for i := 0; i < len(args); i += 5 {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO links (from_page, kind, target_title, sortkey, subcat) VALUES (?, ?, ?, ?, ?)`, args[i:i+5]...); err != nil {
			return err
		}
	}
	return writeAdditions(ctx, tx, rs)
}

// linkChunk is how many link rows one statement of insertLinkRows writes.
const linkChunk = 64

var insertLinkChunk = `INSERT OR IGNORE INTO links (from_page, kind, target_title, sortkey, subcat) VALUES (?, ?, ?, ?, ?)` +
	strings.Repeat(`, (?, ?, ?, ?, ?)`, linkChunk-1)

// additionChunk is how many rows one statement of writeAdditions writes.
const additionChunk = 64

const insertAddition = `INSERT OR IGNORE INTO category_added (category, page_id, added) VALUES (?, ?, ?)`

var insertAdditionChunk = insertAddition + strings.Repeat(`, (?, ?, ?)`, additionChunk-1)

// writeAdditions keeps category_added in step with the category rows just
// written for rs's pages: a membership new to its page is recorded as
// added at rs.At, one that goes on keeps its time, and one that ended is
// forgotten (so that coming back is a new addition).
func writeAdditions(ctx context.Context, tx *wtx, rs *store.LinkRows) error {
	at := ms(now(rs.At))
	cats, pages := rs.Additions()
	// additionChunk rows a statement, the rest one each, as
	// insertLinkRows: an import batch has thousands.
	args := make([]any, 0, 3*additionChunk)
	for i := range cats {
		args = append(args, cats[i], pages[i], at)
		if len(args) == 3*additionChunk {
			if _, err := tx.ExecContext(ctx, insertAdditionChunk, args...); err != nil {
				return err
			}
			args = args[:0]
		}
	}
	for i := 0; i < len(args); i += 3 {
		if _, err := tx.ExecContext(ctx, insertAddition, args[i:i+3]...); err != nil {
			return err
		}
	}
	// One statement for all the pages (their IDs travel as one JSON
	// array): an import batch has up to 4,000.
	ids, err := json.Marshal(rs.PageIDs())
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM category_added WHERE page_id IN (SELECT value FROM json_each(?)) AND NOT EXISTS (SELECT 1 FROM links l
		WHERE l.from_page = category_added.page_id AND l.kind = 'category' AND l.target_title = category_added.category)`, string(ids))
	return err
}

func insertChange(ctx context.Context, tx *wtx, c wiki.Change) (int64, error) {
	return insertID(ctx, tx, `INSERT INTO changes
		(kind, title, new_title, page_id, rev_id, old_rev_id, user_id, user_name, ts, summary, size, old_size, minor, tags)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		string(c.Kind), string(c.Title), string(c.NewTitle), c.PageID, c.RevID, c.OldRevID, c.UserID, c.UserName,
		ms(c.Time), c.Summary, c.Size, c.OldSize, b2i(c.Minor), wiki.JoinTags(c.Tags))
}

// SavePage stores an edit in one transaction: revision, page row, links,
// search entry (req.SearchText), recent change and the request's jobs. A page deleted earlier is created again on
// its old row (its deleted revisions stay hidden until an undelete). An edit
// whose text equals the latest revision's is a null edit: it refreshes the
// links but stores no revision or change, and returns the latest revision;
// with req.NullRevision it stores both as an edit does.
func (db *DB) SavePage(ctx context.Context, req wiki.SaveRequest) (wiki.SaveResult, error) {
	var res wiki.SaveResult
	terms, text := searchTerms(req), encodeText(req.Text)
	err := db.write(ctx, func(tx *wtx) (err error) {
		var entry searchEntry
		if res, entry, err = savePageTx(ctx, tx, req, text, terms, nil); err != nil || entry.pageID == 0 {
			return err
		}
		return writeSearch(ctx, tx, []searchEntry{entry})
	})
	if err != nil {
		return wiki.SaveResult{}, fmt.Errorf("sqlite: save page %q: %w", req.Title, err)
	}
	return res, nil
}

// importChunk: an import's texts are compressed this many at a time, in
// order, while its transaction writes the pages before them.
const importChunk = 50

// ImportPages saves pages in one transaction, each on top of its latest
// revision: a missing (or deleted) title is created, text equal to the
// latest is a null edit; BaseRevID is ignored. The texts are compressed
// on the other cores, and the batch's search segment built from the
// pages' search texts on one of them, while the transaction writes (the
// writer is what bounds an import); a segment not built importBuildWait
// after the pages are written is waited for with the writer free. A
// dependents job among a request's jobs is dropped when no page links to
// its title when the request comes (pages the batch rewrote before it by
// their new links): no page shows that link's colour; the backlinks jobs
// kept are gathered into a few for the batch (wiki.BatchBacklinks). One
// failed page fails the batch.
func (db *DB) ImportPages(ctx context.Context, reqs []wiki.SaveRequest) ([]wiki.SaveResult, error) {
	// The texts are compressed while the transaction writes the pages
	// before them, importChunk pages at a time, in order: a chunk is ready
	// once its channel is closed.
	texts := make([]storedText, len(reqs))
	ready := make([]chan struct{}, (len(reqs)+importChunk-1)/importChunk)
	for c := range ready {
		ready[c] = make(chan struct{})
	}
	var next atomic.Int64
	workers := min(runtime.GOMAXPROCS(0), len(ready))
	for range workers {
		go func() {
			for c := int(next.Add(1) - 1); c < len(ready); c = int(next.Add(1) - 1) {
				for i := c * importChunk; i < min((c+1)*importChunk, len(reqs)); i++ {
					texts[i] = encodeText(reqs[i].Text)
				}
				close(ready[c])
			}
		}()
	}
	// The batch's search segment, built meanwhile on one core from the
	// pages' texts (BuildText: a word is made a term once a batch, not
	// once a page). The writer takes longer than the build, which one
	// segment per core would not make cheaper; and a segment of the whole
	// batch is merged one time fewer on its way to the largest tiers.
	// Document k+1 is the page of reqs[last[k]], the last request of its
	// title (the page numbers are the transaction's to give).
	var last []int
	seen := make(map[wiki.Title]bool, len(reqs))
	for i := len(reqs) - 1; i >= 0; i-- {
		if !seen[reqs[i].Title] {
			seen[reqs[i].Title] = true
			last = append(last, i)
		}
	}
	slices.Reverse(last)
	var seg search.Segment
	built := make(chan struct{})
	go func() {
		defer close(built)
		docs := make([]search.Doc, len(last))
		for k, i := range last {
			docs[k] = search.Doc{ID: int64(k + 1), Title: store.IndexText(string(reqs[i].Title)), Body: reqs[i].SearchText}
		}
		if db.buildHook != nil {
			db.buildHook()
		}
		db.cores.Acquire()
		seg = search.BuildText(docs, textAnalyzer)
		db.cores.Release()
	}()
	// The batch waits for its segment holding the writer, wait at most:
	// a segment that takes longer (a batch of many distinct words, such as
	// pages of base64) is built with the writer free, and the batch is
	// written again then.
	wait := cmp.Or(db.buildWait, importBuildWait)
	res := make([]wiki.SaveResult, len(reqs))
	write := func(tx *wtx) error {
		// The batch's statements run without ctx: the driver watches a
		// context that can end with a goroutine per statement, which costs
		// as much as a short statement. The batch checks ctx between
		// chunks of pages instead, and writeBulk once it is written: a
		// batch whose ctx ended rolls back.
		sctx := context.WithoutCancel(ctx)
		// Most wikis protect few titles or none: with none, the pages
		// need no lookup each.
		var protected bool
		if err := tx.QueryRowContext(sctx, `SELECT EXISTS (SELECT 1 FROM protection)`).Scan(&protected); err != nil {
			return err
		}
		// The batch's link rows, written together in index order.
		var links store.LinkRows
		earlier := linkedEarlier(reqs)
		// The batch's pages as they were, and the titles a page it does
		// not rewrite links to, each looked up for all the batch in one
		// statement (a statement a page took the writer 3 s of a
		// 100,000-page import). A title seen again in the batch is looked
		// up again, after its earlier save.
		found, err := findPagesTx(sctx, tx, reqs)
		if err != nil {
			return err
		}
		linked, err := linkedTitlesTx(sctx, tx, reqs, earlier, found)
		if err != nil {
			return err
		}
		saved := make(map[wiki.Title]bool, len(reqs))
		type batchJobs struct {
			jobs []wiki.JobSpec
			at   time.Time
		}
		var deferred []batchJobs
		var backlinks wiki.BatchBacklinks // the batch's, gathered
		for i, req := range reqs {
			if i%importChunk == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
				select {
				case <-ready[i/importChunk]:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			cur := found[req.Title]
			if saved[req.Title] {
				if cur, err = findPageTx(sctx, tx, req.Title); err != nil {
					return err
				}
			}
			saved[req.Title] = true
			req.BaseRevID = 0
			if cur.exists && !cur.Deleted {
				req.BaseRevID = cur.LatestID
			}
			keep := earlier[i] || linked[req.Title]
			if !keep && (len(found) > 0 || !utf8.ValidString(string(req.Title))) && hasDependentsJob(req) {
				// Pages the batch rewrites may link to it: the rows of
				// those rewritten before this one are gone, the others'
				// are still there. (A title that is not UTF-8 is not
				// sent as JSON.)
				if err := tx.QueryRowContext(sctx, `SELECT EXISTS (SELECT 1 FROM links WHERE target_title = ?)`, string(req.Title)).Scan(&keep); err != nil {
					return err
				}
			}
			jobs := req.Jobs[:0:0]
			for _, j := range req.Jobs {
				if wiki.DependentsJob(j.Kind) && !keep || keep && backlinks.Take(j) {
					continue
				}
				jobs = append(jobs, j)
			}
			// The jobs go in after the batch's link rows, which the
			// condition of a transclusions job reads.
			deferred = append(deferred, batchJobs{jobs, now(req.Time)})
			req.Jobs = nil
			if protected {
				if err := allowedTx(sctx, tx, req.Title, req.Group, now(req.Time), wiki.ProtectEdit); err != nil {
					return fmt.Errorf("%q: %w", req.Title, err)
				}
			}
			if res[i], _, err = saveOnPageTx(sctx, tx, req, cur, texts[i], "", &links); err != nil {
				return fmt.Errorf("%q: %w", req.Title, err)
			}
		}
		if err := insertLinkRows(sctx, tx, &links); err != nil {
			return err
		}
		if jobs := backlinks.Jobs(); jobs != nil {
			deferred = append(deferred, batchJobs{jobs, now(reqs[len(reqs)-1].Time)})
		}
		for _, d := range deferred {
			if err := insertJobs(sctx, tx, d.jobs, d.at); err != nil {
				return err
			}
		}
		if err := waitBuilt(ctx, built, wait); err != nil {
			return err
		}
		entries := make([]searchEntry, len(last))
		for k, i := range last {
			entries[k] = searchEntry{pageID: res[i].Page.ID, revID: res[i].Revision.ID, title: reqs[i].Title}
		}
		return writeSegment(sctx, tx, seg, entries)
	}
	err := db.writeBulk(ctx, pagesRestartEvery, write)
	if errors.Is(err, errBuildLate) {
		slog.Warn("sqlite: an import batch's search segment took long to build: the batch is written again once it is built, the writer free meanwhile",
			"pages", len(reqs), "waited", wait)
		if err = waitBuilt(ctx, built, 0); err == nil {
			wait = 0
			err = db.writeBulk(ctx, pagesRestartEvery, write)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: import pages: %w", err)
	}
	return res, nil
}

// importBuildWait is how long an import batch that has written its pages
// waits for its search segment while it holds the writer, before it rolls
// back and waits without it. A server's writes wait for the writer up to
// busyTimeoutMS (10 s) and then fail; a batch of 4,000 pages writes its
// pages in 2 to 3 s, and its segment is built by then (its build takes
// less than its writes), so the writer is held 6 s at most. A batch of
// 4,000 pages of random words took about 20 s to build, and the edits on
// the server beside the import failed. (A batch whose pages alone take the
// writer 10 s makes edits fail whatever its segment: the engine bounds a
// batch by its bytes, ImportBatchBytes.)
const importBuildWait = 3 * time.Second

// errBuildLate: the batch's segment was not built within its wait.
var errBuildLate = errors.New("the batch's search segment is not built yet")

// waitBuilt waits until built is closed, wait at most (0: as long as it
// takes) or until ctx ends.
func waitBuilt(ctx context.Context, built <-chan struct{}, wait time.Duration) error {
	var late <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		late = t.C
	}
	select {
	case <-built:
		return nil
	case <-late:
		select {
		case <-built: // done as the wait ended: no need to write again
			return nil
		default:
			return errBuildLate
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// findPagesTx returns the pages of reqs' titles that exist, by title. The
// titles travel as a JSON array: one that is not UTF-8, which JSON would
// change, is looked up alone.
func findPagesTx(ctx context.Context, tx *wtx, reqs []wiki.SaveRequest) (map[wiki.Title]pageRow, error) {
	found := map[wiki.Title]pageRow{}
	var titles []string
	for _, r := range reqs {
		if utf8.ValidString(string(r.Title)) {
			titles = append(titles, string(r.Title))
			continue
		}
		cur, err := findPageTx(ctx, tx, r.Title)
		if err != nil {
			return nil, err
		}
		if cur.exists {
			found[r.Title] = cur
		}
	}
	arg, err := json.Marshal(titles)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+pageCols+` FROM pages p WHERE p.title IN (SELECT value FROM json_each(?))`, string(arg))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		p, err := scanPage(rows)
		if err != nil {
			return nil, err
		}
		found[p.Title] = pageRow{Page: p, exists: true}
	}
	return found, rows.Err()
}

// linkedTitlesTx returns which titles of reqs a page the batch does not
// rewrite (found: the batch's pages that exist) links to in any way, of
// the requests that queue a dependents job and that no request before
// them in the batch links to (earlier, from linkedEarlier): the others
// have their job either way. A title linked only by pages the batch
// rewrites is not in it, nor one that is not UTF-8: ImportPages looks
// those up when it comes to them.
func linkedTitlesTx(ctx context.Context, tx *wtx, reqs []wiki.SaveRequest, earlier []bool, found map[wiki.Title]pageRow) (map[wiki.Title]bool, error) {
	var titles []string
	for i, r := range reqs {
		if !earlier[i] && hasDependentsJob(r) && utf8.ValidString(string(r.Title)) {
			titles = append(titles, string(r.Title))
		}
	}
	linked := map[wiki.Title]bool{}
	if len(titles) == 0 {
		return linked, nil
	}
	rewritten := make([]int64, 0, len(found))
	for _, p := range found {
		rewritten = append(rewritten, p.ID)
	}
	targets, err := json.Marshal(titles)
	if err != nil {
		return nil, err
	}
	ids, err := json.Marshal(rewritten)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT j.value FROM json_each(?) j WHERE EXISTS (SELECT 1 FROM links
		WHERE target_title = j.value AND from_page NOT IN (SELECT value FROM json_each(?)))`, string(targets), string(ids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		linked[wiki.Title(t)] = true
	}
	return linked, rows.Err()
}

// hasDependentsJob reports whether r queues a job about its title's
// dependents.
func hasDependentsJob(r wiki.SaveRequest) bool {
	return slices.ContainsFunc(r.Jobs, func(j wiki.JobSpec) bool { return wiki.DependentsJob(j.Kind) })
}

// linkedEarlier reports, per request of an import batch, whether a request
// before it links to its title in any way (LinkSet.Targets): the
// batch's link rows are written after its pages, so the check of its jobs
// looks here first. It looks each link up in a table of the batch's
// titles, which stays in the core's cache, where noting every link target
// (fifty thousand per batch of 2,000 pages) took the writer 1 s of a
// 100,000-page import.
func linkedEarlier(reqs []wiki.SaveRequest) []bool {
	first := make(map[wiki.Title]int, len(reqs)) // a title's first linker in the batch
	for _, r := range reqs {
		first[r.Title] = len(reqs)
	}
	for i, r := range reqs {
		for t := range r.Links.Targets() {
			if at, ok := first[t]; ok && i < at {
				first[t] = i
			}
		}
	}
	out := make([]bool, len(reqs))
	for i, r := range reqs {
		out[i] = first[r.Title] < i
	}
	return out
}

// markLinked notes in linked every title ls links to, in any way: an
// import batch's later pages see them linked before the rows are written.
func markLinked(linked map[string]bool, ls wiki.LinkSet) {
	for t := range ls.Targets() {
		linked[string(t)] = true
	}
}

// growCache gives the writer a larger page cache, once, for an import:
// a batch touches pages all over the indexes it adds to.
func (db *DB) growCache(ctx context.Context) {
	db.bulkOnce.Do(func() {
		_, err := db.w.ExecContext(ctx, fmt.Sprintf(`PRAGMA cache_size = %d`, -bulkCacheKiB))
		if err != nil {
			slog.Warn("sqlite: could not grow the writer's page cache for an import", "err", err)
		}
	})
}

// An import checkpoints the WAL and starts it over (restartWAL) once every
// so many of its batches, and its batches and the writes between them do
// not checkpoint otherwise (writeBulk): the pages an import dirties all
// over its indexes (the link targets' above all) are copied into the
// database once per so many batches instead of once each. The WAL holds
// up to that many batches: ImportPages restarts it every two of its
// batches of 4,000 pages (330 MB at 100,000 pages), ImportHistory every
// four of its batches of 1,000 pages and their revisions. Restarting more
// often costs the import more time (at 100,000 pages, a checkpoint after
// each batch of 2,000 took it 5 s more); every four batches of 4,000
// pages doubled the WAL for no gain.
const (
	pagesRestartEvery   = 2
	historyRestartEvery = 4
)

// walAutocheckpoint is SQLite's default, which the writer connection keeps
// but while an import's batches follow each other: a commit that leaves
// more than this many pages in the WAL checkpoints it.
const walAutocheckpoint = 1000

// bulkIdle: this long after an import's last batch, the writer connection
// checkpoints as any other again (bulkCheckpoints).
const bulkIdle = 2 * time.Second

// writeBulk runs fn in a write transaction of an import (ImportPages,
// ImportHistory), with the writer's page cache grown for imports
// (growCache) and a core of its own (ShareCores). The import holds off the
// writer connection's automatic checkpoints while its batches follow each
// other, the writes between them included (its purge log's), and restarts
// the WAL every restartEvery batches instead; bulkIdle after its last
// batch, the writer connection checkpoints again. Beside a server, the
// server's writes checkpoint as ever, on its own connection.
func (db *DB) writeBulk(ctx context.Context, restartEvery int64, fn func(tx *wtx) error) (err error) {
	db.growCache(ctx)
	db.bulk.hold()
	// Once the writer connection is back in the pool (the defers run in
	// the other order); a failed batch gives the checkpoints back at once,
	// as it is not counted towards the next RESTART.
	defer func() { db.bulk.idle(db, err != nil) }()
	// The batch's transaction runs without foreign key checks, which
	// were a tenth of its writer's time at 100,000 pages (a lookup of the
	// page per link row, and a statement journal for each statement that
	// might fail one): its rows refer to the pages it writes or has read,
	// and it deletes no page (whose rows the checks would cascade to).
	// SQLite takes the setting only between transactions, so the batch
	// holds the writer connection from before its transaction to after.
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Nothing on the connection may depend on ctx from here to the
	// restore: SQLite applies the pragma when it prepares it, which a
	// statement cancelled before it runs has done, and ignores it inside a
	// transaction, which a context's rollback may not have ended yet. So
	// the transaction is begun without ctx: the batch checks it before and
	// after fn (which checks it as it goes), and rolls back when it ended.
	bctx := context.WithoutCancel(ctx)
	drop := false // the connection is dropped: nothing to restore
	defer func() {
		var on int
		rerr := errors.New("the connection was dropped")
		if !drop {
			if _, rerr = conn.ExecContext(bctx, `PRAGMA foreign_keys = ON`); rerr == nil {
				rerr = conn.QueryRowContext(bctx, `PRAGMA foreign_keys`).Scan(&on)
			}
			if rerr == nil && on != 1 {
				rerr = fmt.Errorf("foreign_keys is %d", on)
			}
			if rerr != nil {
				slog.Error("sqlite: foreign key checks not restored after an import batch: the writer connection is dropped", "err", rerr)
			}
		}
		if rerr != nil {
			// A writer connection must not go on without them.
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	if _, err := conn.ExecContext(bctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return err
	}
	release := func() {}
	err = db.writeOn(bctx, conn.BeginTx, func(tx *wtx) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		// The writer bounds an import's pace: it keeps a core to itself
		// from when it holds the database to its commit (imports waiting
		// for it take none).
		release = db.cores.Writer()
		if _, err := tx.ExecContext(bctx, `PRAGMA wal_autocheckpoint = 0`); err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			return err
		}
		// A batch whose ctx ended while it wrote is not committed.
		return ctx.Err()
	})
	release()
	if err == nil && db.bulkBatches.Add(1)%restartEvery == 0 {
		drop = !db.restartWAL(ctx, conn)
	}
	return err
}

// bulkCheckpoints gives the writer connection its automatic checkpoints
// back once an import pauses (writeBulk): a timer, stopped by each batch
// and set again after it.
type bulkCheckpoints struct {
	wait   time.Duration // bulkIdle (tests shorten it)
	mu     sync.Mutex
	timer  *time.Timer
	gen    int // batches begun: a timer set before the latest does nothing
	closed bool
	firing sync.WaitGroup // timers restoring the checkpoints (close waits)
}

// hold stops the timer: a batch begins.
func (b *bulkCheckpoints) hold() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gen++
	if b.timer != nil {
		b.timer.Stop()
	}
}

// idle sets the timer: bulkIdle from now (at once when now is true),
// unless another batch begins, the writer connection checkpoints again.
// The timer restores the setting without holding b.mu, which a batch
// waiting for the writer connection may want: a batch begun meanwhile
// sets it off again in its transaction.
func (b *bulkCheckpoints) idle(db *DB, now bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	gen := b.gen
	wait := b.wait
	switch {
	case now:
		wait = 0
	case wait == 0:
		wait = bulkIdle
	}
	b.timer = time.AfterFunc(wait, func() {
		b.mu.Lock()
		stale := b.closed || b.gen != gen
		if !stale {
			b.firing.Add(1)
		}
		b.mu.Unlock()
		if stale {
			return
		}
		defer b.firing.Done()
		if _, err := db.w.Exec(fmt.Sprintf(`PRAGMA wal_autocheckpoint = %d`, walAutocheckpoint)); err != nil {
			slog.Warn("sqlite: restoring the WAL's automatic checkpoints after an import", "err", err)
		}
	})
}

// close stops the timer for good, and waits for one that fired (DB.Close,
// before the connections close).
func (b *bulkCheckpoints) close() {
	b.mu.Lock()
	b.closed = true
	if b.timer != nil {
		b.timer.Stop()
	}
	b.mu.Unlock()
	b.firing.Wait()
}

// restartWAL checkpoints the WAL and starts it over (writeBulk): while an
// import's batches follow each other, it is the writer connection's only
// checkpoint. A checkpoint alone cannot start the WAL over while a reader
// (a running server's) is in it: beside a server, a bulk import's WAL grew
// by every batch (gigabytes at 100,000 pages), and every read and write
// with it. RESTART waits for the readers of the moment, which are short,
// and holds off writers meanwhile: so for 200 ms at most (a longer reader,
// such as a backup, leaves the WAL to grow until the next time). It runs on
// conn, the batch's writer connection, and reports whether conn is still
// good: it is dropped when its busy timeout cannot be restored.
func (db *DB) restartWAL(ctx context.Context, conn *sql.Conn) (ok bool) {
	var busy, frames, done int
	_, err := conn.ExecContext(ctx, `PRAGMA busy_timeout = 200`)
	if err == nil {
		err = conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(RESTART)`).Scan(&busy, &frames, &done)
	}
	if err != nil {
		slog.Warn("sqlite: restarting the WAL after an import batch", "err", err)
	}
	if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf(`PRAGMA busy_timeout = %d`, busyTimeoutMS)); rerr != nil {
		// The connection would keep the short timeout: drop it.
		conn.Raw(func(any) error { return driver.ErrBadConn })
		return false
	}
	return true
}

// searchTerms returns the terms of req's search entry.
func searchTerms(req wiki.SaveRequest) string { return store.IndexText(req.SearchText) }

// savePageTx is SavePage's work inside tx but for the search entry, which
// it returns for writeSearch (none for a null edit); text is req.Text as
// stored (encodeText), terms the entry's text (store.IndexText of
// req.SearchText), both made before the transaction. With links not nil,
// the page's old link rows are deleted and its new ones added to links,
// for the caller to insert.
func savePageTx(ctx context.Context, tx *wtx, req wiki.SaveRequest, text storedText, terms string, links *store.LinkRows) (wiki.SaveResult, searchEntry, error) {
	if err := allowedTx(ctx, tx, req.Title, req.Group, now(req.Time), wiki.ProtectEdit); err != nil {
		return wiki.SaveResult{}, searchEntry{}, err
	}
	cur, err := findPageTx(ctx, tx, req.Title)
	if err != nil {
		return wiki.SaveResult{}, searchEntry{}, err
	}
	return saveOnPageTx(ctx, tx, req, cur, text, terms, links)
}

// saveOnPageTx is savePageTx once the protection is checked, on cur, the
// row of req.Title as tx reads it (findPageTx).
func saveOnPageTx(ctx context.Context, tx *wtx, req wiki.SaveRequest, cur pageRow, text storedText, terms string, links *store.LinkRows) (wiki.SaveResult, searchEntry, error) {
	setLinks := func(pageID int64) error {
		if links == nil {
			return replaceLinks(ctx, tx, pageID, req.Title, req.Links, req.Time)
		}
		// A row this save creates has no link rows yet: the foreign key
		// deletes those of a page row deleted before, whose ID it may
		// reuse.
		if cur.exists {
			if _, err := tx.ExecContext(ctx, `DELETE FROM links WHERE from_page = ?`, pageID); err != nil {
				return err
			}
		}
		links.Add(pageID, req.Title, req.Links)
		links.At = req.Time
		return nil
	}
	at := now(req.Time)
	live := cur.exists && !cur.Deleted
	switch {
	case req.BaseRevID == 0 && live:
		return wiki.SaveResult{}, searchEntry{}, wiki.ErrExists
	case req.BaseRevID != 0 && (!live || cur.LatestID != req.BaseRevID):
		return wiki.SaveResult{}, searchEntry{}, wiki.ErrConflict
	}
	var parentID int64
	oldSize := 0
	model := req.Model
	if model == "" {
		model = cur.Model.Or(wiki.ModelMarkdown) // a deleted page's too
	}
	if live {
		parentID, oldSize = cur.LatestID, cur.Size
		var sha string
		if err := tx.QueryRowContext(ctx, `SELECT sha1 FROM revisions WHERE id = ?`, cur.LatestID).Scan(&sha); err != nil {
			return wiki.SaveResult{}, searchEntry{}, err
		}
		// The same text is a null edit, unless the request asks for a
		// revision anyway (an upload's, as a move's): that one goes on as
		// any edit.
		if sha == text.sha1 && model == cur.Model && !req.NullRevision {
			if err := setLinks(cur.ID); err != nil {
				return wiki.SaveResult{}, searchEntry{}, err
			}
			if err := insertJobs(ctx, tx, req.Jobs, at); err != nil {
				return wiki.SaveResult{}, searchEntry{}, err
			}
			rev, err := scanRevision(tx.QueryRowContext(ctx, `SELECT `+revCols+` FROM revisions r JOIN pages p ON p.id = r.page_id
				LEFT JOIN revisions pr ON pr.id = r.parent_id WHERE r.id = ?`, cur.LatestID), false)
			return wiki.SaveResult{Page: cur.Page, Revision: rev, Unchanged: true}, searchEntry{}, err
		}
	}
	pageID := cur.ID
	if !cur.exists {
		// The new row is written whole but for its latest revision, which
		// needs the row first: the update that follows then changes no
		// column an index holds.
		var err error
		pageID, err = insertID(ctx, tx, `INSERT INTO pages (title, ns, touched, redirect, size, model) VALUES (?, ?, ?, ?, ?, ?)`,
			string(req.Title), req.Title.Namespace(), ms(at), string(req.Links.Redirect), text.size, string(model))
		if err != nil {
			return wiki.SaveResult{}, searchEntry{}, err
		}
	}
	rev, err := insertRevision(ctx, tx, newRevision{
		pageID: pageID, parentID: parentID, userID: req.UserID, userName: req.UserName,
		summary: req.Summary, text: text, minor: req.Minor, at: at, tags: wiki.JoinTags(req.Tags), model: model,
	})
	if err != nil {
		return wiki.SaveResult{}, searchEntry{}, err
	}
	rev.Title, rev.ParentSize = req.Title, oldSize
	page := wiki.Page{ID: pageID, Title: req.Title, LatestID: rev.ID, Redirect: req.Links.Redirect, Touched: at, Size: rev.Size, Model: model}
	if !cur.exists {
		_, err = tx.ExecContext(ctx, `UPDATE pages SET latest_rev = ? WHERE id = ?`, page.LatestID, pageID)
	} else {
		_, err = tx.ExecContext(ctx, `UPDATE pages SET latest_rev = ?, redirect = ?, deleted = 0, touched = ?, size = ?, model = ? WHERE id = ?`,
			page.LatestID, string(page.Redirect), ms(at), page.Size, string(model), pageID)
	}
	if err != nil {
		return wiki.SaveResult{}, searchEntry{}, err
	}
	if err := setLinks(pageID); err != nil {
		return wiki.SaveResult{}, searchEntry{}, err
	}
	kind := wiki.ChangeEdit
	if !live {
		kind = wiki.ChangeNew
	}
	if _, err := insertChange(ctx, tx, wiki.Change{
		Kind: kind, Title: req.Title, PageID: pageID, RevID: rev.ID, OldRevID: parentID,
		UserID: req.UserID, UserName: req.UserName, Time: at, Summary: req.Summary,
		Size: rev.Size, OldSize: oldSize, Minor: req.Minor, Tags: rev.Tags,
	}); err != nil {
		return wiki.SaveResult{}, searchEntry{}, err
	}
	if old := cur.Model.Or(wiki.ModelMarkdown); live && model != old {
		if err := insertLog(ctx, tx, store.ModelLog(req, pageID, old, model, at)); err != nil {
			return wiki.SaveResult{}, searchEntry{}, err
		}
	}
	if err := insertJobs(ctx, tx, req.Jobs, at); err != nil {
		return wiki.SaveResult{}, searchEntry{}, err
	}
	entry := searchEntry{pageID: pageID, revID: rev.ID, title: req.Title, terms: terms}
	return wiki.SaveResult{Page: page, Revision: rev, Created: !live}, entry, nil
}

// MovePage renames a live page. To may not name a live page (ErrExists).
// A deleted page at To is absorbed: its hidden revisions join the moved
// page (an undelete at To restores them into its history), and so do its
// file versions, hidden too (an undelete at To shows them again, the
// newest of all the page's versions then current), and its row goes.
func (db *DB) MovePage(ctx context.Context, req wiki.MoveRequest) (wiki.Page, error) {
	var page wiki.Page
	at := now(req.Time)
	redirectText := encodeText(req.RedirectText)
	err := db.write(ctx, func(tx *wtx) error {
		if req.From == req.To {
			return wiki.Errorf(wiki.KindInvalid, "the page is already called %q; choose a different new title", req.To)
		}
		if err := allowedTx(ctx, tx, req.From, req.Group, at, wiki.ProtectMove, wiki.ProtectEdit); err != nil {
			return err
		}
		if err := allowedTx(ctx, tx, req.To, req.Group, at, wiki.ProtectEdit); err != nil {
			return err
		}
		from, err := findPageTx(ctx, tx, req.From)
		if err != nil {
			return err
		}
		if !from.exists || from.Deleted {
			return wiki.ErrNotFound
		}
		to, err := findPageTx(ctx, tx, req.To)
		if err != nil {
			return err
		}
		if to.exists {
			if !to.Deleted {
				return wiki.ErrExists
			}
			if _, err := tx.ExecContext(ctx, `UPDATE revisions SET page_id = ? WHERE page_id = ?`, from.ID, to.ID); err != nil {
				return err
			}
			// Its file versions too, hidden: deleting its row would drop
			// them.
			if _, err := tx.ExecContext(ctx, `UPDATE file_versions SET page_id = ?, hidden = 1 WHERE page_id = ?`, from.ID, to.ID); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM links WHERE from_page = ?`, to.ID); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM pages WHERE id = ?`, to.ID); err != nil {
				return err
			}
		}
		// The moved page's new revision has the latest one's text: its
		// stored form is copied, not decoded and encoded again.
		var text storedText
		var model string
		if err := tx.QueryRowContext(ctx, `SELECT text, size, sha1, model FROM revisions WHERE id = ?`, from.LatestID).
			Scan(&text.value, &text.size, &text.sha1, &model); err != nil {
			return err
		}
		rev, err := insertRevision(ctx, tx, newRevision{
			pageID: from.ID, parentID: from.LatestID, userID: req.UserID, userName: req.UserName,
			summary: req.Reason, text: text, minor: true, at: at, model: wiki.ContentModel(model),
		})
		if err != nil {
			return err
		}
		// The folded title moves now (title completion, the exact match of
		// a search); the search entry follows with the page's search job.
		if _, err := tx.ExecContext(ctx, `UPDATE pages SET title = ?, title_fold = ?, ns = ?, latest_rev = ?, touched = ? WHERE id = ?`,
			string(req.To), store.Fold(string(req.To)), req.To.Namespace(), rev.ID, ms(at), from.ID); err != nil {
			return err
		}
		page = from.Page
		page.Title, page.LatestID, page.Touched = req.To, rev.ID, at
		if _, err := insertChange(ctx, tx, wiki.Change{
			Kind: wiki.ChangeMove, Title: req.From, NewTitle: req.To, PageID: from.ID, RevID: rev.ID, OldRevID: from.LatestID,
			UserID: req.UserID, UserName: req.UserName, Time: at, Summary: req.Reason, Size: from.Size, OldSize: from.Size, Minor: true,
		}); err != nil {
			return err
		}
		params := map[string]string{"to": string(req.To)}
		if !req.LeaveRedirect {
			params["noredirect"] = "1"
		}
		if err := insertLog(ctx, tx, wiki.LogEntry{Type: wiki.LogMove, Action: "move", Time: at, UserID: req.UserID,
			UserName: req.UserName, Target: req.From, PageID: from.ID, Comment: req.Reason, Params: params}); err != nil {
			return err
		}
		if err := moveProtection(ctx, tx, req, from.ID, at); err != nil {
			return err
		}
		if err := moveWatchers(ctx, tx, req.From, req.To); err != nil {
			return err
		}
		if err := insertJobs(ctx, tx, req.Jobs, at); err != nil {
			return err
		}
		if !req.LeaveRedirect {
			return nil
		}
		var redirID int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO pages (title, title_fold, ns, touched) VALUES (?, ?, ?, ?) RETURNING id`,
			string(req.From), store.Fold(string(req.From)), req.From.Namespace(), ms(at)).Scan(&redirID); err != nil {
			return err
		}
		// The redirect left behind is in the moved page's markup: both
		// read the same #REDIRECT line.
		rr, err := insertRevision(ctx, tx, newRevision{
			pageID: redirID, userID: req.UserID, userName: req.UserName, summary: req.Reason, text: redirectText, at: at,
			model: wiki.ContentModel(model),
		})
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE pages SET latest_rev = ?, redirect = ?, size = ?, model = ? WHERE id = ?`,
			rr.ID, string(req.RedirectLinks.Redirect), rr.Size, string(rr.Model), redirID); err != nil {
			return err
		}
		return replaceLinks(ctx, tx, redirID, req.From, req.RedirectLinks, req.Time)
	})
	if err != nil {
		return wiki.Page{}, fmt.Errorf("sqlite: move page %q to %q: %w", req.From, req.To, err)
	}
	return page, nil
}

// DeletePage hides a live page, all its revisions and file versions and
// takes it out of the search index at once (a deleted page must not be
// found while its jobs wait). Its link rows stay (listings skip deleted
// pages) so that an undelete needs no re-parse.
func (db *DB) DeletePage(ctx context.Context, t wiki.Title, userID int64, userName, reason string, at time.Time, jobs ...wiki.JobSpec) error {
	at = now(at)
	err := db.write(ctx, func(tx *wtx) error {
		p, err := findPageTx(ctx, tx, t)
		if err != nil {
			return err
		}
		if !p.exists || p.Deleted {
			return wiki.ErrNotFound
		}
		if _, err := tx.ExecContext(ctx, `UPDATE pages SET deleted = 1, touched = ? WHERE id = ?`, ms(at), p.ID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE revisions SET deleted = 1 WHERE page_id = ? AND deleted = 0`, p.ID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE file_versions SET hidden = 1 WHERE page_id = ? AND hidden = 0`, p.ID); err != nil {
			return err
		}
		if err := unindexPage(ctx, tx, p.ID); err != nil {
			return err
		}
		if _, err = insertChange(ctx, tx, wiki.Change{
			Kind: wiki.ChangeDelete, Title: t, PageID: p.ID, OldRevID: p.LatestID,
			UserID: userID, UserName: userName, Time: at, Summary: reason, OldSize: p.Size,
		}); err != nil {
			return err
		}
		if err := insertLog(ctx, tx, wiki.LogEntry{Type: wiki.LogDelete, Action: "delete", Time: at, UserID: userID,
			UserName: userName, Target: t, PageID: p.ID, Comment: reason}); err != nil {
			return err
		}
		return insertJobs(ctx, tx, jobs, at)
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete page %q: %w", t, err)
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
	err := db.write(ctx, func(tx *wtx) error {
		p, err := findPageTx(ctx, tx, t)
		if err != nil {
			return err
		}
		if !p.exists {
			return wiki.ErrNotFound
		}
		res, err := tx.ExecContext(ctx, `UPDATE revisions SET deleted = 0 WHERE page_id = ? AND deleted = 1`, p.ID)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if res, err = tx.ExecContext(ctx, `UPDATE file_versions SET hidden = 0 WHERE page_id = ? AND hidden = 1`, p.ID); err != nil {
			return err
		}
		files, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 && files == 0 && !p.Deleted {
			return wiki.ErrNotFound
		}
		var latest int64
		var size int
		var model string
		if err := tx.QueryRowContext(ctx, `SELECT id, size, model FROM revisions WHERE page_id = ? ORDER BY id DESC LIMIT 1`, p.ID).
			Scan(&latest, &size, &model); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE pages SET deleted = 0, latest_rev = ?, size = ?, touched = ?, model = ? WHERE id = ?`,
			latest, size, ms(at), model, p.ID); err != nil {
			return err
		}
		page = p.Page
		page.Deleted, page.LatestID, page.Size, page.Touched, page.Model = false, latest, size, at, wiki.ContentModel(model)
		if _, err = insertChange(ctx, tx, wiki.Change{
			Kind: wiki.ChangeUndelete, Title: t, PageID: p.ID, RevID: latest,
			UserID: userID, UserName: userName, Time: at, Summary: reason, Size: size,
		}); err != nil {
			return err
		}
		if err := insertLog(ctx, tx, wiki.LogEntry{Type: wiki.LogDelete, Action: "restore", Time: at, UserID: userID,
			UserName: userName, Target: t, PageID: p.ID, Comment: reason}); err != nil {
			return err
		}
		return insertJobs(ctx, tx, jobs, at)
	})
	if err != nil {
		return wiki.Page{}, fmt.Errorf("sqlite: undelete page %q: %w", t, err)
	}
	return page, nil
}

// FindRevisions returns the revisions with the given IDs with their
// texts, in one query (the IDs travel as one JSON array parameter).
func (db *DB) FindRevisions(ctx context.Context, ids []int64) ([]wiki.Revision, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	arg, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("sqlite: find revisions: %w", err)
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+revCols+`, r.text FROM revisions r JOIN pages p ON p.id = r.page_id
		LEFT JOIN revisions pr ON pr.id = r.parent_id WHERE r.id IN (SELECT value FROM json_each(?)) AND r.deleted = 0`, string(arg))
	if err != nil {
		return nil, fmt.Errorf("sqlite: find revisions: %w", err)
	}
	defer rows.Close()
	var out []wiki.Revision
	for rows.Next() {
		r, err := scanRevision(rows, true)
		if err != nil {
			return nil, fmt.Errorf("sqlite: find revisions: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: find revisions: %w", err)
	}
	return out, nil
}
