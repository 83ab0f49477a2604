package store

import "github.com/wikid/wikid/internal/wiki"

// ChangeFilters returns the conditions of q's filters (all but its
// cursor and limit) on the changes table under alias a ("" or "c."), as
// SQL both engines run: " AND …" for each, or "". param adds a value to
// the query's arguments and returns its placeholder (? or $n).
//
// The first condition is not a filter but the rule of every list of
// changes: the edits of a deleted page are archived with it, summaries
// included, as MediaWiki drops them from recentchanges; only its log
// rows (the deletion, a move) stay. An undeletion brings them back. An
// edit is its revision: deleting a page marks its revisions deleted, and
// a page created again at the title, or moved onto it, has other ones
// (the page's row may be the old one, or its ID reused). liveRevision is
// the backend's SQL for "the revision with ID revID is not deleted": one
// lookup by that ID per change read.
func ChangeFilters(a string, q wiki.ChangeQuery, liveRevision func(revID string) string, param func(any) string) string {
	sql := " AND (" + a + "kind NOT IN ('" + string(wiki.ChangeNew) + "', '" + string(wiki.ChangeEdit) + "') OR " + liveRevision(a+"rev_id") + ")"
	if q.UserName != "" {
		sql += " AND " + a + "user_name = " + param(q.UserName)
	}
	if q.HideUser != "" {
		sql += " AND " + a + "user_name <> " + param(q.HideUser)
	}
	if q.HideMinor {
		// As written in the partial index of major changes (changes_major).
		sql += " AND NOT " + a + "minor"
	}
	if q.OnlyNew {
		// A literal, so that the planner can read the partial index of
		// page creations (changes_new) newest first.
		sql += " AND " + a + "kind = '" + string(wiki.ChangeNew) + "'"
	}
	if !q.Since.IsZero() {
		// Changes are numbered as they are made, so the period's first
		// change (one seek in changes_ts) bounds the scan by ID: a list
		// read newest first stops there instead of reading every older
		// change to find none in the period.
		since := q.Since.UnixMilli()
		sql += " AND " + a + "ts >= " + param(since) +
			" AND " + a + "id >= (SELECT id FROM changes WHERE ts >= " + param(since) + " ORDER BY ts, id LIMIT 1)"
	}
	return sql + ChangeNamespaces(a+"title", q.Namespaces, param)
}
