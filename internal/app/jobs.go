package app

import (
	"context"
	"fmt"
	"time"

	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/jobs"
)

// The job workers' place in the app. Open builds the runner and,
// when cfg.JobWorkers > 0, starts it after everything else is ready; Close
// stops it (a graceful drain bounded by cfg.ShutdownGrace) after the HTTP
// server has stopped and before the store closes. `wikid jobs run` opens
// the app the same way and serves nothing.

// startJobs builds the runner with the engine's handlers and the queue
// metrics, and starts cfg.JobWorkers workers (none when 0).
func (a *App) startJobs() {
	a.Metrics.RegisterJobQueue(a.Store.JobStats)
	r := jobs.New(jobs.Options{
		Queue:   a.Store,
		Workers: a.Config.JobWorkers,
		Lease:   time.Duration(a.Config.JobLease),
		MaxDuty: a.Config.JobMaxDuty,
		Nice:    a.Config.JobNice,
		Logger:  a.Log,
		Observe: a.Metrics.ObserveJob,
		Periodic: []jobs.Periodic{
			{Every: engine.HousekeepingEvery, Job: engine.HousekeepingJob()},
		},
	})
	for kind, h := range a.Engine.JobHandlers() {
		r.Register(kind, h)
	}
	a.jobs.Store(r)
	if a.Config.JobWorkers > 0 {
		r.Start()
	}
}

// wakeJobs is the engine's JobsQueued hook: a change committed jobs.
func (a *App) wakeJobs() {
	if r := a.jobs.Load(); r != nil {
		r.Wake()
	}
}

// Jobs returns the job runner (nil before Open finished).
func (a *App) Jobs() *jobs.Runner { return a.jobs.Load() }

// stopJobs drains the workers; jobs still running when the grace period
// ends are cancelled and retried by the next process.
func (a *App) stopJobs() {
	r := a.jobs.Load()
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.Config.ShutdownGrace)
	defer cancel()
	if err := r.Stop(ctx); err != nil {
		a.Log.Warn("app: stop job workers", "err", err)
	}
}

// RunJobs runs the workers alone (`wikid jobs run`) until ctx ends, then
// drains them and closes the app. At least one worker runs.
func (a *App) RunJobs(ctx context.Context) error {
	r := a.jobs.Load()
	if r == nil {
		return fmt.Errorf("app: run jobs: the app is not open")
	}
	r.Start()
	a.Log.Info("wikid job workers running", "workers", max(1, a.Config.JobWorkers), "data", a.Config.DataDir)
	<-ctx.Done()
	a.Log.Info("draining job workers", "grace", a.Config.ShutdownGrace)
	return a.Close()
}
