package front

import (
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestMaxConnsFor(t *testing.T) {
	for _, tc := range []struct {
		nofile uint64
		want   int
	}{
		{0, maxConnsFloor},
		{64, maxConnsFloor},
		{79, maxConnsFloor},
		{100, 36},                // 64 kept
		{256, 192},               // macOS's starting limit: 64 kept
		{1024, 768},              // a quarter kept
		{4096, 3072},             // systemd's default hard limit before v240
		{13336, maxConnsCeiling}, // 10,002 before the ceiling
		{20000, maxConnsCeiling},
		{524288, maxConnsCeiling},     // systemd's hard limit since v240
		{^uint64(0), maxConnsCeiling}, // RLIM_INFINITY
	} {
		if got := maxConnsFor(tc.nofile); got != tc.want {
			t.Errorf("maxConnsFor(%d) = %d, want %d", tc.nofile, got, tc.want)
		}
	}
	n, ok := fileLimit()
	d := DefaultMaxConns()
	t.Logf("RLIMIT_NOFILE %d (%v): default cap %d", n, ok, d)
	if ok && uint64(d) >= n && n > maxConnsFloor {
		t.Errorf("default cap %d does not leave room under the descriptor limit %d", d, n)
	}
}

func TestKeepOldest(t *testing.T) {
	var vs []victim
	for _, s := range []int64{50, 10, 70, 30, 20, 90, 5} {
		vs = keepOldest(vs, victim{since: s}, 3)
	}
	if len(vs) != 3 || vs[0].since != 5 || vs[1].since != 10 || vs[2].since != 20 {
		t.Fatalf("kept %+v, want since 5, 10, 20", vs)
	}
}

// connState finds the server's record of the connection whose client end
// is client: its state and whether it is a fast-path connection.
func (f *fixture) connState(client net.Conn) (st int32, fast, found bool) {
	s := f.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.rwc.RemoteAddr().String() == client.LocalAddr().String() {
			return c.state.Load(), true, true
		}
	}
	for rc := range s.handed {
		if rc.RemoteAddr().String() == client.LocalAddr().String() {
			return rc.state.Load(), false, true
		}
	}
	return 0, false, false
}

// waitState waits until the server holds client's connection in state st,
// fast-path or handed off as fast says.
func (f *fixture) waitState(rc *rawConn, st int32, fast bool) {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, gotFast, ok := f.connState(rc.c)
		if ok && got == st && gotFast == fast {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("connection %s: state %d (fast %v, tracked %v), want %d (fast %v)", rc.c.LocalAddr(), got, gotFast, ok, st, fast)
		}
		time.Sleep(time.Millisecond)
	}
}

// open reports whether the server still counts client's connection.
func (f *fixture) open(rc *rawConn) bool {
	st, _, ok := f.connState(rc.c)
	return ok && st != stateClosed
}

// TestCapEvictsIdleThenOldestHeadNeverActive fills a cap of 5 with one
// connection of each kind, then opens connections whose requests block in
// the handler: each newcomer closes an idle connection first (fast-path or
// net/http's), then the head that has been due the longest (fast-path,
// then one handed off mid-head), and once every connection is answering a
// request, the newcomer is closed at once while the others finish.
func TestCapEvictsIdleThenOldestHeadNeverActive(t *testing.T) {
	var blocked atomic.Int64
	release := make(chan struct{})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	f := newFixture(t, func(s *http.Server) {
		s.ReadHeaderTimeout = 10 * time.Second // heads wait for eviction, not the timeout
		s.MaxHeaderBytes = 64 << 10
		next := s.Handler
		s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/block" {
				blocked.Add(1)
				<-release
				io.WriteString(w, "released")
				return
			}
			next.ServeHTTP(w, r)
		})
	}, func(o *Options) { o.MaxConns = 5; o.BufferSize = 1024 })
	t.Cleanup(unblock)
	f.warm("/wiki/Page")

	idleFast := f.dial()
	idleFast.send(get("/wiki/Page"))
	if res, _ := idleFast.read("GET"); res.Header.Get("X-Cache") != "HIT" {
		t.Fatal("the warm page was not a fast-path hit")
	}
	f.waitState(idleFast, stateIdle, true)

	idleHTTP := f.dial()
	idleHTTP.send(get("/elsewhere")) // not cacheable: net/http answers
	idleHTTP.read("GET")
	f.waitState(idleHTTP, stateIdle, false)

	oldHead := f.dial()
	oldHead.send("GET /wiki/Page HTTP/1.1\r\nHost: x\r\n")
	f.waitState(oldHead, stateHead, true)

	time.Sleep(2 * time.Millisecond) // heads are ranked by time
	handedHead := f.dial()           // a head over the 1 KiB buffer: net/http reads the rest
	handedHead.send("GET /wiki/Page HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("p", 1100))
	f.waitState(handedHead, stateHead, false)

	active := f.dial()
	active.send(get("/block"))
	for blocked.Load() < 1 {
		time.Sleep(time.Millisecond)
	}
	f.waitState(active, stateActive, false)
	if st := f.srv.ConnStats(); st.Open != 5 || st.Max != 5 {
		t.Fatalf("%+v, want 5 open under a cap of 5", st)
	}

	// Each newcomer blocks in the handler, so it is never a candidate.
	newcomers := []*rawConn{active}
	newcomer := func() {
		t.Helper()
		want := blocked.Load() + 1
		rc := f.dial()
		rc.send(get("/block"))
		deadline := time.Now().Add(5 * time.Second)
		for blocked.Load() < want {
			if time.Now().After(deadline) {
				t.Fatalf("the newcomer's request never reached the handler: %+v (%d blocked)", f.srv.ConnStats(), blocked.Load())
			}
			time.Sleep(time.Millisecond)
		}
		newcomers = append(newcomers, rc)
	}
	want := func(step string, idle, heads, refused uint64) {
		t.Helper()
		st := f.srv.ConnStats()
		if st.IdleEvicted != idle || st.SlowHeadEvicted != heads || st.Refused != refused || st.Open > st.Max {
			t.Fatalf("%s: %+v, want %d idle and %d slow heads evicted, %d refused", step, st, idle, heads, refused)
		}
	}

	newcomer()
	want("first newcomer", 1, 0, 0)
	if f.open(idleFast) == f.open(idleHTTP) {
		t.Fatalf("first newcomer: idle connections open: fast-path %v, net/http %v; want one closed", f.open(idleFast), f.open(idleHTTP))
	}
	newcomer()
	want("second newcomer", 2, 0, 0)
	if !idleFast.closed() || !idleHTTP.closed() {
		t.Fatal("second newcomer: an idle connection is still open")
	}
	if !f.open(oldHead) || !f.open(handedHead) {
		t.Fatal("a slow head was closed while idle connections were left")
	}

	newcomer()
	want("third newcomer", 2, 1, 0)
	if f.open(oldHead) || !f.open(handedHead) {
		t.Fatalf("third newcomer: oldest head open %v, younger head open %v; want the oldest closed", f.open(oldHead), f.open(handedHead))
	}
	newcomer()
	want("fourth newcomer", 2, 2, 0)
	if !oldHead.closed() || !handedHead.closed() {
		t.Fatal("fourth newcomer: a slow head is still open")
	}

	// Every connection is answering: the next one is closed at once.
	start := time.Now()
	refused := f.dial()
	if !refused.closed() {
		t.Fatal("a connection over the cap was kept while every other was answering")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the refused connection was closed after %v", d)
	}
	want("with every connection answering", 2, 2, 1)

	unblock()
	for i, rc := range newcomers {
		res, body := rc.read("GET")
		if res.StatusCode != 200 || string(body) != "released" {
			t.Errorf("request %d under the cap: %s %q", i, res.Status, body)
		}
	}
	// The answered connections are idle now: a newcomer makes room again.
	time.Sleep(2 * noRoomPause)
	rc := f.dial()
	rc.send(get("/wiki/Page"))
	if res, _ := rc.read("GET"); res.StatusCode != 200 {
		t.Fatalf("after the blocked requests: %s", res.Status)
	}
	want("after the blocked requests", 3, 2, 1)
}

