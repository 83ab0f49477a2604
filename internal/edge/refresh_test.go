package edge

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// versioned is a handler whose response is the "database" version it
// reads; block, when set, holds the render of that version until released.
type versioned struct {
	version atomic.Int64
	renders atomic.Int64
	block   int64
	started chan struct{}
	release chan struct{}
	status  int
}

func newVersioned() *versioned {
	v := &versioned{started: make(chan struct{}, 16), release: make(chan struct{}), status: http.StatusOK}
	v.version.Store(1)
	return v
}

func (v *versioned) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := v.version.Load()
	v.renders.Add(1)
	if n == v.block {
		v.started <- struct{}{}
		<-v.release
	}
	Mark(w, Directive{Tags: []string{"T"}})
	w.WriteHeader(v.status)
	fmt.Fprintf(w, "v%d", n)
}

// refreshInFlight stores v1 of h under /p, then starts a refresh of its
// tag T that is rendering v2 and held until h.release is closed; done is
// closed when the refresh returns.
func refreshInFlight(t *testing.T, c *Cache, h *versioned) (done chan struct{}) {
	t.Helper()
	get(t, c, h, "GET", "/p")
	h.version.Store(2)
	h.block = 2
	_, seq := c.BeginRefresh("T")
	done = make(chan struct{})
	go func() { refreshOf(c, "/p", seq, h); close(done) }()
	<-h.started
	return done
}

// waitFor polls cond until it holds, for at most ten seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 10000 {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the condition did not hold within 10s")
}

func refreshOf(c *Cache, key string, seq uint64, h http.Handler) {
	c.Refresh(&discardWriter{h: http.Header{}}, httptest.NewRequest("GET", key, nil), key, seq, h)
}

