package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

// History returns a page's visible revisions, newest first, without text.
func (db *DB) History(ctx context.Context, q wiki.HistoryQuery) ([]wiki.Revision, error) {
	before := q.Before
	if before <= 0 {
		before = 1<<63 - 1
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+revCols+` FROM revisions r JOIN pages p ON p.id = r.page_id
		LEFT JOIN revisions pr ON pr.id = r.parent_id
		WHERE r.page_id = ? AND r.id < ? AND r.deleted = 0 ORDER BY r.id DESC LIMIT ?`, q.PageID, before, limit(q.Limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: history of page %d: %w", q.PageID, err)
	}
	defer rows.Close()
	var out []wiki.Revision
	for rows.Next() {
		r, err := scanRevision(rows, false)
		if err != nil {
			return nil, fmt.Errorf("sqlite: history of page %d: %w", q.PageID, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: history of page %d: %w", q.PageID, err)
	}
	return out, nil
}

// PageStats returns the figures of page pageID, titled t: a few counts,
// each one index range cut at wiki.MaxCount + 1 rows, and the first
// revision.
func (db *DB) PageStats(ctx context.Context, pageID int64, t wiki.Title) (wiki.PageStats, error) {
	var st wiki.PageStats
	fail := func(err error) (wiki.PageStats, error) {
		return wiki.PageStats{}, fmt.Errorf("sqlite: figures of page %d: %w", pageID, notFound(err))
	}
	first, err := scanRevision(db.r.QueryRowContext(ctx, `SELECT `+revCols+` FROM revisions r JOIN pages p ON p.id = r.page_id
		LEFT JOIN revisions pr ON pr.id = r.parent_id
		WHERE r.page_id = ? AND r.deleted = 0 ORDER BY r.id LIMIT 1`, pageID), false)
	if err != nil {
		return fail(err)
	}
	st.First = first
	// The latest revisions first: Editors counts those of the revisions
	// the cut keeps.
	err = db.r.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT user_name) FROM (SELECT user_name FROM revisions
		WHERE page_id = ? AND deleted = 0 ORDER BY id DESC LIMIT ?)`, pageID, wiki.MaxCount+1).Scan(&st.Revisions, &st.Editors)
	if err != nil {
		return fail(err)
	}
	err = db.r.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM (SELECT DISTINCT l.from_page FROM links l JOIN pages p ON p.id = l.from_page
			WHERE l.target_title = ?1 AND l.kind IN ('link', 'redirect') AND p.deleted = 0 LIMIT ?2)),
		(SELECT count(*) FROM (SELECT 1 FROM links l JOIN pages p ON p.id = l.from_page
			WHERE l.target_title = ?1 AND l.kind = 'redirect' AND p.deleted = 0 LIMIT ?2)),
		(SELECT count(*) FROM (SELECT 1 FROM links WHERE from_page = ?3 AND kind = 'link' LIMIT ?2))`,
		string(t), wiki.MaxCount+1, pageID).Scan(&st.Backlinks, &st.Redirects, &st.LinksOut)
	if err != nil {
		return fail(err)
	}
	return st, nil
}

// LatestRevisions returns the latest revision of each live page among
// pageIDs, in one query (the IDs travel as one JSON array parameter).
func (db *DB) LatestRevisions(ctx context.Context, pageIDs []int64) (map[int64]int64, error) {
	out := make(map[int64]int64, len(pageIDs))
	if len(pageIDs) == 0 {
		return out, nil
	}
	arg, err := json.Marshal(pageIDs)
	if err != nil {
		return nil, fmt.Errorf("sqlite: latest revisions: %w", err)
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, latest_rev FROM pages
		WHERE id IN (SELECT value FROM json_each(?)) AND deleted = 0`, string(arg))
	if err != nil {
		return nil, fmt.Errorf("sqlite: latest revisions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, latest int64
		if err := rows.Scan(&id, &latest); err != nil {
			return nil, fmt.Errorf("sqlite: latest revisions: %w", err)
		}
		out[id] = latest
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: latest revisions: %w", err)
	}
	return out, nil
}

// RecentChanges returns changes newest first; with UserName, that user's
// contributions. A deleted page's edits are left out (store.ChangeFilters).
func (db *DB) RecentChanges(ctx context.Context, q wiki.ChangeQuery) ([]wiki.Change, error) {
	query, args, ok := recentChangesQuery(q)
	if !ok {
		return nil, nil // namespaces that do not exist have no changes
	}
	out, err := db.readChanges(ctx, query, args)
	if err != nil {
		return nil, fmt.Errorf("sqlite: recent changes: %w", err)
	}
	return out, nil
}

// recentChangesQuery returns the query of RecentChanges for q and its
// arguments; ok is false when q's namespaces name none that exists.
func recentChangesQuery(q wiki.ChangeQuery) (query string, args []any, ok bool) {
	before := q.Before
	if before <= 0 {
		before = 1<<63 - 1
	}
	param := func(v any) string { args = append(args, v); return "?" }
	// A user's contributions are read from changes_user whatever the
	// namespace: one user's changes are fewer than a namespace's.
	prefixes, byPrefix := namespacePrefixes(q.Namespaces)
	byPrefix = byPrefix && q.UserName == ""
	switch {
	case !byPrefix:
		query = `SELECT ` + changeCols + ` FROM changes c WHERE c.id < ` + param(before) +
			store.ChangeFilters("c.", q, liveRevision, param) + ` ORDER BY c.id DESC LIMIT ` + param(limit(q.Limit))
	case len(prefixes) == 0:
		return "", nil, false
	default:
		// Namespaces other than the main one: per title prefix, one range
		// of changes_prefix read newest first, at most a page of it; then
		// the newest page of those.
		rest := q
		rest.Namespaces = nil
		branches := make([]string, len(prefixes))
		for i, p := range prefixes {
			branches[i] = `SELECT * FROM (SELECT ` + changeCols + ` FROM changes c WHERE ` + changePrefix + ` = ` + param(p) +
				` AND c.id < ` + param(before) + store.ChangeFilters("c.", rest, liveRevision, param) + ` ORDER BY c.id DESC LIMIT ` + param(limit(q.Limit)) + `)`
		}
		query = `SELECT * FROM (` + strings.Join(branches, ` UNION ALL `) + `) ORDER BY id DESC LIMIT ` + param(limit(q.Limit))
	}
	return query, args, true
}

// liveRevision is store.ChangeFilters' test of a change's revision: read
// from revisions_deleted, without the revision's row (its text comes
// before the flag). A scalar subquery, run per change read.
func liveRevision(revID string) string {
	return `(SELECT NOT lr.deleted FROM revisions lr INDEXED BY revisions_deleted WHERE lr.id = ` + revID + `)`
}

// changePrefix is a change's title up to its first colon, as the index
// changes_prefix has it: "Talk:" for "Talk:A:B", "" without a colon.
const changePrefix = `substr(c.title, 1, instr(c.title, ':'))`

// namespacePrefixes returns the title prefixes of namespaces (their names
// and aliases, wiki.Namespace.Prefixes) when they are all other than the
// main one; ok is false when there are none to filter by or the main one
// is among them (its changes are most of them: the newest first, filtered,
// are read faster than any index would give them). Names of no namespace
// give no prefix.
func namespacePrefixes(namespaces []string) (prefixes []string, ok bool) {
	if len(namespaces) == 0 || slices.Contains(namespaces, "") {
		return nil, false
	}
	for _, name := range namespaces {
		if n, found := wiki.NamespaceByName(name); found {
			prefixes = append(prefixes, n.Prefixes()...)
		}
	}
	slices.Sort(prefixes)
	return slices.Compact(prefixes), true
}

// changeCols are the columns of the changes table (under alias c) that
// readChanges reads.
const changeCols = `c.id, c.kind, c.title, c.new_title, c.page_id, c.rev_id, c.old_rev_id, c.user_id, c.user_name, c.ts, c.summary, c.size, c.old_size, c.minor, c.tags`

// readChanges runs query, which selects changeCols, and reads its rows.
// It runs unkept (readPool): the filters of change lists combine into
// more texts than the pool keeps.
func (db *DB) readChanges(ctx context.Context, query string, args []any) ([]wiki.Change, error) {
	rows, err := db.r.DB.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []wiki.Change
	for rows.Next() {
		var c wiki.Change
		var kind, title, newTitle, tags string
		var ts int64
		if err := rows.Scan(&c.ID, &kind, &title, &newTitle, &c.PageID, &c.RevID, &c.OldRevID, &c.UserID, &c.UserName,
			&ts, &c.Summary, &c.Size, &c.OldSize, &c.Minor, &tags); err != nil {
			return nil, err
		}
		c.Kind, c.Title, c.NewTitle, c.Time = wiki.ChangeKind(kind), wiki.Title(title), wiki.Title(newTitle), fromMS(ts)
		c.Tags = wiki.SplitTags(tags)
		out = append(out, c)
	}
	return out, rows.Err()
}

// titleRange turns a ListQuery into bounds on p.title: title >= lo and,
// when hi is not empty, title < hi. One namespace's pages are one range
// of titles too (store.NamespaceTitleRange).
func titleRange(q wiki.ListQuery) (lo, hi string) {
	lo = max(string(q.From), q.Prefix)
	if q.Prefix != "" {
		hi = prefixEnd(q.Prefix)
	}
	if nlo, nhi, ok := store.NamespaceTitleRange(q.Namespaces); ok {
		lo = max(lo, nlo)
		if hi == "" || nhi < hi {
			hi = nhi
		}
	}
	return lo, hi
}

// prefixEnd returns the smallest string greater than every string with
// prefix p (bytewise), or "" when there is none.
func prefixEnd(p string) string {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}

// listPages runs a page listing: from and where complete
// "SELECT pageCols FROM pages p <from> WHERE p.deleted = 0 AND <range> <where>".
func (db *DB) listPages(ctx context.Context, op, from, where string, q wiki.ListQuery, args ...any) ([]wiki.Page, error) {
	lo, hi := titleRange(q)
	query := `SELECT ` + pageCols + ` FROM pages p ` + from + ` WHERE p.deleted = 0 AND p.title >= ?`
	all := []any{lo}
	if q.After != "" {
		query += ` AND p.title > ?`
		all = append(all, string(q.After))
	}
	if hi != "" {
		query += ` AND p.title < ?`
		all = append(all, hi)
	}
	all = append(all, args...)
	query += where + store.PageNamespaces(q.Namespaces, func(v any) string { all = append(all, v); return "?" })
	query += ` ORDER BY p.title LIMIT ?`
	all = append(all, limit(q.Limit))
	rows, err := db.r.QueryContext(ctx, query, all...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", op, err)
	}
	defer rows.Close()
	var out []wiki.Page
	for rows.Next() {
		p, err := scanPage(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: %s: %w", op, err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", op, err)
	}
	return out, nil
}

// AllPages lists live pages by title.
func (db *DB) AllPages(ctx context.Context, q wiki.ListQuery) ([]wiki.Page, error) {
	return db.listPages(ctx, "all pages", "", "", q)
}

// Backlinks lists live pages that link or redirect to t, by title.
func (db *DB) Backlinks(ctx context.Context, t wiki.Title, q wiki.ListQuery) ([]wiki.Page, error) {
	return db.listPages(ctx, fmt.Sprintf("backlinks of %q", t), "",
		` AND p.id IN (SELECT from_page FROM links WHERE target_title = ? AND kind IN ('link', 'redirect'))`, q, string(t))
}

// dependentsQuery reads the live pages with rows of one kind naming a
// title, by ID after a cursor: one range of the links_target index
// (target_title, kind, from_page), in its order.
const dependentsQuery = `SELECT ` + pageCols + ` FROM links l JOIN pages p ON p.id = l.from_page
	WHERE l.target_title = ? AND l.kind = ? AND l.from_page > ? AND p.deleted = 0 ORDER BY l.from_page LIMIT ?`

// Dependents lists the live pages using t, by ID after afterID: per kind
// of row, one index range (dependentsQuery).
func (db *DB) Dependents(ctx context.Context, t wiki.Title, use wiki.Use, afterID int64, limit int) ([]wiki.Page, error) {
	kinds := store.UseKinds(use)
	perKind := make([][]wiki.Page, len(kinds))
	for i, kind := range kinds {
		rows, err := db.r.QueryContext(ctx, dependentsQuery, string(t), kind, afterID, limit)
		if err != nil {
			return nil, fmt.Errorf("sqlite: pages using %q: %w", t, err)
		}
		for rows.Next() {
			p, err := scanPage(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("sqlite: pages using %q: %w", t, err)
			}
			perKind[i] = append(perKind[i], p)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("sqlite: pages using %q: %w", t, err)
		}
	}
	return store.MergeDependents(perKind, limit), nil
}

// CountTransclusions counts the live pages that transclude t, up to
// wiki.MaxCount + 1.
func (db *DB) CountTransclusions(ctx context.Context, t wiki.Title) (int, error) {
	var n int
	err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM links l JOIN pages p ON p.id = l.from_page
		WHERE l.target_title = ? AND l.kind = 'template' AND p.deleted = 0 LIMIT ?)`, string(t), wiki.MaxCount+1).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlite: count transclusions of %q: %w", t, err)
	}
	return n, nil
}

