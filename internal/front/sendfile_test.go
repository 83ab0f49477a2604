package front

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// dialSlow connects with a small receive buffer, so that a large response
// stalls in the server's send path until the client reads.
func (f *fixture) dialSlow() *rawConn {
	f.t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		c.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		return err
	}}
	c, err := d.Dial("tcp", f.addr)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	return &rawConn{t: f.t, c: c, br: bufio.NewReader(c)}
}

// setRcvBuf sets the client's receive buffer.
func (rc *rawConn) setRcvBuf(n int) {
	rc.t.Helper()
	raw, err := rc.c.(*net.TCPConn).SyscallConn()
	if err != nil {
		rc.t.Fatal(err)
	}
	raw.Control(func(fd uintptr) {
		err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
	})
	if err != nil {
		rc.t.Fatal(err)
	}
}

// readHead reads a response head byte by byte from the socket (so that
// nothing of the body is read ahead; do not mix with read) and returns its
// Content-Length.
func (rc *rawConn) readHead() int {
	rc.t.Helper()
	var head []byte
	b := make([]byte, 1)
	for !bytes.HasSuffix(head, []byte("\r\n\r\n")) {
		if _, err := rc.c.Read(b); err != nil {
			rc.t.Fatalf("reading head: %v (so far %q)", err, head)
		}
		head = append(head, b[0])
	}
	for _, line := range strings.Split(string(head), "\r\n") {
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			n := 0
			for _, c := range v {
				n = n*10 + int(c-'0')
			}
			return n
		}
	}
	rc.t.Fatalf("no Content-Length in %q", head)
	return 0
}

// A purge, and new large bodies stored after it, while a slow client is in
// the middle of a large body never change the bytes that client gets, and
// the arena gives the old body's pages back once it is sent.
// slowLarge starts a request for the large page on a connection whose
// client has read only its head and the first part bytes of its body, with
// the server's send buffer small: the rest stalls in the server's send
// path. It returns the body read so far (got[:part]) and the body due.
func slowLarge(t *testing.T, part int) (f *fixture, slow *rawConn, got []byte, want string) {
	t.Helper()
	// A client this slow takes seconds for 300 KB: more than the
	// fixture's write timeout on a loaded machine.
	f = newFixture(t, func(s *http.Server) { s.WriteTimeout = time.Minute }, func(o *Options) { o.sndBuf = 16 << 10 })
	f.warm("/wiki/Large")
	want = largeBody + "/wiki/Large"
	slow = f.dialSlow()
	slow.send(get("/wiki/Large"))
	if n := slow.readHead(); n != len(want) {
		t.Fatalf("Content-Length %d, want %d", n, len(want))
	}
	got = make([]byte, len(want))
	if _, err := io.ReadFull(slow.c, got[:part]); err != nil {
		t.Fatal(err)
	}
	return f, slow, got, want
}

func TestPurgeDuringSlowSend(t *testing.T) {
	f, slow, got, want := slowLarge(t, 16<<10)
	time.Sleep(20 * time.Millisecond) // the server's send stalls on the closed window
	inFlight := f.cache.Stats().ArenaBytes

	// Replace the page, and fill the cache with other large bodies that
	// would take the old one's place if its region were reused.
	f.cache.Purge("/wiki/Large")
	for _, p := range []string{"/wiki/Large", "/wiki/Large-2", "/wiki/Large-3", "/wiki/Large-4"} {
		f.warm(p)
		rc := f.dial()
		rc.send(get(p))
		rc.read("GET")
	}

	if !*goroutines && runtime.GOOS == "linux" {
		// The old body is still held: four bodies stored, plus it.
		if b := f.cache.Stats().ArenaBytes; b <= inFlight || b < 5*int64(len(want)) {
			t.Errorf("arena %d bytes before the purge, %d after four bodies were stored: the body in flight was not kept", inFlight, b)
		}
	}
	slow.setRcvBuf(1 << 20) // read the rest at full speed
	if _, err := io.ReadFull(slow.c, got[16<<10:]); err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		i := 0
		for i < len(got) && got[i] == want[i] {
			i++
		}
		t.Fatalf("body differs from byte %d of %d", i, len(got))
	}
	// The same connection goes on.
	slow.send(get("/wiki/Page"))
	if m := slow.readHead(); m != len(pageBody)+len("/wiki/Page") {
		t.Fatalf("next response's Content-Length %d", m)
	}

	if *goroutines || runtime.GOOS != "linux" {
		return
	}
	// Every body is given back once nothing refers to it.
	f.cache.PurgeAll()
	deadline := time.Now().Add(5 * time.Second)
	for f.cache.Stats().ArenaBytes != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if b := f.cache.Stats().ArenaBytes; b != 0 {
		t.Fatalf("arena holds %d bytes after every entry was purged and every send ended", b)
	}
}

