package engine_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/store/sqlite/sqlitetest"
	"github.com/wikid/wikid/internal/wiki"
)

// slowTexts is a store whose revision reads take a while once slow is
// set: pages whose text takes long to make.
type slowTexts struct {
	*sqlite.DB
	slow atomic.Bool
}

func (s *slowTexts) FindRevision(ctx context.Context, id int64) (wiki.Revision, error) {
	if s.slow.Load() {
		select {
		case <-time.After(5 * time.Millisecond):
		case <-ctx.Done():
			return wiki.Revision{}, ctx.Err()
		}
	}
	return s.DB.FindRevision(ctx, id)
}

// A reindex job ends within its lease (its context's deadline: the job
// runner's) however long its pages' texts take to make: it writes the
// entries it made and leaves the titles it did not reach to a job of
// their own. A job that runs out of time instead fails on every attempt,
// from its first title, and the entries past the point it reaches are
// never written.
func TestReindexJobEndsWithinItsLease(t *testing.T) {
	t.Parallel()
	db := sqlitetest.Open(t)
	st := &slowTexts{DB: db}
	e := engine.New(engine.Options{Store: st, Renderer: render.New(), Purger: &purges{}, CDN: engine.NoExternalPurge{}})
	saveText(t, e, "Template:Word", "alphaword")
	const n = 120
	for i := range n {
		saveText(t, e, fmt.Sprintf("Page %03d", i), "Text {{Word}}")
	}
	drainAll(t, db, e)
	editText(t, e, db, "Template:Word", "omegaword")
	if got := runJobs(t, db, e, wiki.JobTransclusions, 1); got != 1 {
		t.Fatalf("%d transclusions jobs ran, want 1", got)
	}
	// Each page's text now takes about 10 ms to make (its revision and
	// the template's): the batch's, more than a second, over twice the
	// lease given to the reindex jobs. (The lease leaves the half a job
	// keeps for its writes room enough on a loaded machine with the race
	// detector.)
	st.slow.Store(true)
	const lease = 500 * time.Millisecond
	for range 100 {
		leased, err := db.LeaseJobs(ctx, "test", 1000, time.Minute, time.Now().Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if len(leased) == 0 {
			break
		}
		for _, j := range leased {
			jctx, cancel := context.WithCancel(ctx)
			if j.Kind == wiki.JobReindex {
				jctx, cancel = context.WithTimeout(ctx, lease)
			}
			err := e.JobHandlers()[j.Kind](jctx, j)
			cancel()
			if err != nil {
				t.Fatalf("%s job: %v", j.Kind, err)
			}
			if err := db.CompleteJob(ctx, j.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	st.slow.Store(false)
	if hits, _, err := e.Search(ctx, wiki.SearchQuery{Text: "alphaword", Limit: 10}); err != nil || len(hits) > 0 {
		t.Fatalf("after the jobs, %d pages are still found by the template's old text (%v)", len(hits), err)
	}
}
