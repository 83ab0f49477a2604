package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

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
// contributions. Entries stay after a page is deleted (they are a log).
func (db *DB) RecentChanges(ctx context.Context, q wiki.ChangeQuery) ([]wiki.Change, error) {
	before := q.Before
	if before <= 0 {
		before = 1<<63 - 1
	}
	var args []any
	param := func(v any) string { args = append(args, v); return "?" }
	query := `SELECT ` + changeCols + ` FROM changes c WHERE c.id < ` + param(before)
	query += store.ChangeFilters("c.", q, param) + ` ORDER BY c.id DESC LIMIT ` + param(limit(q.Limit))
	out, err := db.readChanges(ctx, query, args)
	if err != nil {
		return nil, fmt.Errorf("sqlite: recent changes: %w", err)
	}
	return out, nil
}

// changeCols are the columns of the changes table (under alias c) that
// readChanges reads.
const changeCols = `c.id, c.kind, c.title, c.new_title, c.page_id, c.rev_id, c.old_rev_id, c.user_id, c.user_name, c.ts, c.summary, c.size, c.old_size, c.minor, c.tags`

// readChanges runs query, which selects changeCols, and reads its rows.
func (db *DB) readChanges(ctx context.Context, query string, args []any) ([]wiki.Change, error) {
	rows, err := db.r.QueryContext(ctx, query, args...)
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

// Search's bounds: its cost follows them, not the number of pages.
const (
	// SearchCandidates: the newest pages matching every term that a
	// search ranks.
	SearchCandidates = 1000
	// searchWords: at most this many words of a query are counted.
	searchWords = 12
)

// searchBudget bounds the index reads of one search: a phrase or prefix of
// common words can ask for long lists. What was found by then is the
// answer. A variable for tests, whose results must not depend on how
// loaded the machine is.
var searchBudget = 300 * time.Millisecond

// searchRare: a word in at most this many pages is rare enough to rank
// by (BM25 reads the whole list of each word it weighs). A variable for
// tests, which cannot make thousands of pages.
var searchRare = 2000

// Search finds live pages holding every term of query (store.ParseQuery):
// pages whose title holds them first (an exact title before all, then by
// BM25 over titles), then the others by BM25 over the query's rare words
// (title words weigh more than body words), or, when every word is
// common, newest first (common words do not tell pages apart). Only the
// SearchCandidates newest matches are ranked. Hits carry the latest
// revision's text in Source, for the caller's snippet.
//
// With sq.Namespaces, every read that finds pages joins their pages rows
// and keeps those in the namespaces (the rare words' counts stay the whole
// wiki's: they weigh words, not pages).
func (db *DB) Search(ctx context.Context, sq wiki.SearchQuery) ([]wiki.SearchHit, error) {
	query, offset, lim := sq.Text, sq.Offset, sq.Limit
	q := store.ParseQuery(query)
	if len(q.Terms) == 0 {
		return nil, nil
	}
	lim = min(limit(lim), 100)
	offset = max(offset, 0)
	// inNS completes a read of the index table fts: the join and the
	// condition that keep the pages of sq.Namespaces, with their arguments.
	inNS := func(fts string) (join, cond string, args []any) {
		if len(sq.Namespaces) == 0 {
			return "", "", nil
		}
		cond = store.PageNamespaces(sq.Namespaces, func(v any) string { args = append(args, v); return "?" })
		return ` JOIN pages p ON p.id = ` + fts + `.rowid`, cond, args
	}
	if offset >= 2*SearchCandidates {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, searchBudget)
	defer cancel()
	match := store.FTS5Match(q)
	type cand struct {
		id         int64
		score      float64
		titleMatch bool
		exact      bool
	}
	var cands []cand
	byID := map[int64]int{}
	// collect runs an index query returning (rowid, score), keeping the
	// rows read before the budget ran out.
	collect := func(sqlq string, each func(id int64, score float64), args ...any) error {
		rows, err := db.r.QueryContext(ctx, sqlq, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var score float64
			if err := rows.Scan(&id, &score); err != nil {
				return err
			}
			each(id, score)
		}
		return rows.Err()
	}
	budgetOK := func(err error) error {
		if err != nil && ctx.Err() != nil && !errors.Is(context.Cause(ctx), context.Canceled) {
			return nil // the budget ran out: rank what was found
		}
		return err
	}
	// Title matches, ranked by BM25 over the short title lists: as many as
	// the page asked for needs, SearchCandidates at most. They come first,
	// so when there are more, that page holds title matches only, and the
	// ones left out belong to later pages (each asks for its own).
	join, cond, nsArgs := inNS("search_title")
	err := budgetOK(collect(`SELECT search_title.rowid, bm25(search_title) FROM search_title`+join+` WHERE search_title MATCH ?`+cond+` ORDER BY rank LIMIT ?`,
		func(id int64, score float64) {
			byID[id] = len(cands)
			cands = append(cands, cand{id: id, score: score, titleMatch: true})
		}, append(append([]any{match}, nsArgs...), min(offset+lim, SearchCandidates))...))
	// The query's rare words, if any: with one, every match is among
	// at most searchRare pages, all of them ranked.
	var rare []string
	if err == nil {
		rare, err = db.rareWords(ctx, q)
		err = budgetOK(err)
	}
	// A query of rare words alone: the pages BM25 weighs are its matches.
	allRare := len(rare) == len(q.Terms)
	for _, t := range q.Terms {
		allRare = allRare && len(t.Words) == 1 && !t.Prefix
	}
	// Body matches, newest first. Without a rare word to weigh them by,
	// that is their order in the answer, so the page asked for (after the
	// title matches, which may be among them) is all that is read: a
	// phrase of common words costs a page, not a thousand matches.
	if err == nil && !allRare {
		n := min(offset+lim+len(cands), SearchCandidates)
		if len(rare) > 0 {
			n = searchRare
		}
		join, cond, nsArgs := inNS("search")
		err = budgetOK(collect(`SELECT search.rowid, 0 FROM search`+join+` WHERE search MATCH ?`+cond+` ORDER BY search.rowid DESC LIMIT ?`,
			func(id int64, _ float64) {
				if _, ok := byID[id]; !ok {
					byID[id] = len(cands)
					cands = append(cands, cand{id: id, score: float64(-id)})
				}
			}, append(append([]any{match}, nsArgs...), n)...))
	}
	// Weigh body matches by the query's rare words.
	if err == nil && len(rare) > 0 {
		ranked := map[int64]float64{}
		join, cond, nsArgs := inNS("search")
		err = budgetOK(collect(`SELECT search.rowid, bm25(search, 10.0, 1.0) FROM search`+join+` WHERE search MATCH ?`+cond,
			func(id int64, score float64) {
				ranked[id] = score
				if _, ok := byID[id]; allRare && !ok {
					byID[id] = len(cands)
					cands = append(cands, cand{id: id, score: score})
				}
			}, append([]any{`"` + strings.Join(rare, `" AND "`) + `"`}, nsArgs...)...))
		for i := range cands {
			if score, ok := ranked[cands[i].id]; ok && !cands[i].titleMatch {
				cands[i].score = score
			}
		}
	}
	if err == nil {
		var id int64
		var nsArgs []any
		cond := store.PageNamespaces(sq.Namespaces, func(v any) string { nsArgs = append(nsArgs, v); return "?" })
		err = db.r.QueryRowContext(ctx, `SELECT p.id FROM pages p WHERE p.deleted = 0 AND p.title_fold = ?`+cond+` ORDER BY p.id LIMIT 1`,
			append([]any{store.Fold(query)}, nsArgs...)...).Scan(&id)
		if i, ok := byID[id]; ok && err == nil {
			cands[i].exact, cands[i].titleMatch = true, true
		} else if err == nil {
			// The page whose title is the query, ranked below the
			// title matches read: it comes first all the same.
			byID[id] = len(cands)
			cands = append(cands, cand{id: id, exact: true, titleMatch: true})
		}
		if errors.Is(err, sql.ErrNoRows) {
			err = nil
		}
		err = budgetOK(err)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: search %q: %w", query, err)
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		switch {
		case a.exact != b.exact:
			return boolOrder(a.exact)
		case a.titleMatch != b.titleMatch:
			return boolOrder(a.titleMatch)
		}
		return cmp.Compare(a.score, b.score) // BM25 here is lower for better
	})
	// As many title matches and body matches as SearchCandidates each: the
	// exact title, added, must not make a page reach past them.
	cands = cands[:min(len(cands), 2*SearchCandidates)]
	if offset >= len(cands) {
		return nil, nil
	}
	cands = cands[offset:min(len(cands), offset+lim)]
	ids := make([]int64, len(cands))
	for i, c := range cands {
		ids[i] = c.id
	}
	idList, _ := json.Marshal(ids)
	// The page rows and texts, without the search budget: they are few.
	rows, err := db.r.QueryContext(context.WithoutCancel(ctx), `SELECT p.id, p.title, r.text, r.model FROM pages p JOIN revisions r ON r.id = p.latest_rev
		WHERE p.deleted = 0 AND p.id IN (SELECT value FROM json_each(?))`, string(idList))
	if err != nil {
		return nil, fmt.Errorf("sqlite: search %q: %w", query, err)
	}
	defer rows.Close()
	found := map[int64]wiki.SearchHit{}
	for rows.Next() {
		var h wiki.SearchHit
		var title, model string
		if err := rows.Scan(&h.PageID, &title, textColumn{&h.Source}, &model); err != nil {
			return nil, fmt.Errorf("sqlite: search %q: %w", query, err)
		}
		h.Title, h.Model = wiki.Title(title), wiki.ContentModel(model)
		found[h.PageID] = h
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: search %q: %w", query, err)
	}
	hits := make([]wiki.SearchHit, 0, len(cands))
	for _, c := range cands {
		if h, ok := found[c.id]; ok {
			h.TitleMatch = c.titleMatch
			hits = append(hits, h)
		}
	}
	return hits, nil
}

// rareWords returns the words of q (prefixes aside) found in at most
// searchRare pages, counting each no further than that.
func (db *DB) rareWords(ctx context.Context, q store.Query) ([]string, error) {
	var rare []string
	seen := map[string]bool{}
	for _, t := range q.Terms {
		for i, w := range t.Words {
			if seen[w] || (t.Prefix && i == len(t.Words)-1) || len(seen) == searchWords {
				continue
			}
			seen[w] = true
			var n int
			if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM search WHERE search MATCH ? LIMIT ?)`,
				`"`+w+`"`, searchRare+1).Scan(&n); err != nil {
				return nil, err
			}
			if n <= searchRare {
				rare = append(rare, w)
			}
		}
	}
	return rare, nil
}

// boolOrder sorts true first.
func boolOrder(a bool) int {
	if a {
		return -1
	}
	return 1
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
