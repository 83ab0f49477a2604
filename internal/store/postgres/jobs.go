package postgres

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/wikid/wikid/internal/wiki"
)

// Every queue operation is one short transaction. Leasing takes its rows
// with FOR UPDATE SKIP LOCKED, so that workers on several nodes lease side
// by side without waiting for each other, and each job goes to one of them.

const jobCols = `id, kind, payload, dedupe_key, attempts, max_attempts, state, run_at, leased_until, owner, last_error, created, updated`

func scanJob(row pgx.Row) (wiki.Job, error) {
	var j wiki.Job
	var payload, state string
	var runAt, leased, created, updated int64
	err := row.Scan(&j.ID, &j.Kind, &payload, &j.Key, &j.Attempts, &j.MaxAttempts, &state, &runAt, &leased,
		&j.Owner, &j.LastError, &created, &updated)
	j.Payload, j.State = []byte(payload), wiki.JobState(state)
	j.RunAt, j.Created, j.Updated = fromMS(runAt), fromMS(created), fromMS(updated)
	if leased != 0 {
		j.LeasedUntil = fromMS(leased)
	}
	return j, err
}

func collectJobs(rows pgx.Rows) ([]wiki.Job, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (wiki.Job, error) { return scanJob(row) })
}

// EnqueueJobs adds jobs in one transaction of their own.
func (db *DB) EnqueueJobs(ctx context.Context, jobs []wiki.JobSpec) error {
	if len(jobs) == 0 {
		return nil
	}
	at := now(time.Time{})
	err := db.write(ctx, func(tx pgx.Tx) error { return insertJobs(ctx, tx, jobs, at) })
	if err != nil {
		return fmt.Errorf("postgres: enqueue %d jobs: %w", len(jobs), err)
	}
	return nil
}

// LeaseJobs leases up to n due jobs in one short transaction: first jobs
// whose lease expired after their last attempt go dead, then one
// UPDATE … RETURNING takes the due ones. Both steps skip rows another
// transaction holds: a worker leasing at the same moment has them, and
// waiting for it would only find them taken (or deadlock on rows locked
// in another order).
func (db *DB) LeaseJobs(ctx context.Context, owner string, n int, leaseFor time.Duration, at time.Time) ([]wiki.Job, error) {
	if n <= 0 {
		return nil, nil
	}
	at = now(at)
	until := at.Add(leaseFor)
	var jobs []wiki.Job
	err := db.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE jobs SET state = 'dead', updated = $1,
			last_error = 'lease expired (the worker stopped) after ' || attempts || ' attempts; last error: ' || last_error
			WHERE id IN (SELECT id FROM jobs
				WHERE state = 'running' AND run_at <= $1 AND attempts >= max_attempts
				FOR UPDATE SKIP LOCKED)`, ms(at)); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `UPDATE jobs SET state = 'running', owner = $1, attempts = attempts + 1,
			run_at = $2, leased_until = $2, updated = $3
			WHERE id IN (SELECT id FROM jobs
				WHERE state IN ('queued', 'running') AND run_at <= $3 ORDER BY run_at, id LIMIT $4
				FOR UPDATE SKIP LOCKED)
			RETURNING `+jobCols, owner, ms(until), ms(at), n)
		if err != nil {
			return err
		}
		jobs, err = collectJobs(rows)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: lease jobs: %w", err)
	}
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].ID < jobs[b].ID })
	return jobs, nil
}

// CompleteJob marks a running job done; a job that is not running (its
// lease expired and another worker finished it) is left alone.
func (db *DB) CompleteJob(ctx context.Context, id int64) error {
	at := now(time.Time{})
	err := db.write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE jobs SET state = 'done', leased_until = 0, run_at = $1, updated = $1, last_error = ''
			WHERE id = $2 AND state = 'running'`, ms(at), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: complete job %d: %w", id, err)
	}
	return nil
}

