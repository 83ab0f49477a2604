package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/wikid/wikid/internal/search"
	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

// The search index is package search's: segments of postings, each
// written whole in the transaction of the saves it indexes (a batch of an
// import, or one edit), as rows of search_blocks; pages.search_seg names
// the segment holding a page's current entry. Segments are merged in the
// background (merger.go).

// searchEntry is a page's search entry to write: title and terms (the
// page's text as readers see it, through store.IndexText, made before the
// transaction so that the writer is not held while text is split).
type searchEntry struct {
	pageID, revID int64
	title         wiki.Title
	terms         string
}

// textAnalyzer makes the terms of an import batch's texts as it builds
// their segment (search.BuildText).
var textAnalyzer = search.Analyzer{Tokens: store.IndexTokens, Term: store.WordTerm}

// segmentOf builds the segment of entries: its document i+1 is
// entries[i]'s page.
func segmentOf(entries []searchEntry) search.Segment {
	docs := make([]search.Doc, len(entries))
	for i, e := range entries {
		docs[i] = search.Doc{ID: int64(i + 1), Title: store.IndexText(string(e.title)), Body: e.terms}
	}
	return search.Build(docs)
}

// writeSearch writes entries as one new segment. A page saved more than
// once (an import of its history) is indexed by its last entry.
func writeSearch(ctx context.Context, tx *wtx, entries []searchEntry) error {
	entries = lastPerPage(entries)
	return writeSegment(ctx, tx, segmentOf(entries), entries)
}

// writeSegment stores seg, built from entries (document i+1 is
// entries[i]), and makes it the segment of each entry's page.
func writeSegment(ctx context.Context, tx *wtx, seg search.Segment, entries []searchEntry) error {
	if len(entries) == 0 {
		return nil
	}
	var docmap []byte
	prev, maxPage := int64(0), int64(0)
	for _, e := range entries {
		docmap = binary.AppendVarint(docmap, e.pageID-prev)
		prev, maxPage = e.pageID, max(maxPage, e.pageID)
	}
	var id int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO search_segments (docs, tokens, max_page, docmap, lens, created) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
		len(entries), seg.Tokens, maxPage, docmap, encodeLens(seg.Lens), time.Now().UnixMilli()).Scan(&id); err != nil {
		return err
	}
	for _, b := range seg.Blocks {
		if _, err := tx.ExecContext(ctx, `INSERT INTO search_blocks (seg, first, data) VALUES (?, ?, ?)`, id, b.First, b.Data); err != nil {
			return err
		}
	}
	for _, e := range entries {
		if _, err := tx.ExecContext(ctx, `UPDATE pages SET search_rev = ?, title_fold = ?, search_seg = ? WHERE id = ?`,
			e.revID, store.Fold(string(e.title)), id, e.pageID); err != nil {
			return err
		}
	}
	tx.indexed = true
	return nil
}

// encodeLens encodes a segment's document lengths for its lens column:
// uvarints, in document order.
func encodeLens(lens []int32) []byte {
	out := make([]byte, 0, len(lens)*2)
	for _, n := range lens {
		out = binary.AppendUvarint(out, uint64(n))
	}
	return out
}

func bySearchRow(a, b searchEntry) int { return cmp.Compare(a.pageID, b.pageID) }

// lastPerPage returns entries in page order with the last entry of each
// page only.
func lastPerPage(entries []searchEntry) []searchEntry {
	out := slices.Clone(entries)
	slices.SortStableFunc(out, bySearchRow)
	n := 0
	for _, e := range out {
		if n > 0 && out[n-1].pageID == e.pageID {
			n--
		}
		out[n] = e
		n++
	}
	return out[:n]
}

