package web

import (
	"context"
	"sync"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

// userState is what a user's logged-in views show of their account
// besides its name: the watchlist (the star on each page) and the count
// of unread notifications (the user bar). It is read under the user's
// account epoch (sessionCache), so that a view shows it without a query;
// a change to either bumps the epoch (here at once, in other processes
// through the purge log), which invalidates it with the user's sessions.
type userState struct {
	epoch  uint64
	titles map[wiki.Title]int64 // expiry in Unix milliseconds, 0 for never
	unread int                  // unread notifications, up to wiki.MaxUnread
}

// Has reports whether the set watches t at now.
func (w *userState) Has(t wiki.Title, now time.Time) bool {
	if w == nil {
		return false
	}
	exp, ok := w.titles[t]
	return ok && (exp == 0 || now.UnixMilli() < exp)
}

// watchCache holds the watch sets of the users seen lately, by user ID.
// It is bounded by the titles it holds: a shard over its share is emptied.
type watchCache struct {
	shards [16]watchShard
}

type watchShard struct {
	mu     sync.Mutex
	m      map[int64]*userState
	titles int
}

// watchCacheTitles bounds the titles all cached sets hold together.
const watchCacheTitles = 1 << 20

func (c *watchCache) shard(userID int64) *watchShard {
	return &c.shards[uint64(userID)%uint64(len(c.shards))]
}

func (c *watchCache) get(userID int64, epoch uint64) *userState {
	sh := c.shard(userID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if w := sh.m[userID]; w != nil && w.epoch == epoch {
		return w
	}
	return nil
}

func (c *watchCache) put(userID int64, w *userState) {
	sh := c.shard(userID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.m == nil || sh.titles+len(w.titles) > watchCacheTitles/len(c.shards) {
		sh.m, sh.titles = map[int64]*userState{}, 0
	}
	if old := sh.m[userID]; old != nil {
		sh.titles -= len(old.titles)
	}
	sh.m[userID] = w
	sh.titles += len(w.titles)
}

// userStateOf returns the user's state, read from the store unless the
// one cached was read under epoch (the user's epoch, taken before the
// caller read the account).
func (s *Server) userStateOf(ctx context.Context, userID int64, epoch uint64) (*userState, error) {
	if w := s.watches.get(userID, epoch); w != nil {
		return w, nil
	}
	w := &userState{epoch: epoch, titles: map[wiki.Title]int64{}}
	now := s.now()
	var from wiki.Title
	for {
		ws, err := s.store.Watchlist(ctx, userID, from, 1000, now)
		if err != nil {
			return nil, err
		}
		for _, x := range ws {
			var exp int64
			if !x.Expires.IsZero() {
				exp = x.Expires.UnixMilli()
			}
			w.titles[x.Title] = exp
		}
		if len(ws) < 1000 || len(w.titles) >= wiki.MaxWatchlist {
			break
		}
		// The next page starts at the last title read (read again).
		from = ws[len(ws)-1].Title
	}
	n, err := s.store.CountUnread(ctx, userID)
	if err != nil {
		return nil, err
	}
	w.unread = n
	if s.sessions.epoch(userID) == epoch {
		s.watches.put(userID, w)
	}
	return w, nil
}

// watchChanged tells every process that the user's watchlist changed: the
// user's cached sessions and watch set are read again (accountChanged).
func (s *Server) watchChanged(ctx context.Context, userID int64) { s.accountChanged(ctx, userID) }
