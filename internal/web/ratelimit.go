package web

import (
	"hash/maphash"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// rateLimit allows each key n events per window (a fixed window per key),
// in bounded memory: a shard that fills up forgets its keys.
type rateLimit struct {
	n      int
	window time.Duration
	now    func() time.Time
	seed   maphash.Seed
	shards [16]rateShard
}

type rateShard struct {
	mu sync.Mutex
	m  map[string]rateWindow
}

type rateWindow struct {
	start time.Time
	count int
}

const rateShardKeys = 4096

func newRateLimit(n int, window time.Duration, now func() time.Time) *rateLimit {
	l := &rateLimit{n: n, window: window, now: now, seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i].m = map[string]rateWindow{}
	}
	return l
}

// allow counts an event for key, or returns how long to wait when key has
// used its n events in the current window (then nothing is counted).
func (l *rateLimit) allow(key string) (time.Duration, bool) { return l.allowN(key, 1) }

// allowN is allow for an action that costs cost events: it is allowed
// while key has events left in the window, and counts them all (the next
// ones wait for the next window).
func (l *rateLimit) allowN(key string, cost int) (time.Duration, bool) {
	sh := &l.shards[maphash.String(l.seed, key)%uint64(len(l.shards))]
	now := l.now()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	w, ok := sh.m[key]
	if !ok || now.Sub(w.start) >= l.window {
		if !ok && len(sh.m) >= rateShardKeys {
			clear(sh.m)
		}
		sh.m[key] = rateWindow{start: now, count: cost}
		return 0, true
	}
	if w.count >= l.n {
		return w.start.Add(l.window).Sub(now), false
	}
	w.count += cost
	sh.m[key] = w
	return 0, true
}

// limitKey is the rate limits' key of r's client: the user, or for an
// anonymous one its address (an IPv6 client's /64, clientKey).
func (s *Server) limitKey(r *http.Request) string {
	if uid, _ := s.editor(r); uid != 0 {
		return "u" + strconv.FormatInt(uid, 10)
	}
	return "a" + clientKey(s.client(r).Addr)
}
