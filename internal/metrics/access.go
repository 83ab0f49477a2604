package metrics

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// AccessBatchDelay is how long the access log gathers lines after the
// first of a batch before writing them.
const AccessBatchDelay = 20 * time.Millisecond

// AccessLog writes access lines in batches, off the request path. Log
// appends the entry to a buffer under a lock: no allocation, no system
// call, and no goroutine wake-up but for the first entry of a batch. The
// writer waits AccessBatchDelay after that first entry, formats the batch
// as slog text lines (the format of the process log, the entry's time as
// the line's) and writes it with one call. When the buffer is full
// (a slow disk), entries are dropped and counted, never waited for.
type AccessLog struct {
	out io.Writer

	mu      sync.Mutex
	pending []Entry
	max     int
	closed  bool

	wake    chan struct{} // holds one signal at most
	stop    chan struct{}
	done    chan struct{}
	dropped atomic.Int64
}

// NewAccessLog starts the writer of lines to out, holding at most buffer
// entries between two writes; Close stops it after writing what is held.
func NewAccessLog(out io.Writer, buffer int) *AccessLog {
	a := &AccessLog{
		out: out, max: max(buffer, 1),
		pending: make([]Entry, 0, 64),
		wake:    make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go a.run()
	return a
}

// Log holds e for the next batch, without blocking.
func (a *AccessLog) Log(e Entry) {
	a.mu.Lock()
	if a.closed || len(a.pending) >= a.max {
		a.mu.Unlock()
		a.dropped.Add(1)
		return
	}
	a.pending = append(a.pending, e)
	first := len(a.pending) == 1
	a.mu.Unlock()
	if first {
		select {
		case a.wake <- struct{}{}:
		default:
		}
	}
}

// Dropped is how many entries were dropped because the writer fell behind.
func (a *AccessLog) Dropped() int64 { return a.dropped.Load() }

func (a *AccessLog) run() {
	defer close(a.done)
	var buf bytes.Buffer
	h := slog.NewTextHandler(&buf, nil)
	spare := make([]Entry, 0, 64) // the other buffer, while Log fills pending
	delay := time.NewTimer(0)
	<-delay.C
	for {
		stopping := false
		select {
		case <-a.wake:
			delay.Reset(AccessBatchDelay)
			select {
			case <-delay.C:
			case <-a.stop:
				stopping = true
			}
		case <-a.stop:
			stopping = true
		}
		a.mu.Lock()
		batch := a.pending
		a.pending = spare[:0]
		a.mu.Unlock()
		for _, e := range batch {
			h.Handle(context.Background(), e.record())
		}
		if buf.Len() > 0 {
			a.out.Write(buf.Bytes())
			buf.Reset()
		}
		clear(batch) // the entries' strings can go
		spare = batch
		if stopping {
			return
		}
	}
}

func (e Entry) record() slog.Record {
	r := slog.NewRecord(e.Time, slog.LevelInfo, "access", 0)
	r.AddAttrs(slog.String("method", e.Method), slog.String("path", e.Path), slog.Int("status", e.Status),
		slog.Int("bytes", e.Bytes), slog.String("dur", strconv.FormatFloat(e.Duration.Seconds()*1000, 'f', 3, 64)+"ms"),
		slog.String("cache", e.Cache), slog.String("remote", e.Remote))
	return r
}

// Close writes what is held and stops the writer; later entries are
// dropped.
func (a *AccessLog) Close() {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	a.closed = true
	a.mu.Unlock()
	close(a.stop)
	<-a.done
}
