package front

import (
	"bytes"
	"errors"
	"net"
	"os"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/wikid/wikid/internal/edge"
	"golang.org/x/sys/unix"
)

// Event loops (Linux). A goroutine per connection costs, on every hit, a
// wake-up through the runtime's poller and a scheduler hand-off between
// threads, and net.Conn's writes copy the body into the kernel. Here a few
// event loops, each on its own OS thread, own the fast-path connections:
// each waits in epoll_wait (edge-triggered) for all of its sockets, reads
// and answers requests without leaving its thread, and sends large bodies
// with sendfile(2) from the edge's arena (internal/edge, arena.go), small
// ones with one sendmsg(2) of head and body.
//
// A socket is taken from the runtime when it is accepted (its descriptor
// duplicated, the net.Conn closed), so the runtime's poller never hears of
// it again; a connection handed to net/http gets a new net.Conn made from
// a duplicate (net.FileConn), plus the bytes already read. Everything the
// goroutine path promises holds here too: the same parse and the same
// response bytes, timeouts (checked by each loop every loopTick), the
// connection cap (a loopSock's Close shuts the socket down, and the loop
// that owns it closes it) and graceful shutdown.

const loopsSupported = true

// loopTick is how often a loop checks its connections' deadlines, and the
// longest it sleeps.
const loopTick = 100 * time.Millisecond

// loopBudget is how many responses a loop writes on one connection before
// it serves the others: a client pipelining without end does not starve
// them.
const loopBudget = 16

// maxLoopIOV bounds the pieces of one response (head plus body parts).
const maxLoopIOV = 16

// loopState is a connection's part of the loop's bookkeeping.
type loopState struct {
	sock *loopSock
	l    *loop

	// Head scanning, relative to conn.r; kept between readiness events.
	lineStart, scan int
	partial         bool

	rdl, wdl int64 // read and write deadlines (Unix ns), 0 for none

	// The response being written: iov first, then blob from boff for
	// bleft bytes.
	sending bool
	iov     [][]byte
	iovArr  [maxLoopIOV][]byte
	blob    *edge.Blob
	boff    int64
	bleft   int64
	hit     Hit // for OnHit once it is written
	start   time.Time
	close   bool // close after this response
	vecs    [maxLoopIOV]unix.Iovec
	msg     unix.Msghdr
	closed  bool

	// A logged-in request waiting for its session to be read
	// (Personal.Later): parked until later puts it on the loop's resume
	// list; asked again with retried set.
	parked, retried bool
	later           func()
}

// loopSock is a loop connection's net.Conn as the rest of the server sees
// it: its Close shuts the socket down, which wakes the loop that owns it,
// and that loop closes the descriptor. mu makes sure a Close never reaches
// a descriptor number that was closed and reused.
type loopSock struct {
	mu           sync.Mutex
	fd           int // -1 once closed
	laddr, raddr net.Addr
	gone         chan struct{} // closed with the descriptor
}

var errLoopConn = errors.New("front: connection is served by an event loop")

func (ls *loopSock) Read([]byte) (int, error)         { return 0, errLoopConn }
func (ls *loopSock) Write([]byte) (int, error)        { return 0, errLoopConn }
func (ls *loopSock) LocalAddr() net.Addr              { return ls.laddr }
func (ls *loopSock) RemoteAddr() net.Addr             { return ls.raddr }
func (ls *loopSock) SetDeadline(time.Time) error      { return nil }
func (ls *loopSock) SetReadDeadline(time.Time) error  { return nil }
func (ls *loopSock) SetWriteDeadline(time.Time) error { return nil }

// Close shuts the socket down; the owning loop notices and closes it.
func (ls *loopSock) Close() error {
	ls.mu.Lock()
	if ls.fd >= 0 {
		unix.Shutdown(ls.fd, unix.SHUT_RDWR)
	}
	ls.mu.Unlock()
	return nil
}

