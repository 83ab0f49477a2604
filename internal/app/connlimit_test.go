package app_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/config"
)

// floodEnv tells a child test process to be the slow clients of
// TestSlowClientsCannotExhaustConnections: "address clients duration".
const floodEnv = "WIKID_TEST_SLOW_FLOOD"

// TestSlowClientsCannotExhaustConnections: 3,000 clients that send a
// request head one byte per second (and reconnect when the server drops
// them) against a cap of 500 connections. While they run, a reader opening
// a fresh connection gets the whole Main Page within a second every time,
// and the server never holds more descriptors than the cap plus a few.
//
// The slow clients run in a child process (TestSlowClientFlood), so that
// every descriptor of this process above the baseline is the server's.
// Not parallel: the latency bound and the descriptor count are only
// meaningful while no other test of the package runs.
func TestSlowClientsCannotExhaustConnections(t *testing.T) {
	const (
		maxConns  = 500
		slowConns = 3000
		flood     = 7 * time.Second
		pageBound = 5 * time.Second // every reader's page, from dial to last byte: generous, the machine may be busy
		// fdSlack covers the evicted sockets still being closed (at most
		// 32, front.maxClosing), the descriptors os/exec holds for the
		// child, the reader's own socket and database files opened under
		// load.
		fdSlack = 40
	)
	if testing.Short() {
		t.Skip("a 7-second flood of 3,000 connections")
	}
	if _, err := os.ReadDir("/proc/self/fd"); err != nil {
		t.Skipf("cannot count descriptors: %v", err)
	}
	a, _ := apptest.Serve(t, func(cfg *config.Config) {
		cfg.AccessLog = false
		cfg.MaxConns = maxConns
		cfg.OpsAddr = "127.0.0.1:0"
	})
	addr := a.Addr()

	// The reference page, which also puts it in the edge.
	want, err := fetchPage(addr)
	if err != nil {
		t.Fatal(err)
	}
	if want.status != 200 || len(want.body) < 1000 {
		t.Fatalf("Main Page: %d, %d bytes", want.status, len(want.body))
	}
	if st := a.ConnStats(); st.Max != maxConns {
		t.Fatalf("cap %d, want max_conns %d", st.Max, maxConns)
	}
	settledGoroutines(0) // the reference connection's goroutines are gone
	baseFDs := openFDs(t)

	out := &apptest.SyncBuffer{}
	child := exec.Command(os.Args[0], "-test.run=^TestSlowClientFlood$", "-test.v")
	child.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %s", floodEnv, addr, slowConns, flood))
	child.Stdout, child.Stderr = out, out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var childErr error
	go func() { childErr = child.Wait(); close(exited) }()
	defer func() {
		child.Process.Kill() // if the test ends early
		<-exited
	}()

	// Sample this process's descriptors and the app's count while the
	// flood runs.
	var maxFDs, maxOpen atomic.Int64
	stopSampling := make(chan struct{})
	var sampling sync.WaitGroup
	sampling.Go(func() {
		for {
			select {
			case <-stopSampling:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if fds, err := os.ReadDir("/proc/self/fd"); err == nil && int64(len(fds)-baseFDs) > maxFDs.Load() {
				maxFDs.Store(int64(len(fds) - baseFDs))
			}
			if n := int64(a.ConnStats().Open); n > maxOpen.Load() {
				maxOpen.Store(n)
			}
		}
	})

	// Readers: a fresh connection every 300 ms once the server is full.
	start := time.Now()
	for a.ConnStats().Open < maxConns*9/10 {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the slow clients never filled the server: %+v\n%s", a.ConnStats(), out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	full := time.Since(start)
	time.Sleep(500 * time.Millisecond)
	var times []time.Duration
	for time.Since(start) < flood-time.Second {
		began := time.Now()
		got, err := fetchPage(addr)
		d := time.Since(began)
		times = append(times, d.Round(100*time.Microsecond))
		switch {
		case err != nil:
			t.Errorf("reader %d: %v after %v", len(times), err, d)
		case got.status != 200 || !bytes.Equal(got.body, want.body):
			t.Errorf("reader %d: status %d, %d bytes, want 200 and the %d-byte page", len(times), got.status, len(got.body), len(want.body))
		case d > pageBound:
			t.Errorf("reader %d: the page took %v, want under %v", len(times), d, pageBound)
		}
		time.Sleep(300 * time.Millisecond)
	}
	during := a.ConnStats()
	close(stopSampling)
	sampling.Wait()
	select {
	case <-exited:
		if childErr != nil {
			t.Errorf("slow clients: %v\n%s", childErr, out.String())
		}
	case <-time.After(flood + 10*time.Second):
		t.Fatalf("the slow clients did not finish\n%s", out.String())
	}

	t.Logf("server full after %v; readers: %v", full.Round(time.Millisecond), times)
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "slow clients:") {
			t.Log(line)
		}
	}
	t.Logf("server: %+v; at most %d counted open, %d descriptors over the baseline of %d", during, maxOpen.Load(), maxFDs.Load(), baseFDs)
	if len(times) < 3 {
		t.Errorf("only %d readers ran during the flood", len(times))
	}
	if during.SlowHeadEvicted == 0 {
		t.Error("no slow head was evicted: the flood never pressed on the cap")
	}
	// The operator sees it in /metrics.
	if res, err := http.Get("http://" + a.OpsAddr() + "/metrics"); err != nil {
		t.Error(err)
	} else {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		m := regexp.MustCompile(`(?m)^wikid_conns_evicted_total\{state="slow_head"\} (\d+)`).FindSubmatch(b)
		if m == nil || string(m[1]) == "0" || !bytes.Contains(b, []byte(fmt.Sprintf("wikid_conns_max %d", maxConns))) {
			t.Errorf("/metrics does not show the evictions and the cap:\n%s", grepLines(string(b), "wikid_conns"))
		}
	}
	if n := maxOpen.Load(); n > maxConns {
		t.Errorf("the server counted %d open connections, over the cap of %d", n, maxConns)
	}
	if n := maxFDs.Load(); n > maxConns+fdSlack {
		t.Errorf("the server held %d descriptors over its baseline, over the cap of %d (+%d)", n, maxConns, fdSlack)
	}

	// The slow clients are gone: their connections close and the wiki
	// still answers.
	deadline := time.Now().Add(5 * time.Second)
	for a.ConnStats().Open > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if st := a.ConnStats(); st.Open > 0 {
		t.Errorf("%d connections still counted 5 s after the clients left", st.Open)
	}
	if got, err := fetchPage(addr); err != nil || got.status != 200 {
		t.Errorf("after the flood: %v, status %d", err, got.status)
	}
}

