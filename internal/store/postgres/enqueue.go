package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

const insertJob = `INSERT INTO jobs (kind, payload, dedupe_key, max_attempts, run_at, created, updated)
	VALUES ($1, $2, $3, $4, $5, $6, $7)
	ON CONFLICT (dedupe_key) WHERE state = 'queued' AND dedupe_key <> ''
	DO UPDATE SET run_at = least(jobs.run_at, excluded.run_at), updated = excluded.updated`

// insertTransclusionsJob is insertJob for a transclusions job: only when
// some page transcludes its title (store.TransclusionsTitle).
const insertTransclusionsJob = `INSERT INTO jobs (kind, payload, dedupe_key, max_attempts, run_at, created, updated)
	SELECT $1, $2, $3, $4, $5, $6, $7 WHERE EXISTS (SELECT 1 FROM links WHERE target_title = $8 AND kind = 'template')
	ON CONFLICT (dedupe_key) WHERE state = 'queued' AND dedupe_key <> ''
	DO UPDATE SET run_at = least(jobs.run_at, excluded.run_at), updated = excluded.updated`

// insertJobs enqueues jobs inside tx, in one round trip. A job whose key
// matches a queued job merges into it: the earlier run_at wins, the
// payload stays. A purge log event among specs (wiki.PurgeSpec) is
// appended to the log, last.
func insertJobs(ctx context.Context, tx pgx.Tx, specs []wiki.JobSpec, at time.Time) error {
	if len(specs) == 0 {
		return nil
	}
	jobs, purges, err := wiki.SplitPurges(specs)
	if err != nil {
		return err
	}
	if len(jobs) > 0 {
		var b pgx.Batch
		for _, j := range jobs {
			payload, maxAttempts, runAt, err := store.JobColumns(j, at)
			if err != nil {
				return err
			}
			if t, ok := store.TransclusionsTitle(j); ok {
				b.Queue(insertTransclusionsJob, j.Kind, payload, j.Key, maxAttempts, runAt, ms(at), ms(at), t)
				continue
			}
			b.Queue(insertJob, j.Kind, payload, j.Key, maxAttempts, runAt, ms(at), ms(at))
		}
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			return fmt.Errorf("enqueue %d jobs: %w", len(jobs), err)
		}
	}
	// The purge log event goes last: its lock is held until the commit.
	if err := appendPurges(ctx, tx, purges); err != nil {
		return fmt.Errorf("append purges: %w", err)
	}
	return nil
}
