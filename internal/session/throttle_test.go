package session

import (
	"encoding/base64"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

// fail makes one failed login from client against account after waiting as
// long as the throttle asks, and returns that wait (0: none was needed).
func fail(t *testing.T, th *Throttle, clk *fakeClock, client, account string) time.Duration {
	t.Helper()
	_, wait := th.Begin(addr(client), account)
	if wait > 0 {
		clk.add(wait)
		if _, again := th.Begin(addr(client), account); again != 0 {
			t.Fatalf("%s → %s: still throttled (%v) after waiting %v", client, account, again, wait)
		}
	}
	return wait
}

func TestThrottleWaitsGrowPerAddressAndAccount(t *testing.T) {
	clk := newClock()
	p := DefaultPolicy()
	th := NewThrottle(p, clk.now)
	for i := range p.FreePerAccount {
		if w := fail(t, th, clk, "192.0.2.1", "Carol"); w != 0 {
			t.Fatalf("free failure %d waited %v", i+1, w)
		}
	}
	// Then every failure doubles the wait, up to the cap, in any letter case.
	want := p.FirstWait
	for i := range 14 {
		name := "Carol"
		if i%2 == 1 {
			name = "CAROL"
		}
		if w := fail(t, th, clk, "192.0.2.1", name); w != want {
			t.Fatalf("failure %d over the limit waited %v, want %v", i+1, w, want)
		}
		want = min(2*want, p.MaxWait)
	}
	if want != p.MaxWait {
		t.Fatalf("the wait did not reach the cap: %v", want)
	}
	// The wait counts from the latest failure: one second early is one second.
	_, wait := th.Begin(addr("192.0.2.1"), "Carol")
	clk.add(wait - time.Second)
	if _, w := th.Begin(addr("192.0.2.1"), "Carol"); w != time.Second {
		t.Errorf("one second before the end of the wait: %v", w)
	}
	// A quiet hour forgets everything.
	clk.add(p.Forget)
	for i := range p.FreePerAccount {
		if w := fail(t, th, clk, "192.0.2.1", "Carol"); w != 0 {
			t.Fatalf("after a quiet period, failure %d waited %v", i+1, w)
		}
	}
}

// (a) An attacker at one address fails 100 times against Admin: the owner
// at their own address logs in at once, and so does anyone else at other
// addresses.
func TestThrottleNoAccountLockout(t *testing.T) {
	clk := newClock()
	th := NewThrottle(DefaultPolicy(), clk.now)
	for range 100 {
		fail(t, th, clk, "203.0.113.66", "Admin")
	}
	if _, w := th.Begin(addr("203.0.113.66"), "Admin"); w == 0 {
		t.Error("the attacker is not slowed down")
	}
	for _, owner := range []string{"198.51.100.1", "2001:db8:1::1", "10.0.0.1"} {
		if _, w := th.Begin(addr(owner), "admin"); w != 0 {
			t.Errorf("the owner at %s waits %v", owner, w)
		}
	}
}

// (b) 50 addresses each fail 10 times against Admin: each of them waits
// longer with every failure over the limit; the owner at a fresh address
// logs in at once.
func TestThrottleDistributedAttack(t *testing.T) {
	clk := newClock()
	p := DefaultPolicy()
	th := NewThrottle(p, clk.now)
	for i := range 50 {
		client := fmt.Sprintf("198.18.%d.%d", i/200, i%200+1)
		var prev time.Duration
		for n := range 10 {
			w := fail(t, th, clk, client, "Admin")
			switch {
			case n < p.FreePerAccount && w != 0:
				t.Fatalf("%s: free failure %d waited %v", client, n+1, w)
			case n >= p.FreePerAccount && w <= prev:
				t.Fatalf("%s: failure %d waited %v, not more than the one before (%v)", client, n+1, w, prev)
			}
			prev = w
		}
		if prev != p.FirstWait<<(10-p.FreePerAccount-1) {
			t.Errorf("%s: the 10th failure waited %v", client, prev)
		}
	}
	at, w := th.Begin(addr("192.0.2.200"), "Admin")
	if w != 0 {
		t.Fatalf("the owner waits %v", w)
	}
	th.Succeeded(at)
}

// (c) An attacker's address is slowed across accounts.
func TestThrottlePerAddress(t *testing.T) {
	clk := newClock()
	p := DefaultPolicy()
	th := NewThrottle(p, clk.now)
	for i := range p.FreePerAddress {
		if w := fail(t, th, clk, "192.0.2.7", fmt.Sprintf("user%d", i)); w != 0 {
			t.Fatalf("failure %d waited %v", i+1, w)
		}
	}
	if _, w := th.Begin(addr("192.0.2.7"), "fresh"); w != p.FirstWait {
		t.Errorf("a fresh account from the address: wait %v, want %v", w, p.FirstWait)
	}
	if _, w := th.Begin(addr("192.0.2.8"), "fresh"); w != 0 {
		t.Errorf("another address waits %v", w)
	}
	// IPv6 counts per /64.
	for i := range p.FreePerAddress {
		fail(t, th, clk, fmt.Sprintf("2001:db8:1:2::%x", i+1), fmt.Sprintf("v6user%d", i))
	}
	if _, w := th.Begin(addr("2001:db8:1:2:ffff::1"), "fresh6"); w == 0 {
		t.Error("a /64 is not throttled as one address")
	}
	if _, w := th.Begin(addr("2001:db8:1:3::1"), "fresh6"); w != 0 {
		t.Error("another /64 is throttled")
	}
	// An IPv4-mapped address is its IPv4 address.
	if _, w := th.Begin(addr("::ffff:192.0.2.7"), "fresh"); w == 0 {
		t.Error("the IPv4-mapped form of a throttled address is not throttled")
	}
}

// (d) A success clears its (address, account) key and takes back its own
// attempt from the address.
func TestThrottleSuccess(t *testing.T) {
	clk := newClock()
	p := DefaultPolicy()
	th := NewThrottle(p, clk.now)
	for range p.FreePerAccount - 1 {
		fail(t, th, clk, "203.0.113.5", "Office mate")
	}
	at, w := th.Begin(addr("203.0.113.5"), "office mate")
	if w != 0 {
		t.Fatalf("the right password waits %v", w)
	}
	th.Succeeded(at)
	for i := range p.FreePerAccount {
		if w := fail(t, th, clk, "203.0.113.5", "Office mate"); w != 0 {
			t.Fatalf("after a success, failure %d waited %v", i+1, w)
		}
	}
	if _, w := th.Begin(addr("203.0.113.5"), "Office mate"); w == 0 {
		t.Error("not throttled after the limit again")
	}

	// Many users behind one address keep logging in.
	for i := range 100 {
		at, w := th.Begin(addr("198.51.100.1"), fmt.Sprintf("ok%d", i))
		if w != 0 {
			t.Fatalf("successful login %d waits %v", i+1, w)
		}
		th.Succeeded(at)
	}

	// A success at an address over its limit does not make the next user
	// wait longer: the address is left as it was before the attempt.
	for i := range p.FreePerAddress + 3 {
		fail(t, th, clk, "192.0.2.50", fmt.Sprintf("guess%d", i))
	}
	_, w = th.Begin(addr("192.0.2.50"), "someone")
	clk.add(w)
	at, w2 := th.Begin(addr("192.0.2.50"), "someone")
	if w2 != 0 {
		t.Fatalf("after waiting %v: %v", w, w2)
	}
	th.Succeeded(at)
	if _, w3 := th.Begin(addr("192.0.2.50"), "someone else"); w3 != 0 {
		t.Errorf("after another user's success the address waits %v", w3)
	}
	th.Succeeded(Attempt{}) // a refused attempt has nothing to take back
}

// Parallel guesses cannot slip under the limit: attempts count when they start.
func TestThrottleBurst(t *testing.T) {
	p := DefaultPolicy()
	for _, tc := range []struct {
		name    string
		client  func(i int) string
		account func(i int) string
		want    int
	}{
		{"one address, one account", func(int) string { return "203.0.113.1" }, func(int) string { return "Target" }, p.FreePerAccount},
		{"one address, many accounts", func(int) string { return "203.0.113.2" }, func(i int) string { return fmt.Sprint("user", i) }, p.FreePerAddress},
		{"many addresses, one account", func(i int) string { return fmt.Sprintf("198.18.%d.%d", i/250, i%250) }, func(int) string { return "Target" }, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th := NewThrottle(p, time.Now)
			var wg sync.WaitGroup
			var mu sync.Mutex
			allowed := 0
			for i := range 200 {
				wg.Go(func() {
					if _, w := th.Begin(addr(tc.client(i)), tc.account(i)); w == 0 {
						mu.Lock()
						allowed++
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if allowed != tc.want {
				t.Errorf("%d of 200 parallel attempts allowed, want %d", allowed, tc.want)
			}
		})
	}
}

// Memory is bounded: a flood of distinct addresses and names keeps at most
// throttleShardKeys keys per shard, and throttled keys outlive the flood.
func TestThrottleBounded(t *testing.T) {
	clk := newClock()
	th := NewThrottle(DefaultPolicy(), clk.now)
	for range 30 {
		fail(t, th, clk, "192.0.2.99", "Admin")
	}
	for i := range throttleShards * throttleShardKeys * 2 {
		th.Begin(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), fmt.Sprint("n", i))
	}
	for i := range th.shards {
		if n := len(th.shards[i].m); n > throttleShardKeys {
			t.Errorf("shard %d holds %d keys", i, n)
		}
	}
	if _, w := th.Begin(addr("192.0.2.99"), "Admin"); w == 0 {
		t.Error("the flood evicted a throttled key")
	}
	// A long name is kept short.
	long := string(make([]byte, 1<<20))
	th.Begin(addr("192.0.2.100"), long)
	for i := range th.shards {
		for k := range th.shards[i].m {
			if len(k) > maxAccountKey+64 {
				t.Fatalf("a key of %d bytes", len(k))
			}
		}
	}
}

func TestThrottleDelay(t *testing.T) {
	th := NewThrottle(DefaultPolicy(), time.Now)
	for fails, want := range map[int]time.Duration{0: 0, 4: 0, 5: time.Second, 6: 2 * time.Second, 14: 512 * time.Second,
		15: 15 * time.Minute, 1 << 30: 15 * time.Minute} {
		if got := th.delay(fails, 5); got != want {
			t.Errorf("delay(%d) = %v, want %v", fails, got, want)
		}
	}
}

// A device token's attempts count under the token alone: failures by
// anyone at the address never slow it, and its own failures slow only it.
func TestThrottleDevice(t *testing.T) {
	clk := newClock()
	p := DefaultPolicy()
	th := NewThrottle(p, clk.now)
	ds := NewDevices([]byte("0123456789abcdef0123456789abcdef"))
	owner := ds.Check(ds.Issue("Admin"), "admin")
	if !owner.Valid() {
		t.Fatal("a fresh token for Admin is not valid for admin")
	}
	// An attacker at the owner's address fails against Admin and others.
	for range 100 {
		th.Begin(addr("203.0.113.66"), "Admin")
	}
	for i := range 50 {
		th.Begin(addr("203.0.113.66"), fmt.Sprint("user", i))
	}
	if _, w := th.Begin(addr("203.0.113.66"), "Admin"); w == 0 {
		t.Fatal("the attacker is not slowed down")
	}
	at, w := th.BeginDevice(owner)
	if w != 0 {
		t.Fatalf("the owner's device waits %v", w)
	}
	th.Succeeded(at)

	// The device's own failures: free ones, then growing waits.
	want := time.Duration(0)
	for i := range p.FreePerAccount + 4 {
		_, w := th.BeginDevice(owner)
		if w != want {
			t.Fatalf("device failure %d: wait %v, want %v", i+1, w, want)
		}
		if w > 0 {
			clk.add(w)
			th.BeginDevice(owner)
		}
		if i+1 >= p.FreePerAccount {
			want = p.FirstWait << (i + 1 - p.FreePerAccount)
		}
	}
	// Another device of the same account, and the address, are untouched.
	if _, w := th.BeginDevice(ds.Check(ds.Issue("Admin"), "Admin")); w != 0 {
		t.Errorf("another browser's device waits %v", w)
	}
	if _, w := th.Begin(addr("192.0.2.9"), "Admin"); w != 0 {
		t.Errorf("an address waits %v after device failures", w)
	}
}

// Device failures never count against the address they come from.
func TestThrottleDeviceFailuresSpareTheAddress(t *testing.T) {
	clk := newClock()
	p := DefaultPolicy()
	th := NewThrottle(p, clk.now)
	ds := NewDevices([]byte("0123456789abcdef0123456789abcdef"))
	for i := range 3 * p.FreePerAddress {
		d := ds.Check(ds.Issue(fmt.Sprint("user", i)), fmt.Sprint("user", i))
		for range p.FreePerAccount {
			th.BeginDevice(d)
		}
	}
	if _, w := th.Begin(addr("192.0.2.1"), "someone"); w != 0 {
		t.Errorf("the address waits %v", w)
	}
}

func TestDeviceTokens(t *testing.T) {
	ds := NewDevices([]byte("0123456789abcdef0123456789abcdef"))
	other := NewDevices([]byte("another secret, also 32 bytes ok"))
	tok := ds.Issue("Ärger Admin")
	if !ds.Check(tok, "ärger admin").Valid() || !ds.Check(tok, "ÄRGER ADMIN").Valid() {
		t.Fatal("a token is not valid for its account in another letter case")
	}
	if ds.Issue("Admin") == ds.Issue("Admin") {
		t.Error("two tokens for one account are equal: browsers would share a throttle key")
	}
	n, rest, _ := strings.Cut(tok, ".")
	_, sig, _ := strings.Cut(rest, ".")
	admin := base64.RawURLEncoding.EncodeToString([]byte("admin"))
	for name, bad := range map[string]string{
		"another account's token":   ds.Issue("Someone"),
		"another server's token":    other.Issue("Ärger Admin"),
		"the account part replaced": n + "." + admin + "." + sig,
		"a changed signature":       tok[:len(tok)-1] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", tok[len(tok)-1])+1)%16]),
		"no signature":              n + "." + admin + ".",
		"garbage":                   "garbage",
		"empty":                     "",
		"an anonymous CSRF token":   "s8k2j1." + sig,
		"a token of a huge length":  tok + strings.Repeat("x", 2000),
	} {
		if ds.Check(bad, "Ärger Admin").Valid() {
			t.Errorf("%s is valid", name)
		}
	}
	if ds.Check(tok, "Admin").Valid() {
		t.Error("a token is valid for another account")
	}
}

// Cancel takes back an attempt that checked nothing; BeginAddress counts
// per address alone.
func TestThrottleCancelAndAddressOnly(t *testing.T) {
	clk := newClock()
	p := DefaultPolicy()
	th := NewThrottle(p, clk.now)
	for range 10 * p.FreePerAccount {
		at, w := th.Begin(addr("192.0.2.1"), "Busy")
		if w != 0 {
			t.Fatalf("cancelled attempts made the next one wait %v", w)
		}
		th.Cancel(at)
	}
	for i := range p.FreePerAccount {
		if w := fail(t, th, clk, "192.0.2.1", "Busy"); w != 0 {
			t.Fatalf("failure %d after cancelled ones waited %v", i+1, w)
		}
	}
	th.Cancel(Attempt{})

	rp := RegistrationPolicy()
	signups := NewThrottle(rp, clk.now)
	for i := range rp.FreePerAddress {
		if _, w := signups.BeginAddress(addr("198.51.100.1")); w != 0 {
			t.Fatalf("account %d waits %v", i+1, w)
		}
	}
	_, w := signups.BeginAddress(addr("198.51.100.1"))
	if w != rp.FirstWait {
		t.Fatalf("account %d waits %v, want %v", rp.FreePerAddress+1, w, rp.FirstWait)
	}
	if _, w := signups.BeginAddress(addr("198.51.100.2")); w != 0 {
		t.Errorf("another address waits %v", w)
	}
	clk.add(w)
	at, w := signups.BeginAddress(addr("198.51.100.1"))
	if w != 0 {
		t.Fatalf("after the wait: %v", w)
	}
	signups.Cancel(at)
	if _, w := signups.BeginAddress(addr("198.51.100.1")); w != 0 {
		t.Errorf("a cancelled account creation still counts: %v", w)
	}
	if _, w := signups.BeginAddress(addr("198.51.100.1")); w != 2*rp.FirstWait {
		t.Errorf("the next account waits %v, want %v", w, 2*rp.FirstWait)
	}
}