// CategoryMembers lists live pages in category cat with their sort keys,
// by (sort key, title): one range of the links_category index, from the
// cursor on, the pages joined by ID. Members with equal keys are sorted by
// title among themselves (a temporary B-tree for that part of the order
// only, which the LIMIT ends).
func (db *DB) CategoryMembers(ctx context.Context, cat wiki.Title, q wiki.CategoryQuery) ([]wiki.CategoryMember, error) {
	query, args := categoryMembersQuery(cat, q)
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: members of %q: %w", cat, err)
	}
	defer rows.Close()
	var out []wiki.CategoryMember
	for rows.Next() {
		var m wiki.CategoryMember
		if m.Page, err = scanPage(extraScanner{rows, []any{&m.SortKey}}); err != nil {
			return nil, fmt.Errorf("sqlite: members of %q: %w", cat, err)
		}
		m.SortKey = wiki.SortKeyOf(m.SortKey)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: members of %q: %w", cat, err)
	}
	return out, nil
}

// categoryMembersQuery is CategoryMembers' query and its arguments.
func categoryMembersQuery(cat wiki.Title, q wiki.CategoryQuery) (string, []any) {
	args := []any{string(cat), b2i(q.Subcategories)}
	query := `SELECT ` + pageCols + `, l.sortkey FROM links l JOIN pages p ON p.id = l.from_page
		WHERE l.target_title = ? AND l.kind = 'category' AND l.subcat = ? AND p.deleted = 0` +
		store.CategoryRange(q, func(v any) string { args = append(args, v); return "?" }) +
		` ORDER BY l.sortkey LIMIT ?`
	return query, append(args, limit(q.Limit))
}

