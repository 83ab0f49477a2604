package engine_test

import (
	"context"
	"errors"
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

var ctx = context.Background()

type purges struct {
	mu     sync.Mutex
	titles []string
	stale  []string // the titles Stale was given, every call's
}

func (p *purges) Purge(_ context.Context, _ []int64, titles ...wiki.Title) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range titles {
		p.titles = append(p.titles, string(t))
	}
}

// Stale reports every title as cached: each gets a refresh job.
func (p *purges) Stale(_ context.Context, _ []int64, titles ...wiki.Title) []wiki.Title {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range titles {
		p.stale = append(p.stale, string(t))
	}
	return titles
}

// Refresh is recorded as a purge: both make the titles' responses new.
func (p *purges) Refresh(ctx context.Context, _ []int64, titles ...wiki.Title) {
	p.Purge(ctx, nil, titles...)
}

// A change's own purge is recorded by its local part.
func (p *purges) Outbox([]int64, ...wiki.Title) []wiki.JobSpec        { return nil }
func (p *purges) PurgeHere(ctx context.Context, titles ...wiki.Title) { p.Purge(ctx, nil, titles...) }
func (p *purges) UsersChanged(context.Context, ...int64)              {}

// runJobs leases every due job, runs those of kind (all kinds when empty)
// times times each through the engine's handlers, completes them all, and
// returns how many it ran.
func runJobs(t *testing.T, db *sqlite.DB, e *engine.Engine, kind string, times int) int {
	t.Helper()
	leased, err := db.LeaseJobs(ctx, "test", 1000, time.Minute, time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, j := range leased {
		if kind == "" || j.Kind == kind {
			n++
			for range times {
				if err := e.JobHandlers()[j.Kind](ctx, j); err != nil {
					t.Fatalf("%s job: %v", j.Kind, err)
				}
			}
		}
		if err := db.CompleteJob(ctx, j.ID); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// state is what the jobs write, as text, for comparing runs.
func state(t *testing.T, db *sqlite.DB, e *engine.Engine) string {
	t.Helper()
	var b strings.Builder
	bl, err := db.Backlinks(ctx, "Target", wiki.ListQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range bl {
		fmt.Fprintf(&b, "backlink %s\n", p.Title)
	}
	hits, _, err := e.Search(ctx, wiki.SearchQuery{Text: "words", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		fmt.Fprintf(&b, "hit %s %q\n", h.Title, h.Snippet)
	}
	v, err := e.ViewPage(ctx, "Linker", false)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "red %v\n", strings.Contains(v.Rendered.HTML, `class="new"`))
	return b.String()
}

func TestJobsAreIdempotent(t *testing.T) {
	t.Parallel()
	db := sqlitetest.Open(t)
	p := &purges{}
	woken := 0
	e := engine.New(engine.Options{Store: db, Renderer: render.New(), Purger: p, CDN: engine.NoExternalPurge{}, JobsQueued: func() { woken++ }})
	ed := engine.Editor{UserName: "U"}
	if _, err := e.Save(ctx, engine.Edit{Title: "Linker", Text: "Some words, a link to [[Target]].", Editor: ed}); err != nil {
		t.Fatal(err)
	}
	runJobs(t, db, e, "", 1)
	if s := state(t, db, e); !strings.Contains(s, "red true") || !strings.Contains(s, "hit Linker") {
		t.Fatalf("before: %s", s)
	}
	if _, err := e.Save(ctx, engine.Edit{Title: "Target", Text: "More words.", Editor: ed}); err != nil {
		t.Fatal(err)
	}
	if woken != 2 {
		t.Errorf("workers woken %d times, want once per change", woken)
	}
	if s := state(t, db, e); !strings.Contains(s, "red true") || !strings.Contains(s, "hit Target") {
		t.Fatalf("the link turned blue before any job ran, or the save did not index: %s", s)
	}

	p.titles = nil
	if n := runJobs(t, db, e, "", 1); n != 3 {
		t.Fatalf("the creation queued %d jobs, want backlinks, cdnpurge and the rebound it queues", n)
	}
	if n := runJobs(t, db, e, wiki.JobRefresh, 1); n != 1 {
		t.Fatalf("the backlinks job queued %d refresh jobs, want one for Linker", n)
	}
	once := state(t, db, e)
	if !strings.Contains(once, "red false") || !strings.Contains(once, "hit Target") {
		t.Fatalf("after the jobs: %s", once)
	}
	if !strings.Contains(strings.Join(p.titles, ","), "Linker") {
		t.Fatalf("purged %v, want Linker", p.titles)
	}
	// Run every job of the creation again, twice: nothing changes.
	for _, kind := range []string{wiki.JobLinks, wiki.JobSearch, wiki.JobBacklinks, wiki.JobRefresh, wiki.JobCDNPurge, wiki.JobRC} {
		jobs := []wiki.JobSpec{engine.IndexJob("Target"), engine.IndexJob("Linker"), engine.LinksJob("Linker"),
			engine.BacklinksJob("Target"), engine.RefreshJob("Linker"), engine.HousekeepingJob(), {Kind: wiki.JobCDNPurge, Payload: []byte(`{"titles":["Target"]}`)}}
		if err := db.EnqueueJobs(ctx, jobs); err != nil {
			t.Fatal(err)
		}
		runJobs(t, db, e, kind, 2)
		if again := state(t, db, e); again != once {
			t.Fatalf("after %s jobs ran twice more:\n%s\nwant\n%s", kind, again, once)
		}
	}
	// A malformed payload is a permanent failure, not a retry loop.
	err := e.JobHandlers()[wiki.JobSearch](ctx, wiki.Job{ID: 1, Kind: wiki.JobSearch, Payload: []byte("{")})
	if err == nil || !strings.Contains(err.Error(), "bad payload") {
		t.Fatalf("malformed payload: %v", err)
	}
}

// A search returns at most limit hits (1 to MaxSearchHits), each with a
// snippet, and says whether more follow.
func TestSearchPages(t *testing.T) {
	db := sqlitetest.Open(t)
	e := engine.New(engine.Options{Store: db, Renderer: render.New()})
	for _, title := range []wiki.Title{"One", "Two", "Three"} {
		if _, err := e.Save(ctx, engine.Edit{Title: title, Text: "Common words here.", Editor: engine.Editor{UserName: "U"}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		offset, limit, hits int
		more                bool
	}{{0, 2, 2, true}, {2, 2, 1, false}, {0, 3, 3, false}, {0, -4, 1, true}, {0, 1 << 62, 3, false}} {
		hits, more, err := e.Search(ctx, wiki.SearchQuery{Text: "common", Offset: c.offset, Limit: c.limit})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != c.hits || more != c.more {
			t.Errorf("offset %d limit %d: %d hits, more %v; want %d, %v", c.offset, c.limit, len(hits), more, c.hits, c.more)
		}
		for _, h := range hits {
			if !strings.Contains(h.Snippet, "ommon") || h.Source != "" {
				t.Errorf("hit %s: snippet %q, source %d bytes", h.Title, h.Snippet, len(h.Source))
			}
		}
	}
}

// lostReply commits a save, then reports an error that is not the store's
// answer, as when the connection drops before COMMIT's reply arrives.
type lostReply struct{ wiki.Store }

func (s lostReply) SavePage(ctx context.Context, req wiki.SaveRequest) (wiki.SaveResult, error) {
	if _, err := s.Store.SavePage(ctx, req); err != nil {
		return wiki.SaveResult{}, err
	}
	return wiki.SaveResult{}, errors.New("connection reset by peer")
}

// A save whose outcome is unknown purges this process's copies as if it
// had committed: this process skips its own purge log events, so it would
// not hear of it otherwise. A conflict, the store's own answer, does not.
func TestSaveOfUnknownOutcomePurgesHere(t *testing.T) {
	db := sqlitetest.Open(t)
	p := &purges{}
	ed := engine.Editor{UserName: "U"}
	if _, err := engine.New(engine.Options{Store: db, Renderer: render.New(), Purger: p}).
		Save(ctx, engine.Edit{Title: "Page", Text: "First.", Editor: ed}); err != nil {
		t.Fatal(err)
	}
	p.titles = nil
	e := engine.New(engine.Options{Store: lostReply{db}, Renderer: render.New(), Purger: p})
	cur, err := db.FindPage(ctx, "Page")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Save(ctx, engine.Edit{Title: "Page", Text: "Second.", BaseRevID: cur.LatestID, Editor: ed}); err == nil {
		t.Fatal("the save's error was not returned")
	}
	if !slices.Contains(p.titles, "Page") {
		t.Fatalf("purged %q after a save of unknown outcome, want Page", p.titles)
	}
}

// An import batch's backlinks jobs are one job about its titles that pages
// link to (up to 100 a job): it marks stale the pages linking to any of
// them, each once a part, a part of at most a batch of rows at a time,
// every part going on where the one before stopped, and the links turn
// blue.
func TestImportBatchBacklinks(t *testing.T) {
	t.Parallel()
	for _, batch := range []int{0, 10} { // 0: the default, one part for all
		t.Run(fmt.Sprintf("parts of %d", batch), func(t *testing.T) {
			t.Parallel()
			db, e, p := templateWiki(t)
			engine.SetBatches(e, 0, batch)
			var linkers []string
			for i := range 25 {
				linkers = append(linkers, fmt.Sprintf("Linker %02d", i))
				saveText(t, e, linkers[i], "[[T1]] [[T2]] and [[T3]]")
			}
			for i := range 5 {
				linkers = append(linkers, fmt.Sprintf("Third %d", i))
				saveText(t, e, linkers[len(linkers)-1], "[[T3]] only")
			}
			drainAll(t, db, e)
			for _, l := range linkers {
				if h := viewHTML(t, e, l); !strings.Contains(h, `class="new"`) {
					t.Fatalf("%s before the import: %q, want red links", l, h)
				}
			}
			pages := []engine.ImportPage{{Title: "T1", Text: "one"}, {Title: "Nobody links here", Text: "x"}, {Title: "T2", Text: "two"}, {Title: "T3", Text: "three"}}
			if _, err := e.Import(ctx, importPages(pages), engine.Editor{UserName: "U"}, "import", nil); err != nil {
				t.Fatal(err)
			}
			queued, err := db.ListJobs(ctx, wiki.JobQueued, 1000)
			if err != nil {
				t.Fatal(err)
			}
			var payloads []string
			for _, j := range queued {
				if j.Kind == wiki.JobBacklinks || j.Kind == wiki.JobBatchBacklinks {
					payloads = append(payloads, j.Kind+" "+string(j.Payload))
				}
			}
			if want := `batchbacklinks {"titles":["T1","T2","T3"]}`; len(payloads) != 1 || payloads[0] != want {
				t.Fatalf("backlinks jobs queued: %q, want one, %s", payloads, want)
			}
			p.mu.Lock()
			p.titles, p.stale = nil, nil
			p.mu.Unlock()
			drainAll(t, db, e)
			p.mu.Lock()
			stale := slices.Clone(p.stale)
			p.mu.Unlock()
			// Each title's linkers, once each, in the parts' order: T1's
			// 25, T2's 25, T3's 30. A part of the default size has every
			// page once.
			want := 25 + 25 + 30
			if batch == 0 {
				want = 30
			}
			if len(stale) != want {
				t.Fatalf("marked stale %d times, want %d: %v", len(stale), want, stale)
			}
			for _, l := range linkers {
				if !slices.Contains(stale, l) {
					t.Errorf("%s was not marked stale", l)
				}
				if h := viewHTML(t, e, l); strings.Contains(h, `class="new"`) {
					t.Errorf("%s after the jobs: %q, want blue links", l, h)
				}
			}
		})
	}
}
