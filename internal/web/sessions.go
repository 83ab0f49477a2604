package web

import (
	"context"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

// sessionCache keeps recently seen sessions in memory so that a logged-in
// page view makes no database query. Entries live for sessionCacheTTL; a
// logout on this node removes its entry at once, and a change to an
// account (group, block, password, preferences, sessions ended) bumps the
// user's epoch, which invalidates every entry of that user at once: an
// entry is valid only while the epoch it was read under is current.
//
// Requests that change something (every method but GET and HEAD) and the
// administrators' pages never trust this cache: they read the session and
// the user from the store (withViewer, requireAdmin), so a change made by
// another process (the command line, another node) applies to them on the
// next request too. What another process changes reaches plain reads here
// within purge.FollowEvery: the change is in the purge log, which every
// process follows (accountChanged here, ForgetUsers there).
type sessionCache struct {
	seed   maphash.Seed
	shards [64]sessionShard
	now    func() time.Time
	epochs [16]epochShard
	bumps  atomic.Uint64 // bumpUser calls since start, any user

	refreshing sync.Map // session ids being read again for getStale's callers
}

// epochShard holds the epochs of the users whose accounts changed since
// start; a user not in it is at epoch 0.
type epochShard struct {
	mu sync.RWMutex
	m  map[int64]uint64
}

func (c *sessionCache) epochShard(userID int64) *epochShard {
	return &c.epochs[uint64(userID)%uint64(len(c.epochs))]
}

// epoch returns the user's current epoch.
func (c *sessionCache) epoch(userID int64) uint64 {
	sh := c.epochShard(userID)
	sh.mu.RLock()
	e := sh.m[userID]
	sh.mu.RUnlock()
	return e
}

// bumpUser invalidates every cached session of the user, synchronously:
// the next request of any of them reads the store.
func (c *sessionCache) bumpUser(userID int64) {
	sh := c.epochShard(userID)
	sh.mu.Lock()
	if sh.m == nil {
		sh.m = map[int64]uint64{}
	}
	sh.m[userID]++
	sh.mu.Unlock()
	c.bumps.Add(1)
}

const sessionCacheTTL = 30 * time.Second

type sessionShard struct {
	mu sync.RWMutex
	m  map[string]*cachedSession
}

type cachedSession struct {
	viewer    Viewer
	epoch     uint64 // the user's epoch when the viewer was read
	fetched   time.Time
	userBar   []byte
	userBarGz *gzUser
	// barState is the user state the bars were drawn with (its unread
	// count): a request whose viewer was read again under a newer epoch
	// (a fresh viewer the cache did not keep) draws its own.
	barState *userState
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
	if e == nil || now.Sub(e.fetched) > sessionCacheTTL || !now.Before(e.viewer.Session.Expires) ||
		e.epoch != c.epoch(e.viewer.User.ID) {
		return Viewer{}, false
	}
	return e.viewer, true
}

// getStale is get for a caller that must not wait for the store (the front
// server's event loops): an entry up to twice the TTL old is returned too,
// with stale set, and the caller has it read again in the background
// (refreshSession). A sign-out or account change on this node still takes
// effect at once (the entry is deleted or its epoch is old); what another
// process changes is seen within the TTL and one lookup.
func (c *sessionCache) getStale(id string) (v Viewer, stale, ok bool) {
	sh := c.shard(id)
	sh.mu.RLock()
	e := sh.m[id]
	sh.mu.RUnlock()
	now := c.now()
	if e == nil || now.Sub(e.fetched) > 2*sessionCacheTTL || !now.Before(e.viewer.Session.Expires) ||
		e.epoch != c.epoch(e.viewer.User.ID) {
		return Viewer{}, false, false
	}
	return e.viewer, now.Sub(e.fetched) > sessionCacheTTL, true
}

// put caches v, read from the store under the user's epoch epoch (taken
// before the read: an account change during the read makes it stale).
func (c *sessionCache) put(v Viewer, epoch uint64) {
	sh := c.shard(v.Session.ID)
	sh.mu.Lock()
	if len(sh.m) > 10000 { // bound memory: drop the shard's entries rather than scan for old ones
		clear(sh.m)
	}
	sh.m[v.Session.ID] = &cachedSession{viewer: v, epoch: epoch, fetched: c.now()}
	sh.mu.Unlock()
}

func (c *sessionCache) delete(id string) {
	sh := c.shard(id)
	sh.mu.Lock()
	delete(sh.m, id)
	sh.mu.Unlock()
}

// userBar returns the session's cached user bar, if drawn for state st.
func (c *sessionCache) userBar(id string, st *userState) []byte {
	sh := c.shard(id)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	if e := sh.m[id]; e != nil && e.barState == st {
		return e.userBar
	}
	return nil
}

// setUserBar caches the session's user bar drawn for state st; the gzip
// form of another state's goes.
func (c *sessionCache) setUserBar(id string, b []byte, st *userState) {
	sh := c.shard(id)
	sh.mu.Lock()
	if e := sh.m[id]; e != nil && e.viewer.State == st {
		if e.barState != st {
			e.userBarGz = nil
		}
		e.userBar, e.barState = b, st
	}
	sh.mu.Unlock()
}

func (c *sessionCache) userBarGz(id string, st *userState) (gzUser, bool) {
	sh := c.shard(id)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	if e := sh.m[id]; e != nil && e.userBarGz != nil && e.barState == st {
		return *e.userBarGz, true
	}
	return gzUser{}, false
}

func (c *sessionCache) setUserBarGz(id string, u gzUser, st *userState) {
	sh := c.shard(id)
	sh.mu.Lock()
	if e := sh.m[id]; e != nil && e.barState == st {
		e.userBarGz = &u
	}
	sh.mu.Unlock()
}

// accountChanged drops the cached sessions of the user whose account
// changed, here at once and in the other processes through the purge log.
func (s *Server) accountChanged(ctx context.Context, userID int64) {
	s.sessions.bumpUser(userID)
	if s.others != nil {
		s.others.AccountsChanged(ctx, []int64{userID})
	}
}

// sessionEnded drops a session that was signed out or replaced, here at
// once and in the other processes through the purge log.
func (s *Server) sessionEnded(ctx context.Context, id string) {
	s.sessions.delete(id)
	if s.others != nil {
		s.others.SessionsEnded(ctx, id)
	}
}

// ForgetSessions drops sessions that ended in another process.
func (s *Server) ForgetSessions(ids ...string) {
	for _, id := range ids {
		s.sessions.delete(id)
	}
}

// ForgetUsers drops the cached sessions of users whose accounts another
// process changed (purge.Node applies its events).
func (s *Server) ForgetUsers(userIDs ...int64) {
	for _, id := range userIDs {
		s.sessions.bumpUser(id)
	}
}
