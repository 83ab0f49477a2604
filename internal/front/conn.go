package front

import (
	"bytes"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/wikid/wikid/internal/edge"
)

// Connection states, for Shutdown and the connection cap (limit.go). A
// fast-path connection starts in stateNew, goes through stateHead while a
// head arrives in pieces, is stateActive from a complete head until its
// response is written, then stateIdle. Every change away from stateNew,
// stateHead and stateIdle is a CompareAndSwap, so a connection closed by
// Shutdown or the cap (which set stateClosed) never starts answering.
const (
	stateActive int32 = iota // answering a request: its head is complete
	stateIdle                // keep-alive: waiting for the first byte of the next request
	stateClosed              // closed by Shutdown, Close or the connection cap
	stateNew                 // accepted, no request yet: its first head is due
	stateHead                // reading a request head that came in part
)

// slot is what the connection cap knows of one client connection,
// fast-path or handed off.
type slot struct {
	state atomic.Int32
	// since is when the head being read became due (Unix nanoseconds):
	// the accept for a connection's first request, the first byte for a
	// later one. Meaningful in stateNew and stateHead.
	since atomic.Int64
}

// conn is one fast-path connection.
type conn struct {
	slot
	s   *Server
	rwc net.Conn

	buf  []byte // read buffer; buf[r:w] is unread
	r, w int

	out  []byte // response head scratch
	bufs net.Buffers
	iov  [2][]byte
	req  request
	pers Personal
	piov [12][]byte

	readDL, writeDL time.Time // current deadlines, zero if unset
	served          int       // responses written

	variant *edge.Variant // the variant prepareHit found
	lp      loopState     // the event loop's part (loop_linux.go)
}

// headResult tells serve what next found.
type headResult int

const (
	headOK      headResult = iota // buf[r:r+n] is a complete head
	headHandoff                   // hand the connection to net/http
	headClose                     // read error or timeout: close
)

func (c *conn) serve() {
	s := c.s
	handedOff := false
	defer func() {
		if !handedOff {
			c.rwc.Close()
		}
		s.untrack(c)
	}()
	// A new connection must send its first request within the header
	// timeout, as with net/http.
	if s.headerTimeout > 0 {
		c.readDL = time.Now().Add(s.headerTimeout)
		c.rwc.SetReadDeadline(c.readDL)
	}
	if s.noFast {
		handedOff = c.handoff(false)
		return
	}
	c.buf = make([]byte, s.bufSize)
	c.out = make([]byte, 0, 1024)
	for {
		n, res := c.next()
		switch res {
		case headClose:
			return
		case headHandoff:
			handedOff = c.handoff(false)
			return
		}
		head := c.buf[c.r : c.r+n]
		if !parse(head, &c.req) {
			handedOff = c.handoff(true)
			return
		}
		var ok, closeAfter bool
		if c.req.cookie != nil {
			ok, closeAfter = c.servePersonal(&c.req)
		} else {
			ok, closeAfter = c.serveHit(&c.req)
		}
		if !ok {
			handedOff = c.handoff(true)
			return
		}
		c.served++
		c.r += n
		if c.r == c.w {
			c.r, c.w = 0, 0
		}
		if closeAfter {
			return
		}
	}
}

// next finds the next complete request head in the buffer, reading from the
// connection as needed.
func (c *conn) next() (int, headResult) {
	s := c.s
	lineStart, scan := 0, 0 // relative to c.r
	partial := false
	for {
		for {
			i := bytes.IndexByte(c.buf[c.r+scan:c.w], '\n')
			if i < 0 {
				scan = c.w - c.r
				break
			}
			i += scan // relative index of '\n'
			if i == lineStart || c.buf[c.r+i-1] != '\r' {
				return 0, headHandoff // bare LF: net/http's business
			}
			if i-1 == lineStart {
				// Empty line: end of head. A head that was due (a new
				// connection's first, or one that came in part) is being
				// answered now: the connection cap may no longer close it.
				if st := c.state.Load(); st != stateActive && (st == stateClosed || !c.state.CompareAndSwap(st, stateActive)) {
					return 0, headClose
				}
				return i + 1, headOK
			}
			lineStart, scan = i+1, i+1
		}
		if c.w-c.r == len(c.buf) {
			return 0, headHandoff // too large for the fast path
		}
		if c.w == len(c.buf) {
			c.w = copy(c.buf, c.buf[c.r:c.w])
			c.r = 0
		}
		if c.r == c.w {
			// Between requests: idle. (A new connection stays stateNew:
			// its first request is under the header deadline set in serve.)
			c.r, c.w = 0, 0
			if c.served > 0 {
				if s.idleTimeout > 0 {
					now := time.Now()
					if left := c.readDL.Sub(now); left < s.idleTimeout/2 || left > s.idleTimeout {
						c.readDL = now.Add(s.idleTimeout)
						c.rwc.SetReadDeadline(c.readDL)
					}
				}
				if !c.state.CompareAndSwap(stateActive, stateIdle) {
					return 0, headClose // closed by Close
				}
			}
			if s.shutting.Load() {
				return 0, headClose
			}
		} else if !partial {
			// A request has started: it must be complete within the header
			// timeout, counted from now (or from the accept, for a new
			// connection's first request) and not moved by later bytes.
			partial = true
			now := time.Now()
			st := c.state.Load()
			if st == stateActive {
				c.since.Store(now.UnixNano())
			}
			if st == stateClosed || !c.state.CompareAndSwap(st, stateHead) {
				return 0, headClose
			}
			if s.headerTimeout > 0 {
				if dl := now.Add(s.headerTimeout); c.readDL.IsZero() || dl.Before(c.readDL) {
					c.readDL = dl
					c.rwc.SetReadDeadline(dl)
				}
			}
		}
		m, err := c.rwc.Read(c.buf[c.w:])
		if !c.state.CompareAndSwap(stateIdle, stateActive) && c.state.Load() == stateClosed {
			return 0, headClose // closed by Shutdown
		}
		if m > 0 {
			c.w += m
			continue
		}
		if err != nil {
			return 0, headClose
		}
	}
}

