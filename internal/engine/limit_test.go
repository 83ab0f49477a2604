package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/render/pathological"
	"github.com/wikid/wikid/internal/store/sqlite/sqlitetest"
	"github.com/wikid/wikid/internal/wiki"
)

// heldStore holds every render in its link colour look-up until release is
// closed, so that tests can have renders under way at the same time.
type heldStore struct {
	wiki.Store
	release chan struct{}
	mu      sync.Mutex
	held    int
}

func (s *heldStore) ExistingTitles(ctx context.Context, ts []wiki.Title) (map[wiki.Title]bool, error) {
	s.mu.Lock()
	s.held++
	s.mu.Unlock()
	select {
	case <-s.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.Store.ExistingTitles(ctx, ts)
}

func (s *heldStore) heldNow() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func newHeldEngine(t *testing.T, limits engine.RenderLimits, pages ...string) (*engine.Engine, *heldStore) {
	t.Helper()
	db := sqlitetest.Open(t)
	plain := engine.New(engine.Options{Store: db})
	for _, title := range pages {
		if _, err := plain.Save(ctx, engine.Edit{Title: wiki.Title(title), Text: "Text of " + title + " with a [[Link]].", Editor: engine.Editor{UserName: "U"}}); err != nil {
			t.Fatal(err)
		}
	}
	hs := &heldStore{Store: db, release: make(chan struct{})}
	return engine.New(engine.Options{Store: hs, RenderLimits: limits}), hs
}

func TestConcurrentRequestsForARevisionShareOneRender(t *testing.T) {
	t.Parallel()
	e, hs := newHeldEngine(t, engine.RenderLimits{}, "Shared")
	p, err := hs.FindPage(ctx, "Shared")
	if err != nil {
		t.Fatal(err)
	}
	rev, err := hs.FindRevision(ctx, p.LatestID)
	if err != nil {
		t.Fatal(err)
	}
	// The article view and the REST html route ask by title, an ?oldid=
	// view by revision: all the same revision.
	var wg sync.WaitGroup
	results := make(chan string, 12)
	for i := range 12 {
		wg.Go(func() {
			var r *engine.Rendered
			var err error
			if i%2 == 0 {
				var v engine.View
				v, err = e.ViewPage(ctx, "Shared", i%4 == 0)
				r = v.Rendered
			} else {
				r, err = e.Render(ctx, rev)
			}
			if err != nil {
				t.Error(err)
				return
			}
			results <- r.HTML
		})
	}
	waitFor(t, "a render to start", func() bool { return hs.heldNow() > 0 })
	time.Sleep(50 * time.Millisecond) // the others reach the render meanwhile
	close(hs.release)
	wg.Wait()
	close(results)
	first := ""
	for html := range results {
		if first == "" {
			first = html
		} else if html != first {
			t.Errorf("requests got different renders of one revision")
		}
	}
	if n := e.Renders.Load(); n != 1 {
		t.Errorf("12 concurrent requests for one revision made %d renders, want 1", n)
	}
	// Previews are the editor's own: never shared.
	e.Renders.Store(0)
	var pw sync.WaitGroup
	for range 2 {
		pw.Go(func() {
			if _, err := e.Preview(ctx, "Sandbox", "Same [[text]]", ""); err != nil {
				t.Error(err)
			}
		})
	}
	pw.Wait()
	if n := e.Renders.Load(); n != 2 {
		t.Errorf("2 previews made %d renders, want 2", n)
	}
}

func TestRenderGateRefusesWhenItsQueueIsFull(t *testing.T) {
	t.Parallel()
	e, hs := newHeldEngine(t, engine.RenderLimits{Concurrency: 1, Queue: 1, Wait: time.Minute}, "A", "B", "C")
	var wg sync.WaitGroup
	for _, title := range []wiki.Title{"A", "B"} {
		wg.Go(func() {
			if _, err := e.ViewPage(ctx, title, false); err != nil {
				t.Errorf("%s: %v", title, err)
			}
		})
	}
	waitFor(t, "one render running and one waiting", func() bool {
		st := e.RenderStats()
		return st.Running == 1 && st.Waiting == 1
	})
	_, err := e.ViewPage(ctx, "C", false)
	var we *wiki.Error
	if !errors.As(err, &we) || we.Kind != wiki.KindUnavailable || we.RetryAfter <= 0 {
		t.Fatalf("a render past a full queue: %v, want KindUnavailable with RetryAfter", err)
	}
	if !strings.Contains(wiki.Message(err), "try again") {
		t.Errorf("message %q does not say what to do", wiki.Message(err))
	}
	if st := e.RenderStats(); st.Refused != 1 {
		t.Errorf("Refused = %d, want 1", st.Refused)
	}
	close(hs.release)
	wg.Wait()
	if _, err := e.ViewPage(ctx, "C", false); err != nil {
		t.Errorf("once the queue drained: %v", err)
	}
}

func TestRenderGateWaitIsBounded(t *testing.T) {
	t.Parallel()
	e, hs := newHeldEngine(t, engine.RenderLimits{Concurrency: 1, Wait: 50 * time.Millisecond}, "A", "B")
	done := make(chan error, 1)
	go func() {
		_, err := e.ViewPage(ctx, "A", false)
		done <- err
	}()
	waitFor(t, "a render to start", func() bool { return hs.heldNow() > 0 })
	start := time.Now()
	_, err := e.ViewPage(ctx, "B", false)
	if wiki.KindOf(err) != wiki.KindUnavailable {
		t.Fatalf("a render that waited past Wait: %v, want KindUnavailable", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refused after %v, want about 50ms", d)
	}
	// A waiting request whose client goes away leaves the line.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Preview(cctx, "Sandbox", "x", ""); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled wait: %v, want context.Canceled", err)
	}
	close(hs.release)
	if err := <-done; err != nil {
		t.Error(err)
	}
}

// A search takes a render slot: past the renders' line, searches are
// refused as renders are, and run once a slot is free.
func TestSearchesWaitInTheRenderLine(t *testing.T) {
	t.Parallel()
	e, _ := newHeldEngine(t, engine.RenderLimits{Concurrency: 1, Queue: 1, Wait: 50 * time.Millisecond}, "Findable")
	release, err := e.AcquireRenderSlot(ctx) // a render under way
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = e.Search(ctx, wiki.SearchQuery{Text: "findable", Limit: 10})
	if wiki.KindOf(err) != wiki.KindUnavailable || !strings.Contains(wiki.Message(err), "try again") {
		t.Fatalf("a search while every render slot stays taken: %v, want KindUnavailable saying to try again", err)
	}
	if st := e.RenderStats(); st.Refused != 1 {
		t.Errorf("Refused = %d, want 1", st.Refused)
	}
	release()
	hits, _, err := e.Search(ctx, wiki.SearchQuery{Text: "findable", Limit: 10})
	if err != nil || len(hits) != 1 || hits[0].Title != "Findable" {
		t.Errorf("a search once the slot is free: %v (%v), want the page Findable", hits, err)
	}
	if st := e.RenderStats(); st.Running != 0 {
		t.Errorf("%d render slots taken after the search, want 0", st.Running)
	}
}

func TestSavesAndPreviewsOverThePageLimitAreRefused(t *testing.T) {
	t.Parallel()
	db := sqlitetest.Open(t)
	e := engine.New(engine.Options{Store: db, MaxPageBytes: 1024})
	ed := engine.Editor{UserName: "U"}
	if _, err := e.Save(ctx, engine.Edit{Title: "Fits", Text: strings.Repeat("a", 1024), Editor: ed}); err != nil {
		t.Fatalf("a page of exactly the limit: %v", err)
	}
	for name, err := range map[string]error{
		"save": func() error {
			_, err := e.Save(ctx, engine.Edit{Title: "Big", Text: strings.Repeat("a", 1025), Editor: ed})
			return err
		}(),
		"preview": func() error { _, err := e.Preview(ctx, "Sandbox", strings.Repeat("a", 1025), ""); return err }(),
	} {
		if wiki.KindOf(err) != wiki.KindTooLarge || !strings.Contains(wiki.Message(err), "max_page_bytes") || !strings.Contains(wiki.Message(err), "1024") {
			t.Errorf("%s over the limit: %v, want KindTooLarge naming max_page_bytes and the limit", name, err)
		}
	}
}

func TestARenderThatRunsOutOfTimeIsNotStored(t *testing.T) {
	t.Parallel()
	db := sqlitetest.Open(t)
	e := engine.New(engine.Options{Store: db, Renderer: render.New(render.WithTimeout(time.Millisecond))})
	s, _ := pathological.Find("list-items")
	if _, err := e.Save(ctx, engine.Edit{Title: "Slow", Text: s.Gen(1 << 20), Editor: engine.Editor{UserName: "U"}}); err != nil {
		t.Fatal(err)
	}
	v, err := e.ViewPage(ctx, "Slow", false)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Rendered.TimedOut || !strings.Contains(v.Rendered.HTML, "took too long") {
		t.Fatalf("a 1 ms render limit did not stop a 1 MB page")
	}
	if _, err := db.FindRender(ctx, v.Revision.ID, render.Version); !errors.Is(err, wiki.ErrNotFound) {
		t.Errorf("the timed-out render was stored: %v", err)
	}
	// The next view is served from memory, not rendered again.
	n := e.Renders.Load()
	if _, err := e.ViewPage(ctx, "Slow", false); err != nil {
		t.Fatal(err)
	}
	if e.Renders.Load() != n {
		t.Error("a timed-out render was not kept in memory")
	}
}

func TestARenderWhoseHighlightingRanOutIsNotStored(t *testing.T) {
	t.Parallel()
	db := sqlitetest.Open(t)
	now := time.Now()
	clock := func() time.Time { return now }
	e := engine.New(engine.Options{Store: db, Now: clock, Renderer: render.New(render.WithHighlightBudget(time.Nanosecond))})
	if _, err := e.Save(ctx, engine.Edit{Title: "Code", Text: "```go\nfunc main() {}\n```\n", Editor: engine.Editor{UserName: "U"}}); err != nil {
		t.Fatal(err)
	}
	v, err := e.ViewPage(ctx, "Code", false)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Rendered.Partial || strings.Contains(v.Rendered.HTML, "<span") {
		t.Fatalf("a 1 ns highlighting budget highlighted the code: %s", v.Rendered.HTML)
	}
	if _, err := db.FindRender(ctx, v.Revision.ID, render.Version); !errors.Is(err, wiki.ErrNotFound) {
		t.Errorf("the partial render was stored: %v", err)
	}
	n := e.Renders.Load()
	if _, err := e.ViewPage(ctx, "Code", false); err != nil || e.Renders.Load() != n {
		t.Errorf("the next view rendered again at once (err %v)", err)
	}
	now = now.Add(2 * time.Minute)
	if _, err := e.ViewPage(ctx, "Code", false); err != nil || e.Renders.Load() != n+1 {
		t.Errorf("a minute later the page was not rendered again (err %v)", err)
	}
}

// A three-way merge (an undo, an edit on an older revision) takes a render
// slot: on pages at the size limit it costs what a render does.
func TestMergesWaitInTheRenderLine(t *testing.T) {
	t.Parallel()
	e, _ := newHeldEngine(t, engine.RenderLimits{Concurrency: 1, Queue: 1, Wait: 50 * time.Millisecond})
	ed := engine.Editor{UserName: "U"}
	first, err := e.Save(ctx, engine.Edit{Title: "Merged", Text: "a\nb\nc\n", Editor: ed})
	if err != nil {
		t.Fatal(err)
	}
	second, err := e.Save(ctx, engine.Edit{Title: "Merged", Text: "a\nb\nc\nd\n", Editor: ed, BaseRevID: first.Revision.ID})
	if err != nil {
		t.Fatal(err)
	}
	release, err := e.AcquireRenderSlot(ctx) // a render under way
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.PrepareUndo(ctx, "Merged", second.Revision.ID, 0); wiki.KindOf(err) != wiki.KindUnavailable {
		t.Errorf("an undo while every render slot stays taken: %v, want KindUnavailable", err)
	}
	if _, err := e.Save(ctx, engine.Edit{Title: "Merged", Text: "z\nb\nc\n", Editor: ed, BaseRevID: first.Revision.ID}); wiki.KindOf(err) != wiki.KindUnavailable {
		t.Errorf("an edit to merge while every render slot stays taken: %v, want KindUnavailable", err)
	}
	release()
	if _, err := e.PrepareUndo(ctx, "Merged", second.Revision.ID, 0); err != nil {
		t.Errorf("an undo once the slot is free: %v", err)
	}
	if out, err := e.Save(ctx, engine.Edit{Title: "Merged", Text: "z\nb\nc\n", Editor: ed, BaseRevID: first.Revision.ID}); err != nil || !out.Merged {
		t.Errorf("an edit to merge once the slot is free: %v, merged %v", err, out.Merged)
	}
}
