package edge

import (
	"context"
	"hash/maphash"
	"math/bits"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Config configures a Cache. Zero fields take the documented defaults.
type Config struct {
	// MaxBytes bounds the memory of stored entries, counting every variant's
	// body and header block, the key and the tags. Default 256 MiB. Each shard
	// gets MaxBytes/Shards, and an entry larger than that is served but not
	// stored.
	MaxBytes int64
	// Shards is the number of partitions, rounded up to a power of two.
	// Default 64.
	Shards int
	// DefaultTTL applies to entries marked without a TTL. Default 24h, a
	// safety net: pages are normally replaced by purges long before.
	DefaultTTL time.Duration
	// Now is the clock, for tests. Default time.Now.
	Now func() time.Time
	// ArenaMin is the smallest body a variant keeps in the arena for
	// sendfile (see arena.go); DefaultArenaMin when 0, no arena when
	// negative.
	ArenaMin int64
}

// Cache is the edge cache. It is safe for concurrent use.
type Cache struct {
	shards     []*shard
	mask       uint64
	seed       maphash.Seed
	defaultTTL time.Duration
	maxEntry   int64
	now        func() time.Time

	arenaMin  int64
	arenaMu   sync.Mutex
	arenaP    atomic.Pointer[arena] // nil until a large body is stored
	arenaFail atomic.Bool           // no memory files here

	// seq numbers purges; gens[i] is the seq of the last purge of any tag or
	// key hashing to i, allGen that of the last PurgeAll. See the package doc.
	seq    atomic.Uint64
	allGen atomic.Uint64
	gens   [genSlots]atomic.Uint64

	refreshWaits atomic.Int64 // Refresh calls waiting for another (tests)
}

const genSlots = 4096

// New returns an empty cache.
func New(cfg Config) *Cache {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 256 << 20
	}
	if cfg.Shards <= 0 {
		cfg.Shards = 64
	}
	n := 1 << bits.Len(uint(cfg.Shards-1))
	if cfg.DefaultTTL <= 0 {
		cfg.DefaultTTL = 24 * time.Hour
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c := &Cache{
		shards:     make([]*shard, n),
		mask:       uint64(n - 1),
		seed:       maphash.MakeSeed(),
		defaultTTL: cfg.DefaultTTL,
		maxEntry:   cfg.MaxBytes / int64(n),
		now:        cfg.Now,
		arenaMin:   cfg.ArenaMin,
	}
	if c.arenaMin == 0 {
		c.arenaMin = DefaultArenaMin
	}
	for i := range c.shards {
		c.shards[i] = newShard(c.maxEntry)
	}
	return c
}

func (c *Cache) hash(key string) uint64 { return maphash.String(c.seed, key) }

// arenaFor returns the arena for an entry whose largest body is n bytes:
// nil when n is below the threshold or there is no arena. The memory file
// is created with the first large body.
func (c *Cache) arenaFor(n int) *arena {
	if c.arenaMin < 0 || int64(n) < c.arenaMin {
		return nil
	}
	if a := c.arenaP.Load(); a != nil || c.arenaFail.Load() {
		return a
	}
	c.arenaMu.Lock()
	defer c.arenaMu.Unlock()
	if a := c.arenaP.Load(); a != nil || c.arenaFail.Load() {
		return a
	}
	a, err := newArena(c.arenaMin)
	if err != nil {
		c.arenaFail.Store(true)
		return nil
	}
	c.arenaP.Store(a)
	return a
}

func (c *Cache) shardOf(h uint64) *shard { return c.shards[h>>32&c.mask] }

// Precomputed header values shared by all responses.
var (
	xCacheHit       = []string{"HIT"}
	xCacheMiss      = []string{"MISS"}
	timingHit       = []string{"cache;desc=hit"}
	timingCoalesced = []string{"cache;desc=coalesced"}
	timingMiss      = []string{"cache;desc=miss"}
)

type serveKind uint8

const (
	kindHit serveKind = iota
	kindCoalesced
	kindMiss
)

// Serve answers r for key: from the cache on a hit; otherwise by calling
// next, coalesced with concurrent misses for the same key so that one fill
// runs and the others are served its result. next writes its response as usual
// and calls Mark to have it stored. The caller has decided that r may be
// answered from the cache (Key returned ok and there is no valid session).
//
// The fill sees a GET without conditional headers even when r is a HEAD or
// conditional request, so that what is stored is the full response; r itself is
// then answered from the stored entry (304, HEAD, chosen encoding). A response
// that is not stored goes straight to the client, and the requests that waited
// for it render their own.
func (c *Cache) Serve(w http.ResponseWriter, r *http.Request, key string, next http.Handler) {
	h := c.hash(key)
	s := c.shardOf(h)
	now := c.now().UnixNano()

	s.mu.RLock()
	e := s.m[key]
	s.mu.RUnlock()
	if e != nil && now < e.expires.Load() {
		e.touch()
		s.hits.Add(1)
		c.serveEntry(w, r, e, kindHit, nil, nil)
		return
	}

	s.mu.Lock()
	e = s.m[key]
	if e != nil && now < e.expires.Load() {
		s.mu.Unlock()
		e.touch()
		s.hits.Add(1)
		c.serveEntry(w, r, e, kindHit, nil, nil)
		return
	}
	if e != nil {
		s.remove(e) // expired
		s.publishSize()
	}
	if f := s.flights[key]; f != nil {
		s.mu.Unlock()
		s.coalesced.Add(1)
		select {
		case <-f.done:
		case <-r.Context().Done():
			return
		}
		if f.entry != nil {
			c.serveEntry(w, r, f.entry, kindCoalesced, nil, nil)
			return
		}
		w.Header()["X-Cache"] = xCacheMiss
		next.ServeHTTP(w, r)
		return
	}
	f := &flight{done: make(chan struct{}), seq: c.seq.Load()}
	s.flights[key] = f
	s.mu.Unlock()
	s.misses.Add(1)
	c.fill(w, r, key, h, s, f, next)
}

// ServeStored answers r from the entry stored under key, if there is a fresh
// one, with Cache-Control replaced by cacheControl unless it is nil; it
// stores nothing. It is for a request whose handler would read exactly key
// but whose target was spelled otherwise (an absolute-form target): it may
// reuse the entry, but no cache may keep the answer under its spelling; and,
// with nil, for a hit looked up before the handler's own work.
func (c *Cache) ServeStored(w http.ResponseWriter, r *http.Request, key string, cacheControl []string) bool {
	s := c.shardOf(c.hash(key))
	s.mu.RLock()
	e := s.m[key]
	s.mu.RUnlock()
	if e == nil || c.now().UnixNano() >= e.expires.Load() {
		return false
	}
	e.touch()
	s.hits.Add(1)
	c.serveEntry(w, r, e, kindHit, nil, cacheControl)
	return true
}

// flight is one fill in progress; requests for the same key wait on done.
type flight struct {
	done  chan struct{}
	seq   uint64 // purge sequence when the fill started
	entry *entry // set before done is closed; nil if the response was not storable
}

func (c *Cache) fill(w http.ResponseWriter, r *http.Request, key string, h uint64, s *shard, f *flight, next http.Handler) {
	fr := r
	if r.Method != http.MethodGet || hasConditional(r.Header) {
		fr = r.Clone(r.Context())
		fr.Method = http.MethodGet
		for _, k := range conditionalHeaders {
			delete(fr.Header, k)
		}
	}
	rec := &recorder{w: w, header: make(http.Header), head: r.Method == http.MethodHead, limit: int(c.maxEntry)}

	published := false
	defer func() {
		if !published { // next panicked: release the waiters before unwinding
			c.publish(key, s, f, nil)
		}
	}()
	next.ServeHTTP(rec, fr)
	var e *entry
	now := c.now().UnixNano()
	if rec.storing() {
		ttl := rec.dir.TTL
		if ttl <= 0 {
			ttl = c.defaultTTL
		}
		e = buildEntry(key, h, rec.status, rec.header, bytesClone(rec.buf.Bytes()), rec.dir, now, now+int64(ttl))
		e.arena = c.arenaFor(rec.buf.Len())
		e.seq = f.seq
	}
	// Publish before answering our own client, which may be slow to read.
	raced := c.publish(key, s, f, e)
	published = true
	if e == nil {
		return
	}
	if raced {
		// A purge since the fill started may cover what it rendered. The
		// response still answers this request (it was asked before the
		// purge), but no cache in front may keep it.
		c.serveEntry(w, r, e, kindMiss, rec.header["Server-Timing"], racedCacheControl)
		return
	}
	c.serveEntry(w, r, e, kindMiss, rec.header["Server-Timing"], nil)
}

// racedCacheControl replaces the Cache-Control of a response whose fill
// raced a purge.
var racedCacheControl = []string{"private, no-cache"}

func bytesClone(b []byte) []byte { return append(make([]byte, 0, len(b)), b...) }

var conditionalHeaders = []string{"If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range"}

func hasConditional(h http.Header) bool {
	for _, k := range conditionalHeaders {
		if len(h[k]) > 0 {
			return true
		}
	}
	return false
}

// publish ends a flight: it stores e unless a purge since the fill started
// covers one of its tags or its key (then it reports raced), and hands e to
// the waiters. After a race the waiters render their own responses: some of
// them arrived after the purge.
func (c *Cache) publish(key string, s *shard, f *flight, e *entry) (raced bool) {
	s.mu.Lock()
	if e != nil {
		raced = c.stale(f.seq, key, e.tags)
		if !raced && e.size <= s.budget {
			s.insert(e)
		}
	}
	if s.flights[key] == f {
		delete(s.flights, key)
	}
	s.mu.Unlock()
	if !raced {
		f.entry = e
	}
	close(f.done)
	return raced
}

// stale reports whether a purge after seq covers the key or any of the tags.
func (c *Cache) stale(seq uint64, key string, tags []string) bool {
	if c.allGen.Load() > seq || c.gens[c.slot(keySlotPrefix, key)].Load() > seq {
		return true
	}
	for _, t := range tags {
		if c.gens[c.slot(tagSlotPrefix, t)].Load() > seq {
			return true
		}
	}
	return false
}

const (
	keySlotPrefix = 'k'
	tagSlotPrefix = 't'
)

func (c *Cache) slot(prefix byte, s string) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteByte(prefix)
	h.WriteString(s)
	return h.Sum64() % genSlots
}

