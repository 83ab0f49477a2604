package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

// noCursor stands for "no upper bound" in ID-paged listings.
const noCursor = 1<<63 - 1

// History returns a page's visible revisions, newest first, without text.
func (db *DB) History(ctx context.Context, q wiki.HistoryQuery) ([]wiki.Revision, error) {
	before := q.Before
	if before <= 0 {
		before = noCursor
	}
	rows, err := db.pool.Query(ctx, `SELECT `+revCols+` FROM revisions r JOIN pages p ON p.id = r.page_id
		LEFT JOIN revisions pr ON pr.id = r.parent_id
		WHERE r.page_id = $1 AND r.id < $2 AND NOT r.deleted ORDER BY r.id DESC LIMIT $3`, q.PageID, before, limit(q.Limit))
	if err != nil {
		return nil, fmt.Errorf("postgres: history of page %d: %w", q.PageID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (wiki.Revision, error) { return scanRevision(row, false) })
	if err != nil {
		return nil, fmt.Errorf("postgres: history of page %d: %w", q.PageID, err)
	}
	return out, nil
}

// PageStats returns the figures of page pageID, titled t: a few counts,
// each one index range cut at wiki.MaxCount + 1 rows, and the first
// revision, in one round trip after the first revision's.
func (db *DB) PageStats(ctx context.Context, pageID int64, t wiki.Title) (wiki.PageStats, error) {
	var st wiki.PageStats
	fail := func(err error) (wiki.PageStats, error) {
		return wiki.PageStats{}, fmt.Errorf("postgres: figures of page %d: %w", pageID, notFound(err))
	}
	first, err := scanRevision(db.pool.QueryRow(ctx, `SELECT `+revCols+revColsFrom+`
		WHERE r.page_id = $1 AND NOT r.deleted ORDER BY r.id LIMIT 1`, pageID), false)
	if err != nil {
		return fail(err)
	}
	st.First = first
	// The latest revisions first: Editors counts those of the revisions
	// the cut keeps.
	err = db.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM (SELECT 1 FROM revisions WHERE page_id = $1 AND NOT deleted ORDER BY id DESC LIMIT $3) r),
		(SELECT count(DISTINCT user_name) FROM (SELECT user_name FROM revisions WHERE page_id = $1 AND NOT deleted ORDER BY id DESC LIMIT $3) r),
		(SELECT count(*) FROM (SELECT DISTINCT l.from_page FROM links l JOIN pages p ON p.id = l.from_page
			WHERE l.target_title = $2 AND l.kind IN ('link', 'redirect') AND NOT p.deleted LIMIT $3) b),
		(SELECT count(*) FROM (SELECT 1 FROM links l JOIN pages p ON p.id = l.from_page
			WHERE l.target_title = $2 AND l.kind = 'redirect' AND NOT p.deleted LIMIT $3) d),
		(SELECT count(*) FROM (SELECT 1 FROM links WHERE from_page = $1 AND kind = 'link' LIMIT $3) o)`,
		pageID, string(t), wiki.MaxCount+1).Scan(&st.Revisions, &st.Editors, &st.Backlinks, &st.Redirects, &st.LinksOut)
	if err != nil {
		return fail(err)
	}
	return st, nil
}

// LatestRevisions returns the latest revision of each live page among
// pageIDs, in one query.
func (db *DB) LatestRevisions(ctx context.Context, pageIDs []int64) (map[int64]int64, error) {
	out := make(map[int64]int64, len(pageIDs))
	if len(pageIDs) == 0 {
		return out, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT id, latest_rev FROM pages WHERE id = ANY($1) AND NOT deleted`, pageIDs)
	if err != nil {
		return nil, fmt.Errorf("postgres: latest revisions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, latest int64
		if err := rows.Scan(&id, &latest); err != nil {
			return nil, fmt.Errorf("postgres: latest revisions: %w", err)
		}
		out[id] = latest
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: latest revisions: %w", err)
	}
	return out, nil
}

// liveRevision is store.ChangeFilters' test of a change's revision: a
// scalar subquery, which PostgreSQL runs per change read, where it turned
// an EXISTS into a hash of every live revision built for each query.
func liveRevision(revID string) string {
	return `(SELECT NOT lr.deleted FROM revisions lr WHERE lr.id = ` + revID + `)`
}

