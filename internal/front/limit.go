package front

import (
	"net"
	"net/http"
	"slices"
	"time"
)

// The connection cap. Every client connection holds a file descriptor, a
// goroutine and buffers; idle or slowly-sending clients (slowloris) cost
// nothing to keep open on their side, so without a cap enough of them run
// the process out of descriptors and the wiki stops answering everyone.
//
// Accounting happens when a connection is accepted, handed off or closed,
// and when net/http reports a state change, never per fast-path request:
// the per-request state changes are atomics on the connection itself
// (conn.next), and only admit, handOver, dropHandedOff and untrack take
// s.mu. makeRoom runs under s.mu when a new connection finds the cap
// reached; it scans every connection, so it picks up to evictBatch of
// them at a time and, when none can go, stops scanning for noRoomPause.
// The victims are closed after s.mu is released, and not by the accept
// loop: closing a socket that another goroutine is reading waits until
// that goroutine has run and let go of the descriptor, and an accept loop
// that waited for that on every eviction would fall behind a flood of new
// connections, so that a reader's connection would wait in the kernel's
// accept queue behind them. At most maxClosing victims are being closed
// at a time: the process holds at most the cap plus that many client
// descriptors.

// maxConnsCeiling bounds the derived cap. A client connection costs some
// 20–40 KB (goroutine stack, the front's read buffer, net/http's buffers
// once handed off), so 10,000 of them is a few hundred MB: more than one
// wiki node should hold open by default. Set max_conns to go beyond.
const maxConnsCeiling = 10000

// maxConnsFloor is the least derived cap, for absurdly small limits.
const maxConnsFloor = 16

// maxConnsFor derives the connection cap from the soft RLIMIT_NOFILE.
//
// A quarter of the limit, and at least 64 descriptors, is kept for what is
// not a client connection: the standard streams, the runtime's poller, the
// listeners (site, operator endpoints), SQLite's files (database, WAL and
// shared memory for each pooled connection), log files, and outgoing
// connections (job workers, CDN purges, a PostgreSQL pool). Those grow
// with the deployment rather than with traffic, so a fixed reserve would
// be too small where the limit is low (hard limits of 1,024 or 4,096 are
// still common), and the ceiling makes the share moot for high limits (a
// systemd service gets 524,288). 1,024 gives 768 connections; 20,000 gives
// 10,000.
func maxConnsFor(nofile uint64) int {
	reserve := max(64, nofile/4)
	if nofile < reserve+maxConnsFloor {
		return maxConnsFloor
	}
	return int(min(nofile-reserve, maxConnsCeiling))
}

// DefaultMaxConns is the connection cap for the process's current
// file-descriptor limit (the soft RLIMIT_NOFILE, which Go raises to the hard
// limit at start on Unix), or the ceiling of 10,000 where there is none to
// read.
func DefaultMaxConns() int {
	n, ok := fileLimit()
	if !ok {
		return maxConnsCeiling
	}
	return maxConnsFor(n)
}

// ConnStats counts client connections and what the cap did to them. The
// counters only grow.
type ConnStats struct {
	Open int // client connections open now, fast-path and handed off
	Max  int // the cap (Options.MaxConns)

	// Refused counts new connections closed at once: the cap was reached
	// and every open connection was answering a request (as of the last
	// scan; see noRoomPause).
	Refused uint64
	// IdleEvicted counts keep-alive connections closed to make room.
	IdleEvicted uint64
	// SlowHeadEvicted counts connections closed to make room while their
	// request head was due and incomplete (including new connections that
	// had sent nothing yet).
	SlowHeadEvicted uint64
}

// ConnStats reports the open connections and the cap's counters.
func (s *Server) ConnStats() ConnStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ConnStats{
		Open: len(s.conns) + len(s.handed), Max: s.maxConns,
		Refused: s.evict.refused, IdleEvicted: s.evict.idle, SlowHeadEvicted: s.evict.heads,
	}
}

