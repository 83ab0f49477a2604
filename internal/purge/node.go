package purge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

// Edge is the in-process response cache as invalidation uses it
// (edge.Cache).
type Edge interface {
	Purge(tags ...string)
	PurgeAll()
	Stale(tags ...string) []string
	BeginRefresh(tags ...string) (keys []string, seq uint64)
}

// FollowEvery is how often a Node reads the purge log for the other
// processes' events: the longest a page changed elsewhere stays cached here.
const FollowEvery = 50 * time.Millisecond

// followBatch is the most events a Node reads from the log at once.
const followBatch = 500

// NodeOptions configure a Node.
type NodeOptions struct {
	// Edge is this process's response cache; nil for a process without
	// one (a command that changes accounts), which only publishes.
	Edge Edge
	// Refresh renders the responses under keys again and swaps them in
	// (web.Server.Refresh); seq is from Edge.BeginRefresh.
	Refresh func(ctx context.Context, seq uint64, keys ...string)
	// Log is the purge log shared by the processes on the database.
	Log wiki.PurgeStore
	// Invalidate drops this process's in-memory renders of pages
	// (engine.Engine.Invalidate); Forget drops their stored renders too
	// (engine.Engine.Forget), for a link-colour change; ForgetAll drops
	// every render held in memory.
	Invalidate func(pageIDs ...int64)
	Forget     func(ctx context.Context, pageIDs ...int64)
	ForgetAll  func()
	// ForgetUsers drops the sessions of users held in memory
	// (web.Server.ForgetUsers).
	ForgetUsers func(userIDs ...int64)
	// ForgetSessions drops sessions held in memory
	// (web.Server.ForgetSessions).
	ForgetSessions func(sessionIDs ...string)
	Logger         *slog.Logger
	// Every is how often Follow reads the log; 0 is FollowEvery.
	Every time.Duration
}

// Node is this process's owner of invalidation. A change purges the local
// edge at once (a writer reads its own write) and is appended to the purge
// log, from which every other process on the database (a `wikid jobs run`
// beside `wikid serve`, other nodes) applies it within FollowEvery
// (Follow). It implements engine.Purger. Caches in front (Varnish, a CDN)
// are purged by cdnpurge jobs (CDN).
type Node struct {
	o      NodeOptions
	origin string
	last   atomic.Int64 // the last log event applied or skipped
	begun  atomic.Bool

	published, publishFailed, applied, gaps, readFailed atomic.Uint64
}

// Stats are the Node's counts since start.
type Stats struct {
	Published, PublishFailed uint64 // events appended, and appends that failed
	Applied                  uint64 // other processes' events applied here
	Gaps                     uint64 // times events were missed and everything dropped
	ReadFailed               uint64 // reads of the log that failed
}

// Stats returns the Node's counts since start.
func (n *Node) Stats() Stats {
	return Stats{Published: n.published.Load(), PublishFailed: n.publishFailed.Load(), Applied: n.applied.Load(),
		Gaps: n.gaps.Load(), ReadFailed: n.readFailed.Load()}
}

