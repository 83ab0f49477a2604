// Package front is Wikid's HTTP/1.1 front server. It owns the listening
// socket and answers anonymous edge-cache hits itself, writing the edge's
// precomputed response bytes with one writev; every other connection is handed
// to net/http unchanged.
//
// Why: a net/http handler writing a cached page reaches 0.6–0.8× of nginx
// serving the same bytes as a static file (per-request allocations of the
// Request, Header maps and context, a bufio copy of the body, timers). The
// front does none of that for a hit.
//
// # What the fast path answers
//
// Each connection gets a goroutine and a small read buffer. A request head is
// answered by the front only if all of these hold; otherwise (and on any
// doubt) the connection is handed to net/http:
//   - the head fits in the read buffer and every line ends in CRLF;
//   - method GET or HEAD, HTTP/1.1 (exactly one Host) or HTTP/1.0, an origin-form
//     target of printable ASCII;
//   - no body (no Transfer-Encoding, no Content-Length other than 0), and no
//     Authorization, Proxy-Authorization, Range, Upgrade or Expect header;
//   - no Cookie header mentions wikid_session (other cookies are fine);
//   - edge.Lookup(target) finds a fresh entry. The edge stores a response only
//     under the exact canonical target that produced it (see internal/httpx),
//     so the target as sent is the key: a non-canonical target finds nothing
//     and goes to net/http, which redirects it.
//
// If-None-Match / If-Modified-Since get the variant's 304, HEAD gets the head
// only, and Connection follows RFC 9112 as net/http implements it.
//
// # Hand-off
//
// Handing off is one-way: the connection, wrapped so that it first replays
// the bytes already read (the current request and anything pipelined after
// it), is returned by the Accept of a listener that the net/http server
// serves. Responses stay in order because the front writes its hits before it
// hands off, and net/http then reads the remaining requests in order.
//
// # Timeouts and shutdown
//
// The net/http server's ReadHeaderTimeout (or ReadTimeout), IdleTimeout and
// WriteTimeout apply to the fast path too. Deadlines are refreshed lazily:
// an idle or write deadline is moved only when less than half of its timeout
// is left, so a busy keep-alive connection does not reset timers on every
// request; a partial request head gets the header deadline at once, and
// bytes that trickle in later do not move it. A head handed to net/http
// before it is complete keeps that deadline.
// Shutdown closes the listener, closes idle fast-path connections, waits
// for in-flight fast-path responses, then shuts the net/http server down.
//
// # Connection cap
//
// The front counts every client connection, those it serves and those it
// has handed to net/http (through the net/http server's ConnState hook),
// and holds them to Options.MaxConns. At the cap, a new connection makes
// room: idle keep-alive connections are closed first, then those whose
// request head has been due the longest (slowloris), never one whose
// request is being answered; if none can go, the new connection is closed
// at once. ConnStats counts these events. See limit.go.
package front

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wikid/wikid/internal/edge"
)

// Options configures a Server.
type Options struct {
	// Cache is the edge cache whose hits are served. Required.
	Cache *edge.Cache
	// HTTP serves every connection the front does not answer itself.
	// Required. Serve calls HTTP.Serve; do not call it yourself. Its
	// timeouts also bound fast-path connections.
	HTTP *http.Server
	// OnHit, if set, is called after every fast-path response, on the
	// connection's goroutine or event loop: keep it cheap, and copy
	// Hit.Target to keep it.
	OnHit func(Hit)
	// BufferSize is the per-connection read buffer; a request head that
	// does not fit goes to net/http. Default 8 KiB.
	BufferSize int
	// Personal, if set, may answer a request that carries a session cookie
	// from memory (a logged-in view spliced from a cached page). Without it,
	// or when it declines, such requests go to net/http.
	Personal func(*Personal) bool
	// MaxConns caps the open client connections, fast-path and handed off
	// alike. 0 derives it from the process's file-descriptor limit
	// (DefaultMaxConns). New installs HTTP.ConnState (calling any hook
	// already set) to follow the connections net/http serves.
	MaxConns int
	// NoFastPath hands every connection to net/http at once, before its
	// first byte: hits are then answered by the handlers (the front
	// still caps connections). For measuring what the fast path gains.
	NoFastPath bool
	// Loops is the number of event loops that serve fast-path
	// connections (Linux; see loop_linux.go). 0 picks one per two
	// processors; a negative number gives each connection a goroutine
	// instead, as on other systems.
	Loops int

	// sndBuf, if set, is the send buffer of accepted sockets: tests
	// shrink it to hold a response in the server's send path.
	sndBuf int
}