// TestSlowClientFlood is the slow clients of
// TestSlowClientsCannotExhaustConnections, run in a child process. Each
// client writes one byte a second of a request head that never ends, and
// dials again as soon as the server has dropped it.
func TestSlowClientFlood(t *testing.T) {
	spec := os.Getenv(floodEnv)
	if spec == "" {
		t.Skip("the child process of TestSlowClientsCannotExhaustConnections")
	}
	f := strings.Fields(spec)
	if len(f) != 3 {
		t.Fatalf("%s=%q: want \"address clients duration\"", floodEnv, spec)
	}
	addr := f[0]
	clients, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatalf("%s=%q: %v", floodEnv, spec, err)
	}
	flood, err := time.ParseDuration(f[2])
	if err != nil {
		t.Fatalf("%s=%q: %v", floodEnv, spec, err)
	}
	head := "GET /wiki/Main_Page HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("s", 100)
	end := time.Now().Add(flood)
	var wg sync.WaitGroup
	var dials, dialErrs, dropped atomic.Int64
	for i := range clients {
		wg.Go(func() {
			// Spread the clients over the first second.
			time.Sleep(time.Duration(i) * time.Second / time.Duration(clients))
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			var c net.Conn
			defer func() {
				if c != nil {
					c.Close()
				}
			}()
			n := 0
			for time.Now().Before(end) {
				if c == nil {
					var err error
					if c, err = net.DialTimeout("tcp", addr, 2*time.Second); err != nil {
						dialErrs.Add(1)
						c = nil
					} else {
						dials.Add(1)
						n = 0
					}
				}
				if c != nil {
					if _, err := c.Write([]byte{head[n%len(head)]}); err != nil {
						dropped.Add(1) // evicted: dial again at once
						c.Close()
						c = nil
						continue
					}
					n++
				}
				<-tick.C
			}
		})
	}
	wg.Wait()
	fmt.Printf("slow clients: %d dials (%d failed), %d dropped by the server\n", dials.Load(), dialErrs.Load(), dropped.Load())
}

type page struct {
	status int
	body   []byte
}

// fetchPage gets /wiki/Main_Page on a new connection, uncompressed.
func fetchPage(addr string) (page, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return page{}, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET /wiki/Main_Page HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
		return page{}, err
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return page{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return page{}, fmt.Errorf("reading the body: %w", err)
	}
	return page{res.StatusCode, b}, nil
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}