// extraScanner scans the columns after a row's first ones into extra.
type extraScanner struct {
	s     scanner
	extra []any
}

func (x extraScanner) Scan(dest ...any) error { return x.s.Scan(append(dest, x.extra...)...) }

// PageCategories returns the categories page pageID is in, with its rows'
// sort key and subcategory flag, by category.
func (db *DB) PageCategories(ctx context.Context, pageID int64) ([]wiki.CategoryLink, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT target_title, sortkey, subcat FROM links WHERE from_page = ? AND kind = 'category' ORDER BY target_title`, pageID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: categories of page %d: %w", pageID, err)
	}
	defer rows.Close()
	var out []wiki.CategoryLink
	for rows.Next() {
		var c wiki.CategoryLink
		if err := rows.Scan(&c.Category, &c.SortKey, &c.Subcat); err != nil {
			return nil, fmt.Errorf("sqlite: categories of page %d: %w", pageID, err)
		}
		c.SortKey = wiki.SortKeyOf(c.SortKey)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: categories of page %d: %w", pageID, err)
	}
	return out, nil
}

// PageTemplates returns the pages page pageID transcludes, by title.
func (db *DB) PageTemplates(ctx context.Context, pageID int64) ([]wiki.Title, error) {
	return db.pageTargets(ctx, pageID, "template")
}

// PageFiles returns the files page pageID shows, by title.
func (db *DB) PageFiles(ctx context.Context, pageID int64) ([]wiki.Title, error) {
	return db.pageTargets(ctx, pageID, "file")
}

// PageLinks returns the pages page pageID links to, by title.
func (db *DB) PageLinks(ctx context.Context, pageID int64) ([]wiki.Title, error) {
	return db.pageTargets(ctx, pageID, "link")
}

// pageTargets returns the targets of page pageID's link rows of kind, by
// title.
func (db *DB) pageTargets(ctx context.Context, pageID int64, kind string) ([]wiki.Title, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT target_title FROM links WHERE from_page = ? AND kind = ? ORDER BY target_title`, pageID, kind)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s rows of page %d: %w", kind, pageID, err)
	}
	defer rows.Close()
	var out []wiki.Title
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("sqlite: %s rows of page %d: %w", kind, pageID, err)
		}
		out = append(out, wiki.Title(t))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %s rows of page %d: %w", kind, pageID, err)
	}
	return out, nil
}

