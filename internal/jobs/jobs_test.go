package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/jobs"
	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/store/sqlite/sqlitetest"
	"github.com/wikid/wikid/internal/wiki"
)

var ctx = context.Background()

// clock is a fake clock that starts at the wall time (the store stamps
// enqueued jobs with it) and moves only when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now().Add(time.Second)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newRunner(t *testing.T, q jobs.Queue, c *clock) *jobs.Runner {
	t.Helper()
	return jobs.New(jobs.Options{Queue: q, Now: c.Now, Jitter: func() float64 { return 0 }, Logger: quiet(),
		BackoffBase: 10 * time.Second, BackoffMax: time.Hour, Lease: time.Minute})
}

func only(t *testing.T, db *sqlite.DB) wiki.Job {
	t.Helper()
	all, err := db.ListJobs(ctx, "", 10)
	if err != nil || len(all) != 1 {
		t.Fatalf("jobs = %+v, %v; want one", all, err)
	}
	return all[0]
}

func runDue(t *testing.T, r *jobs.Runner) int {
	t.Helper()
	n, err := r.RunDue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRetries(t *testing.T) {
	t.Parallel()

	t.Run("a failing job is retried with doubling backoff, then dead after its last attempt", func(t *testing.T) {
		db, c := sqlitetest.Open(t), newClock()
		r := newRunner(t, db, c)
		var calls atomic.Int32
		r.Register("flaky", func(context.Context, wiki.Job) error {
			return fmt.Errorf("failure %d", calls.Add(1))
		})
		if err := db.EnqueueJobs(ctx, []wiki.JobSpec{{Kind: "flaky", MaxAttempts: 3}}); err != nil {
			t.Fatal(err)
		}
		// With no jitter the delays are half of 10s, 20s: 5s, then 10s.
		for i, wait := range []time.Duration{5 * time.Second, 10 * time.Second} {
			if n := runDue(t, r); n != 1 {
				t.Fatalf("attempt %d: ran %d jobs", i+1, n)
			}
			j := only(t, db)
			if j.State != wiki.JobQueued || j.Attempts != i+1 || j.LastError != fmt.Sprintf("failure %d", i+1) {
				t.Fatalf("after attempt %d: %+v", i+1, j)
			}
			if got := j.RunAt.Sub(c.Now()); got < wait-time.Millisecond || got > wait+time.Millisecond {
				t.Fatalf("after attempt %d: retry in %v, want %v", i+1, got, wait)
			}
			c.Advance(wait - time.Second)
			if n := runDue(t, r); n != 0 {
				t.Fatalf("retried %v early", time.Second)
			}
			c.Advance(time.Second)
		}
		if n := runDue(t, r); n != 1 {
			t.Fatal("last attempt did not run")
		}
		if j := only(t, db); j.State != wiki.JobDead || j.Attempts != 3 || j.LastError != "failure 3" {
			t.Fatalf("after the last attempt: %+v", j)
		}
		c.Advance(24 * time.Hour)
		if n := runDue(t, r); n != 0 || calls.Load() != 3 {
			t.Fatalf("a dead job ran again (%d calls)", calls.Load())
		}
		// An operator's retry (wikid jobs retry ID) runs it again.
		if err := db.RetryJob(ctx, only(t, db).ID); err != nil {
			t.Fatal(err)
		}
		if n := runDue(t, r); n != 1 || calls.Load() != 4 {
			t.Fatalf("retried job: ran %d, %d calls", n, calls.Load())
		}
	})

	t.Run("a job that fails then succeeds is done", func(t *testing.T) {
		db, c := sqlitetest.Open(t), newClock()
		r := newRunner(t, db, c)
		fail := true
		r.Register("once", func(context.Context, wiki.Job) error {
			if fail {
				fail = false
				return errors.New("not yet")
			}
			return nil
		})
		if err := db.EnqueueJobs(ctx, []wiki.JobSpec{{Kind: "once"}}); err != nil {
			t.Fatal(err)
		}
		runDue(t, r)
		c.Advance(time.Minute)
		runDue(t, r)
		if j := only(t, db); j.State != wiki.JobDone || j.Attempts != 2 || j.LastError != "" {
			t.Fatalf("job = %+v", j)
		}
	})

	t.Run("a permanent error, a panic past its attempts and an unknown kind are failures", func(t *testing.T) {
		db, c := sqlitetest.Open(t), newClock()
		r := newRunner(t, db, c)
		r.Register("bad", func(context.Context, wiki.Job) error { return jobs.Permanent(errors.New("malformed payload")) })
		r.Register("panics", func(context.Context, wiki.Job) error { panic("oops") })
		if err := db.EnqueueJobs(ctx, []wiki.JobSpec{{Kind: "bad"}, {Kind: "panics", MaxAttempts: 1}, {Kind: "unknown"}}); err != nil {
			t.Fatal(err)
		}
		if n := runDue(t, r); n != 3 {
			t.Fatalf("ran %d", n)
		}
		dead, err := db.ListJobs(ctx, wiki.JobDead, 10)
		if err != nil || len(dead) != 2 {
			t.Fatalf("dead = %+v, %v", dead, err)
		}
		if !strings.Contains(dead[0].LastError, "panicked: oops") || dead[1].LastError != "malformed payload" {
			t.Fatalf("dead errors = %q, %q", dead[0].LastError, dead[1].LastError)
		}
		queued, _ := db.ListJobs(ctx, wiki.JobQueued, 10)
		if len(queued) != 1 || !strings.Contains(queued[0].LastError, `no handler for kind "unknown"`) {
			t.Fatalf("unknown kind = %+v (it waits for a process that knows it)", queued)
		}
	})

	t.Run("backoff doubles up to its cap, with jitter in the upper half", func(t *testing.T) {
		for _, jitter := range []float64{0, 0.5, 0.999} {
			r := jobs.New(jobs.Options{Queue: sqlitetest.Open(t), Jitter: func() float64 { return jitter },
				BackoffBase: time.Second, BackoffMax: 8 * time.Second})
			for n, full := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 9: 8 * time.Second, 60: 8 * time.Second} {
				got := r.Backoff(n)
				want := full/2 + time.Duration(jitter*float64(full/2))
				if got != want {
					t.Errorf("jitter %v: Backoff(%d) = %v, want %v", jitter, n, got, want)
				}
			}
		}
	})
}