// Readers keep getting the stored response, as hits, while it is rendered
// again; the new one then replaces it, without a miss in between.
func TestRefreshServesTheOldEntryUntilTheNewOneIsIn(t *testing.T) {
	c := newCache(t, Config{})
	h := newVersioned()
	get(t, c, h, "GET", "/p")
	h.version.Store(2) // a linked page was created
	h.block = 2
	keys, seq := c.BeginRefresh("T", "Unrelated")
	if len(keys) != 1 || keys[0] != "/p" {
		t.Fatalf("BeginRefresh keys = %q", keys)
	}
	done := make(chan struct{})
	go func() { refreshOf(c, "/p", seq, h); close(done) }()
	<-h.started
	for range 3 {
		if w := get(t, c, h, "GET", "/p"); w.Body.String() != "v1" || w.Header().Get("X-Cache") != "HIT" {
			t.Fatalf("during the refresh: %q %s", w.Body.String(), w.Header().Get("X-Cache"))
		}
	}
	close(h.release)
	<-done
	if w := get(t, c, h, "GET", "/p"); w.Body.String() != "v2" || w.Header().Get("X-Cache") != "HIT" {
		t.Fatalf("after the refresh: %q %s", w.Body.String(), w.Header().Get("X-Cache"))
	}
	if n := h.renders.Load(); n != 2 {
		t.Fatalf("%d renders, want 2 (the fill and the refresh)", n)
	}
	if st := c.Stats(); st.Refreshed != 1 || st.Entries != 1 || st.Misses != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// A reader's fill that read the old state before BeginRefresh must not
// store it over the refresh's.
func TestAFillThatStartedBeforeBeginRefreshIsNotStored(t *testing.T) {
	c := newCache(t, Config{})
	h := newVersioned()
	h.block = 1
	var wg sync.WaitGroup
	wg.Go(func() { get(t, c, h, "GET", "/p") }) // no entry yet: a fill of v1
	<-h.started
	h.version.Store(2)
	_, seq := c.BeginRefresh("T")
	refreshOf(c, "/p", seq, h) // nothing stored yet: stores v2
	close(h.release)
	wg.Wait()
	if w := get(t, c, h, "GET", "/p"); w.Body.String() != "v2" || w.Header().Get("X-Cache") != "HIT" {
		t.Fatalf("got %q %s, want the refreshed v2 as a hit", w.Body.String(), w.Header().Get("X-Cache"))
	}
}

// A refresh that raced a purge (an edit of the page itself) stores
// nothing: the purge's reader renders the newest state.
func TestARefreshThatRacedAPurgeIsNotStored(t *testing.T) {
	c := newCache(t, Config{})
	h := newVersioned()
	done := refreshInFlight(t, c, h)
	h.block = 0
	h.version.Store(3)
	c.Purge("T")
	if w := get(t, c, h, "GET", "/p"); w.Body.String() != "v3" {
		t.Fatalf("after the purge: %q", w.Body.String())
	}
	close(h.release)
	<-done
	if w := get(t, c, h, "GET", "/p"); w.Body.String() != "v3" || w.Header().Get("X-Cache") != "HIT" {
		t.Fatalf("the raced refresh replaced the entry: %q %s", w.Body.String(), w.Header().Get("X-Cache"))
	}
}

// A refresh whose response cannot be stored drops the stale entry: the
// next reader renders rather than getting the old state for a day.
func TestARefreshThatCannotStoreDropsTheEntry(t *testing.T) {
	c := newCache(t, Config{})
	h := newVersioned()
	get(t, c, h, "GET", "/p")
	h.version.Store(2)
	h.status = http.StatusServiceUnavailable
	_, seq := c.BeginRefresh("T")
	refreshOf(c, "/p", seq, h)
	h.status = http.StatusOK
	if w := get(t, c, h, "GET", "/p"); w.Body.String() != "v2" || w.Header().Get("X-Cache") != "MISS" {
		t.Fatalf("got %q %s, want a fresh render", w.Body.String(), w.Header().Get("X-Cache"))
	}
}

// Refreshes of one key are merged: one that finds another running, started
// after its own BeginRefresh, waits for it and renders nothing; one that
// finds an older refresh running renders after it.
func TestRefreshesOfOneKeyAreMerged(t *testing.T) {
	c := newCache(t, Config{})
	h := newVersioned()
	get(t, c, h, "GET", "/p")
	h.version.Store(2)
	h.block = 2
	_, seq := c.BeginRefresh("T")
	var wg sync.WaitGroup
	wg.Go(func() { refreshOf(c, "/p", seq, h) })
	<-h.started
	for range 4 {
		wg.Go(func() { refreshOf(c, "/p", seq, h) })
	}
	waitFor(t, func() bool { return c.refreshWaits.Load() == 4 })
	close(h.release)
	wg.Wait()
	if n := h.renders.Load(); n != 2 {
		t.Fatalf("%d renders, want 2 (the fill and one refresh)", n)
	}

	// A later change: its refresh must not be satisfied by an older one.
	h.version.Store(3)
	h.block = 3
	h.release = make(chan struct{})
	_, seq3 := c.BeginRefresh("T")
	wg.Go(func() { refreshOf(c, "/p", seq3, h) })
	<-h.started
	h.block = 0
	h.version.Store(4)
	_, seq4 := c.BeginRefresh("T")
	wg.Go(func() { refreshOf(c, "/p", seq4, h) })
	waitFor(t, func() bool { return c.refreshWaits.Load() == 1 })
	close(h.release)
	wg.Wait()
	if w := get(t, c, h, "GET", "/p"); w.Body.String() != "v4" || w.Header().Get("X-Cache") != "HIT" {
		t.Fatalf("got %q %s, want v4 refreshed in place", w.Body.String(), w.Header().Get("X-Cache"))
	}
}

// Stale keeps the entries (readers get hits) but stops a fill that read
// the old state from storing it, and names the tags that have entries.
func TestStaleKeepsEntriesAndNamesTheirTags(t *testing.T) {
	c := newCache(t, Config{})
	h := newVersioned()
	get(t, c, h, "GET", "/p")
	other := newVersioned()
	other.block = 1
	var wg sync.WaitGroup
	wg.Go(func() {
		c.Serve(httptest.NewRecorder(), httptest.NewRequest("GET", "/q", nil), "/q", other)
	})
	<-other.started // a fill of /q (tag T) reads v1
	other.version.Store(2)
	if got := c.Stale("T", "Nothing"); len(got) != 1 || got[0] != "T" {
		t.Fatalf("Stale = %q, want [T]", got)
	}
	close(other.release)
	wg.Wait()
	if w := get(t, c, h, "GET", "/p"); w.Header().Get("X-Cache") != "HIT" || w.Body.String() != "v1" {
		t.Fatalf("/p after Stale: %q %s, want the stored entry as a hit", w.Body.String(), w.Header().Get("X-Cache"))
	}
	if w := get(t, c, other, "GET", "/q"); w.Header().Get("X-Cache") != "MISS" || w.Body.String() != "v2" {
		t.Fatalf("/q after Stale: %q %s, want a fresh render (the old fill was not stored)", w.Body.String(), w.Header().Get("X-Cache"))
	}
}

// An entry made stale is served for StaleGrace at most: if its refresh
// never comes (it failed, or ran in another process), the next request
// after that renders it.
func TestAStaleEntryExpiresWithinTheGrace(t *testing.T) {
	clock := newFakeClock()
	c := newCache(t, Config{Now: clock.Now})
	h := newVersioned()
	get(t, c, h, "GET", "/p")
	h.version.Store(2)
	c.Stale("T")
	clock.Advance(StaleGrace - time.Second)
	if w := get(t, c, h, "GET", "/p"); w.Body.String() != "v1" || w.Header().Get("X-Cache") != "HIT" {
		t.Fatalf("within the grace: %q %s, want the old entry as a hit", w.Body.String(), w.Header().Get("X-Cache"))
	}
	clock.Advance(2 * time.Second)
	if w := get(t, c, h, "GET", "/p"); w.Body.String() != "v2" || w.Header().Get("X-Cache") != "MISS" {
		t.Fatalf("after the grace: %q %s, want a fresh render", w.Body.String(), w.Header().Get("X-Cache"))
	}
}

// A refresh that raced a later change of its tags stores nothing and
// drops the old entry, whether or not another refresh follows (the later
// change may be an unrelated tag sharing its generation slot).
func TestARefreshThatRacedAStaleDropsTheOldEntry(t *testing.T) {
	c := newCache(t, Config{})
	h := newVersioned()
	done := refreshInFlight(t, c, h)
	h.block = 0
	c.Stale("T")
	close(h.release)
	<-done
	if w := get(t, c, h, "GET", "/p"); w.Header().Get("X-Cache") != "MISS" || w.Body.String() != "v2" {
		t.Fatalf("after the raced refresh: %q %s, want a fresh render", w.Body.String(), w.Header().Get("X-Cache"))
	}
}

// A refresh waiting for an older one drops the old entry when it gives up
// (its budget ended): the older one may not store, since it raced.
func TestAWaitingRefreshThatGivesUpDropsTheOldEntry(t *testing.T) {
	c := newCache(t, Config{})
	h := newVersioned()
	done := refreshInFlight(t, c, h)
	h.block = 0
	_, seq2 := c.BeginRefresh("T")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.Refresh(&discardWriter{h: http.Header{}}, httptest.NewRequest("GET", "/p", nil).WithContext(ctx), "/p", seq2, h)
	if w := get(t, c, h, "GET", "/p"); w.Header().Get("X-Cache") == "HIT" && w.Body.String() == "v1" {
		t.Fatal("the old entry is still served after the waiting refresh gave up")
	}
	close(h.release)
	<-done
}
