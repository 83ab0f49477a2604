package wiki

import (
	"context"
	"time"
)

// Watch is one title on a user's watchlist.
type Watch struct {
	Title   Title
	Expires time.Time // zero: watched until unwatched
}

// Active reports whether the watch holds at now.
func (w Watch) Active(now time.Time) bool { return w.Expires.IsZero() || now.Before(w.Expires) }

// WatchExpiries are the periods a watch may last, by the name forms and
// the API use (MediaWiki's watchlist expiry options); "infinite" is none.
var WatchExpiries = []struct {
	Name  string
	Label string
	For   time.Duration
}{
	{"infinite", "Permanently", 0},
	{"1 week", "1 week", 7 * 24 * time.Hour},
	{"1 month", "1 month", 30 * 24 * time.Hour},
	{"3 months", "3 months", 91 * 24 * time.Hour},
	{"6 months", "6 months", 182 * 24 * time.Hour},
}

// WatchExpiry returns the expiry time of a watch made at now for the
// period named name (one of WatchExpiries), and whether name is known.
func WatchExpiry(name string, now time.Time) (time.Time, bool) {
	for _, e := range WatchExpiries {
		if e.Name == name {
			if e.For == 0 {
				return time.Time{}, true
			}
			return now.Add(e.For), true
		}
	}
	return time.Time{}, false
}

// MaxWatchlist bounds a watchlist: watching more titles than this is
// refused (ErrWatchlistFull), so that a user's list can be held in memory and
// a watchlist read costs a bounded number of index ranges.
const MaxWatchlist = 10_000

// WatchStore keeps the users' watchlists. Every read ignores watches
// expired at the now it is given.
type WatchStore interface {
	// WatchTitles adds titles to the user's watchlist, or sets their
	// expiry if they are on it; expired watches of the user are dropped in
	// the same transaction. Going past MaxWatchlist is ErrLimit and
	// changes nothing.
	WatchTitles(ctx context.Context, userID int64, titles []Title, expires, now time.Time) error
	// UnwatchTitles removes titles from the user's watchlist (titles not
	// on it are skipped).
	UnwatchTitles(ctx context.Context, userID int64, titles []Title) error
	// Watchlist lists the user's watches from title from on ("" from the
	// first), by title, at most limit of them.
	Watchlist(ctx context.Context, userID int64, from Title, limit int, now time.Time) ([]Watch, error)
	// WatchedChanges lists the changes to titles on the user's watchlist,
	// newest first, filtered and paged as RecentChanges.
	WatchedChanges(ctx context.Context, userID int64, q ChangeQuery, now time.Time) ([]Change, error)
	// CountWatchers counts the users watching t, up to MaxCount.
	CountWatchers(ctx context.Context, t Title, now time.Time) (int, error)
	// SetWatchlistToken stores the hash of the user's watchlist feed
	// token ("" revokes it); WatchlistToken reads it ("" for none).
	SetWatchlistToken(ctx context.Context, userID int64, hash string) error
	WatchlistToken(ctx context.Context, userID int64) (string, error)
}

// WatchPair returns the titles that watching t covers: t and its talk
// page, or a talk page and its subject page, as MediaWiki watches them
// together.
func WatchPair(t Title) []Title {
	if p, ok := t.Pair(); ok {
		return []Title{t, p}
	}
	return []Title{t}
}
