// Package jobs runs the durable job queue: workers lease due jobs from the
// store, run the handler registered for their kind, and complete them, or
// retry them with exponential backoff and jitter until they are dead.
//
// Delivery is at least once: a worker that dies mid-job leaves a lease that
// expires, and another worker runs the job again. Handlers are idempotent.
// Page views never run a job; they only ever read what jobs wrote.
package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

// Handler runs one job. A nil error completes it; any other error retries
// it, unless wrapped with Permanent.
type Handler func(ctx context.Context, j wiki.Job) error

type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

// Permanent marks an error that retrying cannot fix (a malformed payload):
// the job goes dead at once.
func Permanent(err error) error { return permanent{err} }

// Queue is the part of wiki.JobStore the runner uses.
type Queue interface {
	EnqueueJobs(ctx context.Context, jobs []wiki.JobSpec) error
	LeaseJobs(ctx context.Context, owner string, n int, leaseFor time.Duration, now time.Time) ([]wiki.Job, error)
	CompleteJob(ctx context.Context, id int64) error
	FailJob(ctx context.Context, id int64, errMsg string, retryAt time.Time, dead bool) error
}

// Periodic is a job enqueued every Every (and at start). Give it a Key so
// that several processes, or a slow queue, never pile up copies.
type Periodic struct {
	Every time.Duration
	Job   wiki.JobSpec
}

// Options configures a Runner; zero fields take the defaults shown.
type Options struct {
	Queue   Queue
	Workers int           // concurrent workers (1); on SQLite 1–2: writes are serialized anyway
	Batch   int           // jobs leased at once by a worker (8)
	Lease   time.Duration // how long a leased batch is a worker's before others may take it (2m)
	Owner   string        // lease owner name (host:pid:random)

	BackoffBase time.Duration // delay before the first retry (2s); doubles per attempt
	BackoffMax  time.Duration // cap on the retry delay (10m)
	PollMin     time.Duration // idle poll interval after work (50ms); doubles while idle
	PollMax     time.Duration // idle poll interval cap (2s); Wake cuts it short

	// MaxDuty, in (0, 1), makes each worker rest after every few
	// milliseconds of jobs for as long as keeps it busy at most that
	// fraction of the time, leaving CPU and the writer connection to
	// requests while a backlog drains. 0 or 1: no rest. (wikid's config
	// defaults it to 0.5: see internal/config.)
	MaxDuty float64

	// Nice, on Linux, runs each worker on a thread of its own with this
	// niceness (1–19): when the CPUs are all busy, the kernel gives
	// request threads the larger share and the jobs the rest. 0: the
	// workers run on the runtime's threads like any goroutine.
	Nice int

	Periodic []Periodic

	Now     func() time.Time // clock for leases and retry times (time.Now)
	Jitter  func() float64   // uniform in [0, 1) for backoff jitter (math/rand)
	Logger  *slog.Logger
	Observe func(kind string, d time.Duration, err error) // after every run: metrics
}

// Runner is a pool of workers over a Queue.
type Runner struct {
	o        Options
	handlers map[string]Handler

	wake chan struct{}

	mu      sync.Mutex
	started bool
	stop    chan struct{}      // closed by Stop: lease no more
	cancel  context.CancelFunc // cancels running handlers when Stop's ctx ends
	jobCtx  context.Context
	wg      sync.WaitGroup
}

// New builds a Runner; Register handlers, then Start.
func New(o Options) *Runner {
	if o.Workers <= 0 {
		o.Workers = 1
	}
	if o.Batch <= 0 {
		o.Batch = 8
	}
	if o.Lease <= 0 {
		o.Lease = 2 * time.Minute
	}
	if o.Owner == "" {
		o.Owner = DefaultOwner()
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = 2 * time.Second
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = 10 * time.Minute
	}
	if o.PollMin <= 0 {
		o.PollMin = 50 * time.Millisecond
	}
	if o.PollMax < o.PollMin {
		o.PollMax = max(2*time.Second, o.PollMin)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Jitter == nil {
		o.Jitter = mrand.Float64
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Runner{o: o, handlers: map[string]Handler{}, wake: make(chan struct{}, 1), stop: make(chan struct{})}
}

// DefaultOwner names this process: host, pid and a random suffix.
func DefaultOwner() string {
	host, _ := os.Hostname()
	b := make([]byte, 3)
	rand.Read(b)
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b))
}

// Register sets the handler of kind. Call before Start.
func (r *Runner) Register(kind string, h Handler) { r.handlers[kind] = h }

// Wake tells an idle worker that jobs were committed; it never blocks.
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Start launches the workers and the periodic enqueuer.
func (r *Runner) Start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return
	}
	r.started = true
	r.jobCtx, r.cancel = context.WithCancel(context.Background())
	for i := range r.o.Workers {
		r.wg.Go(func() { r.work(i) })
	}
	for _, p := range r.o.Periodic {
		r.wg.Go(func() { r.periodic(p) })
	}
}

// Stop stops leasing and waits for the jobs in hand to finish (graceful
// drain). When ctx ends first, running handlers are cancelled; their jobs
// are retried later (by this or another process). Stop is idempotent.
func (r *Runner) Stop(ctx context.Context) error {
	r.mu.Lock()
	if !r.started {
		r.mu.Unlock()
		return nil
	}
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		r.cancel()
		return nil
	case <-ctx.Done():
		r.cancel()
		<-done
		return fmt.Errorf("jobs: stop: %w (running jobs were cancelled and will be retried)", ctx.Err())
	}
}

func (r *Runner) stopping() bool {
	select {
	case <-r.stop:
		return true
	default:
		return false
	}
}

