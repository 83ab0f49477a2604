package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

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

// errBudget: the search budget ran out before a query.
var errBudget = errors.New("search budget spent")

// searchTx runs the index reads of one search in a read-only transaction
// of their own, under the budget, enforced by the server: each statement
// gets what is left of it as its statement_timeout, so a read that runs
// out is stopped there (not left running after the client gave up) and
// the connection goes back to the pool. The planner is told to read the
// GIN indexes, never the table or its primary key: it takes matching a
// tsquery to be cheap, and would otherwise scan every page's entry (read
// from TOAST) for a word that is not in most of them.
type searchTx struct {
	tx       pgx.Tx
	deadline time.Time
	spent    bool
}

func (db *DB) beginSearch(ctx context.Context) (*searchTx, error) {
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `SELECT set_config('enable_seqscan', 'off', true), set_config('enable_indexscan', 'off', true)`); err != nil {
		tx.Rollback(ctx)
		return nil, err
	}
	return &searchTx{tx: tx, deadline: time.Now().Add(searchBudget)}, nil
}

// end ends the transaction (it only read); again, it does nothing.
func (st *searchTx) end() {
	if st.tx != nil {
		st.tx.Rollback(context.Background())
		st.tx = nil
	}
}

// limit gives the next statement what is left of the budget.
func (st *searchTx) limit(ctx context.Context) error {
	left := time.Until(st.deadline)
	if st.spent || left <= 0 {
		st.spent = true
		return errBudget
	}
	_, err := st.tx.Exec(ctx, `SELECT set_config('statement_timeout', $1, true)`, strconv.FormatInt(max(left.Milliseconds(), 1), 10))
	return err
}

func (st *searchTx) query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := st.limit(ctx); err != nil {
		return nil, err
	}
	return st.tx.Query(ctx, sql, args...)
}

func (st *searchTx) sendBatch(ctx context.Context, b *pgx.Batch) error {
	if err := st.limit(ctx); err != nil {
		return err
	}
	return st.tx.SendBatch(ctx, b).Close()
}

// budgetOK turns "the budget ran out" (before a statement, or the server's
// statement timeout) into nil: what was found is ranked. Later reads of the
// search are not made.
func (st *searchTx) budgetOK(err error) error {
	var pe *pgconn.PgError
	if errors.Is(err, errBudget) || (errors.As(err, &pe) && pe.Code == "57014") {
		st.spent = true
		return nil
	}
	return err
}

// searchRare: a word in at most this many pages is rare enough to rank
// by (BM25 reads the entry of each page holding it). A variable for
// tests, which cannot make thousands of pages.
var searchRare = 2000

// BM25's parameters (as SQLite's index, search.BM25), and the weight of
// a title's words against the body's.
const (
	bm25K1      = 1.2
	bm25B       = 0.75
	titleWeight = 10.0
)

// termsMatch returns the SQL condition "search s holds every term of
// terms", each term whole in the title or whole in the body (a phrase
// matches within one of them, as in SQLite's index), with its tsquery literals appended to
// args as parameters. Every term is a GIN lookup (title or body), so the
// matches are an AND of ORs of index bitmaps.
func termsMatch(terms []store.QueryTerm, args *[]any) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		*args = append(*args, tsquery(store.Query{Terms: []store.QueryTerm{t}}))
		n := "$" + strconv.Itoa(len(*args)) + "::tsquery"
		parts[i] = "(s.title @@ " + n + " OR s.body @@ " + n + ")"
	}
	return strings.Join(parts, " AND ")
}

// wordTerms returns each of words as a term of its own.
func wordTerms(words []string) []store.QueryTerm {
	out := make([]store.QueryTerm, len(words))
	for i, w := range words {
		out[i] = store.QueryTerm{Words: []string{w}}
	}
	return out
}