// evictState is the connection cap's part of Server, guarded by s.mu
// (closing is the accept loop's alone).
type evictState struct {
	refused, idle, heads uint64     // ConnStats counters
	noRoomUntil          time.Time  // after a fruitless scan: refuse without scanning until then
	victims              []victim   // scratch for makeRoom
	closing              []net.Conn // scratch for admit: the connections makeRoom picked
}

// maxClosing bounds the evicted connections being closed at a time (and
// so evictBatch, which must fit in Server.closeSlots).
const maxClosing = 32

// noRoomPause is how long a new connection at the cap is refused without
// a scan after a scan found every connection busy: a flood of connections
// while all are answering must not cost a scan of all of them each.
const noRoomPause = 10 * time.Millisecond

// evictBatch is the most connections makeRoom closes in one scan: enough
// that a flood of new connections does not rescan every open connection
// on each accept, few enough that one newcomer does not shed many
// clients. nginx drains reusable connections in batches of up to 32 for
// the same reason.
func (s *Server) evictBatch() int { return min(maxClosing, max(1, s.maxConns/64)) }

// admit counts c, accepted at now, making room for it at the cap. It
// reports false if c is to be closed at once (shutting down, or no room).
// Only the accept loop calls it.
func (s *Server) admit(c *conn, now time.Time) bool {
	s.mu.Lock()
	if s.shutting.Load() {
		s.mu.Unlock()
		return false
	}
	victims := s.evict.closing[:0]
	if len(s.conns)+len(s.handed) >= s.maxConns {
		victims = s.makeRoom(now, victims)
		if len(victims) == 0 {
			s.evict.refused++
			s.mu.Unlock()
			return false
		}
	}
	c.since.Store(now.UnixNano())
	c.state.Store(stateNew)
	s.conns[c] = struct{}{}
	s.mu.Unlock()

	if len(victims) > 0 {
		s.closeVictims(victims)
		clear(victims)
		s.evict.closing = victims[:0]
	}
	return true
}

// closeVictims closes the connections makeRoom picked. Every victim's
// reader is woken at once (a read deadline in the past fails its read), and
// a goroutine closes them: each Close waits for its reader to let go of
// the descriptor, and the readers run meanwhile. The accept loop waits here
// only when maxClosing victims are still being closed.
func (s *Server) closeVictims(victims []net.Conn) {
	for _, v := range victims {
		v.SetReadDeadline(aLongTimeAgo)
	}
	for range victims {
		s.closeSlots <- struct{}{}
	}
	go func(vs []net.Conn) {
		for _, v := range vs {
			if w, ok := v.(interface{ closeAndWait() }); ok {
				w.closeAndWait() // an event loop's: it closes the descriptor
			} else {
				v.Close()
			}
			<-s.closeSlots
		}
	}(slices.Clone(victims))
}

// aLongTimeAgo is a read deadline that has passed.
var aLongTimeAgo = time.Unix(1, 0)

// victim is a connection makeRoom may close: exactly one of c and rc is set.
type victim struct {
	since int64
	c     *conn
	rc    *replayConn
}

