package purge_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/purge"
	"github.com/wikid/wikid/internal/store/sqlite/sqlitetest"
	"github.com/wikid/wikid/internal/wiki"
)

// fakeEdge records what a Node does to its process's cache.
type fakeEdge struct {
	mu     sync.Mutex
	purged []string
	stale  []string
	all    int
	cached []string // tags Stale reports as stored
}

func (e *fakeEdge) Purge(tags ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.purged = append(e.purged, tags...)
}

func (e *fakeEdge) PurgeAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all++
}

func (e *fakeEdge) Stale(tags ...string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stale = append(e.stale, tags...)
	var out []string
	for _, t := range tags {
		if slices.Contains(e.cached, t) {
			out = append(out, t)
		}
	}
	return out
}

func (e *fakeEdge) BeginRefresh(tags ...string) ([]string, uint64) { return nil, 0 }

// take returns what was purged since the last call, and the PurgeAll count.
func (e *fakeEdge) take() ([]string, []string, int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, s, a := e.purged, e.stale, e.all
	e.purged, e.stale, e.all = nil, nil, 0
	slices.Sort(p)
	return p, s, a
}

// proc is one process's Node with what it did to its caches.
type proc struct {
	node    *purge.Node
	edge    *fakeEdge
	mu      sync.Mutex
	forgot  []int64 // pages whose stored and in-memory renders went
	invalid []int64 // pages whose in-memory renders went
	forgets int     // ForgetAll calls
	users   []int64
	ended   []string
}

func newProc(db wiki.PurgeStore, every ...time.Duration) *proc {
	p := &proc{edge: &fakeEdge{}}
	p.node = purge.NewNode(purge.NodeOptions{
		Every: append(every, 0)[0],
		Edge:  p.edge, Log: db, Refresh: func(context.Context, uint64, ...string) {},
		Invalidate: func(ids ...int64) {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.invalid = append(p.invalid, ids...)
		},
		Forget: func(_ context.Context, ids ...int64) {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.forgot = append(p.forgot, ids...)
		},
		ForgetAll: func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.forgets++
		},
		ForgetUsers: func(ids ...int64) {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.users = append(p.users, ids...)
		},
		ForgetSessions: func(ids ...string) {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.ended = append(p.ended, ids...)
		},
	})
	return p
}

func (p *proc) takeForgot() (forgot, invalid []int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, i := p.forgot, p.invalid
	p.forgot, p.invalid = nil, nil
	return f, i
}

func sorted(s ...string) []string { slices.Sort(s); return s }

