package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

// Every queue operation is one short transaction on the writer connection
// (lease: two statements; complete, fail: one), so that a draining backlog
// never holds the writer for long and edits queue behind at most one job
// statement.

const jobCols = `id, kind, payload, dedupe_key, attempts, max_attempts, state, run_at, leased_until, owner, last_error, created, updated`

func scanJob(s scanner) (wiki.Job, error) {
	var j wiki.Job
	var payload, state string
	var runAt, leased, created, updated int64
	err := s.Scan(&j.ID, &j.Kind, &payload, &j.Key, &j.Attempts, &j.MaxAttempts, &state, &runAt, &leased,
		&j.Owner, &j.LastError, &created, &updated)
	j.Payload, j.State = []byte(payload), wiki.JobState(state)
	j.RunAt, j.Created, j.Updated = fromMS(runAt), fromMS(created), fromMS(updated)
	if leased != 0 {
		j.LeasedUntil = fromMS(leased)
	}
	return j, err
}

const insertJob = `INSERT INTO jobs (kind, payload, dedupe_key, max_attempts, run_at, created, updated)
	VALUES (?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (dedupe_key) WHERE state = 'queued' AND dedupe_key <> ''
	DO UPDATE SET run_at = min(run_at, excluded.run_at), updated = excluded.updated`

// insertTransclusionsJob is insertJob for a transclusions job: only when
// some page transcludes its title (store.TransclusionsTitle).
const insertTransclusionsJob = `INSERT INTO jobs (kind, payload, dedupe_key, max_attempts, run_at, created, updated)
	SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM links WHERE target_title = ? AND kind = 'template')
	ON CONFLICT (dedupe_key) WHERE state = 'queued' AND dedupe_key <> ''
	DO UPDATE SET run_at = min(run_at, excluded.run_at), updated = excluded.updated`

// insertJobs enqueues jobs inside tx. A job whose key matches a queued job
// merges into it: the earlier run_at wins, the payload stays.
func insertJobs(ctx context.Context, tx *wtx, specs []wiki.JobSpec, at time.Time) error {
	if len(specs) == 0 {
		return nil
	}
	jobs, purges, err := wiki.SplitPurges(specs)
	if err != nil {
		return err
	}
	if err := appendPurges(ctx, tx, purges); err != nil {
		return fmt.Errorf("append purges: %w", err)
	}
	for _, j := range jobs {
		payload, maxAttempts, runAt, err := store.JobColumns(j, at)
		if err != nil {
			return err
		}
		query, args := insertJob, []any{j.Kind, payload, j.Key, maxAttempts, runAt, ms(at), ms(at)}
		if t, ok := store.TransclusionsTitle(j); ok {
			query, args = insertTransclusionsJob, append(args, t)
		}
		if _, err := tx.ExecContext(ctx, query, args...); err != nil {
			return fmt.Errorf("enqueue %s: %w", j.Kind, err)
		}
	}
	return nil
}

// EnqueueJobs adds jobs in one transaction of their own.
func (db *DB) EnqueueJobs(ctx context.Context, jobs []wiki.JobSpec) error {
	if len(jobs) == 0 {
		return nil
	}
	at := now(time.Time{})
	err := db.write(ctx, func(tx *wtx) error { return insertJobs(ctx, tx, jobs, at) })
	if err != nil {
		return fmt.Errorf("sqlite: enqueue %d jobs: %w", len(jobs), err)
	}
	return nil
}