// FailJob records a failed run. A retry that would collide with a queued
// job of the same key is merged into it (that job does the same work on
// fresher state) and this one is marked done.
func (db *DB) FailJob(ctx context.Context, id int64, errMsg string, retryAt time.Time, dead bool) error {
	at := now(time.Time{})
	retryAt = now(retryAt)
	errMsg = jobError(errMsg)
	err := db.writeQueued(ctx, func(tx pgx.Tx) error {
		state, msg := wiki.JobQueued, errMsg
		if dead {
			state = wiki.JobDead
		} else {
			var dup bool
			err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM jobs q JOIN jobs j ON j.dedupe_key = q.dedupe_key
				WHERE j.id = $1 AND j.dedupe_key <> '' AND q.state = 'queued')`, id).Scan(&dup)
			if err != nil {
				return err
			}
			if dup {
				state, msg = wiki.JobDone, "superseded by a queued job with the same key after: "+errMsg
			}
		}
		_, err := tx.Exec(ctx, `UPDATE jobs SET state = $1, last_error = $2, run_at = $3, leased_until = 0, updated = $4
			WHERE id = $5 AND state = 'running'`, string(state), msg, ms(retryAt), ms(at), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: fail job %d: %w", id, err)
	}
	return nil
}

// jobError makes a failed run's message storable: at most 2000 bytes,
// cut between characters, valid UTF-8 without NUL (a text column refuses
// both, and the message may quote anything).
func jobError(s string) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	n := min(len(s), 2000)
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// writeQueued runs fn like write, and again when it failed because a job
// it queued collided with one of the same key that another transaction
// queued after fn looked (jobs_key): fn looks again and now sees it.
func (db *DB) writeQueued(ctx context.Context, fn func(tx pgx.Tx) error) error {
	var err error
	for range maxAttempts {
		err = db.write(ctx, fn)
		if !isUnique(err, "jobs_key") {
			return err
		}
	}
	return err
}

// ListJobs lists jobs in state (every state when empty), newest first.
func (db *DB) ListJobs(ctx context.Context, state wiki.JobState, lim int) ([]wiki.Job, error) {
	q := `SELECT ` + jobCols + ` FROM jobs`
	args := []any{}
	if state != "" {
		q += ` WHERE state = $2`
		args = append(args, string(state))
	}
	q += ` ORDER BY id DESC LIMIT $1`
	rows, err := db.pool.Query(ctx, q, append([]any{limit(lim)}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("postgres: list jobs: %w", err)
	}
	jobs, err := collectJobs(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: list jobs: %w", err)
	}
	return jobs, nil
}

// JobStats counts jobs per state and finds the oldest queued job, in one
// statement (one snapshot).
func (db *DB) JobStats(ctx context.Context) (wiki.JobStats, error) {
	st := wiki.JobStats{Counts: make(map[wiki.JobState]int, len(wiki.JobStates))}
	for _, s := range wiki.JobStates {
		st.Counts[s] = 0
	}
	rows, err := db.pool.Query(ctx, `SELECT state, count(*), min(created) FILTER (WHERE state = 'queued') FROM jobs GROUP BY state`)
	if err != nil {
		return st, fmt.Errorf("postgres: job stats: %w", err)
	}
	var s string
	var n int
	var oldest *int64
	_, err = pgx.ForEachRow(rows, []any{&s, &n, &oldest}, func() error {
		st.Counts[wiki.JobState(s)] = n
		if oldest != nil {
			st.OldestQueued = fromMS(*oldest)
		}
		return nil
	})
	if err != nil {
		return st, fmt.Errorf("postgres: job stats: %w", err)
	}
	return st, nil
}

// RetryJob queues a dead job again, due now, with its attempts reset.
func (db *DB) RetryJob(ctx context.Context, id int64) error {
	at := now(time.Time{})
	err := db.writeQueued(ctx, func(tx pgx.Tx) error {
		var key string
		err := tx.QueryRow(ctx, `SELECT dedupe_key FROM jobs WHERE id = $1 AND state = 'dead' FOR UPDATE`, id).Scan(&key)
		if err != nil {
			return notFound(err)
		}
		state := wiki.JobQueued
		if key != "" {
			var dup bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM jobs WHERE dedupe_key = $1 AND state = 'queued')`, key).Scan(&dup); err != nil {
				return err
			}
			if dup {
				state = wiki.JobDone // a queued job with the same key will do the work
			}
		}
		_, err = tx.Exec(ctx, `UPDATE jobs SET state = $1, attempts = 0, run_at = $2, leased_until = 0, updated = $2 WHERE id = $3`,
			string(state), ms(at), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: retry job %d: %w", id, err)
	}
	return nil
}

// DeleteDoneJobs drops done jobs last updated before before.
func (db *DB) DeleteDoneJobs(ctx context.Context, before time.Time) (int, error) {
	return db.deleteCount(ctx, "delete done jobs", `DELETE FROM jobs WHERE state = 'done' AND updated < $1`, ms(before))
}

// TrimChanges drops recent-changes entries older than before.
func (db *DB) TrimChanges(ctx context.Context, before time.Time) (int, error) {
	return db.deleteCount(ctx, "trim changes", `DELETE FROM changes WHERE ts < $1`, ms(before))
}

// deleteCount runs one DELETE in a transaction and returns how many rows
// it removed.
func (db *DB) deleteCount(ctx context.Context, what, q string, args ...any) (int, error) {
	var n int64
	err := db.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, q, args...)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: %s: %w", what, err)
	}
	return int(n), nil
}