// RecentChanges returns changes newest first; with UserName, that user's
// contributions. A deleted page's edits are left out (store.ChangeFilters).
func (db *DB) RecentChanges(ctx context.Context, q wiki.ChangeQuery) ([]wiki.Change, error) {
	before := q.Before
	if before <= 0 {
		before = noCursor
	}
	var args []any
	param := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	query := `SELECT ` + changeCols + ` FROM changes c WHERE c.id < ` + param(before)
	query += store.ChangeFilters("c.", q, liveRevision, param) + ` ORDER BY c.id DESC LIMIT ` + param(limit(q.Limit))
	out, err := db.readChanges(ctx, query, args)
	if err != nil {
		return nil, fmt.Errorf("postgres: recent changes: %w", err)
	}
	return out, nil
}

// changeCols are the columns of the changes table (under alias c) that
// readChanges reads.
const changeCols = `c.id, c.kind, c.title, c.new_title, c.page_id, c.rev_id, c.old_rev_id, c.user_id, c.user_name, c.ts, c.summary, c.size, c.old_size, c.minor, c.tags`

// readChanges runs query, which selects changeCols, and reads its rows.
func (db *DB) readChanges(ctx context.Context, query string, args []any) ([]wiki.Change, error) {
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (wiki.Change, error) {
		var c wiki.Change
		var kind, title, newTitle, tags string
		var ts int64
		err := row.Scan(&c.ID, &kind, &title, &newTitle, &c.PageID, &c.RevID, &c.OldRevID, &c.UserID, &c.UserName,
			&ts, &c.Summary, &c.Size, &c.OldSize, &c.Minor, &tags)
		c.Kind, c.Title, c.NewTitle, c.Time = wiki.ChangeKind(kind), wiki.Title(title), wiki.Title(newTitle), fromMS(ts)
		c.Tags = wiki.SplitTags(tags)
		return c, err
	})
}

// prefixEnd returns the smallest valid UTF-8 string greater than every
// string with prefix p in code point order (which is byte order, and
// COLLATE "C" order), or "" when there is none. p must be valid UTF-8.
func prefixEnd(p string) string {
	r := []rune(p)
	for i := len(r) - 1; i >= 0; i-- {
		switch {
		case r[i] == 0xD7FF: // the surrogates are not characters
			r[i] = 0xE000
			return string(r[:i+1])
		case r[i] < utf8.MaxRune:
			r[i]++
			return string(r[:i+1])
		}
	}
	return ""
}

// searchable reports whether s can be compared with stored titles: valid
// UTF-8 without NUL (which PostgreSQL's text refuses; no title holds it).
func searchable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// listPages runs a page listing by title: where completes
// "SELECT pageCols FROM pages p WHERE NOT p.deleted <where> AND <range>"
// with args as $1…, and the title range and cursors follow them.
func (db *DB) listPages(ctx context.Context, op, where string, q wiki.ListQuery, args ...any) ([]wiki.Page, error) {
	if !searchable(q.Prefix) || !searchable(string(q.From)) || !searchable(string(q.After)) {
		return nil, nil // no title starts with, or is ordered by, such a string
	}
	param := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	query := `SELECT ` + pageCols + ` FROM pages p WHERE NOT p.deleted` + where + store.PageNamespaces(q.Namespaces, param)
	lo, hi := max(string(q.From), q.Prefix), ""
	if q.Prefix != "" {
		hi = prefixEnd(q.Prefix)
	}
	// One namespace's pages are one range of titles too.
	if nlo, nhi, ok := store.NamespaceTitleRange(q.Namespaces); ok {
		lo = max(lo, nlo)
		if hi == "" || nhi < hi {
			hi = nhi
		}
	}
	if lo != "" {
		query += ` AND p.title >= ` + param(lo)
	}
	if q.After != "" {
		query += ` AND p.title > ` + param(string(q.After))
	}
	if hi != "" {
		query += ` AND p.title < ` + param(hi)
	}
	query += ` ORDER BY p.title LIMIT ` + param(limit(q.Limit))
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", op, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (wiki.Page, error) { return scanPage(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", op, err)
	}
	return out, nil
}

// AllPages lists live pages by title.
func (db *DB) AllPages(ctx context.Context, q wiki.ListQuery) ([]wiki.Page, error) {
	return db.listPages(ctx, "all pages", "", q)
}