// closeAndWait shuts the socket down and waits until the loop has closed
// its descriptor (or a few seconds), so that the connection cap's closer
// (closeVictims) holds no more descriptors than it has slots.
func (ls *loopSock) closeAndWait() {
	ls.Close()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-ls.gone:
	case <-t.C:
	}
}

// closeFD closes the descriptor, once.
func (ls *loopSock) closeFD() {
	ls.mu.Lock()
	if ls.fd >= 0 {
		unix.Close(ls.fd)
		ls.fd = -1
		close(ls.gone)
	}
	ls.mu.Unlock()
}

// loops is the set of event loops of one Server.
type loops struct {
	all  []*loop
	next int // round robin; the accept loop's alone
}

// loop is one event loop. Only its goroutine touches conns and ready;
// incoming is how the accept loop hands it new connections.
type loop struct {
	s    *Server
	epfd int
	wake int // eventfd: new connections, shutdown

	mu       sync.Mutex
	incoming []*conn
	resume   []*conn // parked connections whose lookup is done
	exited   bool    // run has returned and closed wake: poke no more

	conns  []*conn // by descriptor
	n      int     // connections owned
	ready  []*conn // stopped by loopBudget, to run again
	events [128]unix.EpollEvent
}

// startLoops starts n event loops; nil if the system refuses (the
// goroutine path serves then).
func (s *Server) startLoops(n int) *loops {
	ls := &loops{}
	for range n {
		l, err := newLoop(s)
		if err != nil {
			for _, l := range ls.all {
				l.closeFDs()
			}
			return nil
		}
		ls.all = append(ls.all, l)
	}
	for _, l := range ls.all {
		go l.run()
	}
	return ls
}

func newLoop(s *Server) (*loop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wake)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wake, &ev); err != nil {
		unix.Close(epfd)
		unix.Close(wake)
		return nil, err
	}
	return &loop{s: s, epfd: epfd, wake: wake}, nil
}

func (l *loop) closeFDs() {
	unix.Close(l.epfd)
	unix.Close(l.wake)
}

// wakeAll wakes every loop (shutdown).
func (ls *loops) wakeAll() {
	for _, l := range ls.all {
		l.mu.Lock()
		l.poke()
		l.mu.Unlock()
	}
}

// poke wakes the loop, with l.mu held: once the loop has exited, its
// eventfd is closed and the number may belong to another file.
func (l *loop) poke() {
	if l.exited {
		return
	}
	one := [8]byte{1}
	unix.Write(l.wake, one[:])
}

// detach takes a socket from the runtime: it returns a duplicate of nc's
// descriptor (non-blocking, as the runtime made it) and closes nc.
func detach(nc net.Conn) (int, bool) {
	sc, ok := nc.(*net.TCPConn)
	if !ok {
		return -1, false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1, false
	}
	fd := -1
	raw.Control(func(f uintptr) {
		fd, err = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0)
	})
	if err != nil || fd < 0 {
		return -1, false
	}
	nc.Close()
	return fd, true
}

// accept turns an accepted connection into a loop connection; false if
// it cannot be (the caller serves it with a goroutine).
func (ls *loops) accept(s *Server, nc net.Conn) (*conn, bool) {
	laddr, raddr := nc.LocalAddr(), nc.RemoteAddr()
	fd, ok := detach(nc)
	if !ok {
		return nil, false
	}
	sock := &loopSock{fd: fd, laddr: laddr, raddr: raddr, gone: make(chan struct{})}
	c := &conn{s: s, rwc: sock}
	c.lp.sock = sock
	return c, true
}

// drop closes a connection accept made that the cap refused.
func (ls *loops) drop(c *conn) { c.lp.sock.closeFD() }

