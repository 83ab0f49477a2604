package store

import "github.com/wikid/wikid/internal/wiki"

// CategoryRange returns the conditions that keep the members of q's range
// in a category listing that reads links l and is ordered by l.sortkey
// (the stored (key, title) column, wiki.StoredSortKey): " AND …", or ""
// for the whole listing. param adds a value to the query's arguments and
// returns its placeholder. Each bound is a bound of the column, which the
// index on (target_title, subcat, sortkey) reads as one range.
func CategoryRange(q wiki.CategoryQuery, param func(any) string) string {
	var s string
	if !q.From.IsZero() {
		s += " AND l.sortkey >= " + param(q.From.Stored())
	}
	if !q.Before.IsZero() {
		s += " AND l.sortkey < " + param(q.Before.Stored())
	}
	return s
}