// Shutdown waits for a large response a slow client is still reading.
func TestShutdownDrainsSlowSend(t *testing.T) {
	f, slow, got, want := slowLarge(t, 8<<10)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- f.srv.Shutdown(ctx) }()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with a response in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	slow.setRcvBuf(1 << 20)
	if _, err := io.ReadFull(slow.c, got[8<<10:]); err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatal("body differs")
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if !slow.closed() {
		t.Fatal("connection left open after its response during shutdown")
	}
}

// parkingHook parks every logged-in request once (when it may) and calls
// Later after wait; asked again, it answers "hello world" from memory.
func parkingHook(wait time.Duration) func(*Personal) bool {
	return func(p *Personal) bool {
		if p.NoWait && p.Later != nil {
			p.Pending = true
			time.AfterFunc(wait, p.Later)
			return false
		}
		p.Status = http.StatusOK
		p.Header = append(p.Header, "Content-Type: text/html\r\nContent-Length: 11\r\n"...)
		p.Body = append(p.Body, []byte("hello "), []byte("world"))
		return true
	}
}

// A request parked for a lookup when Shutdown begins is still answered,
// by the front (net/http drops the requests it reads once shutting down),
// on a connection closed after it, and Shutdown returns once it is.
func TestParkedRequestAnsweredDuringShutdown(t *testing.T) {
	f := newFixture(t, nil, func(o *Options) { o.Personal = parkingHook(200 * time.Millisecond) })
	rc := f.dial()
	rc.send(get("/wiki/Page", "Cookie", "wikid_session="+strings.Repeat("a", 40)))
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- f.srv.Shutdown(ctx) }()
	// On the goroutine path the hook answers at once, without parking,
	// before Shutdown begins.
	parked := !*goroutines && runtime.GOOS == "linux"
	res, body := rc.read("GET")
	if res.StatusCode != http.StatusOK || string(body) != "hello world" || res.Close != parked {
		t.Fatalf("parked request during shutdown: %s %.80q (Connection: close %v, want %v)", res.Status, body, res.Close, parked)
	}
	if f.calls.Load() != 0 {
		t.Fatalf("net/http answered %d requests, want 0", f.calls.Load())
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v (a parked request held it up)", err)
	}
}

// A parked request whose lookup outlasts the header timeout is answered by
// net/http, which waits for the lookup, rather than closed unanswered.
func TestParkedRequestOutlastingHeaderTimeout(t *testing.T) {
	f := newFixture(t, func(h *http.Server) { h.ReadHeaderTimeout = 300 * time.Millisecond },
		func(o *Options) { o.Personal = parkingHook(time.Minute) })
	rc := f.dial()
	rc.send(get("/wiki/Page", "Cookie", "wikid_session="+strings.Repeat("a", 40)))
	res, body := rc.read("GET")
	if *goroutines || runtime.GOOS != "linux" {
		if res.StatusCode != http.StatusOK || string(body) != "hello world" {
			t.Fatalf("goroutine path: %s %q", res.Status, body)
		}
		return
	}
	if res.StatusCode != http.StatusOK || !strings.HasSuffix(string(body), "/wiki/Page") {
		t.Fatalf("slow lookup: %s %q", res.Status, body)
	}
	if f.calls.Load() != 1 {
		t.Fatalf("net/http answered %d requests, want 1", f.calls.Load())
	}
}

// A logged-in request whose session must be read first is parked on the
// event loop and answered there once the hook's lookup is done, rather
// than handed to net/http; the connection stays on the fast path.
func TestPersonalAskedAgainLater(t *testing.T) {
	var asked, later atomic.Int32
	var known atomic.Bool
	hook := func(p *Personal) bool {
		asked.Add(1)
		if p.NoWait && !known.Load() {
			if p.Later == nil {
				return false
			}
			later.Add(1)
			p.Pending = true
			go func(done func()) {
				time.Sleep(30 * time.Millisecond)
				known.Store(true)
				done()
			}(p.Later)
			return false
		}
		p.Status = http.StatusOK
		p.Header = append(p.Header, "Content-Type: text/html\r\nContent-Length: 11\r\n"...)
		p.Body = append(p.Body, []byte("hello "), []byte("world"))
		return true
	}
	f := newFixture(t, nil, func(o *Options) { o.Personal = hook })
	rc := f.dial()
	cookie := "wikid_session=" + strings.Repeat("a", 40)
	for i := range 2 {
		before := f.calls.Load()
		rc.send(get("/wiki/Page", "Cookie", cookie))
		res, body := rc.read("GET")
		if res.StatusCode != 200 || string(body) != "hello world" {
			t.Fatalf("request %d: %s %q", i, res.Status, body)
		}
		if f.calls.Load() != before {
			t.Fatalf("request %d went to net/http", i)
		}
	}
	if !*goroutines && runtime.GOOS == "linux" {
		if later.Load() != 1 || asked.Load() != 3 {
			t.Fatalf("hook asked %d times, %d with a lookup started; want 3 and 1", asked.Load(), later.Load())
		}
	}
}
