package web

import (
	"hash/maphash"
	"sync"
	"time"
)

// sessionCache keeps recently seen sessions in memory so that a logged-in
// page view makes no database query. Entries live for sessionCacheTTL; a
// logout on this node removes its entry at once. (With several nodes, a
// logout elsewhere is seen here within the TTL; the scale-out work will
// send it through LISTEN/NOTIFY.)
type sessionCache struct {
	seed   maphash.Seed
	shards [64]sessionShard
	now    func() time.Time
}

const sessionCacheTTL = 30 * time.Second

type sessionShard struct {
	mu sync.RWMutex
	m  map[string]*cachedSession
}

type cachedSession struct {
	viewer    Viewer
	fetched   time.Time
	userBar   []byte
	userBarGz *gzUser
}

func newSessionCache(now func() time.Time) *sessionCache {
	c := &sessionCache{seed: maphash.MakeSeed(), now: now}
	for i := range c.shards {
		c.shards[i].m = map[string]*cachedSession{}
	}
	return c
}

func (c *sessionCache) shard(id string) *sessionShard {
	return &c.shards[maphash.String(c.seed, id)%uint64(len(c.shards))]
}

// get returns the cached viewer of session id, if fresh and not expired.
func (c *sessionCache) get(id string) (Viewer, bool) {
	sh := c.shard(id)
	sh.mu.RLock()
	e := sh.m[id]
	sh.mu.RUnlock()
	now := c.now()
	if e == nil || now.Sub(e.fetched) > sessionCacheTTL || !now.Before(e.viewer.Session.Expires) {
		return Viewer{}, false
	}
	return e.viewer, true
}

func (c *sessionCache) put(v Viewer) {
	sh := c.shard(v.Session.ID)
	sh.mu.Lock()
	if len(sh.m) > 10000 { // bound memory: drop the shard's entries rather than scan for old ones
		clear(sh.m)
	}
	sh.m[v.Session.ID] = &cachedSession{viewer: v, fetched: c.now()}
	sh.mu.Unlock()
}

func (c *sessionCache) delete(id string) {
	sh := c.shard(id)
	sh.mu.Lock()
	delete(sh.m, id)
	sh.mu.Unlock()
}

func (c *sessionCache) userBar(id string) []byte {
	sh := c.shard(id)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	if e := sh.m[id]; e != nil {
		return e.userBar
	}
	return nil
}

func (c *sessionCache) setUserBar(id string, b []byte) {
	sh := c.shard(id)
	sh.mu.Lock()
	if e := sh.m[id]; e != nil {
		e.userBar = b
	}
	sh.mu.Unlock()
}

func (c *sessionCache) userBarGz(id string) (gzUser, bool) {
	sh := c.shard(id)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	if e := sh.m[id]; e != nil && e.userBarGz != nil {
		return *e.userBarGz, true
	}
	return gzUser{}, false
}

func (c *sessionCache) setUserBarGz(id string, u gzUser) {
	sh := c.shard(id)
	sh.mu.Lock()
	if e := sh.m[id]; e != nil {
		e.userBarGz = &u
	}
	sh.mu.Unlock()
}
