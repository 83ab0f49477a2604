package sqlite

import (
	"context"
	"database/sql"
	"fmt"
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

// RecentChanges returns changes newest first; with UserName, that user's
// contributions. Entries stay after a page is deleted (they are a log).
func (db *DB) RecentChanges(ctx context.Context, q wiki.ChangeQuery) ([]wiki.Change, error) {
	before := q.Before
	if before <= 0 {
		before = 1<<63 - 1
	}
	const cols = `id, kind, title, new_title, page_id, rev_id, old_rev_id, user_id, user_name, ts, summary, size, old_size, minor`
	var rows *sql.Rows
	var err error
	if q.UserName != "" {
		rows, err = db.r.QueryContext(ctx, `SELECT `+cols+` FROM changes WHERE user_name = ? AND id < ? ORDER BY id DESC LIMIT ?`,
			q.UserName, before, limit(q.Limit))
	} else {
		rows, err = db.r.QueryContext(ctx, `SELECT `+cols+` FROM changes WHERE id < ? ORDER BY id DESC LIMIT ?`, before, limit(q.Limit))
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: recent changes: %w", err)
	}
	defer rows.Close()
	var out []wiki.Change
	for rows.Next() {
		var c wiki.Change
		var kind, title, newTitle string
		var ts int64
		if err := rows.Scan(&c.ID, &kind, &title, &newTitle, &c.PageID, &c.RevID, &c.OldRevID, &c.UserID, &c.UserName,
			&ts, &c.Summary, &c.Size, &c.OldSize, &c.Minor); err != nil {
			return nil, fmt.Errorf("sqlite: recent changes: %w", err)
		}
		c.Kind, c.Title, c.NewTitle, c.Time = wiki.ChangeKind(kind), wiki.Title(title), wiki.Title(newTitle), fromMS(ts)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: recent changes: %w", err)
	}
	return out, nil
}

// titleRange turns a ListQuery into bounds on p.title: title >= lo and,
// when hi is not empty, title < hi.
func titleRange(q wiki.ListQuery) (lo, hi string) {
	lo = max(string(q.From), q.Prefix)
	if q.Prefix != "" {
		hi = prefixEnd(q.Prefix)
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
	if hi != "" {
		query += ` AND p.title < ?`
		all = append(all, hi)
	}
	query += where + ` ORDER BY p.title LIMIT ?`
	all = append(append(all, args...), limit(q.Limit))
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

// CategoryMembers lists live pages in category cat, by title.
func (db *DB) CategoryMembers(ctx context.Context, cat wiki.Title, q wiki.ListQuery) ([]wiki.Page, error) {
	return db.listPages(ctx, fmt.Sprintf("members of %q", cat), "",
		` AND p.id IN (SELECT from_page FROM links WHERE target_title = ? AND kind = 'category')`, q, string(cat))
}

// PageCategories returns the categories page pageID is in, by title.
func (db *DB) PageCategories(ctx context.Context, pageID int64) ([]wiki.Title, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT target_title FROM links WHERE from_page = ? AND kind = 'category' ORDER BY target_title`, pageID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: categories of page %d: %w", pageID, err)
	}
	defer rows.Close()
	var out []wiki.Title
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("sqlite: categories of page %d: %w", pageID, err)
		}
		out = append(out, wiki.Title(t))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: categories of page %d: %w", pageID, err)
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

// Search finds live pages whose title or text contains every term of
// query (see store.SearchTerms), title matches first. Terms of three or
// more characters go through the trigram index (MATCH); shorter ones, such
// as two-syllable Korean words, are LIKE filters on the same table (a scan
// when every term is short).
func (db *DB) Search(ctx context.Context, query string, offset, lim int) ([]wiki.SearchHit, error) {
	terms := store.SearchTerms(query)
	if len(terms) == 0 {
		return nil, nil
	}
	lim = min(limit(lim), 100)
	offset = max(offset, 0)

	var match []string
	var where []string
	var args []any
	var titleMatch []string
	var titleArgs []any
	for _, t := range terms {
		like := "%" + store.EscapeLike(t) + "%"
		titleMatch = append(titleMatch, `title LIKE ? ESCAPE '\'`)
		titleArgs = append(titleArgs, like)
		if store.RuneLen(t) >= 3 {
			match = append(match, `"`+strings.ReplaceAll(t, `"`, `""`)+`"`)
			continue
		}
		where = append(where, `(title LIKE ? ESCAPE '\' OR text LIKE ? ESCAPE '\')`)
		args = append(args, like, like)
	}
	order := ""
	if len(match) > 0 {
		where = append([]string{`search MATCH ?`}, where...)
		args = append([]any{strings.Join(match, " ")}, args...)
		order = "rank, "
	}
	sqlq := `SELECT rowid, title, text, (` + strings.Join(titleMatch, " AND ") + `) AS tm FROM search
		WHERE ` + strings.Join(where, " AND ") + `
		ORDER BY tm DESC, ` + order + `title LIMIT ? OFFSET ?`
	all := append(append(titleArgs, args...), lim, offset)
	rows, err := db.r.QueryContext(ctx, sqlq, all...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: search %q: %w", query, err)
	}
	defer rows.Close()
	var hits []wiki.SearchHit
	for rows.Next() {
		var title, text string
		var h wiki.SearchHit
		if err := rows.Scan(&h.PageID, &title, &text, &h.TitleMatch); err != nil {
			return nil, fmt.Errorf("sqlite: search %q: %w", query, err)
		}
		h.Title, h.Snippet = wiki.Title(title), store.Snippet(text, terms)
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: search %q: %w", query, err)
	}
	return hits, nil
}
