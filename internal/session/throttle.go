package session

import (
	"hash/maphash"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/text/cases"
)

// Login throttling. Failed logins are counted in memory under two keys: the
// client address with the account, and the client address alone. Each key
// has a few free failures; after them every further failure doubles the
// wait before the next attempt, up to a cap, and a key with no failure for a
// while starts over. There is deliberately no counter per account alone:
// failures against an account slow down the addresses they come from and
// never stop the account's owner logging in from their own address.
//
// A login asks Begin before anything costly (the store, and above all
// argon2), so that guessing costs the server no hashing either. The attempt
// is counted when it starts, so that a burst of parallel guesses cannot all
// slip under the limit, and Succeeded takes it back: a success clears its
// (address, account) key and leaves the address as it was before the
// attempt, so many users behind one address keep logging in.

// Policy is how failed logins are slowed down.
type Policy struct {
	FreePerAccount int           // failures per (address, account) before any wait
	FreePerAddress int           // failures per address, over all accounts, before any wait
	FirstWait      time.Duration // the wait after the first failure over a limit; each further one doubles it
	MaxWait        time.Duration // the longest wait
	Forget         time.Duration // a key with no failure for this long starts over (more than MaxWait)
}

// DefaultPolicy: 5 free failures per (address, account) and 20 per address,
// then waits of 1 s, 2 s, 4 s … up to 15 minutes; a key quiet for an hour
// is forgotten.
func DefaultPolicy() Policy {
	return Policy{FreePerAccount: 5, FreePerAddress: 20, FirstWait: time.Second, MaxWait: 15 * time.Minute, Forget: time.Hour}
}

const (
	throttleShards    = 32
	throttleShardKeys = 4096 // bound on keys per shard (memory)
	maxAccountKey     = 256  // bytes of an account name kept in a key (valid names are shorter)
)

// Throttle counts failed logins. It is safe for concurrent use.
type Throttle struct {
	policy Policy
	seed   maphash.Seed
	now    func() time.Time
	shards [throttleShards]throttleShard
}

type throttleShard struct {
	mu sync.Mutex
	m  map[string]counter
}

// counter is one key's failures: how many since it last started over, and
// when the latest was counted (unix nanoseconds).
type counter struct {
	fails int
	last  int64
}

// NewThrottle returns an empty throttle that reads the time from now.
func NewThrottle(p Policy, now func() time.Time) *Throttle {
	if p.Forget < p.MaxWait {
		p.Forget = p.MaxWait
	}
	t := &Throttle{policy: p, seed: maphash.MakeSeed(), now: now}
	for i := range t.shards {
		t.shards[i].m = map[string]counter{}
	}
	return t
}

// Attempt is a login attempt counted by Begin, for Succeeded.
type Attempt struct {
	pairKey, addrKey string
	at               int64
	addrLast         int64 // the address's last failure before this attempt
}

// Begin counts a login attempt for account from client, or returns how long
// the client must wait first (then nothing is counted).
func (t *Throttle) Begin(client netip.Addr, account string) (Attempt, time.Duration) {
	now := t.now().UnixNano()
	ak := addressKey(client)
	pk := pairKey(ak, account)
	sp, sa := t.lockPair(pk, ak)
	defer unlockPair(sp, sa)
	pc, ac := sp.get(pk, t.policy.Forget, now), sa.get(ak, t.policy.Forget, now)
	wait := max(t.wait(pc, t.policy.FreePerAccount, now), t.wait(ac, t.policy.FreePerAddress, now))
	if wait > 0 {
		return Attempt{}, wait
	}
	a := Attempt{pairKey: pk, addrKey: ak, at: now, addrLast: ac.last}
	sp.put(pk, counter{fails: pc.fails + 1, last: now}, t.policy.Forget, now)
	sa.put(ak, counter{fails: ac.fails + 1, last: now}, t.policy.Forget, now)
	return a, 0
}