// NewNode returns a Node with a random origin name of its own.
func NewNode(o NodeOptions) *Node {
	if o.Every <= 0 {
		o.Every = FollowEvery
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Invalidate == nil {
		o.Invalidate = func(...int64) {}
	}
	if o.Forget == nil {
		o.Forget = func(context.Context, ...int64) {}
	}
	if o.ForgetAll == nil {
		o.ForgetAll = func() {}
	}
	if o.ForgetUsers == nil {
		o.ForgetUsers = func(...int64) {}
	}
	if o.ForgetSessions == nil {
		o.ForgetSessions = func(...string) {}
	}
	if o.Edge == nil {
		o.Edge = noEdge{}
	}
	if o.Refresh == nil {
		o.Refresh = func(context.Context, uint64, ...string) {}
	}
	var b [8]byte
	rand.Read(b[:])
	return &Node{o: o, origin: hex.EncodeToString(b[:])}
}

// Purge drops the responses that show titles, and the listings, here and
// (through the log) in the other processes, where the in-memory renders of
// pageIDs go too (the caller drops its own first).
func (n *Node) Purge(ctx context.Context, pageIDs []int64, titles ...wiki.Title) {
	n.o.Edge.Purge(Tags(titles...)...)
	n.publish(ctx, wiki.PurgeEvent{Titles: titles, PageIDs: pageIDs})
}

// Outbox returns what a change of titles (pages pageIDs, when they exist)
// carries into its transaction in place of Purge's append to the log: the
// event then reaches the other processes exactly when the change commits,
// also when this process dies right after the commit. PurgeHere does this
// process's part once it has.
func (n *Node) Outbox(pageIDs []int64, titles ...wiki.Title) []wiki.JobSpec {
	return []wiki.JobSpec{wiki.PurgeSpec(wiki.PurgeEvent{Origin: n.origin, Time: time.Now(), Titles: titles, PageIDs: pageIDs})}
}

// PurgeHere drops the responses showing titles, and the listings, from
// this process's edge: the part of a change whose event went into its
// transaction (Outbox).
func (n *Node) PurgeHere(ctx context.Context, titles ...wiki.Title) {
	n.o.Edge.Purge(Tags(titles...)...)
	n.published.Add(1)
}

// Stale is for changes that only restyle the responses showing titles (a
// link's colour): here they stay cached and served, but no render that
// started before the call is cached; it returns the titles that have
// cached responses here, which Refresh is to render again. The other
// processes drop theirs (they get no refresh job for them).
func (n *Node) Stale(ctx context.Context, pageIDs []int64, titles ...wiki.Title) []wiki.Title {
	stored := n.o.Edge.Stale(TitleTags(titles...)...)
	n.publish(ctx, wiki.PurgeEvent{Stale: true, Titles: titles, PageIDs: pageIDs})
	out := make([]wiki.Title, 0, len(stored))
	for _, t := range titles {
		if slices.Contains(stored, TitleTag(t)) {
			out = append(out, t)
		}
	}
	return out
}

// Refresh replaces this process's cached responses showing titles with
// ones rendered now, serving the old ones until then; when ctx ends, what
// is not refreshed yet is purged. The other processes drop theirs, and
// their renders of pageIDs (as for Stale): a refresh job runs in one
// process, and the responses another process marked stale would otherwise
// stay.
func (n *Node) Refresh(ctx context.Context, pageIDs []int64, titles ...wiki.Title) {
	keys, seq := n.o.Edge.BeginRefresh(TitleTags(titles...)...)
	n.o.Refresh(ctx, seq, keys...)
	n.publish(ctx, wiki.PurgeEvent{Stale: true, Titles: titles, PageIDs: pageIDs})
}

// AccountsChanged tells the other processes that the accounts of userIDs
// changed (group, block, password, sessions ended): they drop the
// sessions they hold in memory for them. titles are purged everywhere as
// by Purge (the log, when the change is logged). This process's own
// session cache is the caller's.
func (n *Node) AccountsChanged(ctx context.Context, userIDs []int64, titles ...wiki.Title) {
	if len(titles) > 0 {
		n.o.Edge.Purge(Tags(titles...)...)
	}
	n.publish(ctx, wiki.PurgeEvent{Users: userIDs, Titles: titles})
}

// UsersChanged has every process, this one included, read the accounts
// of userIDs again (a job changed what their user bars show).
func (n *Node) UsersChanged(ctx context.Context, userIDs ...int64) {
	if len(userIDs) == 0 {
		return
	}
	n.o.ForgetUsers(userIDs...)
	n.publish(ctx, wiki.PurgeEvent{Users: userIDs})
}

// SessionsEnded tells the other processes that sessions ended (signed
// out): they drop the copies they hold in memory. This process's own are
// the caller's.
func (n *Node) SessionsEnded(ctx context.Context, sessionIDs ...string) {
	n.publish(ctx, wiki.PurgeEvent{Sessions: sessionIDs})
}

// publish appends ev to the log. A failure is logged: the other processes
// then keep what ev purges until a later purge of the same pages.
func (n *Node) publish(ctx context.Context, ev wiki.PurgeEvent) {
	ev.Origin, ev.Time = n.origin, time.Now()
	// The change has committed: a client that went away meanwhile must not
	// keep the other processes from hearing of it.
	if err := n.o.Log.AppendPurges(context.WithoutCancel(ctx), []wiki.PurgeEvent{ev}); err != nil {
		n.publishFailed.Add(1)
		n.o.Logger.Error("purge: the other processes will not see this purge", "titles", len(ev.Titles), "err", err)
		return
	}
	n.published.Add(1)
}

// Begin makes the newest event of the log the last one this process has
// applied: what came before is not in its caches, which start empty. Call
// it before the process caches anything; Follow calls it until it works
// if it has not been.
func (n *Node) Begin(ctx context.Context) error {
	last, err := n.o.Log.LastPurge(ctx)
	if err != nil {
		return err
	}
	n.last.Store(last)
	n.begun.Store(true)
	return nil
}

// Listener is a purge log that says when events were appended
// (PostgreSQL's LISTEN/NOTIFY). ListenPurges calls wake once it listens,
// then for every append, until ctx ends (it then returns nil) or its
// connection fails (the error).
type Listener interface {
	ListenPurges(ctx context.Context, wake func()) error
}

// ListenEvery is how often Follow reads the log while a Listener is
// connected: notifications wake it at once, and the reads only bound how
// long a notification lost without an error could leave pages stale.
const ListenEvery = time.Second

// listenRetry is how long Follow waits before it listens again after the
// listening connection failed.
const listenRetry = time.Second

// Follow applies the other processes' events from the log until ctx
// ends: every NodeOptions.Every, or, when the log is a Listener, as soon
// as it says events were appended (and every ListenEvery). Events it
// missed (trimmed from the log while it could not read it) make it drop
// everything it has cached.
func (n *Node) Follow(ctx context.Context) {
	wake := make(chan struct{}, 1)
	var listening atomic.Bool
	if l, ok := n.o.Log.(Listener); ok {
		go n.listen(ctx, l, wake, &listening)
	}
	t := time.NewTicker(n.o.Every)
	defer t.Stop()
	var lastRead time.Time
	for {
		if !n.begun.Load() {
			if err := n.Begin(ctx); err != nil && ctx.Err() == nil {
				n.o.Logger.Warn("purge: reading the purge log", "err", err)
			}
		} else {
			n.Catchup(ctx)
			lastRead = time.Now()
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-wake:
			case <-t.C:
				if listening.Load() && time.Since(lastRead) < ListenEvery {
					continue
				}
			}
			break
		}
	}
}

