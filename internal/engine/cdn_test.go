package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/store/sqlite/sqlitetest"
	"github.com/wikid/wikid/internal/wiki"
)

// purgeSets records purges as sets of titles; "" stands for the listings
// (a purge naming no title).
type purgeSets struct {
	mu  sync.Mutex
	set map[string]bool
}

func (p *purgeSets) add(titles []wiki.Title) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.set == nil {
		p.set = map[string]bool{}
	}
	if len(titles) == 0 {
		p.set[""] = true
	}
	for _, t := range titles {
		p.set[string(t)] = true
	}
}

func (p *purgeSets) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for t := range p.set {
		out = append(out, t)
	}
	p.set = nil
	slices.Sort(out)
	return out
}

type localPurges struct {
	purgeSets
	cached bool // whether Stale finds cached responses
}

func (p *localPurges) Purge(_ context.Context, _ []int64, titles ...wiki.Title) { p.add(titles) }

// Stale is a local invalidation too; it reports every title as cached
// (refresh jobs then purge them externally) or none (the backlinks job
// purges them externally itself).
func (p *localPurges) Stale(_ context.Context, _ []int64, titles ...wiki.Title) []wiki.Title {
	p.add(titles)
	if p.cached {
		return titles
	}
	return nil
}

// Refresh counts as a purge: the local entries of titles are replaced.
func (p *localPurges) Refresh(_ context.Context, _ []int64, titles ...wiki.Title) { p.add(titles) }

// A change's own purge: nothing goes into its transaction here; the local
// part counts as a purge.
func (p *localPurges) Outbox([]int64, ...wiki.Title) []wiki.JobSpec      { return nil }
func (p *localPurges) PurgeHere(_ context.Context, titles ...wiki.Title) { p.add(titles) }
func (p *localPurges) UsersChanged(context.Context, ...int64)            {}

type externalPurges struct{ purgeSets }

func (p *externalPurges) PurgeExternal(_ context.Context, titles ...wiki.Title) error {
	p.add(titles)
	return nil
}