func TestWorkers(t *testing.T) {
	t.Parallel()

	t.Run("workers drain the queue, woken after commit, and stop gracefully", func(t *testing.T) {
		db := sqlitetest.Open(t)
		r := jobs.New(jobs.Options{Queue: db, Workers: 2, Batch: 4, Logger: quiet(), PollMin: time.Millisecond, PollMax: time.Hour})
		var ran sync.Map
		var dup atomic.Int32
		r.Register("k", func(_ context.Context, j wiki.Job) error {
			if _, loaded := ran.LoadOrStore(j.ID, true); loaded {
				dup.Add(1)
			}
			return nil
		})
		r.Start()
		// Let the workers go idle with PollMax an hour: only Wake brings them back.
		time.Sleep(20 * time.Millisecond)
		specs := make([]wiki.JobSpec, 100)
		for i := range specs {
			specs[i] = wiki.JobSpec{Kind: "k"}
		}
		if err := db.EnqueueJobs(ctx, specs); err != nil {
			t.Fatal(err)
		}
		r.Wake()
		deadline := time.Now().Add(10 * time.Second)
		for {
			st, err := db.JobStats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.Counts[wiki.JobDone] == 100 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not drained: %+v", st)
			}
			time.Sleep(5 * time.Millisecond)
		}
		if err := r.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if dup.Load() != 0 {
			t.Fatalf("%d jobs ran twice", dup.Load())
		}
		if err := r.Stop(ctx); err != nil {
			t.Fatalf("second stop: %v", err)
		}
	})

	t.Run("a stop whose deadline passes cancels the running job, which is retried", func(t *testing.T) {
		db := sqlitetest.Open(t)
		r := jobs.New(jobs.Options{Queue: db, Logger: quiet(), PollMin: time.Millisecond})
		started := make(chan struct{})
		r.Register("slow", func(ctx context.Context, _ wiki.Job) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		})
		if err := db.EnqueueJobs(ctx, []wiki.JobSpec{{Kind: "slow"}}); err != nil {
			t.Fatal(err)
		}
		r.Start()
		<-started
		sctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if err := r.Stop(sctx); err == nil {
			t.Fatal("stop reported a clean drain")
		}
		if j := only(t, db); j.State != wiki.JobQueued || j.Attempts != 1 {
			t.Fatalf("cancelled job = %+v, want queued for a retry", j)
		}
	})

	t.Run("periodic jobs are enqueued once per key", func(t *testing.T) {
		db := sqlitetest.Open(t)
		r := jobs.New(jobs.Options{Queue: db, Workers: 1, Logger: quiet(), PollMin: time.Hour, PollMax: time.Hour,
			Periodic: []jobs.Periodic{{Every: time.Millisecond, Job: wiki.JobSpec{Kind: "rc", Key: "rc", RunAt: time.Now().Add(time.Hour)}}}})
		r.Start()
		time.Sleep(30 * time.Millisecond)
		if err := r.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if j := only(t, db); j.Kind != "rc" || j.State != wiki.JobQueued {
			t.Fatalf("job = %+v", j)
		}
	})
}

// BenchmarkQueue measures the queue's own cost per job (enqueue, lease,
// complete) with a no-op handler: the ceiling on jobs/s on this machine.
func BenchmarkQueue(b *testing.B) {
	for _, batch := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			db := sqlitetest.Open(b)
			r := jobs.New(jobs.Options{Queue: db, Batch: batch, Logger: quiet()})
			r.Register("noop", func(context.Context, wiki.Job) error { return nil })
			specs := make([]wiki.JobSpec, b.N)
			for i := range specs {
				specs[i] = wiki.JobSpec{Kind: "noop", Payload: []byte(`{"title":"Some page"}`)}
			}
			if err := db.EnqueueJobs(ctx, specs); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			n, err := r.RunDue(ctx)
			if err != nil || n != b.N {
				b.Fatalf("ran %d of %d: %v", n, b.N, err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}
