package postgres_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wikid/wikid/internal/store/postgres/pgtest"
	"github.com/wikid/wikid/internal/wiki"
)

// A failed job's retry and an enqueue of the same key race: whichever
// commits first, the other merges into it, and neither fails.
func TestJobRetryRacesEnqueue(t *testing.T) {
	db := pgtest.Open(t)
	ctx := context.Background()
	key := wiki.JobSpec{Kind: "search", Key: "search:A"}
	for round := range 30 {
		if err := db.EnqueueJobs(ctx, []wiki.JobSpec{key}); err != nil {
			t.Fatal(err)
		}
		jobs, err := db.LeaseJobs(ctx, "w", 10, time.Minute, time.Now().Add(time.Second))
		if err != nil || len(jobs) != 1 {
			t.Fatalf("round %d: leased %+v, %v", round, jobs, err)
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := db.FailJob(ctx, jobs[0].ID, "x", time.Now(), false); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if err := db.EnqueueJobs(ctx, []wiki.JobSpec{key}); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		st, err := db.JobStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Counts[wiki.JobQueued] != 1 || st.Counts[wiki.JobRunning] != 0 {
			t.Fatalf("round %d: stats %+v, want one queued job", round, st)
		}
	}
}

// A failed run's message is stored whatever bytes it holds, cut to 2000
// bytes between characters.
func TestJobErrorStored(t *testing.T) {
	db := pgtest.Open(t)
	ctx := context.Background()
	if err := db.EnqueueJobs(ctx, []wiki.JobSpec{{Kind: "x"}}); err != nil {
		t.Fatal(err)
	}
	jobs, err := db.LeaseJobs(ctx, "w", 1, time.Minute, time.Now().Add(time.Second))
	if err != nil || len(jobs) != 1 {
		t.Fatalf("leased %+v, %v", jobs, err)
	}
	msg := "bad \xff byte, a NUL \x00, then " + strings.Repeat("é", 1500)
	if err := db.FailJob(ctx, jobs[0].ID, msg, time.Time{}, true); err != nil {
		t.Fatal(err)
	}
	dead, err := db.ListJobs(ctx, wiki.JobDead, 1)
	if err != nil || len(dead) != 1 {
		t.Fatalf("dead %+v, %v", dead, err)
	}
	got := dead[0].LastError
	if !utf8.ValidString(got) || len(got) > 2000 || len(got) < 1990 || !strings.HasPrefix(got, "bad \uFFFD byte, a NUL , then é") {
		t.Fatalf("stored error %q (%d bytes)", got[:40], len(got))
	}
}

// Trimming recent changes drops the entries older than the cut.
func TestTrimChanges(t *testing.T) {
	db := pgtest.Open(t)
	ctx := context.Background()
	for _, ts := range []int64{1000, 2000, 3000} {
		if _, err := db.Pool().Exec(ctx, `INSERT INTO changes (kind, title, page_id, user_name, ts, summary)
			VALUES ('edit', 'A', 1, 'U', $1, '')`, ts); err != nil {
			t.Fatal(err)
		}
	}
	n, err := db.TrimChanges(ctx, time.UnixMilli(2500))
	if err != nil || n != 2 {
		t.Fatalf("trimmed %d, %v; want 2", n, err)
	}
}
