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
// (Acquire, Release), first come, first served; while a writer runs
// (Writer), one core fewer is handed out, never fewer than one.
//
// A nil *Gate hands out cores without limit.
package cores

import "sync"

// Gate hands out cores.
type Gate struct {
	mu      sync.Mutex
	cores   int             // cores to hand out when no writer runs
	held    int             // handed out
	writers int             // running
	waiting []chan struct{} // Acquire calls waiting, oldest first
}

// New returns a gate for n cores (runtime.GOMAXPROCS).
func New(n int) *Gate { return &Gate{cores: max(1, n)} }

func (g *Gate) limit() int { return max(1, g.cores-g.writers) }

// Acquire waits for a core, for a piece of work that feeds a writer:
// short (a page's parse, a batch's search segment), so that a writer
// that starts meanwhile soon has its core. Cores go to the callers in the
// order they asked: a worker that gives its core back and asks again
// waits behind those already waiting (a batch's segment build, which the
// writer waits for, behind the next batch's parses).
func (g *Gate) Acquire() {
	if g == nil {
		return
	}
	g.mu.Lock()
	if len(g.waiting) == 0 && g.held < g.limit() {
		g.held++
		g.mu.Unlock()
		return
	}
	turn := make(chan struct{})
	g.waiting = append(g.waiting, turn)
	g.mu.Unlock()
	<-turn // handed a core (handOff counted it)
}

// Release gives back a core Acquire handed out.
func (g *Gate) Release() {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.held--
	g.handOff()
	g.mu.Unlock()
}

// handOff gives the cores there are to the oldest waiters.
func (g *Gate) handOff() {
	for len(g.waiting) > 0 && g.held < g.limit() {
		g.held++
		close(g.waiting[0])
		g.waiting = g.waiting[1:]
	}
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
		g.handOff()
		g.mu.Unlock()
	})
}