// Succeeded takes back attempt a, whose password was right: its (address,
// account) key starts over and the address is as it was before a.
func (t *Throttle) Succeeded(a Attempt) {
	if a.pairKey == "" {
		return
	}
	sp, sa := t.lockPair(a.pairKey, a.addrKey)
	defer unlockPair(sp, sa)
	delete(sp.m, a.pairKey)
	c, ok := sa.m[a.addrKey]
	if !ok {
		return
	}
	c.fails--
	if c.last == a.at {
		c.last = a.addrLast
	}
	if c.fails <= 0 {
		delete(sa.m, a.addrKey)
	} else {
		sa.m[a.addrKey] = c
	}
}

// wait is how long after now c's next attempt must wait.
func (t *Throttle) wait(c counter, free int, now int64) time.Duration {
	d := t.delay(c.fails, free)
	if d == 0 {
		return 0
	}
	return max(0, time.Duration(c.last+int64(d)-now))
}

// delay is the wait after fails failures: none up to free, then FirstWait,
// doubled for each failure over, capped at MaxWait.
func (t *Throttle) delay(fails, free int) time.Duration {
	over := fails - free
	if over < 0 {
		return 0
	}
	d := t.policy.FirstWait
	for ; over > 0 && d < t.policy.MaxWait; over-- {
		d *= 2
	}
	return min(d, t.policy.MaxWait)
}

// get returns key's counter, or the zero counter when it was forgotten.
func (sh *throttleShard) get(key string, forget time.Duration, now int64) counter {
	c, ok := sh.m[key]
	if ok && now-c.last >= int64(forget) {
		delete(sh.m, key)
		return counter{}
	}
	return c
}

func (sh *throttleShard) put(key string, c counter, forget time.Duration, now int64) {
	if _, ok := sh.m[key]; !ok && len(sh.m) >= throttleShardKeys {
		sh.evict(forget, now)
	}
	sh.m[key] = c
}

// evict makes room when a shard is full: it drops forgotten keys, then keys
// with few failures (they impose no wait yet; losing them costs an attacker
// a handful of free guesses at most), then, if the shard is still more than
// three quarters full, arbitrary keys down to that, so that a flood of new
// keys costs one scan per quarter of the shard, not one per key.
func (sh *throttleShard) evict(forget time.Duration, now int64) {
	const room = throttleShardKeys * 3 / 4
	for k, c := range sh.m {
		if now-c.last >= int64(forget) {
			delete(sh.m, k)
		}
	}
	for fails := 1; fails <= 2 && len(sh.m) > room; fails++ {
		for k, c := range sh.m {
			if len(sh.m) <= room {
				break
			}
			if c.fails <= fails {
				delete(sh.m, k)
			}
		}
	}
	for k := range sh.m {
		if len(sh.m) <= room {
			break
		}
		delete(sh.m, k)
	}
}

// addressKey names an address's counter. IPv6 addresses count per /64, the
// block one client usually holds.
func addressKey(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	if a.Is6() {
		p, _ := a.Prefix(64)
		return "a\x00" + p.String()
	}
	return "a\x00" + a.String()
}

// pairKey names the (address, account) counter. Account names are
// case-folded as the store compares them, and cut short: a name longer than
// any valid one only ever fails.
func pairKey(addrKey, account string) string {
	acct := cases.Fold().String(account)
	if len(acct) > maxAccountKey {
		acct = acct[:maxAccountKey]
	}
	return "p\x00" + addrKey[2:] + "\x00" + acct
}

func (t *Throttle) shardIndex(key string) int {
	return int(maphash.String(t.seed, key) % throttleShards)
}

// lockPair locks the shards of two keys in index order (they may be the
// same shard) and returns them.
func (t *Throttle) lockPair(k1, k2 string) (*throttleShard, *throttleShard) {
	i, j := t.shardIndex(k1), t.shardIndex(k2)
	a, b := &t.shards[i], &t.shards[j]
	switch {
	case i == j:
		a.mu.Lock()
	case i < j:
		a.mu.Lock()
		b.mu.Lock()
	default:
		b.mu.Lock()
		a.mu.Lock()
	}
	return a, b
}

func unlockPair(a, b *throttleShard) {
	a.mu.Unlock()
	if a != b {
		b.mu.Unlock()
	}
}
