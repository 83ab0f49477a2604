package engine_test

import (
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/jobs"
	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/store/sqlite/sqlitetest"
	"github.com/wikid/wikid/internal/wiki"
)

// BenchmarkDrain measures the queue with the real handlers: b.N jobs of
// each kind (links, search, backlinks) over 200 pages that link to each
// other, drained by one worker, as `wikid jobs bench-backlog` makes them.
func BenchmarkDrain(b *testing.B) {
	for _, kind := range []string{wiki.JobLinks, wiki.JobSearch, wiki.JobBacklinks} {
		b.Run(kind, func(b *testing.B) {
			db := sqlitetest.Open(b)
			e := engine.New(engine.Options{Store: db, Renderer: render.New(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			const pages = 200
			for i := range pages {
				text := fmt.Sprintf("Page %d of the corpus, linking to [[Page %d]], [[Page %d]] and [[Missing %d]].\n\n", i, (i+1)%pages, (i+7)%pages, i)
				for range 20 {
					text += "Some words of ordinary article text, with '''bold''' and ''italic'' parts. "
				}
				if _, err := e.Save(ctx, engine.Edit{Title: wiki.Title(fmt.Sprintf("Page %d", i)), Text: text, Editor: engine.Editor{UserName: "U"}}); err != nil {
					b.Fatal(err)
				}
			}
			r := jobs.New(jobs.Options{Queue: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			for k, h := range e.JobHandlers() {
				r.Register(k, h)
			}
			if _, err := r.RunDue(ctx); err != nil { // the saves' own jobs
				b.Fatal(err)
			}
			build := map[string]func(wiki.Title) wiki.JobSpec{wiki.JobLinks: engine.LinksJob, wiki.JobSearch: engine.IndexJob, wiki.JobBacklinks: engine.BacklinksJob}[kind]
			specs := make([]wiki.JobSpec, b.N)
			for i := range specs {
				specs[i] = build(wiki.Title(fmt.Sprintf("Page %d", i%pages)))
				specs[i].Key = ""
			}
			if err := db.EnqueueJobs(ctx, specs); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			n, err := r.RunDue(ctx)
			if err != nil || n < b.N {
				b.Fatalf("ran %d of %d: %v", n, b.N, err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}
