// Package cores shares a process's cores between a bulk import's writer
// and the work that feeds it.
//
// SQLite has one writer, and an import goes at its pace: the pages of a
// batch are written in one transaction while the next batches are parsed,
// their search segment built and older segments merged. Left to the Go
// scheduler, that work took its fair share of the cores from the writer:
// at 100,000 pages on two cores, the writer's transactions took twice
// their CPU time, and the import 70 s where it takes 61 s when the writer
// keeps a core of its own. Feeding work takes a core piece by piece
// (Acquire, Release); while a writer runs (Writer), one core fewer is
// handed out, never fewer than one.
//
// A nil *Gate hands out cores without limit.
package cores

import "sync"

// Gate hands out cores.
type Gate struct {
	mu      sync.Mutex
	free    sync.Cond
	cores   int // cores to hand out when no writer runs
	held    int // handed out
	writers int // running
}

// New returns a gate for n cores (runtime.GOMAXPROCS).
func New(n int) *Gate {
	g := &Gate{cores: max(1, n)}
	g.free.L = &g.mu
	return g
}

func (g *Gate) limit() int { return max(1, g.cores-g.writers) }

// Acquire waits for a core, for a piece of work that feeds a writer:
// short (a page's parse, a batch's search segment), so that a writer
// that starts meanwhile soon has its core.
func (g *Gate) Acquire() {
	if g == nil {
		return
	}
	g.mu.Lock()
	for g.held >= g.limit() {
		g.free.Wait()
	}
	g.held++
	g.mu.Unlock()
}

// Release gives back a core Acquire handed out.
func (g *Gate) Release() {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.held--
	g.mu.Unlock()
	g.free.Signal()
}

// Writer keeps a core for the caller, a writer, until done is called:
// the cores already handed out stay so until their work ends.
func (g *Gate) Writer() (done func()) {
	if g == nil {
		return func() {}
	}
	g.mu.Lock()
	g.writers++
	g.mu.Unlock()
	return sync.OnceFunc(func() {
		g.mu.Lock()
		g.writers--
		g.mu.Unlock()
		g.free.Broadcast()
	})
}