// Personal is a request with a session cookie, and the answer Options.Personal
// gives it. The request fields alias the connection's buffer and are valid
// only during the call; the answer's slices must stay valid and unchanged
// until the next request on any connection could change them (cached bytes).
type Personal struct {
	Target          string // origin-form target as sent
	Cookie          string // the Cookie header value
	IfNoneMatch     string
	IfModifiedSince string
	Accepted        edge.Accepted
	// NoWait asks the hook to answer from memory only: it runs on an
	// event loop that serves other connections meanwhile, so it must
	// decline (and net/http will answer) rather than wait for a store.
	NoWait bool
	// Later is set with NoWait when the front can ask again: a hook that
	// needs the store may start the lookup in the background, set Pending
	// and return false, and call Later (from any goroutine) once the
	// lookup is done; the front then asks again with Later unset, and the
	// hook must answer or decline.
	Later   func()
	Pending bool

	// Status is 200 or 304. Header holds the response's header lines, each
	// ending in CRLF, without the status line, Date and Connection; append
	// to it (it is reused). Body is written after the head; nil for a 304.
	Status int
	Header []byte
	Body   [][]byte
}

// Hit describes one fast-path response, for metrics and access logs.
type Hit struct {
	Method   string // "GET" or "HEAD"
	Target   string // the request target as sent; it aliases the connection's buffer: valid during OnHit only (clone it to keep it)
	Status   int    // 200, 304, 404, ...
	Bytes    int    // body bytes written
	Duration time.Duration
	Proto    string // "HTTP/1.1" or "HTTP/1.0"
	Personal bool   // answered by Options.Personal (a logged-in view)
	conn     net.Conn
}

// Request builds a minimal *http.Request describing the hit (method, URL,
// protocol, remote address), for code that logs requests. It allocates;
// call it only when needed.
func (h Hit) Request() *http.Request {
	target := strings.Clone(h.Target)
	u, err := url.ParseRequestURI(target)
	if err != nil {
		u = &url.URL{Path: target}
	}
	r := &http.Request{Method: h.Method, URL: u, RequestURI: target, Proto: h.Proto, ProtoMajor: 1, Header: http.Header{}}
	if h.Proto == "HTTP/1.1" {
		r.ProtoMinor = 1
	}
	if h.conn != nil {
		r.RemoteAddr = h.conn.RemoteAddr().String()
	}
	return r
}

// RemoteAddr is the client's address ("host:port").
func (h Hit) RemoteAddr() string {
	if h.conn == nil {
		return ""
	}
	return h.conn.RemoteAddr().String()
}

// Server is the front server. Create it with New.
type Server struct {
	cache    *edge.Cache
	http     *http.Server
	onHit    func(Hit)
	personal func(*Personal) bool
	bufSize  int
	noFast   bool
	nLoops   int
	sndBuf   int

	loops      *loops      // nil: a goroutine per connection
	acceptDone atomic.Bool // Serve's accept loop has ended: loops may finish

	headerTimeout, idleTimeout, writeTimeout time.Duration

	handoff *handoffListener

	maxConns   int
	closeSlots chan struct{} // one per evicted connection being closed (limit.go)

	mu       sync.Mutex
	ln       net.Listener
	conns    map[*conn]struct{}       // fast-path connections
	handed   map[*replayConn]struct{} // connections net/http serves
	evict    evictState               // the connection cap's scratch and counters (limit.go)
	shutting atomic.Bool

	date atomic.Pointer[dateLine]
}

