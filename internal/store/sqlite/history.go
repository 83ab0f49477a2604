package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

// ImportHistory stores page histories in one transaction (see
// wiki.HistoryRequest). Texts are compressed and hashed, and the latest
// revisions' search terms made, on every core before the transaction;
// the texts of revisions the pages have already (read before, on a
// reader) are only hashed, so that importing a dump again costs little
// more than reading it. History revisions write their row only: no
// recent change, link or search row.
func (db *DB) ImportHistory(ctx context.Context, reqs []wiki.HistoryRequest) ([]wiki.HistoryResult, error) {
	present, err := db.presentRevisions(ctx, reqs)
	if err != nil {
		return nil, fmt.Errorf("sqlite: import history: %w", err)
	}
	texts := make([][]storedText, len(reqs))
	terms := make([]string, len(reqs))
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), len(reqs))
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(reqs); i += workers {
				texts[i] = make([]storedText, len(reqs[i].Revisions))
				have := present[reqs[i].Title]
				for j, v := range reqs[i].Revisions {
					sha := sha1Hex(v.Text)
					if have[revKey{ms(v.Time) / 1000, sha}] {
						// Skipped, most likely: encoded in the
						// transaction if it is not.
						texts[i][j] = storedText{size: len(v.Text), sha1: sha}
						continue
					}
					texts[i][j] = encodeTextSHA(v.Text, sha)
				}
				terms[i] = store.IndexText(reqs[i].SearchText)
			}
		})
	}
	wg.Wait()
	res := make([]wiki.HistoryResult, len(reqs))
	err = db.writeBulk(ctx, historyRestartEvery, func(tx *wtx) error {
		var entries []searchEntry
		var links store.LinkRows
		linked := map[string]bool{}
		type pending struct {
			jobs []wiki.JobSpec
			at   time.Time
		}
		var deferred []pending
		var backlinks wiki.BatchBacklinks // the batch's, gathered
		for i, req := range reqs {
			r, entry, err := importHistoryTx(ctx, tx, req, texts[i], terms[i], &links)
			if err != nil {
				return fmt.Errorf("%q: %w", req.Title, err)
			}
			res[i] = r
			if !r.Latest {
				continue
			}
			entries = append(entries, entry)
			// A job about the title's dependents is needless when nothing
			// links to it, as in ImportPages.
			jobs := req.Jobs[:0:0]
			for _, j := range req.Jobs {
				if wiki.DependentsJob(j.Kind) {
					is, ok := linked[string(req.Title)]
					if !ok {
						if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM links WHERE target_title = ?)`, string(req.Title)).Scan(&is); err != nil {
							return err
						}
						linked[string(req.Title)] = is
					}
					if !is || backlinks.Take(j) {
						continue
					}
				}
				jobs = append(jobs, j)
			}
			deferred = append(deferred, pending{jobs, now(time.Time{})}) // queued now, not at the revision's time
			markLinked(linked, req.Links)
		}
		if err := insertLinkRows(ctx, tx, &links); err != nil {
			return err
		}
		deferred = append(deferred, pending{backlinks.Jobs(), now(time.Time{})})
		for _, d := range deferred {
			if err := insertJobs(ctx, tx, d.jobs, d.at); err != nil {
				return err
			}
		}
		return writeSearch(ctx, tx, entries)
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: import history: %w", err)
	}
	return res, nil
}

// presentRevisions reads, on a reader, the keys of the visible revisions
// the batch's pages have, by title, in one query (the titles travel as a
// JSON array).
func (db *DB) presentRevisions(ctx context.Context, reqs []wiki.HistoryRequest) (map[wiki.Title]map[revKey]bool, error) {
	titles := make([]wiki.Title, len(reqs))
	for i, r := range reqs {
		titles[i] = r.Title
	}
	arg, err := json.Marshal(titles)
	if err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT p.title, r.ts, r.sha1 FROM pages p JOIN revisions r ON r.page_id = p.id
		WHERE p.title IN (SELECT value FROM json_each(?)) AND r.deleted = 0`, string(arg))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[wiki.Title]map[revKey]bool{}
	for rows.Next() {
		var title, sha string
		var ts int64
		if err := rows.Scan(&title, &ts, &sha); err != nil {
			return nil, err
		}
		t := wiki.Title(title)
		if out[t] == nil {
			out[t] = map[revKey]bool{}
		}
		out[t][revKey{ts / 1000, sha}] = true
	}
	return out, rows.Err()
}

// revKey is what makes an imported revision the same as a stored one:
// its time to the second (dumps have no finer times, and a revision saved
// here and exported comes back without its milliseconds) and its text's
// SHA-1.
type revKey struct {
	ts   int64
	sha1 string
}

// importHistoryTx is ImportHistory's work for one page: its revisions and,
// when the newest becomes the latest, the page row, its link rows (added
// to links) and its search entry (returned).
func importHistoryTx(ctx context.Context, tx *wtx, req wiki.HistoryRequest, texts []storedText, terms string, links *store.LinkRows) (wiki.HistoryResult, searchEntry, error) {
	var res wiki.HistoryResult
	cur, err := findPageTx(ctx, tx, req.Title)
	if err != nil {
		return res, searchEntry{}, err
	}
	live := cur.exists && !cur.Deleted
	have := map[revKey]bool{}
	var latestTS int64
	if cur.exists {
		rows, err := tx.QueryContext(ctx, `SELECT id, ts, sha1 FROM revisions WHERE page_id = ? AND deleted = 0`, cur.ID)
		if err != nil {
			return res, searchEntry{}, err
		}
		for rows.Next() {
			var id, ts int64
			var sha string
			if err := rows.Scan(&id, &ts, &sha); err != nil {
				rows.Close()
				return res, searchEntry{}, err
			}
			have[revKey{ts / 1000, sha}] = true
			if id == cur.LatestID {
				latestTS = ts
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return res, searchEntry{}, err
		}
	}
	pageID := cur.ID
	parentID, parentSize := int64(0), 0
	if live {
		parentID, parentSize = cur.LatestID, cur.Size
	}
	var newest wiki.Revision
	for j, v := range req.Revisions {
		k := revKey{ms(v.Time) / 1000, texts[j].sha1}
		if have[k] {
			res.Skipped++
			continue
		}
		have[k] = true
		if texts[j].value == nil {
			texts[j] = encodeText(v.Text) // gone since presentRevisions read it
		}
		if pageID == 0 {
			var err error
			pageID, err = insertID(ctx, tx, `INSERT INTO pages (title, ns, touched, deleted) VALUES (?, ?, ?, 1)`,
				string(req.Title), req.Title.Namespace(), ms(v.Time))
			if err != nil {
				return res, searchEntry{}, err
			}
		}
		rev, err := insertRevision(ctx, tx, newRevision{
			pageID: pageID, parentID: parentID, userID: v.UserID, userName: v.UserName,
			summary: v.Summary, text: texts[j], minor: v.Minor, at: v.Time, model: v.Model.Or(wiki.ModelWikitext),
		})
		if err != nil {
			return res, searchEntry{}, err
		}
		rev.ParentSize, parentID, parentSize = parentSize, rev.ID, rev.Size
		res.Added++
		if newest.ID == 0 || !rev.Time.Before(newest.Time) {
			newest = rev
		}
	}
	res.Page = cur.Page
	if res.Added == 0 {
		return res, searchEntry{}, nil
	}
	if req.Log.Type != "" {
		e := req.Log
		e.Target, e.PageID, e.Time = req.Title, pageID, now(e.Time)
		if e.Params == nil {
			e.Params = map[string]string{"count": strconv.Itoa(res.Added)}
		}
		if err := insertLog(ctx, tx, e); err != nil {
			return res, searchEntry{}, err
		}
	}
	if live && ms(newest.Time) < latestTS {
		// Older than what the page shows: history only.
		return res, searchEntry{}, nil
	}
	page := wiki.Page{ID: pageID, Title: req.Title, LatestID: newest.ID, Redirect: req.Links.Redirect,
		Touched: newest.Time, Size: newest.Size, Model: newest.Model}
	if _, err := tx.ExecContext(ctx, `UPDATE pages SET latest_rev = ?, redirect = ?, deleted = 0, touched = ?, size = ?, model = ? WHERE id = ?`,
		page.LatestID, string(page.Redirect), ms(page.Touched), page.Size, string(page.Model), pageID); err != nil {
		return res, searchEntry{}, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM links WHERE from_page = ?`, pageID); err != nil {
		return res, searchEntry{}, err
	}
	links.Add(pageID, req.Title, req.Links)
	links.At = newest.Time
	res.Page, res.Created, res.Latest = page, !live, true
	return res, searchEntry{pageID: pageID, revID: newest.ID, title: req.Title, terms: terms}, nil
}