// Search finds live pages holding every term of query (store.ParseQuery):
// pages whose title holds them first (an exact title before all, then by
// ts_rank over the title, length-normalized), then the others by BM25 over
// the query's rare words (title words weigh more than body words), or,
// when every word is common, newest first (common words do not tell pages
// apart). Only the SearchCandidates newest matches are ranked. Hits carry
// the latest revision's text in Source, for the caller's snippet.
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
	if offset >= 2*SearchCandidates {
		return nil, nil
	}
	st, err := db.beginSearch(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: search %q: %w", query, err)
	}
	defer st.end()
	type cand struct {
		id         int64
		score      float64 // lower is better
		titleMatch bool
		exact      bool
	}
	var cands []cand
	byID := map[int64]int{}
	// collect runs an index query returning (page_id, score), keeping the
	// rows read before the budget ran out.
	collect := func(sql string, each func(id int64, score float64), args ...any) error {
		rows, err := st.query(ctx, sql, args...)
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
	budgetOK := st.budgetOK
	// inNS completes a read of the index (search s) with args: the join
	// and the condition that keep the pages of sq.Namespaces.
	inNS := func(args *[]any) (join, cond string) {
		if len(sq.Namespaces) == 0 {
			return "", ""
		}
		return ` JOIN pages p ON p.id = s.page_id`, store.PageNamespaces(sq.Namespaces, func(v any) string {
			*args = append(*args, v)
			return "$" + strconv.Itoa(len(*args))
		})
	}
	// Title matches, ranked over the short titles: as many as the page
	// asked for needs, SearchCandidates at most. They come first, so when
	// there are more, that page holds title matches only, and the ones
	// left out belong to later pages (each asks for its own). Equal ranks
	// go oldest first, as SQLite's index ranks them: with more title matches than
	// SearchCandidates, the body matches, read newest first, are then
	// others than those.
	args := []any{tsquery(q), min(offset+lim, SearchCandidates)}
	join, cond := inNS(&args)
	err = budgetOK(collect(`SELECT s.page_id, -ts_rank(s.title, $1::tsquery, 2)::float8 FROM search s`+join+`
		WHERE s.title @@ $1::tsquery`+cond+` ORDER BY 2, s.page_id LIMIT $2`,
		func(id int64, score float64) {
			byID[id] = len(cands)
			cands = append(cands, cand{id: id, score: score, titleMatch: true})
		}, args...))
	// The query's rare words, if any: with one, every match is among
	// at most searchRare pages, all of them ranked.
	var rare []string
	var df []int
	var pages float64
	if err == nil {
		rare, df, pages, err = st.rareWords(ctx, q)
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
		var args []any
		match := termsMatch(q.Terms, &args)
		join, cond := inNS(&args)
		args = append(args, n)
		err = budgetOK(collect(`SELECT s.page_id, 0::float8 FROM search s`+join+` WHERE `+match+cond+`
			ORDER BY s.page_id DESC LIMIT $`+strconv.Itoa(len(args)),
			func(id int64, _ float64) {
				if _, ok := byID[id]; !ok {
					byID[id] = len(cands)
					cands = append(cands, cand{id: id, score: float64(-id)})
				}
			}, args...))
	}
	// Weigh body matches by the query's rare words.
	if err == nil && len(rare) > 0 {
		var ranked map[int64]float64
		ranked, err = st.bm25(ctx, rare, df, pages, inNS)
		err = budgetOK(err)
		// Newest first among equals, as the matches were read.
		ids := make([]int64, 0, len(ranked))
		for id := range ranked {
			ids = append(ids, id)
		}
		slices.SortFunc(ids, func(a, b int64) int { return cmp.Compare(b, a) })
		for _, id := range ids {
			if _, ok := byID[id]; allRare && !ok {
				byID[id] = len(cands)
				cands = append(cands, cand{id: id, score: ranked[id]})
			}
		}
		for i := range cands {
			if score, ok := ranked[cands[i].id]; ok && !cands[i].titleMatch {
				cands[i].score = score
			}
		}
	}
	// The index reads are over: the connection goes back to the pool
	// before the next ones are taken (holding one while waiting for
	// another would deadlock searches once they fill the pool).
	st.end()
	if fold := store.Fold(query); err == nil && searchable(fold) {
		var id int64
		args := []any{fold}
		cond := store.PageNamespaces(sq.Namespaces, func(v any) string {
			args = append(args, v)
			return "$" + strconv.Itoa(len(args))
		})
		err = db.pool.QueryRow(ctx, `SELECT p.id FROM pages p WHERE NOT p.deleted AND p.title_fold = $1`+cond+` ORDER BY p.id LIMIT 1`, args...).Scan(&id)
		if i, ok := byID[id]; ok && err == nil {
			cands[i].exact, cands[i].titleMatch = true, true
		} else if err == nil {
			// The page whose title is the query, ranked below the
			// title matches read: it comes first all the same.
			byID[id] = len(cands)
			cands = append(cands, cand{id: id, exact: true, titleMatch: true})
		}
		if errors.Is(err, pgx.ErrNoRows) {
			err = nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: search %q: %w", query, err)
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		switch {
		case a.exact != b.exact:
			return boolOrder(a.exact)
		case a.titleMatch != b.titleMatch:
			return boolOrder(a.titleMatch)
		}
		return cmp.Compare(a.score, b.score)
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
	// The page rows and texts, without the search budget: they are few.
	// The start of each text, what a snippet is made from: a long text
	// is decompressed as far as that.
	rows, err := db.pool.Query(ctx, `SELECT p.id, p.title, left(r.text, $2), r.model FROM pages p JOIN revisions r ON r.id = p.latest_rev
		WHERE NOT p.deleted AND p.id = ANY($1)`, ids, store.SnippetHead)
	if err != nil {
		return nil, fmt.Errorf("postgres: search %q: %w", query, err)
	}
	found := map[int64]wiki.SearchHit{}
	var h wiki.SearchHit
	var title, model string
	_, err = pgx.ForEachRow(rows, []any{&h.PageID, &title, &h.Source, &model}, func() error {
		h.Title, h.Model = wiki.Title(title), wiki.ContentModel(model)
		found[h.PageID] = h
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: search %q: %w", query, err)
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
// searchRare pages, counting each no further than that, with those counts
// and an estimate of how many pages the index holds, in one round trip.
func (st *searchTx) rareWords(ctx context.Context, q store.Query) (rare []string, df []int, pages float64, err error) {
	var words []string
	seen := map[string]bool{}
	for _, t := range q.Terms {
		for i, w := range t.Words {
			if seen[w] || (t.Prefix && i == len(t.Words)-1) || len(seen) == searchWords {
				continue
			}
			seen[w] = true
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return nil, nil, 0, nil
	}
	var b pgx.Batch
	// The planner's row count (-1 before the table was first analyzed,
	// when it is small: then counted, boundedly).
	b.Queue(`SELECT CASE WHEN c.reltuples >= 0 THEN c.reltuples::float8
		ELSE (SELECT count(*) FROM (SELECT 1 FROM search LIMIT 100000) x)::float8 END
		FROM pg_class c WHERE c.oid = 'search'::regclass`).QueryRow(func(row pgx.Row) error { return row.Scan(&pages) })
	for _, w := range words {
		b.Queue(`SELECT count(*) FROM (SELECT 1 FROM search s WHERE s.title @@ $1::tsquery OR s.body @@ $1::tsquery LIMIT $2) x`,
			tsquery(store.Query{Terms: wordTerms([]string{w})}), searchRare+1).QueryRow(func(row pgx.Row) error {
			var n int
			if err := row.Scan(&n); err != nil {
				return err
			}
			if n <= searchRare {
				rare, df = append(rare, w), append(df, n)
			}
			return nil
		})
	}
	if err := st.sendBatch(ctx, &b); err != nil {
		return nil, nil, 0, err
	}
	return rare, df, pages, nil
}

// bm25 scores the pages holding every word of rare (df: the number of
// pages holding each, pages: how many the index holds) by BM25 as SQLite
// FTS5's bm25() computed it, negated (lower is better): a word's hits in the
// title count titleWeight times. A page's length is its number of
// distinct words (a tsvector keeps no total), and the average length is
// that of the pages scored.
func (st *searchTx) bm25(ctx context.Context, rare []string, df []int, pages float64, inNS func(*[]any) (join, cond string)) (map[int64]float64, error) {
	args := []any{rare}
	match := termsMatch(wordTerms(rare), &args)
	join, cond := inNS(&args)
	rows, err := st.query(ctx, `SELECT s.page_id, length(s.title) + length(s.body), f.words, f.hits
		FROM search s`+join+`, LATERAL (
			SELECT array_agg(u.lexeme::text) AS words, array_agg(u.hits) AS hits FROM (
				SELECT t.lexeme, sum(cardinality(t.positions) * t.weight)::float8 AS hits FROM (
					SELECT x.lexeme, x.positions, `+strconv.FormatFloat(titleWeight, 'f', -1, 64)+` AS weight
						FROM unnest(ts_filter(setweight(s.title, 'A', $1::text[]), '{a}')) x
					UNION ALL
					SELECT y.lexeme, y.positions, 1 FROM unnest(ts_filter(setweight(s.body, 'A', $1::text[]), '{a}')) y
				) t GROUP BY t.lexeme
			) u
		) f
		WHERE `+match+cond, args...)
	if err != nil {
		return nil, err
	}
	type entry struct {
		id     int64
		length float64
		hits   map[string]float64
	}
	var entries []entry
	var id int64
	var length int
	var words []string
	var hits []float64
	_, err = pgx.ForEachRow(rows, []any{&id, &length, &words, &hits}, func() error {
		e := entry{id: id, length: float64(length), hits: map[string]float64{}}
		for i, w := range words {
			if i < len(hits) {
				e.hits[w] = hits[i]
			}
		}
		entries = append(entries, e)
		return nil
	})
	// Rows read before the budget ran out are scored all the same.
	if len(entries) == 0 {
		return nil, err
	}
	idf := make([]float64, len(rare))
	for i, n := range df {
		pages = max(pages, float64(n))
		idf[i] = math.Log((pages - float64(n) + 0.5) / (float64(n) + 0.5))
		if idf[i] <= 0 {
			idf[i] = 1e-6
		}
	}
	avg := 0.0
	for _, e := range entries {
		avg += e.length
	}
	avg = max(avg/float64(len(entries)), 1)
	out := make(map[int64]float64, len(entries))
	for _, e := range entries {
		score := 0.0
		for i, w := range rare {
			f := e.hits[w]
			score += idf[i] * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*e.length/avg))
		}
		out[e.id] = -score
	}
	return out, err
}

// boolOrder sorts true first.
func boolOrder(a bool) int {
	if a {
		return -1
	}
	return 1
}

// UpdateSearchIndex makes the page's search entry match its current state.
// An entry made from the latest revision (pages.search_rev) is left alone,
// so a repeated job costs one read. Otherwise the latest revision is read
// and turned into text before the write transaction, so that no lock is
// held while text runs; the write goes ahead only if that revision is
// still the latest, under the page row's lock (otherwise it reads again).
// MarkSearchStale makes the next UpdateSearchIndex of the page write its
// entry again.
func (db *DB) MarkSearchStale(ctx context.Context, pageID int64) error {
	if _, err := db.pool.Exec(ctx, `UPDATE pages SET search_rev = 0 WHERE id = $1 AND search_rev <> 0`, pageID); err != nil {
		return fmt.Errorf("postgres: mark the search entry of page %d stale: %w", pageID, err)
	}
	return nil
}

// ReindexPages writes the entries of the pages still at their entry's
// revision in one transaction, the page rows locked in id order (as every
// other multi-page write locks them). The terms are made before it.
func (db *DB) ReindexPages(ctx context.Context, entries []wiki.SearchEntry) error {
	if len(entries) == 0 {
		return nil
	}
	entries = slices.Clone(entries)
	slices.SortFunc(entries, func(a, b wiki.SearchEntry) int { return cmp.Compare(a.PageID, b.PageID) })
	terms := make([]string, len(entries))
	for i, e := range entries {
		terms[i] = store.IndexText(e.Text)
	}
	err := db.write(ctx, func(tx pgx.Tx) error {
		batch := make([]searchEntry, 0, len(entries))
		for i, e := range entries {
			var title string
			var latest int64
			var deleted bool
			err := tx.QueryRow(ctx, `SELECT title, latest_rev, deleted FROM pages WHERE id = $1 FOR UPDATE`, e.PageID).Scan(&title, &latest, &deleted)
			if errors.Is(err, pgx.ErrNoRows) || (err == nil && (deleted || latest != e.RevID)) {
				continue
			}
			if err != nil {
				return err
			}
			batch = append(batch, searchEntry{pageID: e.PageID, revID: e.RevID, title: wiki.Title(title), terms: terms[i]})
		}
		return writeSearch(ctx, tx, batch)
	})
	if err != nil {
		return fmt.Errorf("postgres: reindex %d pages: %w", len(entries), err)
	}
	return nil
}

// UpdateSearchIndex makes the page's search entry match its current state
// (see the SQLite store's).
func (db *DB) UpdateSearchIndex(ctx context.Context, pageID int64, text func(source string, model wiki.ContentModel) string) error {
	for range 3 {
		var src, model string
		var rev, indexed int64
		var deleted bool
		err := db.pool.QueryRow(ctx, `SELECT p.latest_rev, p.deleted, p.search_rev, r.text, r.model FROM pages p JOIN revisions r ON r.id = p.latest_rev
			WHERE p.id = $1`, pageID).Scan(&rev, &deleted, &indexed, &src, &model)
		gone := errors.Is(err, pgx.ErrNoRows) || (err == nil && deleted)
		if err != nil && !gone {
			return fmt.Errorf("postgres: update search index of page %d: %w", pageID, err)
		}
		if !gone && indexed == rev {
			return nil
		}
		terms := ""
		if !gone {
			terms = store.IndexText(text(src, wiki.ContentModel(model)))
		}
		changed := false
		err = db.write(ctx, func(tx pgx.Tx) error {
			changed = false
			var title string
			var latest int64
			var deleted bool
			err := tx.QueryRow(ctx, `SELECT title, latest_rev, deleted FROM pages WHERE id = $1 FOR UPDATE`, pageID).Scan(&title, &latest, &deleted)
			if errors.Is(err, pgx.ErrNoRows) || (err == nil && deleted) {
				return unindexPage(ctx, tx, pageID)
			}
			if err != nil {
				return err
			}
			if gone || latest != rev {
				changed = true
				return nil
			}
			return writeSearch(ctx, tx, []searchEntry{{pageID: pageID, revID: rev, title: wiki.Title(title), terms: terms}})
		})
		if err != nil {
			return fmt.Errorf("postgres: update search index of page %d: %w", pageID, err)
		}
		if !changed {
			return nil
		}
	}
	// Edited faster than it can be indexed: the job runs again later.
	return fmt.Errorf("postgres: update search index of page %d: the page keeps changing", pageID)
}