// A purge in one process reaches the other through the log: the page's
// responses and the listings go, and its renders; a process never applies
// its own events twice.
func TestNodesShareInvalidations(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	a, b := newProc(db), newProc(db)
	followAt := func(p *proc) {
		t.Helper()
		if err := p.node.Begin(ctx); err != nil {
			t.Fatal(err)
		}
		fctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); p.node.Follow(fctx) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	// An event before a process starts following is not for it: its
	// caches started empty.
	a.node.Purge(ctx, []int64{9}, "Before")
	a.edge.take()
	followAt(a)
	followAt(b)

	a.node.Purge(ctx, []int64{1}, "Created page", "Category:Things")
	if p, _, _ := a.edge.take(); !slices.Equal(p, sorted("Created page", "Category:Things", purge.ListsTag)) {
		t.Fatalf("own edge purged %q, want the page, its category and the listings", p)
	}
	var got []string
	waitFor(t, func() bool {
		p, _, _ := b.edge.take()
		got = append(got, p...)
		return len(got) > 0
	})
	if !slices.Equal(sorted(got...), sorted("Created page", "Category:Things", purge.ListsTag)) {
		t.Fatalf("the other process purged %q", got)
	}
	// An edit: the page's new revision renders anew, so only what the
	// other process holds in memory goes.
	if f, i := b.takeForgot(); len(f) != 0 || !slices.Equal(i, []int64{1}) {
		t.Fatalf("the other process forgot the stored renders of %v and the in-memory ones of %v, want none and [1]", f, i)
	}

	// A link-colour change: the other process drops the pages' responses
	// (it gets no refresh job for them), not the listings.
	a.edge.cached = []string{"Linking 1"}
	cached := a.node.Stale(ctx, []int64{3, 4}, "Linking 1", "Linking 2")
	if !slices.Equal(cached, []wiki.Title{"Linking 1"}) {
		t.Fatalf("Stale reported %q cached, want the one in the edge", cached)
	}
	got = nil
	waitFor(t, func() bool {
		p, _, _ := b.edge.take()
		got = append(got, p...)
		return len(got) > 0
	})
	if !slices.Equal(sorted(got...), sorted("Linking 1", "Linking 2")) {
		t.Fatalf("after a stale event the other process purged %q", got)
	}
	if f, i := b.takeForgot(); !slices.Equal(f, []int64{3, 4}) || len(i) != 0 {
		t.Fatalf("after a stale event the other process forgot the renders of %v (in memory only: %v), want [3 4] stored and in memory", f, i)
	}

	// A refresh run by one process's job drops the other's stale copies.
	b.node.Refresh(ctx, nil, "Linking 1")
	got = nil
	waitFor(t, func() bool {
		p, _, _ := a.edge.take()
		got = append(got, p...)
		return len(got) > 0
	})
	if !slices.Equal(got, []string{"Linking 1"}) {
		t.Fatalf("after another process's refresh: purged %q", got)
	}

	if st := a.node.Stats(); st.Published != 3 || st.PublishFailed != 0 || st.Applied != 1 {
		t.Fatalf("A's counts %+v, want 3 published (Before, Created page, Stale), none failed, B's refresh applied", st)
	}
	if st := b.node.Stats(); st.Published != 1 || st.Applied != 2 || st.Gaps != 0 {
		t.Fatalf("B's counts %+v, want its refresh published and A's 2 events after its start applied", st)
	}
	// Nothing came back to its origin.
	time.Sleep(3 * purge.FollowEvery)
	if p, _, all := a.edge.take(); len(p) != 0 || all != 0 {
		t.Fatalf("the origin applied its own events: %q", p)
	}
	if f, i := a.takeForgot(); len(f)+len(i) != 0 {
		t.Fatalf("the origin forgot %v and %v on its own events", f, i)
	}
}

// An account change or a sign-out made elsewhere (the command line, another
// node) reaches the processes that hold the sessions; with no title, no
// page is purged.
func TestAccountChangesReachTheOtherProcesses(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	server := newProc(db)
	if err := server.node.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	cli := purge.NewNode(purge.NodeOptions{Log: db}) // no edge
	cli.AccountsChanged(ctx, []int64{42})
	cli.AccountsChanged(ctx, []int64{43}, purge.LogTitle)
	cli.SessionsEnded(ctx, "5e55", "10ff")
	server.node.Catchup(ctx)
	if !slices.Equal(server.ended, []string{"5e55", "10ff"}) {
		t.Fatalf("sessions %v dropped, want the two that ended", server.ended)
	}
	if !slices.Equal(server.users, []int64{42, 43}) {
		t.Fatalf("sessions of users %v dropped, want [42 43]", server.users)
	}
	if p, _, _ := server.edge.take(); !slices.Equal(p, sorted(string(purge.LogTitle), purge.ListsTag)) {
		t.Fatalf("purged %q, want the log page (and the listings) only", p)
	}
}