// defaultLoops is the number of event loops when Options.Loops is 0: one
// per two processors the runtime uses, at least one. Each loop is a
// thread that answers hits without handing them between threads; the
// other processors run everything else (misses, jobs, the access log).
func defaultLoops() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// add gives c, admitted under the cap, to the next loop.
func (ls *loops) add(c *conn) {
	l := ls.all[ls.next%len(ls.all)]
	ls.next++
	c.lp.l = l
	l.mu.Lock()
	l.incoming = append(l.incoming, c)
	l.poke()
	l.mu.Unlock()
}

func (l *loop) run() {
	runtime.LockOSThread()
	defer func() {
		l.mu.Lock()
		l.exited = true
		l.mu.Unlock()
		l.closeFDs()
	}()
	s := l.s
	lastScan := time.Now()
	for {
		timeout := int(loopTick / time.Millisecond)
		if len(l.ready) > 0 {
			timeout = 0
		}
		n, err := unix.EpollWait(l.epfd, l.events[:], timeout)
		if err != nil && err != unix.EINTR {
			time.Sleep(loopTick) // not expected: EBADF, EFAULT, EINVAL
		}
		for i := range max(n, 0) {
			ev := &l.events[i]
			fd := int(ev.Fd)
			if fd == l.wake {
				var b [8]byte
				unix.Read(l.wake, b[:])
				l.takeIncoming()
				continue
			}
			if fd < len(l.conns) && l.conns[fd] != nil {
				l.serve(l.conns[fd])
			}
		}
		if len(l.ready) > 0 {
			ready := l.ready
			l.ready = nil
			for _, c := range ready {
				if !c.lp.closed {
					l.serve(c)
				}
			}
		}
		if now := time.Now(); now.Sub(lastScan) >= loopTick {
			lastScan = now
			l.expire(now)
		}
		if s.acceptDone.Load() {
			// No connection can come any more: finish those left.
			l.takeIncoming()
			if l.n == 0 {
				return
			}
		}
	}
}

// takeIncoming registers the connections the accept loop handed over and
// serves whatever they have sent already.
func (l *loop) takeIncoming() {
	l.mu.Lock()
	in, resume := l.incoming, l.resume
	l.incoming, l.resume = nil, nil
	l.mu.Unlock()
	for _, c := range resume {
		if !c.lp.closed {
			c.lp.parked, c.lp.retried = false, true
			l.serve(c)
		}
	}
	for _, c := range in {
		fd := c.lp.sock.fd
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(fd)}
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			c.lp.sock.closeFD()
			c.lp.closed = true
			l.s.untrack(c)
			continue
		}
		for fd >= len(l.conns) {
			l.conns = append(l.conns, nil)
		}
		l.conns[fd] = c
		l.n++
		c.buf = make([]byte, l.s.bufSize)
		c.out = make([]byte, 0, 1024)
		if t := l.s.headerTimeout; t > 0 {
			c.lp.rdl = time.Unix(0, c.since.Load()).Add(t).UnixNano()
		}
		l.serve(c)
	}
}

// wakeFor puts a parked connection on the resume list; any goroutine.
func (l *loop) wakeFor(c *conn) {
	l.mu.Lock()
	l.resume = append(l.resume, c)
	l.poke()
	l.mu.Unlock()
}

// expire closes the connections whose deadline has passed.
func (l *loop) expire(now time.Time) {
	t := now.UnixNano()
	for _, c := range l.conns {
		if c == nil {
			continue
		}
		if c.state.Load() == stateClosed {
			l.close(c) // closed from outside, and no event came
			continue
		}
		dl := c.lp.rdl
		if c.lp.sending {
			dl = c.lp.wdl
		}
		if dl != 0 && t > dl {
			if c.lp.parked {
				// The lookup a parked request waits for is slow: net/http
				// answers it, waiting as long as the lookup takes.
				c.lp.parked = false
				l.handoff(c, true)
				continue
			}
			l.close(c)
		}
	}
}

