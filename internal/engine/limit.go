package engine

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

// Rendering is the one piece of work a page view may have to do that grows
// with what an author wrote: up to a second of CPU and a few hundred
// megabytes for the most hostile page the size limit allows. So every
// render and parse (view and REST misses, old revisions, previews, the link
// parse of a save or a links job), and every search (which reads the index
// and parses its hits' texts for their snippets, and which no cache
// serves), takes a slot of renderGate first: at most
// Concurrency at once (GOMAXPROCS by default), which bounds both the CPU
// they take from cached page views and the memory they hold together. A
// render that finds every slot taken waits its turn, in order, at most
// Wait; when the queue is full or the wait runs out the request is refused
// with 503 and Retry-After, never queued without bound.
//
// On top of that, one revision renders once however many requests want it
// at the same moment: the article view, REST page/{t}/html, ?redirect=no
// and ?oldid= all miss on the same revision after an edit or a purge, and
// share one render (flights, keyed by revision and renderer version).
// Previews are not shared: their text is the editor's own.

// RenderLimits configures the gate; zero values take the defaults.
type RenderLimits struct {
	Concurrency int           // renders at once (default GOMAXPROCS)
	Queue       int           // renders waiting for a slot (default 32 per slot)
	Wait        time.Duration // longest wait for a slot (default 10s)
}

type renderGate struct {
	slots   chan struct{}
	waiting atomic.Int64
	queue   int64
	wait    time.Duration
	refused atomic.Int64
}

func newRenderGate(l RenderLimits) *renderGate {
	if l.Concurrency <= 0 {
		l.Concurrency = defaultConcurrency()
	}
	if l.Queue <= 0 {
		l.Queue = 32 * l.Concurrency
	}
	if l.Wait <= 0 {
		l.Wait = 10 * time.Second
	}
	return &renderGate{slots: make(chan struct{}, l.Concurrency), queue: int64(l.Queue), wait: l.Wait}
}

// acquire takes a slot, waiting in line if need be; release gives it back.
func (g *renderGate) acquire(ctx context.Context) (release func(), err error) {
	release = func() { <-g.slots }
	select {
	case g.slots <- struct{}{}:
		return release, nil
	default:
	}
	if g.waiting.Add(1) > g.queue {
		g.waiting.Add(-1)
		g.refused.Add(1)
		return nil, g.busy("%d renders are already waiting", g.queue)
	}
	defer g.waiting.Add(-1)
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return release, nil
	case <-t.C:
		g.refused.Add(1)
		return nil, g.busy("no render slot came free in %v", g.wait)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (g *renderGate) busy(format string, args ...any) error {
	return &wiki.Error{Kind: wiki.KindUnavailable, RetryAfter: 5 * time.Second,
		Msg: "The wiki is busy rendering other pages and searches; try again in a few seconds.",
		Err: fmt.Errorf("engine: render refused: "+format, args...)}
}

// AcquireRenderSlot takes a slot of the render gate for other work that
// grows with what authors write (a diff of two large revisions), waiting
// as a render would; call release when done.
func (e *Engine) AcquireRenderSlot(ctx context.Context) (release func(), err error) {
	release, err = e.gate.acquire(ctx)
	if err != nil {
		return nil, err
	}
	return sync.OnceFunc(release), nil
}

// RenderStats is the gate's state, for metrics and tests.
type RenderStats struct {
	Running, Waiting int
	Refused          int64 // renders refused since start (queue full or wait over)
}

// RenderStats reports the render gate's state.
func (e *Engine) RenderStats() RenderStats {
	return RenderStats{Running: len(e.gate.slots), Waiting: int(e.gate.waiting.Load()), Refused: e.gate.refused.Load()}
}

// flightKey names one render that concurrent requests share: a revision,
// the renderer's version and the page's epoch (engine.go).
type flightKey struct {
	rev     int64
	version int
	epoch   uint64
}

// flight is a render under way; done is closed when r and err are set.
type flight struct {
	done chan struct{}
	r    *Rendered
	err  error
}

type flights struct {
	mu sync.Mutex
	m  map[flightKey]*flight
}

// do runs fn once for key among the callers that arrive while it runs; the
// others wait for its result (or for their own ctx). fn gets a context that
// the first caller's cancellation does not end: the others still want it.
func (fs *flights) do(ctx context.Context, key flightKey, fn func(context.Context) (*Rendered, error)) (*Rendered, error) {
	fs.mu.Lock()
	if fs.m == nil {
		fs.m = map[flightKey]*flight{}
	}
	if f, ok := fs.m[key]; ok {
		fs.mu.Unlock()
		select {
		case <-f.done:
			return f.r, f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &flight{done: make(chan struct{}), err: errNoResult}
	fs.m[key] = f
	fs.mu.Unlock()
	defer func() {
		fs.mu.Lock()
		delete(fs.m, key)
		fs.mu.Unlock()
		close(f.done)
	}()
	f.r, f.err = fn(context.WithoutCancel(ctx))
	return f.r, f.err
}

// renderFlight is the flight of revision revID's render by the renderer
// of version (its model's), begun at epoch.
func renderFlight(revID int64, version int, epoch uint64) flightKey {
	return flightKey{rev: revID, version: version, epoch: epoch}
}

// errNoResult is what the others get when a shared render panicked.
var errNoResult = fmt.Errorf("engine: the shared render of this revision failed")

func defaultConcurrency() int { return runtime.GOMAXPROCS(0) }