// TestTrickledHeadIsCutAtTheHeaderDeadline: a head that has begun must be
// complete within the header timeout; bytes that trickle in do not move
// the deadline, whether the front or net/http reads them, and handing a
// head to net/http half-way does not start a second timeout.
func TestTrickledHeadIsCutAtTheHeaderDeadline(t *testing.T) {
	const timeout = 800 * time.Millisecond
	const slack = 400 * time.Millisecond // a second timeout from the hand-off would end at 1.4 s
	f := newFixture(t, func(s *http.Server) {
		s.ReadHeaderTimeout = timeout
		s.IdleTimeout = 10 * time.Second
		s.MaxHeaderBytes = 64 << 10
	}, func(o *Options) { o.BufferSize = 1024 })
	f.warm("/wiki/Page")

	// trickle sends one byte every 50 ms until the server closes the
	// connection, and returns how long after start that was.
	trickle := func(rc *rawConn, start time.Time) time.Duration {
		t.Helper()
		closed := make(chan struct{})
		go func() {
			rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
			io.Copy(io.Discard, rc.c)
			close(closed)
		}()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-closed:
				return time.Since(start)
			case <-tick.C:
				if time.Since(start) > 5*time.Second {
					t.Fatal("a trickled head was never cut off")
				}
				rc.c.Write([]byte("a"))
			}
		}
	}
	check := func(name string, d time.Duration) {
		t.Helper()
		t.Logf("%s: cut after %v (header timeout %v)", name, d.Round(time.Millisecond), timeout)
		if d < timeout-50*time.Millisecond || d > timeout+slack {
			t.Errorf("%s: cut after %v, want about %v", name, d, timeout)
		}
	}

	t.Run("a keep-alive head on the fast path", func(t *testing.T) {
		rc := f.dial()
		rc.send(get("/wiki/Page"))
		rc.read("GET")
		time.Sleep(200 * time.Millisecond) // idle: the idle timeout applies
		start := time.Now()
		rc.send("GET /wiki/Page HTTP/1.1\r\nHost: x\r\nX-Slow: ")
		check(t.Name(), trickle(rc, start))
	})
	t.Run("a new connection's head handed off before it is complete", func(t *testing.T) {
		rc := f.dial()
		start := time.Now()
		rc.send("GET /wiki/Page HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("p", 900))
		time.Sleep(timeout * 3 / 4)
		rc.send(strings.Repeat("q", 200)) // over the 1 KiB buffer: net/http reads on
		f.waitState(rc, stateHead, false)
		check(t.Name(), trickle(rc, start))
	})
	t.Run("a keep-alive head on a net/http connection", func(t *testing.T) {
		rc := f.dial()
		rc.send(get("/elsewhere"))
		rc.read("GET")
		time.Sleep(200 * time.Millisecond)
		start := time.Now()
		// net/http starts the header timeout once 4 bytes have come.
		rc.send("GET /wiki/Page HTTP/1.1\r\nHost: x\r\nX-Slow: ")
		check(t.Name(), trickle(rc, start))
	})
}