// close closes c and takes it off the loop and the server.
func (l *loop) close(c *conn) {
	if c.lp.closed {
		return
	}
	c.lp.closed = true
	l.endSend(c)
	fd := c.lp.sock.fd
	if fd >= 0 && fd < len(l.conns) && l.conns[fd] == c {
		l.conns[fd] = nil
		l.n--
	}
	c.lp.sock.closeFD()
	c.state.Store(stateClosed)
	l.s.untrack(c)
}

// endSend drops what the response in flight holds.
func (l *loop) endSend(c *conn) {
	if c.lp.blob != nil {
		c.lp.blob.Release()
		c.lp.blob = nil
	}
	clear(c.lp.iovArr[:])
	c.lp.iov = nil
	c.lp.sending = false
	c.variant = nil
}

// serve runs c until it must wait for its socket, is closed or handed off,
// or has used its budget.
func (l *loop) serve(c *conn) {
	s := l.s
	for budget := loopBudget; ; {
		if c.state.Load() == stateClosed {
			l.close(c)
			return
		}
		if c.lp.parked {
			return
		}
		if c.lp.sending {
			switch l.flush(c) {
			case flushWait:
				return
			case flushFailed:
				l.close(c)
				return
			}
			closeAfter := c.lp.close
			l.endSend(c)
			c.served++
			if s.onHit != nil {
				c.lp.hit.Duration = time.Since(c.lp.start)
				c.lp.hit.conn = c.rwc
				s.onHit(c.lp.hit)
				c.lp.hit = Hit{}
			}
			if closeAfter {
				l.close(c)
				return
			}
			if budget--; budget == 0 {
				l.ready = append(l.ready, c)
				return
			}
		}
		n, res := l.nextHead(c)
		switch res {
		case headWait:
			return
		case headClose:
			l.close(c)
			return
		case headHandoff:
			l.handoff(c, false)
			return
		}
		if !parse(c.buf[c.r:c.r+n], &c.req) || !l.respond(c, &c.req) {
			if c.lp.parked {
				return
			}
			l.handoff(c, true)
			return
		}
		c.r += n
		if c.r == c.w {
			c.r, c.w = 0, 0
		}
	}
}

// headWait: the head is not complete and the socket has nothing more.
const headWait headResult = headClose + 1

// nextHead finds the next complete request head in the buffer, reading
// what the socket has. It keeps its place between calls.
func (l *loop) nextHead(c *conn) (int, headResult) {
	s := l.s
	lp := &c.lp
	for {
		for {
			i := bytes.IndexByte(c.buf[c.r+lp.scan:c.w], '\n')
			if i < 0 {
				lp.scan = c.w - c.r
				break
			}
			i += lp.scan
			if i == lp.lineStart || c.buf[c.r+i-1] != '\r' {
				return 0, headHandoff // bare LF: net/http's business
			}
			if i-1 == lp.lineStart {
				// End of head: it is being answered now, and the
				// connection cap may no longer close it.
				if st := c.state.Load(); st != stateActive && (st == stateClosed || !c.state.CompareAndSwap(st, stateActive)) {
					return 0, headClose
				}
				lp.lineStart, lp.scan, lp.partial = 0, 0, false
				lp.rdl = 0
				return i + 1, headOK
			}
			lp.lineStart, lp.scan = i+1, i+1
		}
		if c.w-c.r == len(c.buf) {
			return 0, headHandoff // too large for the fast path
		}
		if c.w == len(c.buf) {
			c.w = copy(c.buf, c.buf[c.r:c.w])
			c.r = 0
		}
		m, err := unix.Read(lp.sock.fd, c.buf[c.w:])
		if m > 0 {
			if !c.state.CompareAndSwap(stateIdle, stateActive) && c.state.Load() == stateClosed {
				return 0, headClose
			}
			c.w += m
			continue
		}
		switch err {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
		default:
			return 0, headClose // EOF or error
		}
		now := time.Now()
		if c.r == c.w {
			// Between requests: idle. A new connection stays stateNew,
			// under the header deadline set when it was accepted.
			c.r, c.w = 0, 0
			if c.served > 0 && c.state.Load() == stateActive {
				if !c.state.CompareAndSwap(stateActive, stateIdle) {
					return 0, headClose
				}
				lp.rdl = 0
				if t := s.idleTimeout; t > 0 {
					lp.rdl = now.Add(t).UnixNano()
				}
			}
			if s.shutting.Load() && c.state.Load() != stateNew {
				return 0, headClose
			}
		} else if !lp.partial {
			// A request has started: it must be complete within the
			// header timeout, counted from now (or from the accept, for
			// a new connection's first request).
			lp.partial = true
			st := c.state.Load()
			if st == stateActive {
				c.since.Store(now.UnixNano())
			}
			if st == stateClosed || !c.state.CompareAndSwap(st, stateHead) {
				return 0, headClose
			}
			if t := s.headerTimeout; t > 0 {
				if dl := now.Add(t).UnixNano(); lp.rdl == 0 || dl < lp.rdl {
					lp.rdl = dl
				}
			}
		}
		return 0, headWait
	}
}

