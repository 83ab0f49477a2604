package session

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The gate never lets more than its slots run, makes the others wait at
// most its wait, and refuses at once beyond 16 waiters per slot.
func TestGateBound(t *testing.T) {
	g := NewGate(2, 100*time.Millisecond)
	var peak atomic.Int64
	release := make(chan struct{})
	var held sync.WaitGroup
	held.Add(2)
	g.Observe(func(n int) {
		for {
			p := peak.Load()
			if int64(n) <= p || peak.CompareAndSwap(p, int64(n)) {
				break
			}
		}
	})
	for range 2 {
		go g.Do(context.Background(), func() { held.Done(); <-release })
	}
	held.Wait()

	var wg sync.WaitGroup
	var busy, ran atomic.Int64
	start := time.Now()
	for range 50 {
		wg.Go(func() {
			if err := g.Do(context.Background(), func() { ran.Add(1) }); errors.Is(err, ErrBusy) {
				busy.Add(1)
			}
		})
	}
	wg.Wait()
	if ran.Load() != 0 || busy.Load() != 50 {
		t.Errorf("with every slot held: %d ran, %d busy; want 0 and 50", ran.Load(), busy.Load())
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusing took %v; the wait is 100ms", d)
	}
	close(release)

	// A caller whose context ends stops waiting.
	g2 := NewGate(1, time.Hour)
	hold := make(chan struct{})
	entered := make(chan struct{})
	go g2.Do(context.Background(), func() { close(entered); <-hold })
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := g2.Do(ctx, func() {}); !errors.Is(err, ErrBusy) {
		t.Errorf("a caller whose context ended: %v, want ErrBusy", err)
	}
	// Too many waiters: the 17th per slot is refused at once.
	var waiters sync.WaitGroup
	for range 16 {
		waiters.Go(func() { g2.Do(context.Background(), func() {}) })
	}
	for g2.waiting.Load() < 16 {
		time.Sleep(time.Millisecond)
	}
	t0 := time.Now()
	if err := g2.Do(context.Background(), func() {}); !errors.Is(err, ErrBusy) || time.Since(t0) > time.Second {
		t.Errorf("the 17th waiter: %v after %v, want ErrBusy at once", err, time.Since(t0))
	}
	close(hold)
	waiters.Wait()

	// Under load, never more than the slots at once.
	g3 := NewGate(3, 5*time.Second)
	var now, max3 atomic.Int64
	var all sync.WaitGroup
	for range 64 {
		all.Go(func() {
			g3.Do(context.Background(), func() {
				n := now.Add(1)
				for {
					m := max3.Load()
					if n <= m || max3.CompareAndSwap(m, n) {
						break
					}
				}
				time.Sleep(time.Millisecond)
				now.Add(-1)
			})
		})
	}
	all.Wait()
	if max3.Load() > 3 || peak.Load() > 2 {
		t.Errorf("peak %d in a 3-slot gate, %d in a 2-slot gate", max3.Load(), peak.Load())
	}
}