// raise sets g to at least v.
func raise(g *atomic.Uint64, v uint64) {
	for {
		old := g.Load()
		if old >= v || g.CompareAndSwap(old, v) {
			return
		}
	}
}

// serveEntry writes e's variant for r: a 304 when r's validators match, no
// body for HEAD. It allocates nothing: headers are precomputed slices
// assigned into the map. fillTiming, on a miss, is the filling handler's
// Server-Timing (db, render); cacheControl, when set, replaces the stored
// Cache-Control.
func (c *Cache) serveEntry(w http.ResponseWriter, r *http.Request, e *entry, kind serveKind, fillTiming, cacheControl []string) {
	v := e.variant(acceptedOf(r.Header))
	h := w.Header()
	inm, ims := first(r.Header["If-None-Match"]), first(r.Header["If-Modified-Since"])
	notModified := (inm != "" || ims != "") && v.notModified(inm, ims)
	fields := v.Header
	if notModified {
		fields = v.NotModified
	}
	for _, f := range fields {
		h[f.Key] = f.Value
	}
	if cacheControl != nil {
		h["Cache-Control"] = cacheControl
	}
	switch kind {
	case kindHit:
		h["X-Cache"], h["Server-Timing"] = xCacheHit, timingHit
	case kindCoalesced:
		h["X-Cache"], h["Server-Timing"] = xCacheHit, timingCoalesced
	default:
		h["X-Cache"], h["Server-Timing"] = xCacheMiss, timingMiss
		if len(fillTiming) > 0 {
			h["Server-Timing"] = fillTiming
		}
	}
	if notModified {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.WriteHeader(v.Status)
	if r.Method != http.MethodHead {
		w.Write(v.Body)
	}
}

func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

func acceptedOf(h http.Header) Accepted {
	var acc Accepted
	for _, v := range h["Accept-Encoding"] {
		acc |= ParseAcceptEncoding(v)
	}
	return acc
}

// Lookup returns the stored variant for key that best fits the accepted
// encodings, for a server that writes hits without net/http. It counts as a
// hit; the caller writes Date and X-Cache and answers conditional requests
// with Variant.IsNotModified. On false the caller goes through Serve.
func (c *Cache) Lookup(key string, acc Accepted) (*Variant, bool) {
	h := c.hash(key)
	s := c.shardOf(h)
	s.mu.RLock()
	e := s.m[key]
	s.mu.RUnlock()
	if e == nil || c.now().UnixNano() >= e.expires.Load() {
		return nil, false
	}
	e.touch()
	s.hits.Add(1)
	return e.variant(acc), true
}

// Purge removes every entry carrying one of the tags, synchronously: when it
// returns, the next request for any of them is a miss, and no fill that
// started before the call will store its result. It locks one shard at a time.
func (c *Cache) Purge(tags ...string) {
	if len(tags) == 0 {
		return
	}
	n := c.seq.Add(1)
	for _, t := range tags {
		raise(&c.gens[c.slot(tagSlotPrefix, t)], n)
	}
	for _, s := range c.shards {
		s.mu.Lock()
		for _, t := range tags {
			for e := range s.tags[t] {
				s.remove(e)
				s.purged.Add(1)
			}
		}
		// Fills in flight may belong to a purged tag (their tags are known
		// only when they end): detach them all, so that requests arriving
		// after Purge returns start a fresh fill instead of waiting for a
		// possibly stale one.
		clear(s.flights)
		s.publishSize()
		s.mu.Unlock()
	}
}

// PurgeKey removes the entries for the given keys, with the same guarantees
// as Purge.
func (c *Cache) PurgeKey(keys ...string) {
	if len(keys) == 0 {
		return
	}
	n := c.seq.Add(1)
	for _, k := range keys {
		raise(&c.gens[c.slot(keySlotPrefix, k)], n)
	}
	for _, k := range keys {
		s := c.shardOf(c.hash(k))
		s.mu.Lock()
		if e := s.m[k]; e != nil {
			s.remove(e)
			s.purged.Add(1)
		}
		delete(s.flights, k)
		s.publishSize()
		s.mu.Unlock()
	}
}

// PurgeAll empties the cache, one shard at a time.
func (c *Cache) PurgeAll() {
	n := c.seq.Add(1)
	raise(&c.allGen, n)
	for _, s := range c.shards {
		s.mu.Lock()
		s.purged.Add(uint64(len(s.m)))
		for _, e := range s.m {
			e.linked = false
			e.release()
		}
		clear(s.m)
		clear(s.tags)
		clear(s.flights)
		s.small, s.main = list{}, list{}
		s.bytes, s.smallBytes = 0, 0
		s.ghost.clear()
		s.publishSize()
		s.mu.Unlock()
	}
}

// Refreshing in place. When what made entries stale is not what they are
// about (a page linked from them was created: a link changes colour),
// readers need not wait for a render: Stale records the change for the
// entries' tags as Purge does, so that no fill that started before it
// stores what it rendered, but keeps the entries; later, BeginRefresh lists
// them and Refresh renders each again and swaps the new response in. Until
// then readers get the old one.

// Stale is Purge of tags without the removal: no fill that started
// before it stores what it rendered, but the stored entries stay and are
// served. It returns the tags that some stored entry carries: those to
// refresh (BeginRefresh, Refresh).
func (c *Cache) Stale(tags ...string) []string {
	var stored []string
	c.stale1(tags, func(s *shard) {
		for _, t := range tags {
			if len(s.tags[t]) > 0 && !slices.Contains(stored, t) {
				stored = append(stored, t)
			}
		}
	})
	return stored
}

// BeginRefresh is Stale, returning the keys of the entries that carry the
// tags, to pass to Refresh with seq.
func (c *Cache) BeginRefresh(tags ...string) (keys []string, seq uint64) {
	seq = c.stale1(tags, func(s *shard) {
		for _, t := range tags {
			for e := range s.tags[t] {
				keys = append(keys, e.key)
			}
		}
	})
	slices.Sort(keys)
	return slices.Compact(keys), seq
}

// StaleGrace is how long an entry made stale by Stale or BeginRefresh is
// still served. Its refresh normally replaces it within moments; if none
// comes (the refresh failed, or ran in another process), it expires then
// and the next request renders it.
const StaleGrace = time.Minute

// stale1 records a change of tags, as Purge does, brings the expiry of the
// tagged entries within StaleGrace, and calls visit with each shard locked
// instead of removing them.
func (c *Cache) stale1(tags []string, visit func(*shard)) uint64 {
	if len(tags) == 0 {
		return c.seq.Load()
	}
	n := c.seq.Add(1)
	for _, t := range tags {
		raise(&c.gens[c.slot(tagSlotPrefix, t)], n)
	}
	limit := c.now().Add(StaleGrace).UnixNano()
	for _, s := range c.shards {
		s.mu.Lock()
		for _, t := range tags {
			for e := range s.tags[t] {
				if e.expires.Load() > limit {
					e.expires.Store(limit)
				}
			}
		}
		visit(s)
		clear(s.flights) // as in Purge: a fill in flight may render the old state
		s.mu.Unlock()
	}
	return n
}

// dropOlder removes the entry under key if its render started before seq:
// it may show what the change at seq made stale. The caller holds s.mu.
func (s *shard) dropOlder(key string, seq uint64) {
	if old := s.m[key]; old != nil && old.seq < seq {
		s.remove(old)
		s.purged.Add(1)
		s.publishSize()
	}
}

// refresh is one Refresh in progress; others for the same key wait on done.
type refresh struct {
	done chan struct{}
	seq  uint64 // the sequence when it started
}

// Refresh answers r (a GET of key without conditional headers) by calling
// next and stores the response under key in place of the entry there, as
// a fill would; w gets the response only if it is not stored. Refreshes of
// one key are merged: one that finds another running waits for it, and is
// done if that one started after seq (BeginRefresh's), since it then
// rendered the state seq stands for. Whenever the new response is not
// stored (it cannot be, it raced a later purge or change of its tags, next
// panicked, or r was cancelled while waiting), an entry rendered before
// the change is removed: the next request renders it, rather than getting
// the old state for as long as the entry would live.
func (c *Cache) Refresh(w http.ResponseWriter, r *http.Request, key string, seq uint64, next http.Handler) {
	h := c.hash(key)
	s := c.shardOf(h)
	for {
		s.mu.Lock()
		f := s.refreshes[key]
		if f == nil {
			break
		}
		s.mu.Unlock()
		c.refreshWaits.Add(1)
		select {
		case <-f.done:
		case <-r.Context().Done():
			c.refreshWaits.Add(-1)
			s.mu.Lock()
			s.dropOlder(key, seq)
			s.mu.Unlock()
			return
		}
		c.refreshWaits.Add(-1)
		if f.seq >= seq {
			return
		}
	}
	f := &refresh{done: make(chan struct{}), seq: c.seq.Load()}
	s.refreshes[key] = f
	s.mu.Unlock()
	stored := false
	defer func() {
		s.mu.Lock()
		if !stored {
			s.dropOlder(key, f.seq)
		}
		delete(s.refreshes, key)
		s.mu.Unlock()
		close(f.done)
	}()

	rec := &recorder{w: w, header: make(http.Header), limit: int(c.maxEntry)}
	next.ServeHTTP(rec, r)
	if !rec.storing() {
		return
	}
	now := c.now().UnixNano()
	ttl := rec.dir.TTL
	if ttl <= 0 {
		ttl = c.defaultTTL
	}
	e := buildEntry(key, h, rec.status, rec.header, bytesClone(rec.buf.Bytes()), rec.dir, now, now+int64(ttl))
	e.arena = c.arenaFor(rec.buf.Len())
	e.seq = f.seq
	s.mu.Lock()
	if !c.stale(f.seq, key, e.tags) && e.size <= s.budget {
		s.insert(e)
		s.refreshed.Add(1)
		stored = true
	}
	s.mu.Unlock()
}

// Stats are cumulative counters and current sizes.
type Stats struct {
	Hits      uint64 // served from a stored entry
	Misses    uint64 // fills started
	Coalesced uint64 // requests that waited for another request's fill
	Stores    uint64
	Evictions uint64 // entries dropped to stay within MaxBytes
	Purged    uint64 // entries removed by Purge, PurgeKey or PurgeAll
	Refreshed uint64 // entries replaced by Refresh
	Entries   int64
	Bytes     int64
	// ArenaBytes is what the arena's memory file holds (page-rounded
	// bodies kept for sendfile), on top of Bytes.
	ArenaBytes int64
}

// Stats sums the shards' counters without locking them.
func (c *Cache) Stats() Stats {
	var st Stats
	for _, s := range c.shards {
		st.Hits += s.hits.Load()
		st.Misses += s.misses.Load()
		st.Coalesced += s.coalesced.Load()
		st.Stores += s.stores.Load()
		st.Evictions += s.evictions.Load()
		st.Purged += s.purged.Load()
		st.Refreshed += s.refreshed.Load()
		st.Entries += s.nEntries.Load()
		st.Bytes += s.nBytes.Load()
	}
	if a := c.arenaP.Load(); a != nil {
		st.ArenaBytes = a.bytes.Load()
	}
	return st
}

// Purger is the seam through which purges fan out to several caches (this
// one, other nodes, a CDN). The edge's own Purge is local and synchronous;
// PurgeContext adapts it.
type Purger interface {
	PurgeContext(ctx context.Context, tags ...string) error
}

// PurgeContext is Purge, shaped for the Purger fan-out.
func (c *Cache) PurgeContext(_ context.Context, tags ...string) error {
	c.Purge(tags...)
	return nil
}

// MaxEntry is the largest response the cache keeps (a shard's budget).
func (c *Cache) MaxEntry() int64 { return c.maxEntry }