// respond prepares the answer to req (an edge hit, or a logged-in view
// from the Personal hook) and starts writing it; false if the fast path
// does not answer it.
func (l *loop) respond(c *conn, req *request) bool {
	s := l.s
	lp := &c.lp
	now := time.Now()
	var body []byte
	var status int
	personal := req.cookie != nil
	if personal {
		var later func()
		if !lp.retried {
			if lp.later == nil {
				lp.later = func() { l.wakeFor(c) }
			}
			later = lp.later
		}
		lp.retried = false
		closeAfter, ok := c.preparePersonal(req, now, true, later)
		if !ok {
			if c.pers.Pending && later != nil {
				// Asked to wait for a lookup: the head stays in the
				// buffer, under the header timeout, until wakeFor.
				lp.parked = true
				if t := s.headerTimeout; t > 0 {
					lp.rdl = now.Add(t).UnixNano()
				}
			}
			return false
		}
		lp.close = closeAfter
		status = c.pers.Status
		lp.hit.Bytes = 0
		lp.iovArr[0] = c.out
		n := 1 + copy(lp.iovArr[1:], c.pers.Body)
		lp.iov = lp.iovArr[:n]
		for _, b := range c.pers.Body {
			lp.hit.Bytes += len(b)
		}
		clear(c.pers.Body)
		c.pers.Body = c.pers.Body[:0]
	} else {
		var closeAfter, ok bool
		status, body, closeAfter, ok = c.prepareHit(req, now)
		if !ok {
			return false
		}
		lp.close = closeAfter
		lp.iovArr[0] = c.out
		lp.iov = lp.iovArr[:1]
		if len(body) > 0 {
			if b := c.variant.AcquireFile(); b != nil {
				lp.blob, lp.boff, lp.bleft = b, b.Offset(), b.Len()
			} else {
				lp.iovArr[1] = body
				lp.iov = lp.iovArr[:2]
			}
		}
		c.variant = nil
	}
	lp.sending = true
	lp.start = now
	if !personal {
		lp.hit.Bytes = len(body)
	}
	lp.wdl = 0
	if t := s.writeTimeout; t > 0 {
		lp.wdl = now.Add(t).UnixNano()
	}
	if s.onHit != nil {
		lp.hit.Method, lp.hit.Target, lp.hit.Status = req.method(), bytesString(req.target), status
		lp.hit.Proto, lp.hit.Personal = req.proto(), personal
	}
	return true
}

type flushResult int

const (
	flushDone flushResult = iota
	flushWait
	flushFailed
)