// unindexPage drops the page's search entry: its segment's entry becomes
// stale.
func unindexPage(ctx context.Context, tx *wtx, pageID int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE pages SET search_rev = 0, search_seg = 0 WHERE id = ?`, pageID)
	return err
}

// segmentInfo is a live segment as a query sees it.
type segmentInfo struct {
	id, docs, tokens, maxPage int64
}

// querier runs queries: the reader pool, or a search's read
// transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// liveSegments lists the live segments, the one holding the newest pages
// first.
func (db *DB) liveSegments(ctx context.Context, r querier) ([]segmentInfo, error) {
	rows, err := r.QueryContext(ctx, `SELECT id, docs, tokens, max_page FROM search_segments WHERE state = 0 ORDER BY max_page DESC, id DESC`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []segmentInfo
	for rows.Next() {
		var s segmentInfo
		if err := rows.Scan(&s.id, &s.docs, &s.tokens, &s.maxPage); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	db.segcache.keepOnly(out)
	if len(out) > 4*mergeFanout {
		db.merger.kick(db) // an import by another process left them
	}
	return out, nil
}

// segReader reads one segment's lists for a query, keeping those it
// looked up (a query asks for a word's list to count and then to match).
type segReader struct {
	ctx   context.Context
	db    *DB
	r     querier
	seg   *segment
	lists map[string]*search.List // nil: not in the segment
	// phrase: the query has a phrase, whose words' long lists are read
	// through the Skips the segment cache keeps.
	phrase bool
}

func (s *segReader) Lookup(key string) (search.List, bool, error) {
	if l, ok := s.lists[key]; ok {
		if l == nil {
			return search.List{}, false, nil
		}
		return *l, true, nil
	}
	i := s.seg.blockOf(key)
	if i < 0 {
		s.lists[key] = nil
		return search.List{}, false, nil
	}
	data, err := s.db.segcache.block(s.ctx, s.r, s.seg, i)
	if err != nil {
		return search.List{}, false, err
	}
	l, ok, err := search.Lookup(data, key)
	if err != nil {
		return search.List{}, false, err
	}
	if ok {
		if n := l.Docs(); s.phrase && n >= search.SkipsMin {
			l = l.WithSkips(s.db.segcache.listSkips(s.seg.id, key, n))
		}
		s.lists[key] = &l
	} else {
		s.lists[key] = nil
	}
	return l, ok, nil
}

func (s *segReader) Range(lo, hi string, each func(string, search.List) bool) error {
	for i := max(s.seg.blockOf(lo), 0); i < len(s.seg.firsts) && s.seg.firsts[i] < hi; i++ {
		data, err := s.db.segcache.block(s.ctx, s.r, s.seg, i)
		if err != nil {
			return err
		}
		done, err := search.Range(data, lo, hi, each)
		if err != nil || done {
			return err
		}
	}
	return nil
}

// Search's bounds: its cost follows them, not the number of pages.
const (
	// SearchCandidates: the newest pages matching every term that a
	// search ranks.
	SearchCandidates = 1000
)

// searchBudget bounds the index reads of one search: a phrase or prefix of
// common words can ask for long lists. What was found by then is the
// answer. A variable for tests, whose results must not depend on how
// loaded the machine is.
var searchBudget = 300 * time.Millisecond

// searchRare: a word in at most this many pages is rare enough to rank
// by. A variable for tests, which cannot make thousands of pages.
var searchRare = 2000

// searchCand is a page a search found.
type searchCand struct {
	page       int64
	score      float64 // BM25: higher is better
	titleMatch bool
	exact      bool
}

// Search finds live pages holding every term of query (store.ParseQuery):
// pages whose title holds them first (an exact title before all, then by
// BM25 over titles), then the others by BM25 over the query's rare words
// (title words weigh more than text words), or, when every word is
// common, newest first (common words do not tell pages apart). Only the
// SearchCandidates newest matches are ranked. Hits carry the latest
// revision's text in Source, for the caller's snippet.
//
// Segments are read newest pages first; one whose pages are all older
// than the newest matches already found is not read at all, so that a
// query of common words reads the newest segment only.
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
	s := &searcher{db: db, sq: sq}
	for _, t := range q.Terms {
		s.terms = append(s.terms, search.Term{Words: t.Words, Prefix: t.Prefix})
	}
	cands, err := s.run(ctx, offset+lim)
	if err != nil {
		return nil, fmt.Errorf("sqlite: search %q: %w", query, err)
	}
	if offset >= len(cands) {
		return nil, nil
	}
	cands = cands[offset:min(len(cands), offset+lim)]
	ids := make([]int64, len(cands))
	for i, c := range cands {
		ids[i] = c.page
	}
	idList, _ := json.Marshal(ids)
	rows, err := db.r.QueryContext(ctx, `SELECT p.id, p.title, r.text, r.model FROM pages p JOIN revisions r ON r.id = p.latest_rev
		WHERE p.deleted = 0 AND p.id IN (SELECT value FROM json_each(?))`, string(idList))
	if err != nil {
		return nil, fmt.Errorf("sqlite: search %q: %w", query, err)
	}
	defer rows.Close()
	found := map[int64]wiki.SearchHit{}
	for rows.Next() {
		var h wiki.SearchHit
		var title, model string
		if err := rows.Scan(&h.PageID, &title, textHead{&h.Source, store.SnippetHead}, &model); err != nil {
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
		if h, ok := found[c.page]; ok {
			h.TitleMatch = c.titleMatch
			hits = append(hits, h)
		}
	}
	return hits, nil
}

// searcher is one search's state.
type searcher struct {
	db    *DB
	r     querier // one read transaction: the segments of one moment
	sq    wiki.SearchQuery
	terms []search.Term
	segs  []segmentInfo
	rdrs  map[int64]*segReader
	total int64   // documents in the live segments (stale entries too)
	avg   float64 // their average length
}

func (s *searcher) reader(ctx context.Context, seg int64) (*segReader, error) {
	r := s.rdrs[seg]
	if r == nil {
		loaded, err := s.db.segcache.segment(ctx, s.r, seg)
		if err != nil {
			return nil, err
		}
		r = &segReader{ctx: ctx, db: s.db, r: s.r, seg: loaded, lists: map[string]*search.List{},
			phrase: slices.ContainsFunc(s.terms, func(t search.Term) bool { return len(t.Words) > 1 })}
		s.rdrs[seg] = r
	}
	return r, nil
}

// segHits are one segment's matches, by page.
type segHit struct {
	seg  int64
	page int64
	hit  search.Hit
}

// match returns segment seg's matches of the query (title: in titles),
// with their pages.
func (s *searcher) match(ctx context.Context, seg segmentInfo, title bool) ([]segHit, error) {
	var out []segHit
	err := s.matchNewest(ctx, seg, title, 0, func(hits []segHit) (int, error) {
		out = hits
		return len(hits), nil
	})
	if err != nil {
		return nil, s.db.corrupt(seg.id, err)
	}
	return out, nil
}

// matchNewest is match as search.MatchNewest: with limit above 0, a
// phrase is checked from the segment's newest pages down, each turn's
// matches passed to keep, until keep has kept limit of them. A segment
// whose documents are not numbered in page order is checked whole (keep
// is called once). On an error, which may say that the segment is
// corrupt (db.corrupt), what keep kept must be dropped: a later turn may
// have found the segment corrupt.
func (s *searcher) matchNewest(ctx context.Context, seg segmentInfo, title bool, limit int, keep func([]segHit) (int, error)) error {
	r, err := s.reader(ctx, seg.id)
	if err != nil {
		return err
	}
	if !r.seg.ordered {
		limit = 0
	}
	pages, lens := r.seg.pages, r.seg.lens
	return search.MatchNewest(ctx, r, s.terms, title, limit, func(hits []search.Hit) (int, error) {
		out := make([]segHit, 0, len(hits))
		for _, h := range hits {
			if h.Doc <= 0 || h.Doc >= int64(len(pages)) {
				return 0, search.ErrCorrupt
			}
			if h.Len == 0 { // the segment's (search.Segment.Lens)
				if h.Doc >= int64(len(lens)) || lens[h.Doc] <= 0 {
					return 0, search.ErrCorrupt
				}
				h.Len = lens[h.Doc]
			}
			out = append(out, segHit{seg: seg.id, page: pages[h.Doc], hit: h})
		}
		return keep(out)
	})
}

// corrupt passes err on, unless it says that segment seg does not
// decode: a search then goes on without it, and the segment is rebuilt
// from its pages in the background (once per process).
func (db *DB) corrupt(seg int64, err error) error {
	if !errors.Is(err, search.ErrCorrupt) {
		return err
	}
	if _, done := db.rebuilding.LoadOrStore(seg, true); !done {
		go func() {
			if err := db.rebuildSegment(context.Background(), seg, err); err != nil {
				slog.Error("sqlite: rebuilding a search segment", "err", err)
			}
		}()
	}
	return nil
}

// current keeps the hits whose page is live, in the wanted namespaces,
// and indexed by the hit's segment (the other entries are stale).
func (s *searcher) current(ctx context.Context, hits []segHit) ([]segHit, error) {
	if len(hits) == 0 {
		return hits, nil
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.page
	}
	idList, _ := json.Marshal(ids)
	args := []any{string(idList)}
	cond := store.PageNamespaces(s.sq.Namespaces, func(v any) string { args = append(args, v); return "?" })
	rows, err := s.r.QueryContext(ctx, `SELECT p.id, p.search_seg FROM pages p WHERE p.id IN (SELECT value FROM json_each(?)) AND p.deleted = 0`+cond, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	segOf := map[int64]int64{}
	for rows.Next() {
		var id, seg int64
		if err := rows.Scan(&id, &seg); err != nil {
			return nil, err
		}
		segOf[id] = seg
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := hits[:0]
	for _, h := range hits {
		if segOf[h.page] == h.seg {
			out = append(out, h)
		}
	}
	return out, nil
}

// newestCurrent returns the n newest of a segment's hits that are current
// (all the current ones, when fewer): a common word matches thousands of
// a large segment's pages, of which the search ranks the n newest, so
// their entries are checked newest first, n of them, then twice as many
// at each query, until n are found (a namespace filter that keeps few of
// them costs a few queries, not one per n).
func (s *searcher) newestCurrent(ctx context.Context, hits []segHit, n int) ([]segHit, error) {
	if n <= 0 || len(hits) <= n {
		return s.current(ctx, hits)
	}
	slices.SortFunc(hits, func(a, b segHit) int { return cmp.Compare(b.page, a.page) })
	var out []segHit
	for start, size := 0, n; start < len(hits) && len(out) < n; start, size = start+size, 2*size {
		live, err := s.current(ctx, hits[start:min(start+size, len(hits))])
		if err != nil {
			return nil, err
		}
		out = append(out, live...)
	}
	return out[:min(n, len(out))], nil
}

// df returns how many documents of the live segments hold each word
// (title: in their titles), stale entries included, and for a prefix the
// documents of its keys (in text, prefixes are not weighed: 0); it stops
// counting a word past limit.
func (s *searcher) df(ctx context.Context, title bool, limit int) ([]int, error) {
	var out []int
	for _, t := range s.terms {
		for i, w := range t.Words {
			if !title && t.Prefix && i == len(t.Words)-1 {
				out = append(out, 0)
				continue
			}
			key := w
			if title {
				key = search.TitleKey(w)
			}
			n := 0
			for _, seg := range s.segs {
				if n > limit {
					break
				}
				r, err := s.reader(ctx, seg.id)
				if err != nil {
					if err := s.db.corrupt(seg.id, err); err != nil {
						return nil, err
					}
					continue
				}
				if t.Prefix && i == len(t.Words)-1 {
					keys := 0
					err := r.Range(key, search.PrefixEnd(key), func(_ string, l search.List) bool {
						n += l.Docs()
						keys++
						return n <= limit && keys < search.MaxPrefixKeys
					})
					if err := s.db.corrupt(seg.id, err); err != nil {
						return nil, err
					}
					continue
				}
				l, ok, err := r.Lookup(key)
				if err := s.db.corrupt(seg.id, err); err != nil {
					return nil, err
				}
				if ok {
					n += l.Docs()
				}
			}
			out = append(out, n)
		}
	}
	return out, nil
}

// score is the BM25 of a hit over the words whose weight is in idf
// (nil for words not weighed).
func (s *searcher) score(h search.Hit, dfs []int, weigh []bool) float64 {
	total := 0.0
	for j, tf := range h.TF {
		if weigh[j] {
			total += search.BM25(tf, h.Len, dfs[j], int(s.total), s.avg)
		}
	}
	return total
}

// run returns the ranked candidates, enough for the first want hits.
func (s *searcher) run(parent context.Context, want int) ([]searchCand, error) {
	// The budget bounds the index reads (ctx); the transaction, the list
	// of segments, the liveness of title matches found and the exact
	// title, each one short query, run on the caller's context (parent):
	// once the budget is spent there is still an answer to rank, and the
	// exact title still comes first.
	ctx, cancel := context.WithTimeout(parent, searchBudget)
	defer cancel()
	budgetOK := func(err error) error {
		if err != nil && ctx.Err() != nil && parent.Err() == nil {
			return nil // the budget ran out: rank what was found
		}
		return err
	}
	// One read transaction: a merge that ends meanwhile replaces
	// segments this search would read half of.
	tx, err := s.db.beginRead(parent)
	if err != nil {
		return nil, err
	}
	defer tx.end(parent)
	s.r = tx
	segs, err := s.db.liveSegments(parent, tx)
	if err != nil {
		return nil, err
	}
	s.segs, s.rdrs = segs, map[int64]*segReader{}
	var tokens int64
	for _, seg := range segs {
		s.total += seg.docs
		tokens += seg.tokens
	}
	if s.total > 0 {
		s.avg = float64(tokens) / float64(s.total)
	}
	words := search.Words(s.terms)
	all := make([]bool, len(words))
	for i := range all {
		all[i] = true
	}
	var cands []searchCand
	byPage := map[int64]int{}
	err = budgetOK(s.titleMatches(ctx, parent, want, all, &cands, byPage))
	// The query's rare words, if any: with one, every match is among at
	// most searchRare pages, all of them ranked.
	var rare []bool
	var dfs []int
	anyRare, allRare := false, true
	if err == nil {
		dfs, err = s.df(ctx, false, searchRare)
		err = budgetOK(err)
		rare = make([]bool, len(words))
		j := 0
		for _, t := range s.terms {
			for i := range t.Words {
				rare[j] = j < len(dfs) && dfs[j] <= searchRare && !(t.Prefix && i == len(t.Words)-1)
				anyRare = anyRare || rare[j]
				j++
			}
			allRare = allRare && len(t.Words) == 1 && !t.Prefix && rare[j-1]
		}
	}
	// Body matches, newest pages first; with a rare word, up to
	// searchRare of them, ranked by it (with rare words alone, all).
	if err == nil {
		n := min(want+len(cands), SearchCandidates)
		if anyRare {
			n = searchRare
		}
		var found []segHit
		for _, seg := range s.segs {
			if len(found) >= n && !allRare {
				// Stop once the n newest found are newer than any
				// page of the segments left.
				slices.SortFunc(found, func(a, b segHit) int { return cmp.Compare(b.page, a.page) })
				if found[n-1].page > seg.maxPage {
					break
				}
				found = found[:n]
			}
			// The n newest current matches (with a rare word: all the
			// current ones); a phrase is checked from the segment's
			// newest pages down until n are found.
			limit := n
			if anyRare {
				limit = 0
			}
			var hits []segHit
			err1 := s.matchNewest(ctx, seg, false, limit, func(part []segHit) (int, error) {
				keep := n
				if allRare {
					keep = len(part) // all of them are ranked
				}
				part, err := s.newestCurrent(ctx, part, keep)
				hits = append(hits, part...)
				return len(part), err
			})
			if err1 != nil {
				hits, err1 = nil, s.db.corrupt(seg.id, err1)
			}
			if err = budgetOK(err1); err != nil || ctx.Err() != nil {
				break
			}
			found = append(found, hits...)
		}
		slices.SortFunc(found, func(a, b segHit) int { return cmp.Compare(b.page, a.page) })
		if !allRare && len(found) > n {
			found = found[:n]
		}
		for _, h := range found {
			if _, ok := byPage[h.page]; ok {
				continue
			}
			c := searchCand{page: h.page}
			if anyRare {
				c.score = s.score(h.hit, dfs, rare)
			}
			byPage[h.page] = len(cands)
			cands = append(cands, c)
		}
	}
	if err == nil {
		var id int64
		args := []any{store.Fold(s.sq.Text)}
		cond := store.PageNamespaces(s.sq.Namespaces, func(v any) string { args = append(args, v); return "?" })
		err = s.r.QueryRowContext(parent, `SELECT p.id FROM pages p WHERE p.deleted = 0 AND p.title_fold = ?`+cond+` ORDER BY p.id LIMIT 1`, args...).Scan(&id)
		if i, ok := byPage[id]; ok && err == nil {
			cands[i].exact, cands[i].titleMatch = true, true
		} else if err == nil {
			// The page whose title is the query, ranked below the title
			// matches read: it comes first all the same.
			byPage[id] = len(cands)
			cands = append(cands, searchCand{page: id, exact: true, titleMatch: true})
		}
		if errors.Is(err, sql.ErrNoRows) {
			err = nil
		}
		err = budgetOK(err)
	}
	if err != nil {
		return nil, err
	}
	// Title matches keep their order (BM25 over titles); body matches
	// follow, by BM25 over the rare words when there are, else newest
	// first (their order as found).
	slices.SortStableFunc(cands, func(a, b searchCand) int {
		switch {
		case a.exact != b.exact:
			return boolOrder(a.exact)
		case a.titleMatch != b.titleMatch:
			return boolOrder(a.titleMatch)
		case a.titleMatch:
			return 0
		}
		return cmp.Compare(b.score, a.score)
	})
	return cands[:min(len(cands), 2*SearchCandidates)], nil
}

// titleMatches adds the pages whose title holds the query, ranked by BM25
// over titles: as many as the first want hits need, SearchCandidates at
// most. They come first, so when there are more, those hits are title
// matches only, and the ones left out belong to later pages.
//
// ctx bounds the index reads: once it ends, the matches found by then are
// ranked, their liveness read on parent.
func (s *searcher) titleMatches(ctx, parent context.Context, want int, all []bool, cands *[]searchCand, byPage map[int64]int) error {
	var found []segHit
	for _, seg := range s.segs {
		hits, err := s.match(ctx, seg, true)
		if err != nil {
			if ctx.Err() != nil && parent.Err() == nil {
				break // the budget ran out: rank what was found
			}
			return err
		}
		found = append(found, hits...)
	}
	if len(found) == 0 {
		return nil
	}
	// The titles' document frequencies: the matches of each word.
	words := search.Words(s.terms)
	dfs := make([]int, len(words))
	for j := range words {
		for _, h := range found {
			if h.hit.TF[j] > 0 {
				dfs[j]++
			}
		}
	}
	if n, err := s.df(ctx, true, 1<<30); err == nil {
		for j := range dfs {
			dfs[j] = max(dfs[j], n[j])
		}
	}
	type scored struct {
		segHit
		score float64
	}
	ranked := make([]scored, len(found))
	for i, h := range found {
		ranked[i] = scored{h, s.score(h.hit, dfs, all)}
	}
	slices.SortStableFunc(ranked, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.page, b.page)
	})
	n := min(want, SearchCandidates)
	for len(ranked) > 0 && len(*cands) < n {
		chunk := ranked[:min(len(ranked), 2*(n-len(*cands)))]
		ranked = ranked[len(chunk):]
		hits := make([]segHit, len(chunk))
		for i, c := range chunk {
			hits[i] = c.segHit
		}
		live := map[int64]bool{}
		cur, err := s.current(parent, hits)
		if err != nil {
			return err
		}
		for _, h := range cur {
			live[h.page] = true
		}
		for _, c := range chunk {
			if live[c.page] && len(*cands) < n {
				if _, ok := byPage[c.page]; ok {
					continue
				}
				byPage[c.page] = len(*cands)
				*cands = append(*cands, searchCand{page: c.page, score: c.score, titleMatch: true})
			}
		}
	}
	return nil
}

// boolOrder sorts true first.
func boolOrder(a bool) int {
	if a {
		return -1
	}
	return 1
}