// listen keeps a Listener connected, waking Follow for every
// notification and once after each (re)connection, since events appended
// while it was not listening sent notifications nobody heard.
func (n *Node) listen(ctx context.Context, l Listener, wake chan struct{}, listening *atomic.Bool) {
	poke := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	for ctx.Err() == nil {
		err := l.ListenPurges(ctx, func() {
			listening.Store(true)
			poke()
		})
		listening.Store(false)
		if ctx.Err() != nil {
			return
		}
		n.o.Logger.Warn("purge: listening for the purge log's notifications failed; reading it every "+n.o.Every.String()+" until listening again", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(listenRetry):
		}
		poke()
	}
}

// Catchup applies the events after the last one applied, and reports
// whether there were any. Follow calls it; tests call it to apply at once.
func (n *Node) Catchup(ctx context.Context) bool {
	any := false
	for {
		last := n.last.Load()
		evs, err := n.o.Log.PurgesAfter(ctx, last, followBatch)
		if err != nil {
			if ctx.Err() == nil {
				n.readFailed.Add(1)
				n.o.Logger.Warn("purge: reading the purge log", "err", err)
			}
			return any
		}
		if len(evs) == 0 {
			return any
		}
		any = true
		if evs[0].ID != last+1 {
			n.o.Logger.Warn("purge: events missing from the purge log (trimmed while this process could not read it): dropping every cached response",
				"after", last, "next", evs[0].ID)
			n.gaps.Add(1)
			n.o.Edge.PurgeAll()
			n.o.ForgetAll()
		}
		for i, ev := range evs {
			if i > 0 && ev.ID != evs[i-1].ID+1 {
				n.o.Logger.Warn("purge: events missing from the purge log: dropping every cached response", "after", evs[i-1].ID, "next", ev.ID)
				n.gaps.Add(1)
				n.o.Edge.PurgeAll()
				n.o.ForgetAll()
			}
			if ev.Origin != n.origin {
				n.apply(ctx, ev)
				n.applied.Add(1)
			}
		}
		n.last.Store(evs[len(evs)-1].ID)
		if len(evs) < followBatch {
			return any
		}
	}
}

// apply drops what another process's event invalidated.
func (n *Node) apply(ctx context.Context, ev wiki.PurgeEvent) {
	switch {
	case len(ev.PageIDs) == 0:
	case ev.Stale:
		// A render this process began before the link changed colour
		// may have been stored after the origin dropped the stored ones.
		n.o.Forget(ctx, ev.PageIDs...)
	default:
		// An edit, a move or a deletion: the page's new revision renders
		// anew; only what this process holds in memory goes.
		n.o.Invalidate(ev.PageIDs...)
	}
	if len(ev.Sessions) > 0 {
		n.o.ForgetSessions(ev.Sessions...)
	}
	if len(ev.Users) > 0 {
		n.o.ForgetUsers(ev.Users...)
	}
	if (len(ev.Users) > 0 || len(ev.Sessions) > 0) && len(ev.Titles) == 0 {
		return // accounts or sessions only: no page changed
	}
	if ev.Stale {
		n.o.Edge.Purge(TitleTags(ev.Titles...)...)
		return
	}
	n.o.Edge.Purge(Tags(ev.Titles...)...)
}

// noEdge is the Edge of a process without one.
type noEdge struct{}

func (noEdge) Purge(...string)                           {}
func (noEdge) PurgeAll()                                 {}
func (noEdge) Stale(...string) []string                  { return nil }
func (noEdge) BeginRefresh(...string) ([]string, uint64) { return nil, 0 }