// A process that missed events (trimmed from the log while it was not
// reading it) drops everything it has cached.
func TestNodeDropsAllAfterAGap(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	a, b := newProc(db), newProc(db)
	a.node.Purge(ctx, nil, "First")
	b.node.Catchup(ctx) // b is up to date
	b.edge.take()
	for _, title := range []wiki.Title{"Second", "Third", "Fourth"} {
		a.node.Purge(ctx, nil, title)
	}
	if _, err := db.TrimPurges(ctx, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	a.node.Purge(ctx, nil, "Fifth")
	b.node.Catchup(ctx)
	p, _, all := b.edge.take()
	if st := b.node.Stats(); st.Gaps != 1 {
		t.Fatalf("B's counts %+v, want one gap", st)
	}
	if all != 1 || b.forgets != 1 {
		t.Fatalf("after a gap: %d PurgeAll and %d ForgetAll, want 1 and 1", all, b.forgets)
	}
	if !slices.Contains(p, "Fifth") || slices.Contains(p, "Second") {
		t.Fatalf("after a gap: purged %q, want the events still in the log", p)
	}
	// Caught up: no gap any more.
	a.node.Purge(ctx, nil, "Sixth")
	b.node.Catchup(ctx)
	if _, _, all := b.edge.take(); all != 0 {
		t.Fatal("PurgeAll again without a gap")
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("not within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// listeningLog is a purge log that notifies its listeners of appends, as
// PostgreSQL's LISTEN/NOTIFY does, and whose listening connection can be
// made to fail.
type listeningLog struct {
	wiki.PurgeStore
	mu      sync.Mutex
	wakes   []func()
	fail    chan error
	listens atomic.Int32
}

func (l *listeningLog) AppendPurges(ctx context.Context, evs []wiki.PurgeEvent) error {
	if err := l.PurgeStore.AppendPurges(ctx, evs); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range l.wakes {
		w()
	}
	return nil
}

func (l *listeningLog) ListenPurges(ctx context.Context, wake func()) error {
	l.listens.Add(1)
	l.mu.Lock()
	i := len(l.wakes)
	l.wakes = append(l.wakes, wake)
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.wakes[i] = func() {}
		l.mu.Unlock()
	}()
	wake()
	select {
	case <-ctx.Done():
		return nil
	case err := <-l.fail:
		return err
	}
}

// With a log that notifies, a process applies another's event when told,
// not at its next read; after its listening connection failed, it listens
// again and applies what was appended meanwhile (nobody heard of it).
func TestNodeWakesOnNotification(t *testing.T) {
	ctx := context.Background()
	log := &listeningLog{PurgeStore: sqlitetest.Open(t), fail: make(chan error)}
	a, b := newProc(log), newProc(log, time.Hour)
	if err := b.node.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); b.node.Follow(fctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, func() bool { return log.listens.Load() == 1 })

	a.node.Purge(ctx, []int64{1}, "Told")
	waitFor(t, func() bool { return b.node.Stats().Applied == 1 })

	log.fail <- errors.New("connection reset")
	a.node.Purge(ctx, []int64{2}, "Unheard") // while nobody listens
	waitFor(t, func() bool { return log.listens.Load() == 2 })
	waitFor(t, func() bool { return b.node.Stats().Applied == 2 })
	if _, invalid := b.takeForgot(); !slices.Equal(invalid, []int64{1, 2}) {
		t.Fatalf("renders dropped for pages %v, want [1 2]", invalid)
	}
}

// A change's event goes into its transaction (Outbox, appended by the
// store with the change) and the origin purges only its own edge
// (PurgeHere): the other process applies the event, the origin skips it.
func TestOutboxEventReachesTheOthersOnly(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	a, b := newProc(db), newProc(db)
	for _, p := range []*proc{a, b} {
		if err := p.node.Begin(ctx); err != nil {
			t.Fatal(err)
		}
	}
	specs := a.node.Outbox([]int64{4}, "Edited")
	if _, err := db.SavePage(ctx, wiki.SaveRequest{Title: "Edited", Text: "x", UserName: "U", Jobs: specs}); err != nil {
		t.Fatal(err)
	}
	a.node.PurgeHere(ctx, "Edited")
	if purged, _, _ := a.edge.take(); !slices.Equal(purged, sorted(purge.Tags("Edited")...)) {
		t.Fatalf("origin purged %v, want the page's tags", purged)
	}
	a.node.Catchup(ctx)
	b.node.Catchup(ctx)
	if st := a.node.Stats(); st.Applied != 0 {
		t.Fatalf("the origin applied its own event (%d)", st.Applied)
	}
	if purged, _, _ := b.edge.take(); !slices.Equal(purged, sorted(purge.Tags("Edited")...)) {
		t.Fatalf("the other process purged %v, want the page's tags", purged)
	}
	if _, invalid := b.takeForgot(); !slices.Equal(invalid, []int64{4}) {
		t.Fatalf("the other process dropped the renders of %v, want [4]", invalid)
	}
}