// RandomPage returns a random live, non-redirect page of the main namespace.
func (db *DB) RandomPage(ctx context.Context) (wiki.Title, error) {
	var t string
	err := db.r.QueryRowContext(ctx, `SELECT title FROM pages WHERE deleted = 0 AND ns = '' AND redirect = ''
		AND id >= (SELECT abs(random()) % (max(id) + 1) FROM pages) ORDER BY id LIMIT 1`).Scan(&t)
	if err == sql.ErrNoRows {
		err = db.r.QueryRowContext(ctx, `SELECT title FROM pages WHERE deleted = 0 AND ns = '' AND redirect = '' ORDER BY id LIMIT 1`).Scan(&t)
	}
	if err != nil {
		return "", fmt.Errorf("sqlite: random page: %w", notFound(err))
	}
	return wiki.Title(t), nil
}

// PageCount counts live pages (redirects included).
func (db *DB) PageCount(ctx context.Context) (int, error) {
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM pages WHERE deleted = 0`).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: page count: %w", err)
	}
	return n, nil
}

// SearchTitles returns live pages whose title, folded (store.Fold),
// starts with prefix folded, in folded-title order: what title completion
// offers. One index range, as long as limit.
func (db *DB) SearchTitles(ctx context.Context, prefix string, lim int) ([]wiki.Page, error) {
	// A title typed with underscores, as URLs spell it, is the same title.
	p := store.Fold(strings.TrimSpace(strings.ReplaceAll(prefix, "_", " ")))
	if p == "" {
		return nil, nil
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+pageCols+` FROM pages p WHERE p.deleted = 0 AND p.title_fold >= ? AND p.title_fold < ?
		ORDER BY p.title_fold, p.id LIMIT ?`, p, p+"\U0010FFFF", min(limit(lim), 100))
	if err != nil {
		return nil, fmt.Errorf("sqlite: search titles %q: %w", prefix, err)
	}
	defer rows.Close()
	var out []wiki.Page
	for rows.Next() {
		pg, err := scanPage(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: search titles %q: %w", prefix, err)
		}
		out = append(out, pg)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: search titles %q: %w", prefix, err)
	}
	return out, nil
}

// CategoryAdditions lists live pages in category cat, the most recently
// added first: one range of the category_added_time index, read
// backwards, each row checked against its links row (the membership
// exists) and its page (live).
func (db *DB) CategoryAdditions(ctx context.Context, cat wiki.Title, n int) ([]wiki.CategoryMember, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+pageCols+`, l.sortkey, a.added FROM category_added a
		JOIN links l ON l.from_page = a.page_id AND l.kind = 'category' AND l.target_title = a.category
		JOIN pages p ON p.id = a.page_id
		WHERE a.category = ? AND p.deleted = 0 ORDER BY a.added DESC, a.page_id DESC LIMIT ?`, string(cat), limit(n))
	if err != nil {
		return nil, fmt.Errorf("sqlite: additions to %q: %w", cat, err)
	}
	defer rows.Close()
	var out []wiki.CategoryMember
	for rows.Next() {
		var m wiki.CategoryMember
		var added int64
		if m.Page, err = scanPage(extraScanner{rows, []any{&m.SortKey, &added}}); err != nil {
			return nil, fmt.Errorf("sqlite: additions to %q: %w", cat, err)
		}
		m.SortKey, m.Added = wiki.SortKeyOf(m.SortKey), fromMS(added)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: additions to %q: %w", cat, err)
	}
	return out, nil
}