// handoff passes the connection, with the unread bytes, to net/http.
// complete says the bytes hold a whole request head; otherwise net/http
// reads the rest of it, and the head stays due when it was (the
// connection cap ranks it by that, and net/http's header deadline is
// held to the one the front had set). It reports false if the connection
// was closed meanwhile.
func (c *conn) handoff(complete bool) bool {
	rc := &replayConn{Conn: c.rwc, s: c.s}
	if !complete {
		if st := c.state.Load(); st == stateNew || st == stateHead {
			rc.since.Store(c.since.Load())
			rc.headDL = c.readDL
		} else {
			rc.since.Store(time.Now().UnixNano())
		}
		rc.state.Store(stateHead)
	}
	if !c.s.handOver(c, rc) {
		return false
	}
	c.rwc.SetDeadline(time.Time{})
	rc.buf = bytes.Clone(c.buf[c.r:c.w])
	c.buf = nil
	if !c.s.handoff.give(rc) {
		rc.Close()
	}
	return true
}

var (
	hitHeaders    = []byte("X-Cache: HIT\r\nServer-Timing: cache;desc=hit\r\n")
	connClose     = []byte("Connection: close\r\n")
	connKeepAlive = []byte("Connection: keep-alive\r\n")
	crlf          = []byte("\r\n")
)

// serveHit answers req from the edge if it has a fresh entry. ok is false
// when it does not (nothing was written); closeAfter reports that the
// connection is to be closed after this response.
func (c *conn) serveHit(req *request) (ok, closeAfter bool) {
	s := c.s
	now := time.Now()
	status, body, closeAfter, ok := c.prepareHit(req, now)
	c.variant = nil // an idle connection must not keep an entry alive
	if !ok {
		return false, false
	}
	out := c.out
	c.extendWrite(now)
	var err error
	if len(body) == 0 {
		_, err = c.rwc.Write(out)
	} else {
		c.iov[0], c.iov[1] = out, body
		c.bufs = c.iov[:]
		_, err = c.bufs.WriteTo(c.rwc)
		c.iov[0], c.iov[1] = nil, nil
	}
	if err != nil {
		return true, true
	}
	if s.onHit != nil {
		s.onHit(Hit{Method: req.method(), Target: bytesString(req.target), Status: status, Bytes: len(body),
			Duration: time.Since(now), Proto: req.proto(), conn: c.rwc})
	}
	return true, closeAfter
}

// prepareHit looks req up in the edge. On a hit it builds the response
// head in c.out and returns the status, the body to write after the head
// (nil for HEAD and 304) and whether the connection closes after it; ok is
// false on a miss. c.variant is the variant found.
func (c *conn) prepareHit(req *request, now time.Time) (status int, body []byte, closeAfter, ok bool) {
	s := c.s
	key := bytesString(req.target) // valid until the next read; not kept
	v, ok := s.cache.Lookup(key, req.accepted)
	if !ok {
		return 0, nil, false, false
	}
	closeAfter = req.closeAfter() || s.shutting.Load()

	status = v.Status
	wire := v.Wire
	notModified := (len(req.ifNoneMatch) > 0 || len(req.ifModSince) > 0) &&
		v.IsNotModified(bytesString(req.ifNoneMatch), bytesString(req.ifModSince))
	if notModified {
		status = http.StatusNotModified
		wire = v.WireNotModified
	}
	out := c.out[:0]
	out = appendStatusLine(out, req.http10, status)
	out = append(out, s.dateFor(now)...)
	out = append(out, hitHeaders...)
	out = append(out, wire...)
	out = endHead(out, req, closeAfter)
	c.out = out
	c.variant = v
	if !req.head && !notModified {
		body = v.Body
	}
	return status, body, closeAfter, true
}

