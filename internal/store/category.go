package store

import "github.com/wikid/wikid/internal/wiki"

// CategoryRange returns the conditions that keep the members of q's range
// in a category listing that reads links l joined to pages p and is
// ordered by (l.sortkey, p.title): " AND …", or "" for the whole listing.
// param adds a value to the query's arguments and returns its placeholder.
// Each bound is written with the key alone first (l.sortkey >= k), which
// the index on (target_title, subcat, sortkey) reads as a range, then the
// tie on the title.
func CategoryRange(q wiki.CategoryQuery, param func(any) string) string {
	var s string
	if from := q.From; !from.IsZero() {
		k := param(from.SortKey)
		s += " AND l.sortkey >= " + k
		if from.Title != "" {
			s += " AND (l.sortkey > " + param(from.SortKey) + " OR p.title >= " + param(string(from.Title)) + ")"
		}
	}
	if before := q.Before; !before.IsZero() {
		if before.Title == "" {
			return s + " AND l.sortkey < " + param(before.SortKey)
		}
		s += " AND l.sortkey <= " + param(before.SortKey) +
			" AND (l.sortkey < " + param(before.SortKey) + " OR p.title < " + param(string(before.Title)) + ")"
	}
	return s
}