// drain runs every due job, and the jobs they queue, until none is left.
func drain(t *testing.T, db *sqlite.DB, e *engine.Engine, now time.Time) {
	t.Helper()
	// Jobs queued by the store carry the wall clock's time, the engine's the
	// test clock's: lease as of the later of the two (a slow run passes the
	// test clock's second).
	at := now
	if wall := time.Now(); wall.After(at) {
		at = wall
	}
	for range 20 {
		leased, err := db.LeaseJobs(ctx, "test", 1000, time.Minute, at.Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if len(leased) == 0 {
			return
		}
		for _, j := range leased {
			if err := e.JobHandlers()[j.Kind](ctx, j); err != nil {
				t.Fatalf("%s job: %v", j.Kind, err)
			}
			if err := db.CompleteJob(ctx, j.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Fatal("the jobs kept queueing jobs")
}

// Every purge of the local edge has an external twin, queued as a cdnpurge
// job: caches in front must drop what the local edge drops.
func TestEveryLocalPurgeReachesExternalCaches(t *testing.T) {
	for _, cached := range []bool{true, false} {
		t.Run(fmt.Sprintf("linking pages cached %v", cached), func(t *testing.T) {
			t.Parallel()
			everyLocalPurgeReachesExternalCaches(t, cached)
		})
	}
}

func everyLocalPurgeReachesExternalCaches(t *testing.T, cached bool) {
	db := sqlitetest.Open(t)
	local, external := &localPurges{cached: cached}, &externalPurges{}
	now := time.Now()
	clock := func() time.Time { return now }
	e := engine.New(engine.Options{Store: db, Renderer: render.New(), Purger: local, CDN: external,
		Now: clock, KeepChanges: time.Hour})
	ed := engine.Editor{UserName: "U"}
	steps := []struct {
		name string
		do   func() error
	}{
		{"a linking page is created", func() error {
			_, err := e.Save(ctx, engine.Edit{Title: "Linker", Text: "A link to [[Target]] and [[Moved]].", Editor: ed})
			return err
		}},
		{"the linked page is created", func() error {
			_, err := e.Save(ctx, engine.Edit{Title: "Target", Text: "Words.", Editor: ed})
			return err
		}},
		{"a page is edited into a category", func() error {
			_, err := e.Save(ctx, engine.Edit{Title: "Target", Text: "Words. [[Category:Things]]", BaseRevID: latest(t, db, "Target"), Editor: ed})
			return err
		}},
		{"a page is moved", func() error {
			_, err := e.Move(ctx, "Target", "Moved", "", false, ed)
			return err
		}},
		{"a page is deleted", func() error { return e.Delete(ctx, "Moved", "", ed) }},
		{"a page is undeleted", func() error {
			_, err := e.Undelete(ctx, "Moved", "", ed)
			return err
		}},
		{"a page is reverted", func() error {
			_, err := e.Revert(ctx, "Moved", firstRev(t, db, "Moved"), ed)
			return err
		}},
		{"a page is purged (action=purge)", func() error { e.Purge(ctx, "Linker"); return nil }},
		{"old recent changes are trimmed", func() error {
			now = now.Add(2 * time.Hour)
			return db.EnqueueJobs(ctx, []wiki.JobSpec{engine.HousekeepingJob()})
		}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		drain(t, db, e, now)
		l, x := local.take(), external.take()
		if len(l) == 0 {
			t.Errorf("%s: nothing purged locally", s.name)
		}
		for _, title := range l {
			if title != "" && !slices.Contains(x, title) {
				t.Errorf("%s: %q purged locally %v, not externally %v", s.name, title, l, x)
			}
		}
		if slices.Contains(l, "") && len(x) == 0 {
			t.Errorf("%s: the listings purged locally, nothing externally", s.name)
		}
	}
}

func latest(t *testing.T, db *sqlite.DB, title wiki.Title) int64 {
	t.Helper()
	p, err := db.FindPage(ctx, title)
	if err != nil {
		t.Fatal(err)
	}
	return p.LatestID
}

func firstRev(t *testing.T, db *sqlite.DB, title wiki.Title) int64 {
	t.Helper()
	p, err := db.FindPage(ctx, title)
	if err != nil {
		t.Fatal(err)
	}
	revs, err := db.History(ctx, wiki.HistoryQuery{PageID: p.ID, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return revs[len(revs)-1].ID
}

// With no cache in front, changes queue no cdnpurge jobs at all; with one,
// repeated purges of a title while its job waits queue one job.
func TestCDNPurgeJobsOnlyWhenNeededAndOncePerTitle(t *testing.T) {
	t.Parallel()
	count := func(db *sqlite.DB) int {
		t.Helper()
		st, err := db.JobStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st.Counts[wiki.JobQueued]
	}
	ed := engine.Editor{UserName: "U"}

	db := sqlitetest.Open(t)
	e := engine.New(engine.Options{Store: db, Renderer: render.New()})
	if _, err := e.Save(ctx, engine.Edit{Title: "Page", Text: "Words.", Editor: ed}); err != nil {
		t.Fatal(err)
	}
	before := count(db)
	for range 5 {
		e.Purge(ctx, "Page")
	}
	if n := count(db); n != before {
		t.Errorf("without a cache in front, 5 purges queued %d jobs", n-before)
	}
	jobs, err := db.ListJobs(ctx, wiki.JobQueued, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Kind == wiki.JobCDNPurge {
			t.Errorf("without a cache in front, a %s job was queued: %s", j.Kind, j.Payload)
		}
	}

	db2 := sqlitetest.Open(t)
	e2 := engine.New(engine.Options{Store: db2, Renderer: render.New(), CDN: &externalPurges{}})
	if _, err := e2.Save(ctx, engine.Edit{Title: "Page", Text: "Words.", Editor: ed}); err != nil {
		t.Fatal(err)
	}
	before = count(db2)
	for range 5 {
		e2.Purge(ctx, "Page")
	}
	if n := count(db2) - before; n > 1 {
		t.Errorf("5 purges of one title queued %d jobs, want at most 1 (the edit's own purge job may absorb them)", n)
	}
	// Once a purge ran, its rebound is queued for later, unmerged.
	ext := &externalPurges{}
	db3 := sqlitetest.Open(t)
	e3 := engine.New(engine.Options{Store: db3, Renderer: render.New(), CDN: ext})
	e3.Purge(ctx, "Page")
	leased, err := db3.LeaseJobs(ctx, "test", 10, time.Minute, time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range leased {
		if err := e3.JobHandlers()[j.Kind](ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	jobs, err = db3.ListJobs(ctx, wiki.JobQueued, 100)
	if err != nil {
		t.Fatal(err)
	}
	var rebounds int
	for _, j := range jobs {
		if j.Kind == wiki.JobCDNPurge && j.Key == "" && strings.Contains(string(j.Payload), `"rebound":true`) &&
			j.RunAt.After(time.Now().Add(engine.CDNRebound/2)) {
			rebounds++
		}
	}
	if len(leased) != 1 || rebounds != 1 || len(ext.take()) == 0 {
		t.Errorf("ran %d purge jobs, then %d rebounds queued (want 1 and 1): %+v", len(leased), rebounds, jobs)
	}
}