// LeaseJobs leases up to n due jobs in one short transaction: first jobs
// whose lease expired after their last attempt go dead, then one
// UPDATE … RETURNING takes the due ones (the single writer connection
// serializes leasing, so a job goes to exactly one owner).
func (db *DB) LeaseJobs(ctx context.Context, owner string, n int, leaseFor time.Duration, at time.Time) ([]wiki.Job, error) {
	if n <= 0 {
		return nil, nil
	}
	at = now(at)
	until := at.Add(leaseFor)
	var jobs []wiki.Job
	err := db.write(ctx, func(tx *wtx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'dead', updated = ?,
			last_error = 'lease expired (the worker stopped) after ' || attempts || ' attempts; last error: ' || last_error
			WHERE state = 'running' AND run_at <= ? AND attempts >= max_attempts`, ms(at), ms(at)); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `UPDATE jobs SET state = 'running', owner = ?, attempts = attempts + 1,
			run_at = ?, leased_until = ?, updated = ?
			WHERE id IN (SELECT id FROM jobs INDEXED BY jobs_due
				WHERE state IN ('queued', 'running') AND run_at <= ? ORDER BY run_at, id LIMIT ?)
			RETURNING `+jobCols, owner, ms(until), ms(until), ms(at), ms(at), n)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			j, err := scanJob(rows)
			if err != nil {
				return err
			}
			jobs = append(jobs, j)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: lease jobs: %w", err)
	}
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].ID < jobs[b].ID })
	return jobs, nil
}

// CompleteJob marks a running job done; a job that is not running (its
// lease expired and another worker finished it) is left alone.
func (db *DB) CompleteJob(ctx context.Context, id int64) error {
	at := now(time.Time{})
	err := db.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'done', leased_until = 0, run_at = ?, updated = ?, last_error = ''
			WHERE id = ? AND state = 'running'`, ms(at), ms(at), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: complete job %d: %w", id, err)
	}
	return nil
}

// FailJob records a failed run. A retry that would collide with a queued
// job of the same key is merged into it (that job does the same work on
// fresher state) and this one is marked done.
func (db *DB) FailJob(ctx context.Context, id int64, errMsg string, retryAt time.Time, dead bool) error {
	at := now(time.Time{})
	retryAt = now(retryAt)
	if len(errMsg) > 2000 {
		errMsg = errMsg[:2000]
	}
	err := db.write(ctx, func(tx *wtx) error {
		state := wiki.JobQueued
		if dead {
			state = wiki.JobDead
		} else {
			var dup int
			err := tx.QueryRowContext(ctx, `SELECT count(*) FROM jobs q JOIN jobs j ON j.dedupe_key = q.dedupe_key
				WHERE j.id = ? AND j.dedupe_key <> '' AND q.state = 'queued'`, id).Scan(&dup)
			if err != nil {
				return err
			}
			if dup > 0 {
				state, errMsg = wiki.JobDone, "superseded by a queued job with the same key after: "+errMsg
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE jobs SET state = ?, last_error = ?, run_at = ?, leased_until = 0, updated = ?
			WHERE id = ? AND state = 'running'`, string(state), errMsg, ms(retryAt), ms(at), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: fail job %d: %w", id, err)
	}
	return nil
}

// ListJobs lists jobs in state (every state when empty), newest first.
func (db *DB) ListJobs(ctx context.Context, state wiki.JobState, lim int) ([]wiki.Job, error) {
	q := `SELECT ` + jobCols + ` FROM jobs`
	args := []any{}
	if state != "" {
		q += ` WHERE state = ?`
		args = append(args, string(state))
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit(lim))
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list jobs: %w", err)
	}
	defer rows.Close()
	var out []wiki.Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list jobs: %w", err)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list jobs: %w", err)
	}
	return out, nil
}

// JobStats counts jobs per state (from the jobs_state index) and finds the
// oldest queued job.
func (db *DB) JobStats(ctx context.Context) (wiki.JobStats, error) {
	st := wiki.JobStats{Counts: make(map[wiki.JobState]int, len(wiki.JobStates))}
	for _, s := range wiki.JobStates {
		st.Counts[s] = 0
	}
	rows, err := db.r.QueryContext(ctx, `SELECT state, count(*) FROM jobs GROUP BY state`)
	if err != nil {
		return st, fmt.Errorf("sqlite: job stats: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return st, fmt.Errorf("sqlite: job stats: %w", err)
		}
		st.Counts[wiki.JobState(s)] = n
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("sqlite: job stats: %w", err)
	}
	var oldest sql.NullInt64
	if err := db.r.QueryRowContext(ctx, `SELECT min(created) FROM jobs WHERE state = 'queued'`).Scan(&oldest); err != nil {
		return st, fmt.Errorf("sqlite: job stats: %w", err)
	}
	if oldest.Valid {
		st.OldestQueued = fromMS(oldest.Int64)
	}
	return st, nil
}

// RetryJob queues a dead job again, due now, with its attempts reset.
func (db *DB) RetryJob(ctx context.Context, id int64) error {
	at := now(time.Time{})
	err := db.write(ctx, func(tx *wtx) error {
		var key string
		err := tx.QueryRowContext(ctx, `SELECT dedupe_key FROM jobs WHERE id = ? AND state = 'dead'`, id).Scan(&key)
		if err != nil {
			return notFound(err)
		}
		state := wiki.JobQueued
		if key != "" {
			var dup int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM jobs WHERE dedupe_key = ? AND state = 'queued'`, key).Scan(&dup); err != nil {
				return err
			}
			if dup > 0 {
				state = wiki.JobDone // a queued job with the same key will do the work
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE jobs SET state = ?, attempts = 0, run_at = ?, leased_until = 0, updated = ? WHERE id = ?`,
			string(state), ms(at), ms(at), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: retry job %d: %w", id, err)
	}
	return nil
}

// DeleteDoneJobs drops done jobs last updated before before.
func (db *DB) DeleteDoneJobs(ctx context.Context, before time.Time) (int, error) {
	return db.deleteWhere(ctx, "delete done jobs", `DELETE FROM jobs WHERE state = 'done' AND updated < ?`, ms(before))
}

// TrimChanges drops recent-changes entries older than before.
func (db *DB) TrimChanges(ctx context.Context, before time.Time) (int, error) {
	return db.deleteWhere(ctx, "trim changes", `DELETE FROM changes WHERE ts < ?`, ms(before))
}

func (db *DB) deleteWhere(ctx context.Context, what, q string, args ...any) (int, error) {
	var n int64
	err := db.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: %s: %w", what, err)
	}
	return int(n), nil
}

// RefreshLinks replaces the page's link rows if revID is still its latest
// revision and the page is live.
func (db *DB) RefreshLinks(ctx context.Context, pageID, revID int64, ls wiki.LinkSet) (bool, error) {
	// Most refreshes find the rows the table has (a template's edit that
	// changed its text, not its links): they are checked by reads, which
	// do not wait for the writer.
	same, err := db.sameLinks(ctx, pageID, revID, ls)
	if err != nil || same {
		return same, err
	}
	done := false
	err = db.write(ctx, func(tx *wtx) error {
		var latest int64
		var deleted bool
		var title string
		err := tx.QueryRowContext(ctx, `SELECT latest_rev, deleted, title FROM pages WHERE id = ?`, pageID).Scan(&latest, &deleted, &title)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil || latest != revID || deleted {
			return err
		}
		done = true
		return replaceLinks(ctx, tx, pageID, wiki.Title(title), ls, time.Time{})
	})
	if err != nil {
		return false, fmt.Errorf("sqlite: refresh links of page %d: %w", pageID, err)
	}
	return done, nil
}

// sameLinks reports whether revID is the latest revision of the live page
// pageID and its rows are those of ls. A save between the two reads wrote
// the rows of a newer revision: reporting those as done is what a write
// would have come to, since the save's rows stay.
func (db *DB) sameLinks(ctx context.Context, pageID, revID int64, ls wiki.LinkSet) (bool, error) {
	var latest int64
	var deleted bool
	var title string
	err := db.r.QueryRowContext(ctx, `SELECT latest_rev, deleted, title FROM pages WHERE id = ?`, pageID).Scan(&latest, &deleted, &title)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && (latest != revID || deleted)) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sqlite: refresh links of page %d: %w", pageID, err)
	}
	rows, err := db.r.QueryContext(ctx, `SELECT kind, target_title, sortkey, subcat FROM links WHERE from_page = ?`, pageID)
	if err != nil {
		return false, fmt.Errorf("sqlite: refresh links of page %d: %w", pageID, err)
	}
	defer rows.Close()
	var stored []store.LinkRow
	for rows.Next() {
		r := store.LinkRow{From: pageID}
		if err := rows.Scan(&r.Kind, &r.Title, &r.SortKey, &r.Subcat); err != nil {
			return false, fmt.Errorf("sqlite: refresh links of page %d: %w", pageID, err)
		}
		stored = append(stored, r)
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("sqlite: refresh links of page %d: %w", pageID, err)
	}
	var want store.LinkRows
	want.Add(pageID, wiki.Title(title), ls)
	return want.Same(pageID, stored), nil
}

// MarkSearchStale makes the next UpdateSearchIndex of the page write its
// entry again.
func (db *DB) MarkSearchStale(ctx context.Context, pageID int64) error {
	err := db.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `UPDATE pages SET search_rev = 0 WHERE id = ? AND search_rev <> 0`, pageID)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: mark the search entry of page %d stale: %w", pageID, err)
	}
	return nil
}

// ReindexPages writes the entries of the pages still at their entry's
// revision in one transaction, as one search segment. The terms are made
// before the transaction.
func (db *DB) ReindexPages(ctx context.Context, entries []wiki.SearchEntry) error {
	if len(entries) == 0 {
		return nil
	}
	terms := make([]string, len(entries))
	for i, e := range entries {
		terms[i] = store.IndexText(e.Text)
	}
	err := db.write(ctx, func(tx *wtx) error {
		batch := make([]searchEntry, 0, len(entries))
		for i, e := range entries {
			var title string
			var latest int64
			var deleted bool
			err := tx.QueryRowContext(ctx, `SELECT title, latest_rev, deleted FROM pages WHERE id = ?`, e.PageID).Scan(&title, &latest, &deleted)
			if errors.Is(err, sql.ErrNoRows) || (err == nil && (deleted || latest != e.RevID)) {
				continue
			}
			if err != nil {
				return err
			}
			batch = append(batch, searchEntry{pageID: e.PageID, revID: e.RevID, title: wiki.Title(title), terms: terms[i]})
		}
		return writeSearch(ctx, tx, batch)
	})
	if err != nil {
		return fmt.Errorf("sqlite: reindex %d pages: %w", len(entries), err)
	}
	return nil
}

// UpdateSearchIndex makes the page's search entry match its current state.
// An entry made from the latest revision (pages.search_rev) is left alone,
// so a repeated job costs one read. Otherwise the latest revision is read
// and turned into text before the write transaction, so that the writer is
// not held while text runs; the write goes ahead only if that revision is
// still the latest (otherwise it reads again).
func (db *DB) UpdateSearchIndex(ctx context.Context, pageID int64, text func(source string, model wiki.ContentModel) string) error {
	for range 3 {
		var src, model string
		var rev, indexed int64
		var deleted bool
		err := db.r.QueryRowContext(ctx, `SELECT p.latest_rev, p.deleted, p.search_rev, r.text, r.model FROM pages p JOIN revisions r ON r.id = p.latest_rev
			WHERE p.id = ?`, pageID).Scan(&rev, &deleted, &indexed, textColumn{&src}, &model)
		gone := errors.Is(err, sql.ErrNoRows) || (err == nil && deleted)
		if err != nil && !gone {
			return fmt.Errorf("sqlite: update search index of page %d: %w", pageID, err)
		}
		if !gone && indexed == rev {
			return nil
		}
		terms := ""
		if !gone {
			terms = store.IndexText(text(src, wiki.ContentModel(model)))
		}
		changed := false
		err = db.write(ctx, func(tx *wtx) error {
			var title string
			var latest int64
			var deleted bool
			err := tx.QueryRowContext(ctx, `SELECT title, latest_rev, deleted FROM pages WHERE id = ?`, pageID).Scan(&title, &latest, &deleted)
			if errors.Is(err, sql.ErrNoRows) {
				return nil // no page row: no entry is current
			}
			if err == nil && deleted {
				return unindexPage(ctx, tx, pageID)
			}
			if err != nil {
				return err
			}
			if gone || latest != rev {
				changed = true
				return nil
			}
			return writeSearch(ctx, tx, []searchEntry{{pageID: pageID, revID: rev, title: wiki.Title(title), terms: terms}})
		})
		if err != nil {
			return fmt.Errorf("sqlite: update search index of page %d: %w", pageID, err)
		}
		if !changed {
			return nil
		}
	}
	// Edited faster than it can be indexed: the job runs again later.
	return fmt.Errorf("sqlite: update search index of page %d: the page keeps changing", pageID)
}