func (r *Runner) work(worker int) {
	if r.o.Nice > 0 {
		// The thread ends with this goroutine (it is never unlocked), so
		// no other goroutine inherits its niceness.
		runtime.LockOSThread()
		if err := setNice(r.o.Nice); err != nil {
			r.o.Logger.Warn("jobs: lower the workers' priority", "nice", r.o.Nice, "err", err)
		}
	}
	delay := r.o.PollMin
	for !r.stopping() {
		n, err := r.runBatch(r.jobCtx)
		if err != nil {
			r.o.Logger.Error("jobs: lease", "worker", worker, "err", err)
		}
		if n == r.o.Batch {
			r.Wake() // more is due: let an idle worker help
		}
		if n > 0 && err == nil {
			delay = r.o.PollMin
			continue
		}
		t := time.NewTimer(delay)
		select {
		case <-r.stop:
			t.Stop()
			return
		case <-r.wake:
			t.Stop()
			delay = r.o.PollMin
		case <-t.C:
			delay = min(2*delay, r.o.PollMax)
		}
	}
}

func (r *Runner) periodic(p Periodic) {
	t := time.NewTicker(p.Every)
	defer t.Stop()
	for {
		if err := r.o.Queue.EnqueueJobs(r.jobCtx, []wiki.JobSpec{p.Job}); err != nil && !r.stopping() {
			r.o.Logger.Error("jobs: enqueue periodic", "kind", p.Job.Kind, "err", err)
		} else {
			r.Wake()
		}
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
	}
}

// RunDue runs due jobs in the calling goroutine until none is due, and
// returns how many ran. For tests, benchmarks and one-shot drains.
func (r *Runner) RunDue(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := r.runBatch(ctx)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

// runBatch leases one batch and runs it; it returns the number leased.
func (r *Runner) runBatch(ctx context.Context) (int, error) {
	jobs, err := r.o.Queue.LeaseJobs(ctx, r.o.Owner, r.o.Batch, r.o.Lease, r.o.Now())
	if err != nil {
		return 0, err
	}
	var busy time.Duration
	for i, j := range jobs {
		// A leased batch is finished even while stopping: its jobs are short,
		// and Stop's deadline cancels ctx if they are not.
		busy += r.run(ctx, j)
		// Rest once a few milliseconds of work have piled up (sub-millisecond
		// sleeps would cost more than they give), so that the worker never
		// holds a CPU for long stretches while requests wait for it.
		if busy >= restQuantum || i == len(jobs)-1 {
			r.rest(busy)
			busy = 0
		} else {
			// A request goroutine readied onto this P's run queue runs now,
			// not at the next preemption (up to 10 ms away).
			runtime.Gosched()
		}
	}
	return len(jobs), nil
}

// restQuantum is how much work a worker does between rests under MaxDuty.
const restQuantum = 4 * time.Millisecond

// rest sleeps after a batch that kept the worker busy for d, so that the
// worker stays within MaxDuty.
func (r *Runner) rest(d time.Duration) {
	if r.o.MaxDuty <= 0 || r.o.MaxDuty >= 1 || d <= 0 {
		return
	}
	pause := min(time.Duration(float64(d)*(1-r.o.MaxDuty)/r.o.MaxDuty), time.Second)
	t := time.NewTimer(pause)
	select {
	case <-t.C:
	case <-r.stop:
		t.Stop()
	}
}

// run runs one leased job and records the outcome; it returns the run time.
func (r *Runner) run(ctx context.Context, j wiki.Job) time.Duration {
	t0 := time.Now()
	err := r.call(ctx, j)
	d := time.Since(t0)
	if r.o.Observe != nil {
		r.o.Observe(j.Kind, d, err)
	}
	// Record the outcome even when ctx was cancelled by a hurried Stop.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err == nil {
		if cerr := r.o.Queue.CompleteJob(sctx, j.ID); cerr != nil {
			r.o.Logger.Error("jobs: complete", "id", j.ID, "kind", j.Kind, "err", cerr)
		}
		return d
	}
	maxAttempts := j.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = wiki.DefaultJobAttempts
	}
	dead := j.Attempts >= maxAttempts || errors.As(err, new(permanent))
	retryAt := r.o.Now().Add(r.Backoff(j.Attempts))
	r.o.Logger.Warn("jobs: job failed", "id", j.ID, "kind", j.Kind, "attempt", j.Attempts, "dead", dead, "err", err)
	if ferr := r.o.Queue.FailJob(sctx, j.ID, err.Error(), retryAt, dead); ferr != nil {
		r.o.Logger.Error("jobs: record failure", "id", j.ID, "kind", j.Kind, "err", ferr)
	}
	return d
}

func (r *Runner) call(ctx context.Context, j wiki.Job) (err error) {
	h, ok := r.handlers[j.Kind]
	if !ok {
		return fmt.Errorf("jobs: no handler for kind %q in this process", j.Kind)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("jobs: %s handler panicked: %v\n%s", j.Kind, p, debug.Stack())
		}
	}()
	jctx, cancel := context.WithTimeout(ctx, r.o.Lease)
	defer cancel()
	return h(jctx, j)
}

// Backoff is the delay before the retry that follows attempt n (1-based):
// BackoffBase·2^(n-1), capped at BackoffMax, with equal jitter (half fixed,
// half random) so that jobs failing together do not retry together.
func (r *Runner) Backoff(n int) time.Duration {
	d := r.o.BackoffBase
	for i := 1; i < n && d < r.o.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, r.o.BackoffMax)
	return d/2 + time.Duration(r.o.Jitter()*float64(d/2))
}
