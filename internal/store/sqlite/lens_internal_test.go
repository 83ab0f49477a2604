package sqlite

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/search"
	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

// Segments written before the lens column (every list with its
// documents' lengths, no table) are searched and merged as before: BM25
// ranks the shorter page first from either format, and a merge of old
// and new segments writes the table.
func TestSearchSegmentsWrittenBeforeLens(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wikid.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	texts := map[int64]string{}      // title by page ID
	pageTexts := map[string]string{} // text by title
	save := func(title, text string) {
		t.Helper()
		var base int64
		if p, err := db.FindPage(ctx, wiki.Title(title)); err == nil {
			base = p.LatestID
		}
		res, err := db.SavePage(ctx, wiki.SaveRequest{Title: wiki.Title(title), Text: text, SearchText: text, UserName: "U", BaseRevID: base})
		if err != nil {
			t.Fatal(err)
		}
		texts[res.Page.ID], pageTexts[title] = title, text
	}
	// The short page first: newest first would put the long one ahead.
	save("Short", "apple pie")
	save("Long", "apple "+strings.Repeat("filler words here ", 40))
	for i := range 5 {
		save("Other "+string(rune('A'+i)), "pear plum")
	}
	order := func(when string, want ...string) {
		t.Helper()
		hits, err := db.Search(ctx, wiki.SearchQuery{Text: "apple", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, string(h.Title))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: apple finds %v, want %v", when, got, want)
		}
	}
	order("new format", "Short", "Long")
	ids := liveSegments(t, db)
	if len(ids) != 7 {
		t.Fatalf("%d segments, want 7 (no merge yet)", len(ids))
	}
	for _, id := range ids {
		toOldFormat(t, db, id)
	}
	// A fresh process: nothing of the segments kept.
	db.Close()
	if db, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	order("old format", "Short", "Long")
	for _, id := range ids {
		if seg, err := db.segcache.segment(ctx, db.r, id); err != nil || seg.lens != nil {
			t.Fatalf("old segment %d: lens %v, err %v", id, seg.lens, err)
		}
	}
	// One more new segment, then a merge of all of them.
	save("Third", "apple "+strings.Repeat("filler ", 10))
	if err := db.MergeSearch(ctx); err != nil {
		t.Fatal(err)
	}
	merged := liveSegments(t, db)
	if len(merged) != 1 || slices.Contains(ids, merged[0]) {
		t.Fatalf("segments after the merge %v (before %v): want one new", merged, ids)
	}
	seg, err := db.segcache.segment(ctx, db.r, merged[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(seg.lens) != len(seg.pages) {
		t.Fatalf("merged segment's lengths %v for pages %v", seg.lens, seg.pages)
	}
	checkLens := func() {
		t.Helper()
		for _, id := range liveSegments(t, db) {
			seg, err := db.segcache.segment(ctx, db.r, id)
			if err != nil {
				t.Fatal(err)
			}
			for doc, page := range seg.pages[1:] {
				var cur int64
				if err := db.r.QueryRow(`SELECT search_seg FROM pages WHERE id = ?`, page).Scan(&cur); err != nil {
					t.Fatal(err)
				}
				if cur != id {
					continue // a stale entry: the page's text was another
				}
				title := texts[page]
				want := int32(len(strings.Fields(store.IndexText(title))) + len(strings.Fields(store.IndexText(pageTexts[title]))))
				if seg.lens[doc+1] != want {
					t.Fatalf("segment %d: length of %q = %d, want %d", id, title, seg.lens[doc+1], want)
				}
			}
		}
	}
	checkLens()
	order("after the merge", "Short", "Third", "Long")
	// A segment of many documents of the new format, most of them then
	// edited: a merge of it alone keeps the others' lengths.
	var reqs []wiki.SaveRequest
	for i := range 20 {
		title, text := "Batch "+string(rune('A'+i)), strings.Repeat("banana split ", i+1)
		reqs = append(reqs, wiki.SaveRequest{Title: wiki.Title(title), Text: text, SearchText: text, UserName: "U"})
	}
	res, err := db.ImportPages(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		texts[r.Page.ID], pageTexts[string(reqs[i].Title)] = string(reqs[i].Title), reqs[i].Text
	}
	for i := range 12 {
		save("Batch "+string(rune('A'+i)), "cherry")
	}
	if err := db.MergeSearch(ctx); err != nil {
		t.Fatal(err)
	}
	checkLens()
}

func liveSegments(t *testing.T, db *DB) []int64 {
	t.Helper()
	rows, err := db.r.Query(`SELECT id FROM search_segments WHERE state = 0 ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// toOldFormat rewrites segment id as segments were written before the
// lens column, by the format search.Block documents: every list with its
// documents' lengths, and an empty lens.
func toOldFormat(t *testing.T, db *DB, id int64) {
	t.Helper()
	var lensBlob []byte
	if err := db.r.QueryRow(`SELECT lens FROM search_segments WHERE id = ?`, id).Scan(&lensBlob); err != nil {
		t.Fatal(err)
	}
	lens := []int32{0}
	for len(lensBlob) > 0 {
		v, k := binary.Uvarint(lensBlob)
		lens = append(lens, int32(v))
		lensBlob = lensBlob[k:]
	}
	rows, err := db.r.Query(`SELECT first, data FROM search_blocks WHERE seg = ?`, id)
	if err != nil {
		t.Fatal(err)
	}
	type block struct {
		first string
		data  []byte
	}
	var blocks []block
	for rows.Next() {
		var b block
		if err := rows.Scan(&b.first, &b.data); err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, b)
	}
	rows.Close()
	uv := binary.AppendUvarint
	for _, b := range blocks {
		var body []byte
		n := 0
		err := search.Entries(b.data, func(key string, l search.List) bool {
			ps, err := l.Postings(nil)
			if err != nil {
				t.Fatal(err)
			}
			runs, err := l.Runs(nil)
			if err != nil {
				t.Fatal(err)
			}
			list := uv(nil, uint64(len(ps)))
			prev := int64(0)
			for _, p := range ps {
				list, prev = uv(list, uint64(p.Doc-prev)), p.Doc
			}
			for _, p := range ps {
				list = uv(list, uint64(p.TF))
			}
			for _, p := range ps {
				if p.Len == 0 {
					p.Len = lens[p.Doc]
				}
				list = uv(list, uint64(p.Len))
			}
			pos := slices.Concat(runs...)
			list = append(uv(list, uint64(len(pos))), pos...)
			body = append(uv(body, uint64(len(key))), key...)
			body = append(uv(body, uint64(len(list))), list...)
			n++
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		data := append(uv(nil, uint64(n)), body...)
		if _, err := db.w.Exec(`UPDATE search_blocks SET data = ? WHERE seg = ? AND first = ?`, data, id, b.first); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.w.Exec(`UPDATE search_segments SET lens = x'' WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
}

// A wikid whose database a newer one migrated while it ran (its schema
// check is at open) does not merge: segments of a format it does not know
// would lose what it cannot read.
func TestMergeStopsOnNewerSchema(t *testing.T) {
	ctx := context.Background()
	db := openBulkTest(t)
	db.merger.close() // no background merge: the test's own only
	for i := range 2 * mergeFanout {
		text := "apple pie number" + string(rune('a'+i))
		if _, err := db.SavePage(ctx, wiki.SaveRequest{Title: wiki.Title("Page " + string(rune('A'+i))), Text: text, SearchText: text, UserName: "U"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.w.Exec(`INSERT INTO schema_version (version, applied) VALUES (?, 0)`, latestMigration()+1); err != nil {
		t.Fatal(err)
	}
	before := liveSegments(t, db)
	err := db.MergeSearch(ctx)
	if err == nil || !strings.Contains(err.Error(), "newer wikid") {
		t.Fatalf("merge on a newer schema: %v", err)
	}
	if after := liveSegments(t, db); !slices.Equal(after, before) {
		t.Fatalf("segments %v, before %v", after, before)
	}
	var half int
	if err := db.r.QueryRow(`SELECT count(*) FROM search_segments WHERE state = 1`).Scan(&half); err != nil || half != 0 {
		t.Fatalf("%d segments left half written (%v)", half, err)
	}
}