// New returns a front server for o.
func New(o Options) *Server {
	if o.BufferSize <= 0 {
		o.BufferSize = 8 << 10
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns()
	}
	if o.Loops == 0 {
		o.Loops = defaultLoops()
	}
	s := &Server{
		cache: o.Cache, http: o.HTTP, onHit: o.OnHit, personal: o.Personal, bufSize: o.BufferSize,
		maxConns: o.MaxConns, noFast: o.NoFastPath, nLoops: o.Loops, sndBuf: o.sndBuf, closeSlots: make(chan struct{}, maxClosing),
		conns: make(map[*conn]struct{}), handed: make(map[*replayConn]struct{}),
	}
	if prev := o.HTTP.ConnState; prev != nil {
		o.HTTP.ConnState = func(c net.Conn, st http.ConnState) { s.connState(c, st); prev(c, st) }
	} else {
		o.HTTP.ConnState = s.connState
	}
	s.headerTimeout = o.HTTP.ReadHeaderTimeout
	if s.headerTimeout <= 0 {
		s.headerTimeout = o.HTTP.ReadTimeout
	}
	s.idleTimeout = o.HTTP.IdleTimeout
	if s.idleTimeout <= 0 {
		s.idleTimeout = o.HTTP.ReadTimeout
	}
	s.writeTimeout = o.HTTP.WriteTimeout
	return s
}

// Serve accepts connections on ln until Shutdown or Close, answering cache
// hits and handing everything else to the net/http server. It returns
// http.ErrServerClosed after Shutdown or Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.shutting.Load() {
		s.mu.Unlock()
		return http.ErrServerClosed
	}
	if s.ln != nil {
		s.mu.Unlock()
		return errors.New("front: Serve called twice")
	}
	s.ln = ln
	s.handoff = newHandoffListener(ln.Addr())
	if !s.noFast && s.nLoops > 0 {
		s.loops = s.startLoops(s.nLoops)
	}
	s.mu.Unlock()
	defer func() {
		s.acceptDone.Store(true)
		if s.loops != nil {
			s.loops.wakeAll()
		}
	}()

	httpDone := make(chan error, 1)
	go func() { httpDone <- s.http.Serve(s.handoff) }()

	var delay time.Duration
	for {
		rwc, err := ln.Accept()
		if err != nil {
			if s.shutting.Load() {
				return http.ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				s.http.Close()
				<-httpDone
				return err
			}
			// Out of file descriptors and the like: back off as net/http does.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			time.Sleep(delay)
			continue
		}
		delay = 0
		if tc, ok := rwc.(*net.TCPConn); ok && s.sndBuf > 0 {
			tc.SetWriteBuffer(s.sndBuf)
		}
		if s.loops != nil {
			if c, ok := s.loops.accept(s, rwc); ok {
				if !s.admit(c, time.Now()) {
					s.loops.drop(c)
					continue
				}
				s.loops.add(c)
				continue
			}
		}
		c := &conn{s: s, rwc: rwc}
		if !s.admit(c, time.Now()) {
			rwc.Close()
			continue
		}
		go c.serve()
	}
}

// Loops is the number of event loops Serve runs (0: a goroutine per
// connection).
func (s *Server) Loops() int {
	if s.noFast || !loopsSupported || s.nLoops < 0 {
		return 0
	}
	return s.nLoops
}

// wakeLoops wakes the event loops, so that they see the server shutting
// down without waiting for their tick.
func (s *Server) wakeLoops() {
	s.mu.Lock()
	ls := s.loops
	s.mu.Unlock()
	if ls != nil {
		ls.wakeAll()
	}
}

