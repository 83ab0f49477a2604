package session

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"time"
)

// Gate bounds the password hashing (argon2id, 19 MiB and tens of
// milliseconds of a core each) that runs at once, so that a flood of logins
// or account creations costs the server a fixed amount of memory and CPU
// instead of one hash per request. A caller that finds every slot taken
// waits a short while; a caller that still finds none, or finds too many
// callers waiting already, is told the server is busy and never queues
// without bound.
type Gate struct {
	slots      chan struct{}
	wait       time.Duration
	waiting    atomic.Int64
	maxWaiting int64
	running    atomic.Int64
	observe    func(running int)
}

// ErrBusy is Gate.Do's answer when no slot came free in time.
var ErrBusy = errors.New("session: every password-hashing slot is busy")

// NewGate lets slots callers hash at once; others wait up to wait for a
// slot, at most 16 per slot.
func NewGate(slots int, wait time.Duration) *Gate {
	slots = max(slots, 1)
	return &Gate{slots: make(chan struct{}, slots), wait: wait, maxWaiting: 16 * int64(slots)}
}

// DefaultGate has two slots per usable CPU and a wait of 2 seconds.
func DefaultGate() *Gate { return NewGate(2*runtime.GOMAXPROCS(0), 2*time.Second) }

// Slots is how many callers may hash at once.
func (g *Gate) Slots() int { return cap(g.slots) }

// Observe calls f with the number of callers inside Do each time one
// enters (for tests and metrics). Set it before the gate is first used.
func (g *Gate) Observe(f func(running int)) { g.observe = f }

// Do runs f holding a slot. It returns ErrBusy, without running f, when
// no slot came free within the gate's wait, when too many callers wait
// already, or when ctx ended first.
func (g *Gate) Do(ctx context.Context, f func()) error {
	select {
	case g.slots <- struct{}{}:
	default:
		if g.waiting.Add(1) > g.maxWaiting {
			g.waiting.Add(-1)
			return ErrBusy
		}
		t := time.NewTimer(g.wait)
		var err error
		select {
		case g.slots <- struct{}{}:
		case <-t.C:
			err = ErrBusy
		case <-ctx.Done():
			err = ErrBusy
		}
		t.Stop()
		g.waiting.Add(-1)
		if err != nil {
			return err
		}
	}
	defer func() { <-g.slots }()
	n := g.running.Add(1)
	defer g.running.Add(-1)
	if g.observe != nil {
		g.observe(int(n))
	}
	f()
	return nil
}
