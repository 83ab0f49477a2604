package session

import (
	"hash/maphash"
	"net/netip"
	"sync"
	"time"
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
//
// Counting per address punishes everyone behind that address (a NAT, a
// carrier-grade NAT) for an attacker among them. A browser that logged in
// to an account before carries a device token for it (device.go): its
// attempts at that account are counted under the token alone (BeginDevice),
// never under the address, and its failures never slow the address down.

// Policy is how failed logins are slowed down.
type Policy struct {
	FreePerAccount int           // failures per (address, account) before any wait
	FreePerAddress int           // failures per address, over all accounts, before any wait
	FirstWait      time.Duration // the wait after the first failure over a limit; each further one doubles it
	MaxWait        time.Duration // the longest wait
	Forget         time.Duration // a key with no failure for this long starts over (more than MaxWait)
}

// DefaultPolicy: 5 free failures per (address, account), per device token
// and 20 per address, then waits of 1 s, 2 s, 4 s … up to 15 minutes; a key
// quiet for an hour is forgotten.
func DefaultPolicy() Policy {
	return Policy{FreePerAccount: 5, FreePerAddress: 20, FirstWait: time.Second, MaxWait: 15 * time.Minute, Forget: time.Hour}
}

// RegistrationPolicy is for account creation, counted per address with
// BeginAddress: 5 accounts at once, then waits of 5 minutes, 10, 20, 40 and
// then an hour between accounts; an address that created none for a day
// starts over.
func RegistrationPolicy() Policy {
	return Policy{FreePerAddress: 5, FirstWait: 5 * time.Minute, MaxWait: time.Hour, Forget: 24 * time.Hour}
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

// Attempt is an attempt counted by Begin, BeginDevice or BeginAddress, for
// Succeeded or Cancel. It counted under one or both of two keys: the
// (address, account) or device key, and the address key.
type Attempt struct {
	key, addrKey      string // "" when the attempt did not count under that key
	at                int64
	keyLast, addrLast int64 // each key's last failure before this attempt
}

// Begin counts a login attempt for account from client, or returns how long
// the client must wait first (then nothing is counted).
func (t *Throttle) Begin(client netip.Addr, account string) (Attempt, time.Duration) {
	ak := addressKey(client)
	return t.begin(pairKey(ak, account), t.policy.FreePerAccount, ak)
}

// BeginDevice counts a login attempt that carries device token d, valid for
// the account it names, under d alone (with FreePerAccount free failures),
// or returns how long to wait first. The client's address is neither
// consulted nor counted: its owner logs in whatever others at that address
// did, and its failures slow down only d.
func (t *Throttle) BeginDevice(d Device) (Attempt, time.Duration) {
	if d.key == "" {
		panic("session: BeginDevice with the zero Device")
	}
	return t.begin(d.key, t.policy.FreePerAccount, "")
}

// BeginAddress counts an attempt from client under its address alone (with
// FreePerAddress free ones), or returns how long to wait first: for actions
// limited per address whatever their outcome, such as account creation.
func (t *Throttle) BeginAddress(client netip.Addr) (Attempt, time.Duration) {
	return t.begin("", 0, addressKey(client))
}

// begin counts an attempt under key (with free failures) and addrKey
// (with FreePerAddress), either of which may be "", unless one of them
// imposes a wait.
func (t *Throttle) begin(key string, free int, addrKey string) (Attempt, time.Duration) {
	now := t.now().UnixNano()
	sk, sa := t.lockPair(orOther(key, addrKey), orOther(addrKey, key))
	defer unlockPair(sk, sa)
	var kc, ac counter
	var wait time.Duration
	if key != "" {
		kc = sk.get(key, t.policy.Forget, now)
		wait = t.wait(kc, free, now)
	}
	if addrKey != "" {
		ac = sa.get(addrKey, t.policy.Forget, now)
		wait = max(wait, t.wait(ac, t.policy.FreePerAddress, now))
	}
	if wait > 0 {
		return Attempt{}, wait
	}
	if key != "" {
		sk.put(key, counter{fails: kc.fails + 1, last: now}, t.policy.Forget, now)
	}
	if addrKey != "" {
		sa.put(addrKey, counter{fails: ac.fails + 1, last: now}, t.policy.Forget, now)
	}
	return Attempt{key: key, addrKey: addrKey, at: now, keyLast: kc.last, addrLast: ac.last}, 0
}

// orOther is k, or other when k is empty (so that lockPair gets two keys).
func orOther(k, other string) string {
	if k == "" {
		return other
	}
	return k
}

// Succeeded takes back attempt a, whose password was right: its (address,
// account) or device key starts over and the address is as it was before a.
func (t *Throttle) Succeeded(a Attempt) {
	if a.key == "" && a.addrKey == "" {
		return
	}
	sk, sa := t.lockPair(orOther(a.key, a.addrKey), orOther(a.addrKey, a.key))
	defer unlockPair(sk, sa)
	if a.key != "" {
		delete(sk.m, a.key)
	}
	if a.addrKey != "" {
		sa.undo(a.addrKey, a.at, a.addrLast)
	}
}

// Cancel takes back attempt a, which never got as far as checking anything
// (the server was too busy): every key is as it was before a.
func (t *Throttle) Cancel(a Attempt) {
	if a.key == "" && a.addrKey == "" {
		return
	}
	sk, sa := t.lockPair(orOther(a.key, a.addrKey), orOther(a.addrKey, a.key))
	defer unlockPair(sk, sa)
	if a.key != "" {
		sk.undo(a.key, a.at, a.keyLast)
	}
	if a.addrKey != "" {
		sa.undo(a.addrKey, a.at, a.addrLast)
	}
}

// undo takes back the failure counted under key at time at; prev was the
// key's last failure before it, the last again unless a later one came.
func (sh *throttleShard) undo(key string, at, prev int64) {
	c, ok := sh.m[key]
	if !ok {
		return
	}
	c.fails--
	if c.last == at {
		c.last = prev
	}
	if c.fails <= 0 {
		delete(sh.m, key)
	} else {
		sh.m[key] = c
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
	return "p\x00" + addrKey[2:] + "\x00" + foldAccount(account)
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