// Backlinks lists live pages that link or redirect to t, by title.
func (db *DB) Backlinks(ctx context.Context, t wiki.Title, q wiki.ListQuery) ([]wiki.Page, error) {
	return db.listPages(ctx, fmt.Sprintf("backlinks of %q", t),
		` AND p.id IN (SELECT from_page FROM links WHERE target_title = $1 AND kind IN ('link', 'redirect'))`, q, string(t))
}

// Dependents lists the live pages using t, by ID after afterID: per kind
// of row, one range of the links_target index (target, kind, from_page).
func (db *DB) Dependents(ctx context.Context, t wiki.Title, use wiki.Use, afterID int64, limit int) ([]wiki.Page, error) {
	kinds := store.UseKinds(use)
	perKind := make([][]wiki.Page, len(kinds))
	for i, kind := range kinds {
		rows, err := db.pool.Query(ctx, `SELECT `+pageCols+` FROM links l JOIN pages p ON p.id = l.from_page
			WHERE l.target_title = $1 AND l.kind = $2 AND l.from_page > $3 AND NOT p.deleted ORDER BY l.from_page LIMIT $4`,
			string(t), kind, afterID, limit)
		if err != nil {
			return nil, fmt.Errorf("postgres: pages using %q: %w", t, err)
		}
		if perKind[i], err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (wiki.Page, error) { return scanPage(row) }); err != nil {
			return nil, fmt.Errorf("postgres: pages using %q: %w", t, err)
		}
	}
	return store.MergeDependents(perKind, limit), nil
}

// CountTransclusions counts the live pages that transclude t, up to
// wiki.MaxCount + 1.
func (db *DB) CountTransclusions(ctx context.Context, t wiki.Title) (int, error) {
	var n int
	err := db.pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM links l JOIN pages p ON p.id = l.from_page
		WHERE l.target_title = $1 AND l.kind = 'template' AND NOT p.deleted LIMIT $2) AS used`, string(t), wiki.MaxCount+1).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("postgres: count transclusions of %q: %w", t, err)
	}
	return n, nil
}

// CategoryMembers lists live pages in category cat with their sort keys,
// by (sort key, title): one range of the links_category index, from the
// cursor on, the pages joined by ID. Members with equal keys are sorted by
// title among themselves (an incremental sort of that part of the order
// only, which the LIMIT ends).
func (db *DB) CategoryMembers(ctx context.Context, cat wiki.Title, q wiki.CategoryQuery) ([]wiki.CategoryMember, error) {
	for _, s := range []string{q.From.SortKey, string(q.From.Title), q.Before.SortKey, string(q.Before.Title)} {
		if !searchable(s) {
			return nil, fmt.Errorf("postgres: members of %q: the cursor %q holds NUL or invalid UTF-8, which no stored sort key or title does: fold keys with wiki.SortKey", cat, s)
		}
	}
	args := []any{string(cat), q.Subcategories}
	param := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	query := `SELECT ` + pageCols + `, l.sortkey FROM links l JOIN pages p ON p.id = l.from_page
		WHERE l.target_title = $1 AND l.kind = 'category' AND l.subcat = $2 AND NOT p.deleted` +
		store.CategoryRange(q, param)
	query += ` ORDER BY l.sortkey LIMIT ` + param(limit(q.Limit))
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: members of %q: %w", cat, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (wiki.CategoryMember, error) {
		var m wiki.CategoryMember
		var err error
		m.Page, err = scanPage(extraScanner{row, []any{&m.SortKey}})
		m.SortKey = wiki.SortKeyOf(m.SortKey)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: members of %q: %w", cat, err)
	}
	return out, nil
}

// extraScanner scans the columns after a row's first ones into extra.
type extraScanner struct {
	row   pgx.Row
	extra []any
}

func (x extraScanner) Scan(dest ...any) error { return x.row.Scan(append(dest, x.extra...)...) }

// PageCategories returns the categories page pageID is in, with its rows'
// sort key and subcategory flag, by category.
func (db *DB) PageCategories(ctx context.Context, pageID int64) ([]wiki.CategoryLink, error) {
	rows, err := db.pool.Query(ctx, `SELECT target_title, sortkey, subcat FROM links WHERE from_page = $1 AND kind = 'category' ORDER BY target_title`, pageID)
	if err != nil {
		return nil, fmt.Errorf("postgres: categories of page %d: %w", pageID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (wiki.CategoryLink, error) {
		var c wiki.CategoryLink
		var t string
		err := row.Scan(&t, &c.SortKey, &c.Subcat)
		c.Category, c.SortKey = wiki.Title(t), wiki.SortKeyOf(c.SortKey)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: categories of page %d: %w", pageID, err)
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
	rows, err := db.pool.Query(ctx, `SELECT target_title FROM links WHERE from_page = $1 AND kind = $2 ORDER BY target_title`, pageID, kind)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s rows of page %d: %w", kind, pageID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (wiki.Title, error) {
		var t string
		err := row.Scan(&t)
		return wiki.Title(t), err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: %s rows of page %d: %w", kind, pageID, err)
	}
	return out, nil
}

// RandomPage returns a random live, non-redirect page of the main
// namespace: the first at or after a random ID (pages_live), else the
// first of all.
func (db *DB) RandomPage(ctx context.Context) (wiki.Title, error) {
	var t string
	err := db.pool.QueryRow(ctx, `SELECT title FROM pages WHERE NOT deleted AND ns = '' AND redirect = ''
		AND id >= (SELECT floor(random() * (max(id) + 1))::bigint FROM pages) ORDER BY id LIMIT 1`).Scan(&t)
	if errors.Is(err, pgx.ErrNoRows) {
		err = db.pool.QueryRow(ctx, `SELECT title FROM pages WHERE NOT deleted AND ns = '' AND redirect = '' ORDER BY id LIMIT 1`).Scan(&t)
	}
	if err != nil {
		return "", fmt.Errorf("postgres: random page: %w", notFound(err))
	}
	return wiki.Title(t), nil
}

// PageCount counts live pages (redirects included).
func (db *DB) PageCount(ctx context.Context) (int, error) {
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM pages WHERE NOT deleted`).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: page count: %w", err)
	}
	return n, nil
}

