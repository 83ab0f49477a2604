package cores

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// run starts n workers that each take a core, note how many hold one at
// once, and wait on hold before giving it back; it returns once want
// workers hold a core (and no more can), with the most seen and a
// function that lets them all finish.
func run(t *testing.T, g *Gate, n, want int) (most func() int64, finish func()) {
	t.Helper()
	var holding, peak atomic.Int64
	hold := make(chan struct{})
	took := make(chan struct{}, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			g.Acquire()
			h := holding.Add(1)
			for p := peak.Load(); h > p && !peak.CompareAndSwap(p, h); p = peak.Load() {
			}
			took <- struct{}{}
			<-hold
			holding.Add(-1)
			g.Release()
		})
	}
	for range want {
		<-took
	}
	return peak.Load, func() {
		close(hold)
		wg.Wait()
		if got := len(took); got != n-want {
			t.Errorf("%d more workers took a core once the first %d let go, want %d", got, want, n-want)
		}
	}
}

func TestGateHandsOutItsCores(t *testing.T) {
	g := New(3)
	most, finish := run(t, g, 8, 3)
	g.mu.Lock()
	held := g.held
	g.mu.Unlock()
	if held != 3 {
		t.Errorf("%d cores handed out, want 3", held)
	}
	finish()
	if m := most(); m > 3 {
		t.Errorf("%d workers held a core at once, want at most 3", m)
	}
}

func TestGateKeepsACoreForAWriter(t *testing.T) {
	g := New(3)
	done := g.Writer()
	most, finish := run(t, g, 6, 2)
	finish()
	if m := most(); m > 2 {
		t.Errorf("%d workers held a core at once beside a writer, want at most 2", m)
	}
	done()
	done() // a second call does nothing
	most, finish = run(t, g, 6, 3)
	finish()
	if m := most(); m > 3 {
		t.Errorf("%d workers held a core at once once the writer was done, want at most 3", m)
	}
}

func TestGateNeverHandsOutNone(t *testing.T) {
	g := New(2)
	done1, done2 := g.Writer(), g.Writer()
	defer done1()
	defer done2()
	most, finish := run(t, g, 4, 1)
	finish()
	if m := most(); m != 1 {
		t.Errorf("%d workers held a core at once beside two writers on two cores, want 1", m)
	}
}

func TestNilGateDoesNotLimit(t *testing.T) {
	var g *Gate
	defer g.Writer()()
	most, finish := run(t, g, 5, 5)
	finish()
	if m := most(); m != 5 {
		t.Errorf("%d workers held a core at once, want all 5", m)
	}
}

// waiting waits until n callers wait in Acquire.
func waiting(t *testing.T, g *Gate, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		g.mu.Lock()
		w := len(g.waiting)
		g.mu.Unlock()
		if w == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d callers wait in Acquire, want %d", w, n)
		}
	}
}

// A worker that gives its core back and asks again at once waits behind
// one that was waiting already: the writer's segment build is not starved
// by the next batch's parses.
func TestGateFirstComeFirstServed(t *testing.T) {
	g := New(2)
	done := g.Writer() // one core left
	defer done()
	g.Acquire() // a parse worker's
	order := make(chan string, 2)
	go func() {
		g.Acquire()
		order <- "build"
		g.Release()
	}()
	waiting(t, g, 1)
	g.Release() // the parse is done...
	g.Acquire() // ...and the next one asks at once
	order <- "parse"
	g.Release()
	if first := <-order; first != "build" {
		t.Errorf("%s got the core first, want the build that waited for it", first)
	}
}

// A writer that is done hands its core to a waiter.
func TestGateWriterDoneHandsOff(t *testing.T) {
	g := New(2)
	done := g.Writer()
	g.Acquire()
	got := make(chan struct{})
	go func() { g.Acquire(); close(got) }()
	waiting(t, g, 1)
	done()
	<-got // blocks forever (the test times out) if the core is not handed over
	g.Release()
	g.Release()
}
