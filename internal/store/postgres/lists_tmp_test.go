// TEMPORARY (deleted at merge): the listing and search subtests of storetest, and SQLite's search paging tests, on pages written in plain SQL (export_tmp_test.go) until SavePage exists.
package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/store/postgres"
	"github.com/wikid/wikid/internal/store/postgres/pgtest"
	"github.com/wikid/wikid/internal/wiki"
)

var (
	tctx = context.Background()
	tt0  = time.Date(2024, 5, 6, 7, 8, 9, 123_000_000, time.UTC)
)

func tat(n int) time.Time { return tt0.Add(time.Duration(n) * time.Minute) }

func tsave(t *testing.T, db *postgres.DB, p postgres.TmpPage) (int64, int64) {
	t.Helper()
	if p.User == "" {
		p.User = "Alice"
	}
	if p.Time.IsZero() {
		p.Time = tat(1)
	}
	id, rev, err := postgres.TmpSave(tctx, db, p)
	if err != nil {
		t.Fatalf("save %q: %v", p.Title, err)
	}
	return id, rev
}

func tcreate(t *testing.T, db *postgres.DB, title, text string) (int64, int64) {
	t.Helper()
	return tsave(t, db, postgres.TmpPage{Title: title, Text: text})
}

func tdelete(t *testing.T, db *postgres.DB, title string) {
	t.Helper()
	if err := postgres.TmpDelete(tctx, db, title); err != nil {
		t.Fatal(err)
	}
}