// SearchTitles returns live pages whose title, folded (store.Fold),
// starts with prefix folded, in folded-title order: what title completion
// offers. One range of pages_title_fold, as long as limit.
func (db *DB) SearchTitles(ctx context.Context, prefix string, lim int) ([]wiki.Page, error) {
	// A title typed with underscores, as URLs spell it, is the same title.
	p := store.Fold(strings.TrimSpace(strings.ReplaceAll(prefix, "_", " ")))
	if p == "" || !searchable(p) {
		return nil, nil
	}
	query := `SELECT ` + pageCols + ` FROM pages p WHERE NOT p.deleted AND p.title_fold >= $1`
	args := []any{p, min(limit(lim), 100)}
	if hi := prefixEnd(p); hi != "" {
		query += ` AND p.title_fold < $3`
		args = append(args, hi)
	}
	rows, err := db.pool.Query(ctx, query+` ORDER BY p.title_fold, p.id LIMIT $2`, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: search titles %q: %w", prefix, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (wiki.Page, error) { return scanPage(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres: search titles %q: %w", prefix, err)
	}
	return out, nil
}

// CategoryAdditions lists live pages in category cat, the most recently
// added first: one range of the category_added_time index, read
// backwards, each row checked against its links row (the membership
// exists) and its page (live).
func (db *DB) CategoryAdditions(ctx context.Context, cat wiki.Title, n int) ([]wiki.CategoryMember, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+pageCols+`, l.sortkey, a.added FROM category_added a
		JOIN links l ON l.from_page = a.page_id AND l.kind = 'category' AND l.target_title = a.category
		JOIN pages p ON p.id = a.page_id
		WHERE a.category = $1 AND NOT p.deleted ORDER BY a.added DESC, a.page_id DESC LIMIT $2`, string(cat), limit(n))
	if err != nil {
		return nil, fmt.Errorf("postgres: additions to %q: %w", cat, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (wiki.CategoryMember, error) {
		var m wiki.CategoryMember
		var added int64
		var err error
		m.Page, err = scanPage(extraScanner{row, []any{&m.SortKey, &added}})
		m.SortKey, m.Added = wiki.SortKeyOf(m.SortKey), fromMS(added)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: additions to %q: %w", cat, err)
	}
	return out, nil
}
