package engine_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/store/sqlite/sqlitetest"
	"github.com/wikid/wikid/internal/wiki"
)

// hookedRenders is a store that runs a hook, once, in its next SaveRender
// (before the write) or DeleteRenders (after it).
type hookedRenders struct {
	wiki.Store
	mu                      sync.Mutex
	beforeSave, afterDelete func()
}

func (s *hookedRenders) take(h *func()) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := *h
	*h = nil
	return f
}

func (s *hookedRenders) SaveRender(ctx context.Context, revID int64, version int, data []byte) error {
	if f := s.take(&s.beforeSave); f != nil {
		f()
	}
	return s.Store.SaveRender(ctx, revID, version, data)
}

func (s *hookedRenders) DeleteRenders(ctx context.Context, pageIDs []int64) error {
	err := s.Store.DeleteRenders(ctx, pageIDs)
	if f := s.take(&s.afterDelete); f != nil {
		f()
	}
	return err
}

// refreshSignal is purges that reports each Refresh on refreshed.
type refreshSignal struct {
	purges
	refreshed chan struct{}
}

func (p *refreshSignal) Refresh(ctx context.Context, ids []int64, titles ...wiki.Title) {
	p.purges.Refresh(ctx, ids, titles...)
	select {
	case p.refreshed <- struct{}{}:
	default:
	}
}

// A render made before a linked page was created must not outlive the
// backlinks job that recolours the link, whatever the interleaving: here
// a reparse job renders the page (the link red), the page it links to is
// created, and the backlinks job drops the page's stored renders just
// before the reparse stores its render and moves the page's epoch on,
// then the backlinks job moves the epoch on too. The red link is then in
// the stored renders, where every later view and refresh reads it.
func TestRenderOvertakenByABacklinksJobIsNotKept(t *testing.T) {
	t.Parallel()
	db := sqlitetest.Open(t)
	st := &hookedRenders{Store: db}
	p := &refreshSignal{refreshed: make(chan struct{}, 1)}
	e := engine.New(engine.Options{Store: st, Renderer: render.New(), Purger: p, CDN: engine.NoExternalPurge{}})
	saveText(t, e, "Template:T", "v1")
	saveText(t, e, "Page", "See [[Later]]. {{T}}")
	drainAll(t, db, e)
	if h := viewHTML(t, e, "Page"); !strings.Contains(h, `class="new"`) {
		t.Fatalf("Page renders %q, want a red link to Later", h)
	}
	editText(t, e, db, "Template:T", "v2")
	if n := runJobs(t, db, e, wiki.JobTransclusions, 1); n != 1 {
		t.Fatalf("%d transclusions jobs ran, want 1", n)
	}
	leased, err := db.LeaseJobs(ctx, "test", 1000, time.Minute, time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var reparse wiki.Job
	for _, j := range leased {
		if j.Kind == wiki.JobReparse {
			reparse = j
		}
		if err := db.CompleteJob(ctx, j.ID); err != nil {
			t.Fatal(err)
		}
	}
	if reparse.ID == 0 {
		t.Fatal("no reparse job was queued")
	}

	select {
	case <-p.refreshed: // an earlier job's
	default:
	}
	saving, proceed := make(chan struct{}), make(chan struct{})
	st.beforeSave = func() { close(saving); <-proceed }
	errc := make(chan error, 1)
	go func() { errc <- e.JobHandlers()[wiki.JobReparse](ctx, reparse) }()
	<-saving // the reparse rendered the link red
	saveText(t, e, "Later", "Now it exists.")
	st.afterDelete = func() {
		// The backlinks job dropped Page's stored renders: the reparse
		// stores its render and swaps it in, then the job goes on.
		close(proceed)
		select {
		case <-p.refreshed:
		case <-time.After(10 * time.Second):
			t.Error("the reparse job did not finish")
		}
	}
	if n := runJobs(t, db, e, wiki.JobBacklinks, 1); n != 1 {
		t.Fatalf("%d backlinks jobs ran, want 1", n)
	}
	if err := <-errc; err != nil {
		t.Fatalf("reparse job: %v", err)
	}
	drainAll(t, db, e)
	if h := viewHTML(t, e, "Page"); strings.Contains(h, `class="new"`) || !strings.Contains(h, "v2") {
		t.Fatalf("after the jobs Page renders %q; want v2 with a blue link to Later", h)
	}
}