func tmust[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func ttitles(ps []wiki.Page) string {
	var b []string
	for _, p := range ps {
		b = append(b, string(p.Title))
	}
	return strings.Join(b, ",")
}

func tsearch(t *testing.T, db *postgres.DB, q string, offset, limit int) []wiki.SearchHit {
	t.Helper()
	hits, err := db.Search(tctx, q, offset, limit)
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	for i, h := range hits {
		hits[i].Snippet = store.Snippet(h.Source, store.ParseQuery(q))
	}
	return hits
}

func thitTitles(hits []wiki.SearchHit) string {
	var b []string
	for _, h := range hits {
		b = append(b, string(h.Title))
	}
	return strings.Join(b, ",")
}

func tmarked(s string) []string {
	var out []string
	for {
		i := strings.Index(s, wiki.MarkStart)
		if i < 0 {
			return out
		}
		s = s[i+len(wiki.MarkStart):]
		j := strings.Index(s, wiki.MarkEnd)
		if j < 0 {
			return append(out, "UNTERMINATED")
		}
		out = append(out, s[:j])
		s = s[j+len(wiki.MarkEnd):]
	}
}

func TestTmpLists(t *testing.T) {
	t.Run("history", func(t *testing.T) {
		db := pgtest.Open(t)
		id, rev := tcreate(t, db, "A", "1")
		ids := []int64{rev}
		text := "1"
		for range 4 {
			text += "2"
			_, rev = tcreate(t, db, "A", text)
			ids = append(ids, rev)
		}
		h := tmust[[]wiki.Revision](t)(db.History(tctx, wiki.HistoryQuery{PageID: id, Limit: 2}))
		if len(h) != 2 || h[0].ID != ids[4] || h[1].ID != ids[3] {
			t.Fatalf("first page = %+v", h)
		}
		if h[0].Text != "" || h[0].Size != 5 || h[0].ParentSize != 4 || h[0].Title != "A" || h[0].SHA1 == "" {
			t.Fatalf("listing entry = %+v", h[0])
		}
		h = tmust[[]wiki.Revision](t)(db.History(tctx, wiki.HistoryQuery{PageID: id, Before: h[1].ID, Limit: 10}))
		if len(h) != 3 || h[0].ID != ids[2] || h[2].ID != ids[0] || h[2].ParentSize != 0 {
			t.Fatalf("second page = %+v", h)
		}
	})

	t.Run("recent changes", func(t *testing.T) {
		db := pgtest.Open(t)
		for i := range 5 {
			user := "Alice"
			if i%2 == 1 {
				user = "Bob"
			}
			tsave(t, db, postgres.TmpPage{Title: fmt.Sprintf("P%d", i), Text: strings.Repeat("x", i+1), User: user, Time: tat(i)})
		}
		_, first := tcreate(t, db, "E", "e")
		tcreate(t, db, "E", "ee")
		rc := tmust[[]wiki.Change](t)(db.RecentChanges(tctx, wiki.ChangeQuery{Limit: 3}))
		if len(rc) != 3 || rc[0].Kind != wiki.ChangeEdit || rc[0].Size != 2 || rc[0].OldSize != 1 || rc[0].OldRevID != first {
			t.Fatalf("first page = %+v", rc)
		}
		if rc[1].Kind != wiki.ChangeNew || rc[1].OldSize != 0 || rc[2].Title != "P4" || !rc[2].Time.Equal(tat(4)) {
			t.Fatalf("first page = %+v", rc)
		}
		rest := tmust[[]wiki.Change](t)(db.RecentChanges(tctx, wiki.ChangeQuery{Before: rc[2].ID, Limit: 10}))
		if len(rest) != 4 || rest[0].Title != "P3" || rest[3].Title != "P0" {
			t.Fatalf("second page = %+v", rest)
		}
		bob := tmust[[]wiki.Change](t)(db.RecentChanges(tctx, wiki.ChangeQuery{UserName: "Bob"}))
		if len(bob) != 2 || bob[0].Title != "P3" || bob[1].Title != "P1" {
			t.Fatalf("Bob's contributions = %+v", bob)
		}
	})

	t.Run("all pages", func(t *testing.T) {
		db := pgtest.Open(t)
		for _, n := range []string{"Banana", "Apple", "Apricot", "Help:Start", "한국어", "Avocado", "Gone"} {
			tcreate(t, db, n, n)
		}
		tdelete(t, db, "Gone")
		all := tmust[[]wiki.Page](t)(db.AllPages(tctx, wiki.ListQuery{}))
		if got := ttitles(all); got != "Apple,Apricot,Avocado,Banana,Help:Start,한국어" {
			t.Fatalf("all = %s", got)
		}
		if all[0].LatestID == 0 || all[0].Size != 5 || all[0].Touched.IsZero() || all[0].Deleted {
			t.Fatalf("page row = %+v", all[0])
		}
		p1 := tmust[[]wiki.Page](t)(db.AllPages(tctx, wiki.ListQuery{Prefix: "A", Limit: 2}))
		if ttitles(p1) != "Apple,Apricot" {
			t.Fatalf("page 1 = %s", ttitles(p1))
		}
		p2 := tmust[[]wiki.Page](t)(db.AllPages(tctx, wiki.ListQuery{Prefix: "A", From: "Avocado", Limit: 2}))
		if ttitles(p2) != "Avocado" {
			t.Fatalf("page 2 = %s", ttitles(p2))
		}
		if ps := tmust[[]wiki.Page](t)(db.AllPages(tctx, wiki.ListQuery{Prefix: "한"})); ttitles(ps) != "한국어" {
			t.Fatalf("Korean prefix = %s", ttitles(ps))
		}
		if ps := tmust[[]wiki.Page](t)(db.AllPages(tctx, wiki.ListQuery{From: "B"})); ttitles(ps) != "Banana,Help:Start,한국어" {
			t.Fatalf("from B = %s", ttitles(ps))
		}
		if ps := tmust[[]wiki.Page](t)(db.AllPages(tctx, wiki.ListQuery{Prefix: "A", After: "Apricot"})); ttitles(ps) != "Avocado" {
			t.Fatalf("prefix A after Apricot = %s", ttitles(ps))
		}
		for _, odd := range []string{"\x00", "A\x00", "\xff", "\U0010FFFF", "%", "_"} {
			if ps, err := db.AllPages(tctx, wiki.ListQuery{Prefix: odd}); err != nil || len(ps) != 0 {
				t.Fatalf("prefix %q = %s, %v", odd, ttitles(ps), err)
			}
		}
	})

	t.Run("links", func(t *testing.T) {
		db := pgtest.Open(t)
		cat := "Category:Fruit"
		tsave(t, db, postgres.TmpPage{Title: "Apple", Text: "a", Links: []string{"Tree", "Seed"}, Categories: []string{cat}})
		tsave(t, db, postgres.TmpPage{Title: "Cherry", Text: "c", Links: []string{"Tree", "Tree"}, Categories: []string{cat, "Category:Red"}})
		tsave(t, db, postgres.TmpPage{Title: "Banana", Text: "b", Categories: []string{cat}})
		tsave(t, db, postgres.TmpPage{Title: "Trees", Text: "#REDIRECT [[Tree]]", Redirect: "Tree", Links: []string{"Tree"}})
		tsave(t, db, postgres.TmpPage{Title: "Durian", Text: "d", Links: []string{"Tree"}, Categories: []string{cat}})
		tdelete(t, db, "Durian")
		if bl := tmust[[]wiki.Page](t)(db.Backlinks(tctx, "Tree", wiki.ListQuery{})); ttitles(bl) != "Apple,Cherry,Trees" {
			t.Fatalf("backlinks = %s", ttitles(bl))
		}
		if bl := tmust[[]wiki.Page](t)(db.Backlinks(tctx, "Tree", wiki.ListQuery{From: "B", Limit: 1})); ttitles(bl) != "Cherry" {
			t.Fatalf("backlinks page = %s", ttitles(bl))
		}
		if bl := tmust[[]wiki.Page](t)(db.Backlinks(tctx, "Tree", wiki.ListQuery{After: "Apple", Limit: 1})); ttitles(bl) != "Cherry" {
			t.Fatalf("backlinks after Apple = %s", ttitles(bl))
		}
		if m := tmust[[]wiki.Page](t)(db.CategoryMembers(tctx, wiki.Title(cat), wiki.ListQuery{})); ttitles(m) != "Apple,Banana,Cherry" {
			t.Fatalf("members = %s", ttitles(m))
		}
		if m := tmust[[]wiki.Page](t)(db.CategoryMembers(tctx, wiki.Title(cat), wiki.ListQuery{Limit: 2})); ttitles(m) != "Apple,Banana" {
			t.Fatalf("members page = %s", ttitles(m))
		}
		if m := tmust[[]wiki.Page](t)(db.CategoryMembers(tctx, wiki.Title(cat), wiki.ListQuery{Prefix: "C"})); ttitles(m) != "Cherry" {
			t.Fatalf("members C = %s", ttitles(m))
		}
		all := tmust[[]wiki.Page](t)(db.AllPages(tctx, wiki.ListQuery{Prefix: "Cherry"}))
		if cats := tmust[[]wiki.Title](t)(db.PageCategories(tctx, all[0].ID)); len(cats) != 2 || cats[0] != wiki.Title(cat) || cats[1] != "Category:Red" {
			t.Fatalf("categories = %v", cats)
		}
		tcreate(t, db, "Cherry", "c2")
		if bl := tmust[[]wiki.Page](t)(db.Backlinks(tctx, "Tree", wiki.ListQuery{})); ttitles(bl) != "Apple,Trees" {
			t.Fatalf("backlinks after edit = %s", ttitles(bl))
		}
		if cats := tmust[[]wiki.Title](t)(db.PageCategories(tctx, all[0].ID)); len(cats) != 0 {
			t.Fatalf("categories after edit = %v", cats)
		}
	})

	t.Run("search English", func(t *testing.T) {
		db := pgtest.Open(t)
		tcreate(t, db, "Gardening", "How to grow tomatoes and potatoes in a small garden.")
		tcreate(t, db, "Tomato", "The tomato is a red fruit.")
		tcreate(t, db, "Cooking", "Recipes with tomatoes: sauce, soup. "+strings.Repeat("Filler words here. ", 40)+"Tomato again at the end.")
		hits := tsearch(t, db, "tomato", 0, 20)
		if len(hits) != 3 || hits[0].Title != "Tomato" || !hits[0].TitleMatch || hits[1].TitleMatch {
			t.Fatalf("hits = %+v", hits)
		}
		for _, h := range hits {
			m := tmarked(h.Snippet)
			if len(m) == 0 || !strings.HasPrefix(strings.ToLower(m[0]), "tomato") {
				t.Errorf("snippet of %s = %q", h.Title, h.Snippet)
			}
		}
		for q, want := range map[string]string{"grow potatoes": "Gardening", "GARDEN": "Gardening", "a red": "Tomato"} {
			if got := thitTitles(tsearch(t, db, q, 0, 20)); got != want {
				t.Fatalf("%q = %s", q, got)
			}
		}
		tcreate(t, db, "Fox", "The quick brown fox jumps.")
		if got := thitTitles(tsearch(t, db, `"quick brown"`, 0, 20)); got != "Fox" {
			t.Fatalf("phrase = %s", got)
		}
		if got := tsearch(t, db, `"brown quick"`, 0, 20); len(got) != 0 {
			t.Fatalf("a phrase in another order matched %s", thitTitles(got))
		}
		if got := thitTitles(tsearch(t, db, `brown quick`, 0, 20)); got != "Fox" {
			t.Fatalf("words in another order = %s", got)
		}
		if got := thitTitles(tsearch(t, db, `fox quick`, 0, 20)); got != "Fox" {
			t.Fatalf("one word in the title, one in the body = %s", got)
		}
		if got := thitTitles(tsearch(t, db, `jum*`, 0, 20)); got != "Fox" {
			t.Fatalf("prefix = %s", got)
		}
		if got := tsearch(t, db, "nothing-like-this", 0, 20); len(got) != 0 {
			t.Fatalf("no match = %+v", got)
		}
		page2 := tsearch(t, db, "tomato", 1, 1)
		if len(page2) != 1 || page2[0].Title != hits[1].Title {
			t.Fatalf("offset 1 = %+v", page2)
		}
		if got := tsearch(t, db, "", 0, 20); len(got) != 0 {
			t.Fatalf("empty query = %+v", got)
		}
		if hits[0].Source != "The tomato is a red fruit." {
			t.Fatalf("source = %q", hits[0].Source)
		}
	})

	t.Run("search CJK", func(t *testing.T) {
		db := pgtest.Open(t)
		tcreate(t, db, "한국어 위키", "위키는 누구나 편집할 수 있는 웹사이트입니다")
		tcreate(t, db, "다른 문서", "이 문서는 위키에 관한 것이 아닙니다")
		tcreate(t, db, "中文", "维基百科是一个自由的百科全书")
		tcreate(t, db, "日本語", "ウィキペディアは誰でも編集できるフリー百科事典です")
		tcreate(t, db, "Games", "ポケモンGO and ポケモンカード, 東京-2020, 東京 大阪")
		for _, tc := range []struct{ q, want, mark string }{
			{"ポケモンGO", "Games", "ポケモンGO"},
			{"東京-2020", "Games", "東京-2020"},
			{`"東京 大阪"`, "Games", "東京 大阪"},
			{"ポケモン", "Games", "ポケモン"},
			{"ポケモンカ", "Games", "ポケモンカ"},
			{"위키", "한국어 위키,다른 문서", "위키"},
			{"편집할", "한국어 위키", "편집할"},
			{"웹사이트", "한국어 위키", "웹사이트"},
			{"百科", "中文,日本語", "百科"},
			{"百科全书", "中文", "百科全书"},
			{"編集できる", "日本語", "編集できる"},
			{"위키 편집", "한국어 위키", "위키"},
		} {
			hits := tsearch(t, db, tc.q, 0, 20)
			if got := thitTitles(hits); got != tc.want {
				t.Errorf("search %q = %s, want %s", tc.q, got, tc.want)
				continue
			}
			if m := tmarked(hits[0].Snippet); len(m) == 0 || m[0] != tc.mark {
				t.Errorf("search %q: snippet %q, want %q marked", tc.q, hits[0].Snippet, tc.mark)
			}
		}
		if hits := tsearch(t, db, "위키", 0, 20); !hits[0].TitleMatch || hits[1].TitleMatch {
			t.Errorf("title match flags = %+v", hits)
		}
	})

	t.Run("search syntax", func(t *testing.T) {
		db := pgtest.Open(t)
		tcreate(t, db, "Syntax", `He said "hello" (twice) AND NEAR the * star; 100% of a_b \ c`)
		for _, q := range []string{`"`, `""`, `"hello`, `hello"`, `*`, `hel*`, `(`, `)`, `(twice)`, `AND`, `NEAR`, `NEAR(a b)`,
			`OR`, `NOT`, `-`, `^`, `:`, `title:x`, `{title}`, `'`, `%`, `_`, `\`, `a AND`, `"a" OR "b"`, `100%`, `a_b`, "\x00", "\uE000",
			"hello\x00", "\xff\xfe", "o'neil", `a\b`, "it's", "hello:*", "!hello", "a & b | c", "<->"} {
			if _, err := db.Search(tctx, q, 0, 10); err != nil {
				t.Errorf("search %q: %v", q, err)
			}
			if _, err := db.SearchTitles(tctx, q, 10); err != nil {
				t.Errorf("search titles %q: %v", q, err)
			}
		}
		if got := thitTitles(tsearch(t, db, `"hello"`, 0, 20)); got != "Syntax" {
			t.Errorf(`search "hello" (with quotes) = %s`, got)
		}
		tcreate(t, db, "Other", "percent 100 and ab")
		if got := thitTitles(tsearch(t, db, `100%`, 0, 20)); got != "Other,Syntax" && got != "Syntax,Other" {
			t.Errorf(`search 100%% = %s`, got)
		}
		if got := tsearch(t, db, `%`, 0, 20); len(got) != 0 {
			t.Errorf(`search %% = %s`, thitTitles(got))
		}
		if got := thitTitles(tsearch(t, db, `a_b`, 0, 20)); got != "Syntax" {
			t.Errorf(`search a_b = %s`, got)
		}
	})

	t.Run("search follows", func(t *testing.T) {
		db := pgtest.Open(t)
		tcreate(t, db, "Old Name", "searchable content here")
		if got := thitTitles(tsearch(t, db, "searchable", 0, 20)); got != "Old Name" {
			t.Fatalf("before move = %s", got)
		}
		id, _ := tcreate(t, db, "Old Name", "replaced words")
		if got := tsearch(t, db, "searchable", 0, 20); len(got) != 0 {
			t.Fatalf("after edit = %s", thitTitles(got))
		}
		if err := postgres.TmpMove(tctx, db, "Old Name", "New Name"); err != nil {
			t.Fatal(err)
		}
		// The move's new revision, as a move makes one.
		tsave(t, db, postgres.TmpPage{Title: "New Name", Text: "replaced words", Unindexed: true})
		if got := thitTitles(tsearch(t, db, "old", 0, 20)); got != "New Name" {
			t.Fatalf("before the job, the old entry = %s", got)
		}
		if err := db.UpdateSearchIndex(tctx, id, func(s string) string { return s }); err != nil {
			t.Fatal(err)
		}
		if got := thitTitles(tsearch(t, db, "replaced", 0, 20)); got != "New Name" {
			t.Fatalf("after move = %s", got)
		}
		if got := tsearch(t, db, "old", 0, 20); len(got) != 0 {
			t.Fatalf("the old title after the job = %s", thitTitles(got))
		}
		tdelete(t, db, "New Name")
		if got := tsearch(t, db, "replaced", 0, 20); len(got) != 0 {
			t.Fatalf("after delete = %s", thitTitles(got))
		}
		if err := db.UpdateSearchIndex(tctx, id, func(string) string { t.Error("a deleted page's text was asked for"); return "" }); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Pool().Exec(tctx, `UPDATE pages SET deleted = false WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := db.UpdateSearchIndex(tctx, id, func(s string) string { return s }); err != nil {
				t.Fatal(err)
			}
		}
		if got := thitTitles(tsearch(t, db, "replaced", 0, 20)); got != "New Name" {
			t.Fatalf("after undelete = %s", got)
		}
		if err := db.UpdateSearchIndex(tctx, id, func(string) string { t.Error("a current entry's text was asked for"); return "" }); err != nil {
			t.Fatal(err)
		}
		if err := db.UpdateSearchIndex(tctx, 9999, func(string) string { t.Error("a missing page's text was asked for"); return "" }); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("search ranking", func(t *testing.T) {
		db := pgtest.Open(t)
		tcreate(t, db, "Once", "zebra appears once among many other words here and there in this text")
		tcreate(t, db, "Often", "zebra zebra zebra, a zebra page")
		tcreate(t, db, "Zebra crossing", "a road crossing")
		tcreate(t, db, "Zebra", "the animal")
		hits := tsearch(t, db, "zebra", 0, 20)
		if got := thitTitles(hits); got != "Zebra,Zebra crossing,Often,Once" {
			t.Fatalf("ranking = %s", got)
		}
		if !hits[0].TitleMatch || !hits[1].TitleMatch || hits[2].TitleMatch {
			t.Fatalf("title match flags = %+v", hits)
		}
		if got := thitTitles(tsearch(t, db, "a", 0, 20)); !strings.Contains(got, "Often") || !strings.Contains(got, "Zebra crossing") {
			t.Fatalf("search a = %s", got)
		}
		// A rare word weighs more than a common one; a title hit more
		// than a body hit.
		postgres.SetSearchRare(t, 2)
		tcreate(t, db, "Stripes", "zebra stripes")
		tcreate(t, db, "Horse", "zebra horse horse horse")
		if got := thitTitles(tsearch(t, db, "zebra stripes", 0, 20)); got != "Stripes" {
			t.Fatalf("zebra stripes = %s", got)
		}
	})

	t.Run("title completion", func(t *testing.T) {
		db := pgtest.Open(t)
		tcreate(t, db, "Éclair", "a pastry")
		tcreate(t, db, "Eclipse", "the sun")
		tcreate(t, db, "ecology", "nature")
		tcreate(t, db, "Gone", "x")
		tcreate(t, db, "Economy", "money")
		tdelete(t, db, "Economy")
		if got := ttitles(tmust[[]wiki.Page](t)(db.SearchTitles(tctx, "ECL", 10))); got != "Éclair,Eclipse" {
			t.Fatalf("ECL = %s", got)
		}
		if got := ttitles(tmust[[]wiki.Page](t)(db.SearchTitles(tctx, "ec", 2))); got != "Éclair,Eclipse" {
			t.Fatalf("ec, limit 2 = %s", got)
		}
		if got := ttitles(tmust[[]wiki.Page](t)(db.SearchTitles(tctx, "eco", 10))); got != "ecology" {
			t.Fatalf("eco = %s", got)
		}
		if got := tmust[[]wiki.Page](t)(db.SearchTitles(tctx, "  ", 10)); len(got) != 0 {
			t.Fatalf("blank = %+v", got)
		}
		if err := postgres.TmpMove(tctx, db, "Eclipse", "Solar eclipse"); err != nil {
			t.Fatal(err)
		}
		if got := ttitles(tmust[[]wiki.Page](t)(db.SearchTitles(tctx, "solar_e", 10))); got != "Solar eclipse" {
			t.Fatalf("solar_e = %s", got)
		}
	})

	t.Run("random page and count", func(t *testing.T) {
		db := pgtest.Open(t)
		if _, err := db.RandomPage(tctx); !errors.Is(err, wiki.ErrNotFound) {
			t.Fatalf("random of empty wiki: %v", err)
		}
		if n := tmust[int](t)(db.PageCount(tctx)); n != 0 {
			t.Fatalf("count = %d", n)
		}
		tcreate(t, db, "A", "a")
		tcreate(t, db, "B", "b")
		tcreate(t, db, "Help:H", "h")
		tsave(t, db, postgres.TmpPage{Title: "R", Text: "#REDIRECT [[A]]", Redirect: "A"})
		tdelete(t, db, "B")
		for range 20 {
			if got := tmust[wiki.Title](t)(db.RandomPage(tctx)); got != "A" {
				t.Fatalf("random = %q", got)
			}
		}
		if n := tmust[int](t)(db.PageCount(tctx)); n != 3 {
			t.Fatalf("count = %d", n)
		}
		tcreate(t, db, "C", "c")
		seen := map[wiki.Title]bool{}
		for range 50 {
			seen[tmust[wiki.Title](t)(db.RandomPage(tctx))] = true
		}
		if len(seen) != 2 {
			t.Fatalf("random pages seen = %v", seen)
		}
	})
}

func tpaged(t *testing.T, db *postgres.DB, q string, size, max int) []string {
	t.Helper()
	var out []string
	for off := 0; off < max; off += size {
		page := tsearch(t, db, q, off, size)
		if len(page) == 0 {
			break
		}
		for _, h := range page {
			out = append(out, string(h.Title))
		}
	}
	return out
}

func tnames(hits []wiki.SearchHit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, string(h.Title))
	}
	return out
}

// SQLite's search paging tests.
func TestTmpSearchPaging(t *testing.T) {
	t.Run("a search of common words reads its page and pages alike", func(t *testing.T) {
		postgres.SetSearchBudget(t, time.Minute)
		postgres.SetSearchRare(t, 3)
		db := pgtest.Open(t)
		for i := range 30 {
			title := fmt.Sprintf("Page %02d", i)
			if i%10 == 0 {
				title = fmt.Sprintf("Common ground %02d", i)
			}
			tcreate(t, db, title, fmt.Sprintf("common ground number %d", i))
		}
		all := tnames(tsearch(t, db, `"common ground"`, 0, 40))
		if len(all) != 30 || !strings.HasPrefix(all[0], "Common ground") || !strings.HasPrefix(all[2], "Common ground") || all[3] != "Page 29" || all[29] != "Page 01" {
			t.Fatalf("all hits = %v", all)
		}
		if paged := tpaged(t, db, `"common ground"`, 7, 40); !slices.Equal(paged, all) {
			t.Fatalf("pages of 7 = %v, want %v", paged, all)
		}
	})

	t.Run("a search with more title matches than a page reads only the page's, in the same order", func(t *testing.T) {
		postgres.SetSearchBudget(t, time.Minute)
		db := pgtest.Open(t)
		for i := range 20 {
			tcreate(t, db, fmt.Sprintf("Orchard %s %02d", strings.Repeat("tree ", i%5), i), "fruit")
			if i == 12 {
				tcreate(t, db, "Orchard", "the page whose title is the query")
			}
		}
		for i := range 10 {
			tcreate(t, db, fmt.Sprintf("Field %02d", i), "an orchard mentioned in passing")
		}
		all := tnames(tsearch(t, db, "orchard", 0, 40))
		if len(all) != 31 || all[0] != "Orchard" || !strings.HasPrefix(all[20], "Orchard ") || !strings.HasPrefix(all[21], "Field") {
			t.Fatalf("all hits = %v", all)
		}
		for _, size := range []int{1, 3, 7} {
			if paged := tpaged(t, db, "orchard", size, 40); !slices.Equal(paged, all) {
				t.Fatalf("pages of %d = %v, want %v", size, paged, all)
			}
		}
	})

	t.Run("a page whose title is the query comes first even when other titles outrank it", func(t *testing.T) {
		postgres.SetSearchBudget(t, time.Minute)
		postgres.SetSearchRare(t, 3)
		db := pgtest.Open(t)
		tcreate(t, db, "Orchard", "the page whose title is the query")
		for i := range 60 {
			tcreate(t, db, fmt.Sprintf("Orchard orchard orchard %02d", i), "fruit")
		}
		for i := range 20 {
			tcreate(t, db, fmt.Sprintf("Field %02d", i), "an orchard in passing")
		}
		all := tnames(tsearch(t, db, "orchard", 0, 100))
		if len(all) != 81 || all[0] != "Orchard" || !strings.HasPrefix(all[60], "Orchard orchard") || !strings.HasPrefix(all[61], "Field") {
			t.Fatalf("all hits = %v", all)
		}
		for _, size := range []int{1, 3, 7, 21} {
			if paged := tpaged(t, db, "orchard", size, 100); !slices.Equal(paged, all) {
				t.Fatalf("pages of %d = %v, want %v", size, paged, all)
			}
		}
	})

	t.Run("a search reads at most as many title and body matches as SearchCandidates each", func(t *testing.T) {
		postgres.SetSearchBudget(t, time.Minute)
		postgres.SetSearchRare(t, 3)
		db := pgtest.Open(t)
		// Bulk: one statement per table.
		n := 2*postgres.SearchCandidates + 150
		if _, err := db.Pool().Exec(tctx, `INSERT INTO pages (title, ns, touched, title_fold, latest_rev)
			SELECT 'Orchard ' || lpad(i::text, 4, '0'), '', 0, 'orchard ' || lpad(i::text, 4, '0'), 0 FROM generate_series(0, $1 - 1) i`, n); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Pool().Exec(tctx, `INSERT INTO revisions (page_id, user_name, ts, summary, text, size, sha1)
			SELECT id, 'U', 0, '', 'x', 1, '' FROM pages`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Pool().Exec(tctx, `UPDATE pages p SET latest_rev = r.id FROM revisions r WHERE r.page_id = p.id`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Pool().Exec(tctx, `INSERT INTO search (page_id, title, body) SELECT id, ('''orchard'':1 ''' || lpad((id-1)::text, 4, '0') || ''':2')::tsvector, '''x'':1'::tsvector FROM pages`); err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			tcreate(t, db, fmt.Sprintf("Field %02d", i), "orchard")
		}
		by100, by7 := tpaged(t, db, "orchard", 100, 5000), tpaged(t, db, "orchard", 7, 5000)
		if len(by100) != 2*postgres.SearchCandidates || !slices.Equal(by7, by100) {
			t.Fatalf("pages of 100 gave %d hits, pages of 7 %d; want %d, the same", len(by100), len(by7), 2*postgres.SearchCandidates)
		}
		if got := tsearch(t, db, "orchard", 2*postgres.SearchCandidates-20, 21); len(got) != 20 {
			t.Fatalf("the last page: %d hits, want 20", len(got))
		}
		if got := tnames(tsearch(t, db, "orchard", postgres.SearchCandidates, 5)); len(got) != 5 || !strings.HasPrefix(got[0], "Field") {
			t.Fatalf("after the title matches: %v, want the body matches", got)
		}
	})
}
