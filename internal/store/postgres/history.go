package postgres

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

// ImportHistory stores page histories in one transaction (see
// wiki.HistoryRequest). The texts' SHA-1 and the latest revisions' search
// terms are made on every core before the transaction; the page rows are
// locked in title order, so that two imports cannot deadlock. History
// revisions write their row only: no recent change, link or search row.
func (db *DB) ImportHistory(ctx context.Context, reqs []wiki.HistoryRequest) ([]wiki.HistoryResult, error) {
	shas := make([][]string, len(reqs))
	terms := make([]string, len(reqs))
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), len(reqs))
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(reqs); i += workers {
				shas[i] = make([]string, len(reqs[i].Revisions))
				for j, v := range reqs[i].Revisions {
					shas[i][j] = sha1Hex(v.Text)
				}
				terms[i] = store.IndexText(reqs[i].SearchText)
			}
		})
	}
	wg.Wait()
	res := make([]wiki.HistoryResult, len(reqs))
	err := db.write(ctx, func(tx pgx.Tx) error {
		titles := make([]wiki.Title, 0, len(reqs))
		for _, r := range reqs {
			titles = append(titles, r.Title)
		}
		slices.Sort(titles)
		if _, err := lockPages(ctx, tx, slices.Compact(titles)...); err != nil {
			return err
		}
		var entries []searchEntry
		type pending struct {
			jobs []wiki.JobSpec
			at   time.Time
		}
		var deferred []pending
		var backlinks wiki.BatchBacklinks // the batch's, gathered
		linked := map[string]bool{}
		for i, req := range reqs {
			r, entry, err := importHistoryTx(ctx, tx, req, shas[i], terms[i])
			if err != nil {
				return fmt.Errorf("%q: %w", req.Title, err)
			}
			res[i] = r
			if !r.Latest {
				continue
			}
			entries = append(entries, entry)
			jobs := req.Jobs[:0:0]
			for _, j := range req.Jobs {
				if wiki.DependentsJob(j.Kind) {
					is, ok := linked[string(req.Title)]
					if !ok {
						if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM links WHERE target_title = $1)`, string(req.Title)).Scan(&is); err != nil {
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
			for _, ts := range [][]wiki.Title{req.Links.Links, req.Links.Categories, req.Links.Templates, req.Links.Files, {req.Links.Redirect}} {
				for _, t := range ts {
					linked[string(t)] = true
				}
			}
		}
		if err := writeSearch(ctx, tx, entries); err != nil {
			return err
		}
		deferred = append(deferred, pending{backlinks.Jobs(), now(time.Time{})})
		// Last: a purge log event among the jobs holds the log's lock
		// until the commit.
		for _, d := range deferred {
			if err := insertJobs(ctx, tx, d.jobs, d.at); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: import history: %w", err)
	}
	return res, nil
}

// revKey is what makes an imported revision the same as a stored one:
// its time to the second (dumps have no finer times, and a revision saved
// here and exported comes back without its milliseconds) and its text's
// SHA-1.
type revKey struct {
	ts   int64
	sha1 string
}

// importHistoryTx is ImportHistory's work for one page, whose row tx has
// locked; it returns the page's search entry when the newest revision
// became its latest.
func importHistoryTx(ctx context.Context, tx pgx.Tx, req wiki.HistoryRequest, shas []string, terms string) (wiki.HistoryResult, searchEntry, error) {
	var res wiki.HistoryResult
	cur, err := lockPage(ctx, tx, req.Title)
	if err != nil {
		return res, searchEntry{}, err
	}
	live := cur.exists && !cur.Deleted
	have := map[revKey]bool{}
	var latestTS int64
	if cur.exists {
		rows, err := tx.Query(ctx, `SELECT id, ts, sha1 FROM revisions WHERE page_id = $1 AND NOT deleted`, cur.ID)
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
		k := revKey{ms(v.Time) / 1000, shas[j]}
		if have[k] {
			res.Skipped++
			continue
		}
		have[k] = true
		if pageID == 0 {
			err := tx.QueryRow(ctx, `INSERT INTO pages (title, ns, touched, deleted) VALUES ($1, $2, $3, true)
				ON CONFLICT (title) DO NOTHING RETURNING id`,
				string(req.Title), req.Title.Namespace(), ms(v.Time)).Scan(&pageID)
			if errors.Is(err, pgx.ErrNoRows) {
				return res, searchEntry{}, wiki.ErrConflict // created meanwhile: import again
			}
			if err != nil {
				return res, searchEntry{}, err
			}
		}
		rev, err := insertRevision(ctx, tx, newRevision{
			pageID: pageID, parentID: parentID, userID: v.UserID, userName: v.UserName,
			summary: v.Summary, text: v.Text, sha1: shas[j], minor: v.Minor, at: v.Time, model: v.Model.Or(wiki.ModelWikitext),
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
		return res, searchEntry{}, nil // older than what the page shows: history only
	}
	page := wiki.Page{ID: pageID, Title: req.Title, LatestID: newest.ID, Redirect: req.Links.Redirect,
		Touched: newest.Time, Size: newest.Size, Model: newest.Model}
	var b pgx.Batch
	b.Queue(`UPDATE pages SET latest_rev = $1, redirect = $2, deleted = false, touched = $3, size = $4, model = $5 WHERE id = $6`,
		page.LatestID, string(page.Redirect), ms(page.Touched), page.Size, string(page.Model), pageID)
	queueReplaceLinks(&b, pageID, req.Title, req.Links, newest.Time)
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return res, searchEntry{}, err
	}
	res.Page, res.Created, res.Latest = page, !live, true
	return res, searchEntry{pageID: pageID, revID: newest.ID, title: req.Title, terms: terms}, nil
}
