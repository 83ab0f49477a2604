package metrics

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// AccessBatchDelay is how long the access log gathers lines after the
// first of a batch before writing them.
const AccessBatchDelay = 20 * time.Millisecond

// AccessLog writes access lines in batches, off the request path. Log
// appends the entry to one of a few buffers, picked at random, under that
// buffer's lock: no allocation, no system call, no lock that every request
// takes, and no goroutine wake-up but for the first entry of a batch. The
// writer waits AccessBatchDelay after that first entry, takes every
// buffer, orders the entries by time, formats them as slog text lines
// (the format of the process log, the entry's time as the line's) and
// writes them with one call. When a buffer is full (a slow disk), entries
// are dropped and counted, never waited for.
type AccessLog struct {
	out io.Writer

	shards [accessShards]accessShard

	wake    chan struct{} // holds one signal at most
	stop    chan struct{}
	done    chan struct{}
	dropped atomic.Int64
}

// accessShards is the number of buffers Log spreads entries over.
const accessShards = 8

type accessShard struct {
	mu      sync.Mutex
	pending []Entry
	max     int
	closed  bool
	_       [64]byte // keep neighbouring shards' locks off this cache line
}

// NewAccessLog starts the writer of lines to out, holding about buffer
// entries between two writes (each of its buffers holds an equal share); Close stops it after writing what is held.
func NewAccessLog(out io.Writer, buffer int) *AccessLog {
	a := &AccessLog{
		out:  out,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	for i := range a.shards {
		a.shards[i].max = max((buffer+accessShards-1)/accessShards, 1)
		a.shards[i].pending = make([]Entry, 0, 16)
	}
	go a.run()
	return a
}

// Log holds e for the next batch, without blocking.
func (a *AccessLog) Log(e Entry) {
	sh := &a.shards[rand.Uint32N(accessShards)]
	sh.mu.Lock()
	if sh.closed || len(sh.pending) >= sh.max {
		sh.mu.Unlock()
		a.dropped.Add(1)
		return
	}
	sh.pending = append(sh.pending, e)
	first := len(sh.pending) == 1
	sh.mu.Unlock()
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
	var spare [accessShards][]Entry // the other buffers, while Log fills pending
	var batch []Entry
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
		batch = batch[:0]
		for i := range a.shards {
			sh := &a.shards[i]
			sh.mu.Lock()
			got := sh.pending
			sh.pending = spare[i][:0]
			sh.mu.Unlock()
			batch = append(batch, got...)
			clear(got) // the entries' strings can go
			spare[i] = got
		}
		slices.SortStableFunc(batch, func(x, y Entry) int { return x.Time.Compare(y.Time) })
		for _, e := range batch {
			h.Handle(context.Background(), e.record())
		}
		if buf.Len() > 0 {
			a.out.Write(buf.Bytes())
			buf.Reset()
		}
		clear(batch)
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
	already := false
	for i := range a.shards {
		sh := &a.shards[i]
		sh.mu.Lock()
		already = sh.closed
		sh.closed = true
		sh.mu.Unlock()
	}
	if already {
		return
	}
	close(a.stop)
	<-a.done
}