// flush writes what is left of the response in flight.
func (l *loop) flush(c *conn) flushResult {
	lp := &c.lp
	fd := lp.sock.fd
	for len(lp.iov) > 0 {
		flags := unix.MSG_NOSIGNAL
		if lp.blob != nil {
			flags |= unix.MSG_MORE // the head waits for the file's first bytes
		}
		n, err := lp.sendmsg(fd, flags)
		if err != nil {
			if res, again := afterError(err); !again {
				return res
			}
			continue
		}
		lp.advance(n)
	}
	for lp.bleft > 0 {
		n, err := unix.Sendfile(fd, lp.blob.FD(), &lp.boff, int(min(lp.bleft, 1<<30)))
		if n > 0 {
			lp.bleft -= int64(n)
		}
		if err != nil {
			if res, again := afterError(err); !again {
				return res
			}
			continue
		}
		if n == 0 {
			return flushFailed // the file is shorter than the body: never expected
		}
	}
	return flushDone
}

// afterError says what flush does after a failed write: try again at once
// (interrupted), wait for the socket (full), or give up.
func afterError(err error) (res flushResult, again bool) {
	switch err {
	case unix.EINTR:
		return 0, true
	case unix.EAGAIN:
		return flushWait, false
	}
	return flushFailed, false
}

// sendmsg writes lp.iov with one sendmsg(2), without allocating.
func (lp *loopState) sendmsg(fd, flags int) (int, error) {
	k := 0
	for _, b := range lp.iov {
		if len(b) == 0 {
			continue
		}
		lp.vecs[k].Base = &b[0]
		lp.vecs[k].SetLen(len(b))
		k++
	}
	if k == 0 {
		lp.iov = nil
		return 0, nil
	}
	lp.msg = unix.Msghdr{Iov: &lp.vecs[0]}
	lp.msg.SetIovlen(k)
	n, _, e := unix.Syscall(unix.SYS_SENDMSG, uintptr(fd), uintptr(unsafe.Pointer(&lp.msg)), uintptr(flags))
	clear(lp.vecs[:k])
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// advance drops n written bytes from the front of lp.iov.
func (lp *loopState) advance(n int) {
	for n > 0 && len(lp.iov) > 0 {
		if n < len(lp.iov[0]) {
			lp.iov[0] = lp.iov[0][n:]
			return
		}
		n -= len(lp.iov[0])
		lp.iov[0] = nil
		lp.iov = lp.iov[1:]
	}
	for len(lp.iov) > 0 && len(lp.iov[0]) == 0 {
		lp.iov = lp.iov[1:]
	}
}

// handoff passes c, with the bytes read and not answered, to net/http on a
// net.Conn of its own; see conn.handoff.
func (l *loop) handoff(c *conn, complete bool) {
	lp := &c.lp
	fd := lp.sock.fd
	unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	if fd < len(l.conns) && l.conns[fd] == c {
		l.conns[fd] = nil
		l.n--
	}
	lp.closed = true
	nc, err := fileConn(fd)
	if err != nil {
		lp.sock.closeFD()
		c.state.Store(stateClosed)
		l.s.untrack(c)
		return
	}
	rc := &replayConn{Conn: nc, s: l.s}
	if !complete {
		if st := c.state.Load(); st == stateNew || st == stateHead {
			rc.since.Store(c.since.Load())
			if lp.rdl != 0 {
				rc.headDL = time.Unix(0, lp.rdl)
			}
		} else {
			rc.since.Store(time.Now().UnixNano())
		}
		rc.state.Store(stateHead)
	}
	if !l.s.handOver(c, rc) {
		nc.Close()
		lp.sock.closeFD()
		l.s.untrack(c)
		return
	}
	lp.sock.closeFD()
	rc.buf = bytes.Clone(c.buf[c.r:c.w])
	c.buf = nil
	go func() {
		if !l.s.handoff.give(rc) {
			rc.Close()
		}
	}()
}

// fileConn makes a net.Conn of its own for the socket fd (which stays
// open: the caller closes it).
func fileConn(fd int) (net.Conn, error) {
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "front")
	nc, err := net.FileConn(f)
	f.Close()
	return nc, err
}