func (s *Server) untrack(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// shutdownPoll is how often Shutdown looks for fast-path connections that
// have become idle.
const shutdownPoll = 5 * time.Millisecond

// Shutdown stops the server gracefully: it closes the listener, closes idle
// fast-path connections, waits for in-flight fast-path responses, then calls
// the net/http server's Shutdown, which waits for its own requests. If ctx
// ends first, the remaining fast-path connections are closed and ctx's error
// returned.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.shutting.Store(true)
	ln := s.ln
	s.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	s.wakeLoops()
	t := time.NewTicker(shutdownPoll)
	defer t.Stop()
	for !s.closeIdle() {
		select {
		case <-ctx.Done():
			s.closeAll()
			s.http.Shutdown(ctx)
			return ctx.Err()
		case <-t.C:
		}
	}
	return s.http.Shutdown(ctx)
}

// Close closes the listener and every connection at once, fast-path and
// net/http alike.
func (s *Server) Close() error {
	s.mu.Lock()
	s.shutting.Store(true)
	ln := s.ln
	s.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	s.closeAll()
	s.wakeLoops()
	return s.http.Close()
}

// closeIdle closes fast-path connections waiting for a request (new or
// keep-alive) and reports whether none are left.
func (s *Server) closeIdle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.state.CompareAndSwap(stateIdle, stateClosed) || c.state.CompareAndSwap(stateNew, stateClosed) {
			c.rwc.Close()
		}
	}
	return len(s.conns) == 0
}

func (s *Server) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.state.Store(stateClosed)
		c.rwc.Close()
	}
}

// dateLine is a Date header line, formatted once per second.
type dateLine struct {
	sec  int64
	line []byte
}

func (s *Server) dateFor(now time.Time) []byte {
	sec := now.Unix()
	if d := s.date.Load(); d != nil && d.sec == sec {
		return d.line
	}
	b := make([]byte, 0, 40)
	b = append(b, "Date: "...)
	b = now.UTC().AppendFormat(b, http.TimeFormat)
	b = append(b, "\r\n"...)
	s.date.Store(&dateLine{sec: sec, line: b})
	return b
}

// handoffListener is the listener the net/http server serves: its Accept
// returns the connections the front hands over.
type handoffListener struct {
	addr net.Addr
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func newHandoffListener(addr net.Addr) *handoffListener {
	return &handoffListener{addr: addr, ch: make(chan net.Conn), done: make(chan struct{})}
}

func (l *handoffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *handoffListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *handoffListener) Addr() net.Addr { return l.addr }

// give passes c to net/http; false if the net/http server is closed.
func (l *handoffListener) give(c net.Conn) bool {
	select {
	case l.ch <- c:
		return true
	case <-l.done:
		return false
	}
}

// replayConn is a handed-off connection: reads return the bytes the front
// had already read, then continue on the socket. Its slot follows
// net/http's ConnState (Server.connState); closing it, by net/http or by a
// handler that hijacked it, ends its place under the connection cap.
type replayConn struct {
	net.Conn
	slot
	s   *Server
	buf []byte
	// headDL, if set, is the header deadline the front had started for an
	// incomplete head: the first read deadline net/http sets (the one for
	// that head) is held to it. Only net/http's connection goroutine reads
	// it, before it starts any other goroutine for the connection.
	headDL time.Time
}

// Close closes the connection and takes it off the connection count.
func (c *replayConn) Close() error {
	err := c.Conn.Close()
	c.s.dropHandedOff(c)
	return err
}

// SetReadDeadline holds the first deadline to headDL, so that a head that
// crossed the hand-off does not get a second header timeout.
func (c *replayConn) SetReadDeadline(t time.Time) error {
	if !c.headDL.IsZero() {
		if t.IsZero() || t.After(c.headDL) {
			t = c.headDL
		}
		c.headDL = time.Time{}
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *replayConn) Read(p []byte) (int, error) {
	if len(c.buf) > 0 {
		n := copy(p, c.buf)
		c.buf = c.buf[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// CloseWrite lets net/http half-close after an error response, so the client
// reads it before the connection goes away.
func (c *replayConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}