func (r *request) method() string {
	if r.head {
		return http.MethodHead
	}
	return http.MethodGet
}

// closeAfter reports whether the connection closes after this response,
// as net/http decides keep-alive.
func (r *request) closeAfter() bool {
	if r.http10 {
		return !r.keepAlive || r.connClose
	}
	return r.connClose
}

func (r *request) proto() string {
	if r.http10 {
		return "HTTP/1.0"
	}
	return "HTTP/1.1"
}

// endHead appends the Connection header the response needs, if any, and the
// blank line that ends the head.
func endHead(out []byte, req *request, closeAfter bool) []byte {
	switch {
	case req.http10 && !closeAfter:
		out = append(out, connKeepAlive...)
	case !req.http10 && closeAfter:
		out = append(out, connClose...)
	}
	return append(out, crlf...)
}

// extendWrite moves the write deadline when less than half of the write
// timeout is left.
func (c *conn) extendWrite(now time.Time) {
	if t := c.s.writeTimeout; t > 0 && c.writeDL.Sub(now) < t/2 {
		c.writeDL = now.Add(t)
		c.rwc.SetWriteDeadline(c.writeDL)
	}
}

// servePersonal answers a request with a session cookie through the
// Personal hook; ok is false when there is none or it declines.
func (c *conn) servePersonal(req *request) (ok, closeAfter bool) {
	s := c.s
	now := time.Now()
	closeAfter, ok = c.preparePersonal(req, now, false, nil)
	if !ok {
		return false, false
	}
	p := &c.pers
	c.extendWrite(now)
	c.piov[0] = c.out
	n := 1 + copy(c.piov[1:], p.Body)
	sent := 0
	for _, b := range p.Body {
		sent += len(b)
	}
	c.bufs = c.piov[:n]
	_, err := c.bufs.WriteTo(c.rwc)
	clear(c.piov[:])
	p.Body = nil
	if err != nil {
		return true, true
	}
	if s.onHit != nil {
		s.onHit(Hit{Method: http.MethodGet, Target: bytesString(req.target), Status: p.Status, Bytes: sent,
			Duration: time.Since(now), Proto: req.proto(), Personal: true, conn: c.rwc})
	}
	return true, closeAfter
}

// preparePersonal asks the Personal hook for an answer to req. On ok, the
// response head is in c.out and the body pieces in c.pers.Body. noWait
// asks the hook to answer from memory only, later lets it ask to be asked
// again (see Personal.Later).
func (c *conn) preparePersonal(req *request, now time.Time, noWait bool, later func()) (closeAfter, ok bool) {
	s := c.s
	c.pers.Pending = false
	if s.personal == nil || req.head {
		// HEAD is rare for logged-in readers: net/http answers it.
		return false, false
	}
	p := &c.pers
	*p = Personal{Target: bytesString(req.target), Cookie: bytesString(req.cookie),
		IfNoneMatch: bytesString(req.ifNoneMatch), IfModifiedSince: bytesString(req.ifModSince), Accepted: req.accepted,
		NoWait: noWait, Later: later, Header: p.Header[:0], Body: p.Body[:0]}
	if !s.personal(p) || len(p.Body) > len(c.piov)-1 {
		return false, false
	}
	// Once shutting down, net/http drops the requests it reads: the
	// front answers a logged-in request it has read (parked for a lookup,
	// say) itself, and closes the connection after it.
	closeAfter = req.closeAfter() || s.shutting.Load()
	out := c.out[:0]
	out = appendStatusLine(out, req.http10, p.Status)
	out = append(out, s.dateFor(now)...)
	out = append(out, p.Header...)
	c.out = endHead(out, req, closeAfter)
	return closeAfter, true
}

// statusLines caches the status lines of the statuses the edge stores.
var statusLines = func() map[int][2][]byte {
	m := make(map[int][2][]byte)
	for _, code := range []int{200, 301, 304, 308, 404, 410} {
		text := " " + strconv.Itoa(code) + " " + http.StatusText(code) + "\r\n"
		m[code] = [2][]byte{[]byte("HTTP/1.1" + text), []byte("HTTP/1.0" + text)}
	}
	return m
}()

func appendStatusLine(b []byte, http10 bool, code int) []byte {
	i := 0
	if http10 {
		i = 1
	}
	if l, ok := statusLines[code]; ok {
		return append(b, l[i]...)
	}
	proto := "HTTP/1.1 "
	if http10 {
		proto = "HTTP/1.0 "
	}
	b = append(b, proto...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(code)...)
	return append(b, crlf...)
}
