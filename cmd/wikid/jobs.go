package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/wikid/wikid/internal/app"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/wiki"
)

const jobsUsage = "usage: wikid jobs run | list [--state S] [--limit N] | stats | retry ID"

func jobsCommand(ctx context.Context, cfg config.Config, log *slog.Logger, sub string, args []string, state wiki.JobState, limit int, stdout io.Writer) error {
	switch sub {
	case "run":
		if len(args) != 0 {
			return errors.New(jobsUsage)
		}
		return jobsRun(ctx, cfg, log)
	case "list":
		if len(args) != 0 {
			return errors.New(jobsUsage)
		}
		if state != "" && !slices.Contains(wiki.JobStates, state) {
			return fmt.Errorf("--state %q: want queued, running, done or dead", state)
		}
		return jobsList(ctx, cfg, state, limit, stdout)
	case "stats":
		if len(args) != 0 {
			return errors.New(jobsUsage)
		}
		return jobsStats(ctx, cfg, stdout)
	case "retry":
		if len(args) != 1 {
			return errors.New(jobsUsage)
		}
		id, err := strconv.ParseInt(args[0], 10, 64)
		if err != nil {
			return fmt.Errorf("job id %q: want a number from `wikid jobs list --state dead`", args[0])
		}
		return jobsRetry(ctx, cfg, id, stdout)
	case "bench-backlog":
		// Hidden: the benchmark harness's drain mode makes its backlog with it.
		if len(args) < 1 || len(args) > 2 {
			return errors.New("usage: wikid jobs bench-backlog N [KINDS]")
		}
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 1 {
			return fmt.Errorf("bench-backlog %q: want a positive number of jobs", args[0])
		}
		kinds := "links,search"
		if len(args) == 2 {
			kinds = args[1]
		}
		return jobsBacklog(ctx, cfg, n, strings.Split(kinds, ","), stdout)
	}
	return errors.New(jobsUsage)
}

// jobsRun runs the workers alone until SIGINT or SIGTERM, then drains them.
func jobsRun(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cfg.JobWorkers = max(cfg.JobWorkers, 1)
	a, err := app.Open(ctx, cfg, log)
	if err != nil {
		return err
	}
	return a.RunJobs(ctx)
}

func jobsList(ctx context.Context, cfg config.Config, state wiki.JobState, limit int, stdout io.Writer) error {
	db, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	jobs, err := db.ListJobs(ctx, state, limit)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tKIND\tATTEMPTS\tRUN AT\tPAYLOAD\tLAST ERROR")
	for _, j := range jobs {
		errMsg, _, _ := strings.Cut(j.LastError, "\n")
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", j.ID, j.State, j.Kind, j.Attempts, j.MaxAttempts,
			j.RunAt.Local().Format(time.DateTime), j.Payload, errMsg)
	}
	return tw.Flush()
}

func jobsStats(ctx context.Context, cfg config.Config, stdout io.Writer) error {
	db, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	st, err := db.JobStats(ctx)
	if err != nil {
		return err
	}
	for _, s := range wiki.JobStates {
		fmt.Fprintf(stdout, "%-8s %d\n", s, st.Counts[s])
	}
	age := "-"
	if !st.OldestQueued.IsZero() {
		age = time.Since(st.OldestQueued).Round(time.Millisecond).String()
	}
	fmt.Fprintf(stdout, "oldest queued job: %s\n", age)
	return nil
}

func jobsRetry(ctx context.Context, cfg config.Config, id int64, stdout io.Writer) error {
	db, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.RetryJob(ctx, id); errors.Is(err, wiki.ErrNotFound) {
		return fmt.Errorf("there is no dead job %d; see `wikid jobs list --state dead`", id)
	} else if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "job %d queued again\n", id)
	return nil
}

// jobsBacklog enqueues n jobs of the given kinds over the wiki's pages in
// turn (without dedupe keys, so that all n are real work): the backlog a
// bulk change leaves, for measuring page views while it drains. A running
// serve picks them up within its idle poll interval (at most 2s).
func jobsBacklog(ctx context.Context, cfg config.Config, n int, kinds []string, stdout io.Writer) error {
	build := map[string]func(wiki.Title) wiki.JobSpec{
		wiki.JobLinks: engine.LinksJob, wiki.JobSearch: engine.IndexJob, wiki.JobBacklinks: engine.BacklinksJob,
	}
	for _, k := range kinds {
		if build[k] == nil {
			return fmt.Errorf("bench-backlog: kind %q: want links, search or backlinks", k)
		}
	}
	db, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	var titles []wiki.Title
	q := wiki.ListQuery{Limit: 5000}
	for len(titles) < n {
		pages, err := db.AllPages(ctx, q)
		if err != nil {
			return err
		}
		for _, p := range pages {
			titles = append(titles, p.Title)
		}
		if len(pages) < q.Limit {
			break
		}
		q.From = pages[len(pages)-1].Title + "\x00"
	}
	if len(titles) == 0 {
		return errors.New("bench-backlog: the wiki has no pages")
	}
	t0 := time.Now()
	for done := 0; done < n; {
		batch := make([]wiki.JobSpec, 0, min(1000, n-done))
		for ; len(batch) < cap(batch); done++ {
			j := build[kinds[done%len(kinds)]](titles[(done/len(kinds))%len(titles)])
			j.Key = ""
			batch = append(batch, j)
		}
		if err := db.EnqueueJobs(ctx, batch); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "enqueued %d jobs (%s) over %d pages in %v\n", n, strings.Join(kinds, ","), len(titles), time.Since(t0).Round(time.Millisecond))
	return nil
}
