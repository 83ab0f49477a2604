package edge

import (
	"sync"
	"sync/atomic"
)

// shard is one partition of the cache. Its lock guards the map, the S3-FIFO
// queues, the ghost queue, the tag index and the in-flight fills; hits take it
// for reading only.
//
// Eviction is S3-FIFO (Yang et al., SOSP 2023) weighted by bytes: new entries
// enter a small FIFO holding about 10% of the shard's bytes; an entry leaving it
// moves to the main FIFO if it was hit since it was inserted, otherwise it is
// evicted and its key hash remembered in a ghost FIFO, and a key found there is
// inserted straight into main. Main is a FIFO with second chances driven by a
// 2-bit access counter. A hit only increments that counter atomically, which
// is why a read lock suffices.
type shard struct {
	mu        sync.RWMutex
	m         map[string]*entry
	tags      map[string]map[*entry]struct{}
	flights   map[string]*flight
	refreshes map[string]*refresh

	small, main         list
	smallBytes, bytes   int64
	budget, smallBudget int64
	ghost               ghost

	// Read without the lock by Stats.
	nBytes, nEntries                                              atomic.Int64
	hits, misses, coalesced, stores, evictions, purged, refreshed atomic.Uint64

	_ [64]byte // keep neighbouring shards' hot words off this cache line
}

const maxFreq = 3

// touch records a hit for S3-FIFO.
func (e *entry) touch() {
	if f := e.freq.Load(); f < maxFreq {
		e.freq.CompareAndSwap(f, f+1)
	}
}

func newShard(budget int64) *shard {
	return &shard{
		m:           make(map[string]*entry),
		tags:        make(map[string]map[*entry]struct{}),
		flights:     make(map[string]*flight),
		refreshes:   make(map[string]*refresh),
		budget:      budget,
		smallBudget: max(budget/10, 1),
		ghost:       ghost{idx: make(map[uint64]uint64)},
	}
}

// insert stores e, replacing any entry with the same key, and evicts until the
// shard is within budget. A replacement keeps the old entry's standing (its
// queue and hit count): a page refreshed in place is as hot as it was. The
// caller holds the write lock and has checked that e fits in the budget.
func (s *shard) insert(e *entry) {
	hot := false
	if old := s.m[e.key]; old != nil {
		hot = old.inMain
		e.freq.Store(old.freq.Load())
		s.remove(old)
	}
	s.m[e.key] = e
	for _, t := range e.tags {
		set := s.tags[t]
		if set == nil {
			set = make(map[*entry]struct{}, 1)
			s.tags[t] = set
		}
		set[e] = struct{}{}
	}
	if s.ghost.take(e.hash) || hot {
		e.inMain = true
		s.main.pushFront(e)
	} else {
		s.small.pushFront(e)
		s.smallBytes += e.size
	}
	e.linked = true
	s.bytes += e.size
	for s.bytes > s.budget {
		s.evictOne()
	}
	s.stores.Add(1)
	s.publishSize()
}

func (s *shard) publishSize() {
	s.nBytes.Store(s.bytes)
	s.nEntries.Store(int64(len(s.m)))
}

func (s *shard) evictOne() {
	if s.smallBytes > s.smallBudget || s.main.tail == nil {
		e := s.small.tail
		s.small.unlink(e)
		s.smallBytes -= e.size
		if e.freq.Load() > 0 {
			e.freq.Store(0)
			e.inMain = true
			s.main.pushFront(e)
			return
		}
		s.ghost.add(e.hash, len(s.m))
		s.drop(e)
		s.evictions.Add(1)
		return
	}
	for {
		e := s.main.tail
		if f := e.freq.Load(); f > 0 {
			e.freq.Store(f - 1)
			s.main.moveToFront(e)
			continue
		}
		s.main.unlink(e)
		s.drop(e)
		s.evictions.Add(1)
		return
	}
}

// remove takes e out of the shard (purge, expiry, replacement).
func (s *shard) remove(e *entry) {
	if !e.linked {
		return
	}
	if e.inMain {
		s.main.unlink(e)
	} else {
		s.small.unlink(e)
		s.smallBytes -= e.size
	}
	s.drop(e)
}

// drop removes an entry already unlinked from its queue from the map and the
// tag index.
func (s *shard) drop(e *entry) {
	e.linked = false
	e.release()
	s.bytes -= e.size
	if s.m[e.key] == e {
		delete(s.m, e.key)
	}
	for _, t := range e.tags {
		if set := s.tags[t]; set != nil {
			delete(set, e)
			if len(set) == 0 {
				delete(s.tags, t)
			}
		}
	}
}

// list is an intrusive doubly linked FIFO: push at the front, evict at the tail.
type list struct{ head, tail *entry }

func (l *list) pushFront(e *entry) {
	e.prev, e.next = nil, l.head
	if l.head != nil {
		l.head.prev = e
	} else {
		l.tail = e
	}
	l.head = e
}

func (l *list) unlink(e *entry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		l.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		l.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

func (l *list) moveToFront(e *entry) {
	if l.head == e {
		return
	}
	l.unlink(e)
	l.pushFront(e)
}

// ghost remembers the hashes of keys recently evicted from the small queue,
// about as many as the shard holds entries.
type ghost struct {
	q    []uint64 // FIFO of hashes; q[head:] is live
	head int
	seq  uint64            // sequence number of q[head]
	idx  map[uint64]uint64 // hash → sequence number of its newest slot in q
}

func (g *ghost) add(h uint64, entries int) {
	g.q = append(g.q, h)
	g.idx[h] = g.seq + uint64(len(g.q)-g.head-1)
	limit := max(entries, 64)
	for len(g.q)-g.head > limit {
		old := g.q[g.head]
		if g.idx[old] == g.seq {
			delete(g.idx, old)
		}
		g.head++
		g.seq++
	}
	if g.head > 1024 && g.head*2 > len(g.q) {
		g.q = append(g.q[:0], g.q[g.head:]...)
		g.head = 0
	}
}

// take reports whether h is in the ghost queue and forgets it.
func (g *ghost) take(h uint64) bool {
	if _, ok := g.idx[h]; ok {
		delete(g.idx, h)
		return true
	}
	return false
}

func (g *ghost) clear() {
	g.q, g.head, g.seq = nil, 0, 0
	clear(g.idx)
}