// makeRoom picks connections that can be spared, with s.mu held: idle
// keep-alive connections first (in no particular order), then those whose
// request head has been due the longest; never one whose request is being
// answered. It picks at most evictBatch, marks them closed, takes them off
// the count and appends their sockets to closing, for the caller to close
// once s.mu is released. Their goroutines (the front's or net/http's) see
// their reads fail and finish.
func (s *Server) makeRoom(now time.Time, closing []net.Conn) []net.Conn {
	if now.Before(s.evict.noRoomUntil) {
		return closing
	}
	batch := s.evictBatch()
	freed := 0
	heads := s.evict.victims[:0]
	for c := range s.conns {
		switch c.state.Load() {
		case stateIdle:
			if c.state.CompareAndSwap(stateIdle, stateClosed) {
				closing = append(closing, c.rwc)
				delete(s.conns, c)
				s.evict.idle++
				if freed++; freed == batch {
					return closing
				}
			}
		case stateNew, stateHead:
			if freed == 0 {
				heads = keepOldest(heads, victim{since: c.since.Load(), c: c}, batch)
			}
		}
	}
	for rc := range s.handed {
		switch rc.state.Load() {
		case stateIdle:
			if rc.state.CompareAndSwap(stateIdle, stateClosed) {
				closing = append(closing, rc.Conn)
				delete(s.handed, rc)
				s.evict.idle++
				if freed++; freed == batch {
					return closing
				}
			}
		case stateHead:
			if freed == 0 {
				heads = keepOldest(heads, victim{since: rc.since.Load(), rc: rc}, batch)
			}
		}
	}
	if freed == 0 {
		for _, v := range heads {
			if v.c != nil && casHead(&v.c.slot) {
				closing = append(closing, v.c.rwc)
				delete(s.conns, v.c)
			} else if v.rc != nil && casHead(&v.rc.slot) {
				closing = append(closing, v.rc.Conn) // not rc: its Close takes s.mu
				delete(s.handed, v.rc)
			} else {
				continue // its head completed since the scan
			}
			s.evict.heads++
			freed++
		}
	}
	clear(heads)
	s.evict.victims = heads[:0]
	if freed == 0 {
		s.evict.noRoomUntil = now.Add(noRoomPause)
	}
	return closing
}

// casHead marks sl closed if it is still waiting for a head.
func casHead(sl *slot) bool {
	st := sl.state.Load()
	return (st == stateNew || st == stateHead) && sl.state.CompareAndSwap(st, stateClosed)
}

// keepOldest adds v to vs, which holds at most k victims sorted by since,
// oldest first, if v is among the k oldest.
func keepOldest(vs []victim, v victim, k int) []victim {
	switch {
	case len(vs) < k:
		vs = append(vs, v)
	case v.since < vs[k-1].since:
		vs[k-1] = v
	default:
		return vs
	}
	for i := len(vs) - 1; i > 0 && vs[i].since < vs[i-1].since; i-- {
		vs[i], vs[i-1] = vs[i-1], vs[i]
	}
	return vs
}

// handOver moves c's place under the cap to rc, the connection net/http
// is about to serve; false if c was closed meanwhile.
func (s *Server) handOver(c *conn, rc *replayConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.state.Load() == stateClosed {
		return false
	}
	delete(s.conns, c)
	s.handed[rc] = struct{}{}
	return true
}

// dropHandedOff takes a closed handed-off connection off the count.
func (s *Server) dropHandedOff(rc *replayConn) {
	s.mu.Lock()
	delete(s.handed, rc)
	s.mu.Unlock()
}

// connState is the net/http server's ConnState hook: it follows the
// connections the front handed over. StateNew is already accounted for
// by handoff (a complete head is active, an incomplete one a head due since
// the front saw it begin); net/http's StateIdle also covers reading the
// head of a later request, so such a head counts as idle. Active and idle
// changes, once per net/http request, touch only the connection's own
// atomics.
func (s *Server) connState(nc net.Conn, st http.ConnState) {
	rc, ok := nc.(*replayConn)
	if !ok {
		return
	}
	switch st {
	case http.StateActive, http.StateHijacked:
		// A hijacked connection stays counted, and is never evicted, until
		// its new owner closes it (replayConn.Close).
		rc.setState(stateActive)
	case http.StateIdle:
		rc.setState(stateIdle)
	case http.StateClosed:
		s.dropHandedOff(rc)
	}
}

// setState moves the slot to st unless it was closed by the cap.
func (sl *slot) setState(st int32) {
	for {
		old := sl.state.Load()
		if old == stateClosed || sl.state.CompareAndSwap(old, st) {
			return
		}
	}
}
