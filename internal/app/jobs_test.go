package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/wiki"
)

// TestRedLinkTurnsBlue checks the backlinks job end to end: creating a page
// recolours the links to it on pages nobody edits, changes their ETag and
// refreshes their edge entries in place, from a worker, never from a page
// view: readers get hits throughout.
func TestRedLinkTurnsBlue(t *testing.T) {
	t.Parallel()
	// No workers at first: the jobs wait in the queue until Start below.
	w := apptest.New(t, func(c *config.Config) { c.JobWorkers = 0 })
	w.AsyncJobs = true
	_, pw := w.CreateUser(t, "Rita", wiki.GroupUser)
	rita := w.Login(t, "Rita", pw)
	anon := w.Client(t)
	ctx := context.Background()

	rita.Edit("Linker", "See [[Blue target]] and [[Blue target|again]].")
	// The red link (the page's tabs may hold others, to its talk page).
	const redLink = `href="/wiki/Blue_target?action=edit&amp;redlink=1" class="new"`
	before := anon.Get("/wiki/Linker")
	if hit := anon.Get("/wiki/Linker"); hit.Header.Get("X-Cache") != "HIT" {
		t.Fatalf("second view: X-Cache %q, want HIT", hit.Header.Get("X-Cache"))
	}
	if !strings.Contains(before.Body, redLink) {
		t.Fatal("the link to a missing page is not red")
	}
	oldETag := before.Header.Get("ETag")

	rita.Edit("Blue target", "I exist now.")

	t.Run("page views never run a job", func(t *testing.T) {
		for range 5 {
			res := anon.Get("/wiki/Linker")
			if res.Header.Get("X-Cache") != "HIT" || !strings.Contains(res.Body, redLink) {
				t.Fatalf("without workers the view changed: X-Cache %q", res.Header.Get("X-Cache"))
			}
		}
		queued, err := w.App.Store.ListJobs(ctx, wiki.JobQueued, 100)
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, j := range queued {
			kinds = append(kinds, j.Kind)
		}
		if !strings.Contains(strings.Join(kinds, ","), wiki.JobBacklinks) {
			t.Fatalf("queued jobs = %v, want a backlinks job", kinds)
		}
	})

	t.Run("a worker turns the link blue, changes the ETag and refreshes the edge entry", func(t *testing.T) {
		w.App.Jobs().Start()
		var after *apptest.Response
		deadline := time.Now().Add(15 * time.Second)
		for {
			after = anon.Get("/wiki/Linker")
			if !strings.Contains(after.Body, redLink) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the link is still red 15s after its target was created")
			}
			time.Sleep(10 * time.Millisecond)
		}
		if after.Header.Get("X-Cache") != "HIT" {
			t.Errorf("first blue view: X-Cache %q, want HIT (the worker refreshed the edge entry in place)", after.Header.Get("X-Cache"))
		}
		if !strings.Contains(after.Body, `href="/wiki/Blue_target"`) {
			t.Errorf("no blue link in\n%s", after.Body)
		}
		if res := rita.Get("/wiki/Linker"); strings.Contains(res.Body, redLink) {
			t.Errorf("a logged-in view (spliced from the edge entry) still shows the red link: X-Cache %q", res.Header.Get("X-Cache"))
		}
		newETag := after.Header.Get("ETag")
		if newETag == "" || newETag == oldETag {
			t.Errorf("ETag %q → %q, want a change", oldETag, newETag)
		}
		r := anon.NewRequest(http.MethodGet, "/wiki/Linker", nil)
		r.Header.Set("If-None-Match", oldETag)
		if res := anon.Do(r); res.StatusCode != http.StatusOK {
			t.Errorf("conditional GET with the old ETag: %d, want 200", res.StatusCode)
		}
		if res := anon.Get("/wiki/Linker"); res.Header.Get("X-Cache") != "HIT" || res.Header.Get("ETag") != newETag {
			t.Errorf("next view: X-Cache %q ETag %q, want a HIT with %q", res.Header.Get("X-Cache"), res.Header.Get("ETag"), newETag)
		}
		p, err := w.App.Store.FindPage(ctx, "Linker")
		if err != nil {
			t.Fatal(err)
		}
		if h, err := w.App.Store.History(ctx, wiki.HistoryQuery{PageID: p.ID}); err != nil || len(h) != 1 {
			t.Errorf("Linker has %d revisions (%v): nobody should have edited it", len(h), err)
		}
		w.Settle(t)
		if dead, _ := w.App.Store.ListJobs(ctx, wiki.JobDead, 10); len(dead) != 0 {
			t.Errorf("dead jobs: %+v", dead)
		}
	})

	t.Run("the search index follows through its job", func(t *testing.T) {
		res := anon.Get("/wiki/Special:Search?q=exist+now")
		if !strings.Contains(res.Body, "Blue target") {
			t.Errorf("search does not find the new page:\n%s", res.Body)
		}
	})

	t.Run("metrics show the queue", func(t *testing.T) {
		_, apw := w.CreateUser(t, "Meter", wiki.GroupAdmin)
		res := w.Login(t, "Meter", apw).Get("/metrics") // administrators only on addr
		if res.StatusCode != http.StatusOK {
			t.Fatalf("/metrics: status %d", res.StatusCode)
		}
		for _, want := range []string{`wikid_jobs{state="done"}`, `wikid_jobs{state="queued"} 0`, "wikid_jobs_oldest_queued_age_seconds 0",
			`wikid_job_duration_seconds_count{kind="backlinks"}`} {
			if !strings.Contains(res.Body, want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})
}
