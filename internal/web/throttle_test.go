package web

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestLoginThrottleAccount(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	th := newLoginThrottle(clk.now)
	for i := 0; i < loginFailsPerAccount; i++ {
		if _, wait := th.begin("Carol", "10.0.0.1"); wait != 0 {
			t.Fatalf("attempt %d throttled", i+1)
		}
		clk.add(time.Minute)
	}
	// The account is locked, from any address and in any letter case.
	for _, addr := range []string{"10.0.0.1", "10.9.9.9", "2001:db8::1"} {
		if _, wait := th.begin("CAROL", addr); wait <= 0 || wait > loginWindow {
			t.Errorf("attempt %d from %s: wait %v", loginFailsPerAccount+1, addr, wait)
		}
	}
	// Another account from the same address is not.
	if _, wait := th.begin("Dave", "10.0.0.1"); wait != 0 {
		t.Errorf("another account throttled: %v", wait)
	}
	// Sliding window: the oldest failure leaves 15 minutes after it was made.
	_, wait := th.begin("Carol", "10.0.0.1")
	clk.add(wait - time.Second)
	if _, w := th.begin("Carol", "10.0.0.1"); w != time.Second {
		t.Errorf("one second before the window slides: wait %v", w)
	}
	clk.add(time.Second)
	at, w := th.begin("Carol", "10.0.0.1")
	if w != 0 {
		t.Fatalf("after the window slid: wait %v", w)
	}
	// A success clears the account.
	th.succeeded("Carol", "10.0.0.1", at)
	for i := 0; i < loginFailsPerAccount; i++ {
		if _, wait := th.begin("carol", "10.0.0.1"); wait != 0 {
			t.Fatalf("after a success, attempt %d throttled", i+1)
		}
	}
}

func TestLoginThrottleAddress(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	th := newLoginThrottle(clk.now)
	for i := 0; i < loginFailsPerAddress; i++ {
		if _, wait := th.begin(fmt.Sprintf("user%d", i), "192.0.2.7"); wait != 0 {
			t.Fatalf("attempt %d throttled", i+1)
		}
	}
	if _, wait := th.begin("fresh", "192.0.2.7"); wait <= 0 {
		t.Error("the address is not throttled after 20 failures")
	}
	if _, wait := th.begin("fresh", "192.0.2.8"); wait != 0 {
		t.Error("another address is throttled")
	}
	// IPv6 counts per /64.
	for i := 0; i < loginFailsPerAddress; i++ {
		th.begin(fmt.Sprintf("v6user%d", i), fmt.Sprintf("2001:db8:1:2::%x", i+1))
	}
	if _, wait := th.begin("fresh6", "2001:db8:1:2:ffff::1"); wait <= 0 {
		t.Error("a /64 is not throttled as one address")
	}
	if _, wait := th.begin("fresh6", "2001:db8:1:3::1"); wait != 0 {
		t.Error("another /64 is throttled")
	}
	// Successes from a throttled-free address take back their own attempt:
	// a shared address (an office) keeps logging its users in.
	for i := 0; i < 100; i++ {
		at, wait := th.begin(fmt.Sprintf("ok%d", i), "198.51.100.1")
		if wait != 0 {
			t.Fatalf("successful login %d throttled", i+1)
		}
		th.succeeded(fmt.Sprintf("ok%d", i), "198.51.100.1", at)
	}
}

// Parallel guesses cannot slip under the limit: attempts count when they start.
func TestLoginThrottleBurst(t *testing.T) {
	th := newLoginThrottle(time.Now)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, wait := th.begin("Target", fmt.Sprintf("203.0.113.%d", i%250)); wait == 0 {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if allowed != loginFailsPerAccount {
		t.Errorf("%d of 200 parallel attempts allowed, want %d", allowed, loginFailsPerAccount)
	}
}

// Memory is bounded: a flood of distinct names and addresses keeps at most
// throttleShardKeys keys per shard.
func TestLoginThrottleBounded(t *testing.T) {
	th := newLoginThrottle(time.Now)
	for i := 0; i < throttleShards*throttleShardKeys*2; i++ {
		th.begin(fmt.Sprintf("n%d", i), fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
	}
	for i := range th.shards {
		if n := len(th.shards[i].m); n > throttleShardKeys {
			t.Errorf("shard %d holds %d keys", i, n)
		}
	}
}

func TestWaitText(t *testing.T) {
	for d, want := range map[time.Duration]string{time.Second: "a minute", time.Minute: "a minute",
		61 * time.Second: "2 minutes", 15 * time.Minute: "15 minutes"} {
		if got := waitText(d); got != want {
			t.Errorf("waitText(%v) = %q, want %q", d, got, want)
		}
	}
}
