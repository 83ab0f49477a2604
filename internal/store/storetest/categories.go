package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

// keyed lists a category listing as "Title=KEY" items, in order.
func keyed(ms []wiki.CategoryMember) string {
	var b []string
	for _, m := range ms {
		b = append(b, string(m.Title)+"="+m.SortKey)
	}
	return strings.Join(b, ",")
}

func testCategorySortKeys(t *testing.T, s wiki.Store) {
	fruit := wiki.Title("Category:Fruit")
	in := func(ls wiki.LinkSet) wiki.LinkSet { ls.Categories = append(ls.Categories, fruit); return ls }
	save(t, s, "Apple", 0, "a", in(wiki.LinkSet{}))                                                             // its name
	save(t, s, "Banana", 0, "b", in(wiki.LinkSet{SortKeys: map[wiki.Title]string{fruit: "zebra"}}))             // its link's key, folded
	save(t, s, "Cherry", 0, "c", in(wiki.LinkSet{DefaultSort: "aardvark"}))                                     // its DEFAULTSORT
	save(t, s, "Date", 0, "d", in(wiki.LinkSet{DefaultSort: "x", SortKeys: map[wiki.Title]string{fruit: "b"}})) // the link's key first
	save(t, s, "Help:Tables", 0, "h", in(wiki.LinkSet{}))                                                       // its name without the namespace
	save(t, s, "Élan", 0, "e", in(wiki.LinkSet{}))                                                              // after Z, bytewise
	save(t, s, "Category:Sub", 0, "s", in(wiki.LinkSet{}))                                                      // a subcategory
	save(t, s, "Category:Alpha", 0, "s", in(wiki.LinkSet{DefaultSort: "zz"}))                                   // another, last by its key
	// A key the link gives for another category is not this one's.
	save(t, s, "Fig", 0, "f", in(wiki.LinkSet{SortKeys: map[wiki.Title]string{"Category:Other": "0"}}))

	got := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, fruit, wiki.CategoryQuery{}))
	want := "Cherry=AARDVARK,Apple=APPLE,Date=B,Fig=FIG,Help:Tables=TABLES,Banana=ZEBRA,Élan=ÉLAN"
	if keyed(got) != want {
		t.Fatalf("members =\n %s, want\n %s", keyed(got), want)
	}
	subs := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, fruit, wiki.CategoryQuery{Subcategories: true}))
	if keyed(subs) != "Category:Sub=SUB,Category:Alpha=ZZ" {
		t.Fatalf("subcategories = %s", keyed(subs))
	}
	// A page's categories carry its key in each.
	d := must[wiki.Page](t)(s.FindPage(ctx, "Date"))
	save(t, s, "Date", d.LatestID, "d2", wiki.LinkSet{Categories: []wiki.Title{fruit, "Category:Red"},
		SortKeys: map[wiki.Title]string{"Category:Red": "  dark red "}})
	cats := must[[]wiki.CategoryLink](t)(s.PageCategories(ctx, d.ID))
	if fmt.Sprint(cats) != fmt.Sprint([]wiki.CategoryLink{{Category: fruit, SortKey: "DATE"}, {Category: "Category:Red", SortKey: "  DARK RED "}}) {
		t.Fatalf("categories of Date = %v", cats)
	}
	sub := must[wiki.Page](t)(s.FindPage(ctx, "Category:Sub"))
	if cats := must[[]wiki.CategoryLink](t)(s.PageCategories(ctx, sub.ID)); fmt.Sprint(cats) != fmt.Sprint([]wiki.CategoryLink{{Category: fruit, SortKey: "SUB", Subcat: true}}) {
		t.Fatalf("categories of Category:Sub = %v", cats)
	}
	// A limit and a cursor at a key with no title: the members from it on.
	got = must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, fruit, wiki.CategoryQuery{From: wiki.CategoryCursor{SortKey: "DATE"}, Limit: 2}))
	if keyed(got) != "Date=DATE,Fig=FIG" {
		t.Fatalf("from DATE = %s", keyed(got))
	}
	// Deleted members are not listed.
	if err := s.DeletePage(ctx, "Apple", 0, "M", "", at(2)); err != nil {
		t.Fatal(err)
	}
	if got := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, fruit, wiki.CategoryQuery{Limit: 2})); members(got) != "Cherry,Date" {
		t.Fatalf("after a delete = %s", members(got))
	}
}

func testCategoryPaging(t *testing.T, s wiki.Store) {
	cat := wiki.Title("Category:Tied")
	// Saved out of order: five pages of one key, one before and one after.
	for _, p := range []struct{ title, key string }{
		{"P4", "same"}, {"P2", "Same"}, {"Z before", "samd"}, {"P5", "SAME"}, {"P1", "same"}, {"A after", "samf"}, {"P3", "same"},
	} {
		save(t, s, p.title, 0, p.title, wiki.LinkSet{Categories: []wiki.Title{cat}, DefaultSort: p.key})
	}
	want := "Z before,P1,P2,P3,P4,P5,A after"
	if got := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, cat, wiki.CategoryQuery{})); members(got) != want {
		t.Fatalf("members = %s, want %s", members(got), want)
	}
	// Pages of two as a category view reads them: one more than shown,
	// whose place is the next page's cursor.
	for _, size := range []int{1, 2, 3} {
		var all []string
		var from wiki.CategoryCursor
		for range 10 {
			page := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, cat, wiki.CategoryQuery{From: from, Limit: size + 1}))
			n := min(len(page), size)
			all = append(all, strings.Split(members(page[:n]), ",")...)
			if len(page) <= size {
				break
			}
			from = page[size].Cursor()
		}
		if strings.Join(all, ",") != want {
			t.Fatalf("pages of %d = %s, want %s", size, strings.Join(all, ","), want)
		}
	}
	// A cursor inside the equal keys, and a bound before one.
	p3 := wiki.CategoryCursor{SortKey: "SAME", Title: "P3"}
	if got := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, cat, wiki.CategoryQuery{From: p3})); members(got) != "P3,P4,P5,A after" {
		t.Fatalf("from P3 = %s", members(got))
	}
	if got := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, cat, wiki.CategoryQuery{Before: p3})); members(got) != "Z before,P1,P2" {
		t.Fatalf("before P3 = %s", members(got))
	}
	// The group of a letter before a place: what "cont." asks.
	got := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, cat, wiki.CategoryQuery{From: wiki.CategoryCursor{SortKey: "S"}, Before: p3, Limit: 1}))
	if members(got) != "Z before" {
		t.Fatalf("the first of S before P3 = %s", members(got))
	}
	got = must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, cat, wiki.CategoryQuery{From: wiki.CategoryCursor{SortKey: "SAMF"}, Before: wiki.CategoryCursor{SortKey: "SAMF", Title: "A after"}}))
	if len(got) != 0 {
		t.Fatalf("before the first of its key = %s", members(got))
	}
	// A key bound alone (no title) is before every member of the key.
	if got := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, cat, wiki.CategoryQuery{Before: wiki.CategoryCursor{SortKey: "SAME"}})); members(got) != "Z before" {
		t.Fatalf("before SAME = %s", members(got))
	}
}

func testCategorySortKeyWriters(t *testing.T, s wiki.Store) {
	cat := wiki.Title("Category:C")
	a := save(t, s, "A", 0, "a", wiki.LinkSet{Categories: []wiki.Title{cat}})
	save(t, s, "B", 0, "b", wiki.LinkSet{Categories: []wiki.Title{cat}})
	// The links job (a template's DEFAULTSORT reached the page).
	if ok := must[bool](t)(s.RefreshLinks(ctx, a.Page.ID, a.Revision.ID, wiki.LinkSet{Categories: []wiki.Title{cat}, DefaultSort: "c"})); !ok {
		t.Fatal("did not refresh the latest revision's links")
	}
	if got := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, cat, wiki.CategoryQuery{})); keyed(got) != "B=B,A=C" {
		t.Fatalf("after the links job = %s", keyed(got))
	}
	// An edit that changes the key only.
	b := must[wiki.Page](t)(s.FindPage(ctx, "B"))
	save(t, s, "B", b.LatestID, "b2", wiki.LinkSet{Categories: []wiki.Title{cat}, SortKeys: map[wiki.Title]string{cat: "d"}})
	if got := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, cat, wiki.CategoryQuery{})); keyed(got) != "A=C,B=D" {
		t.Fatalf("after an edit = %s", keyed(got))
	}
	// An import, which writes a batch's rows together.
	req := func(title, text string, ls wiki.LinkSet) wiki.SaveRequest {
		return wiki.SaveRequest{Title: wiki.Title(title), Text: text, UserName: "Importer", Links: ls, SearchText: text, Time: at(3)}
	}
	must[[]wiki.SaveResult](t)(s.ImportPages(ctx, []wiki.SaveRequest{
		req("E", "e", wiki.LinkSet{Categories: []wiki.Title{cat}, DefaultSort: "a"}),
		req("Category:F", "f", wiki.LinkSet{Categories: []wiki.Title{cat}}),
		req("B", "b3", wiki.LinkSet{Categories: []wiki.Title{cat}}),
	}))
	if got := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, cat, wiki.CategoryQuery{})); keyed(got) != "E=A,B=B,A=C" {
		t.Fatalf("after an import = %s", keyed(got))
	}
	if got := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, cat, wiki.CategoryQuery{Subcategories: true})); keyed(got) != "Category:F=F" {
		t.Fatalf("subcategories after an import = %s", keyed(got))
	}
}

// SortKeyBackfill is the contract of the migration that gave category
// rows their sort keys (schema version 12): rows an older wikid wrote get
// their pages' default keys (wiki.Title.DefaultSortKey) and are listed in
// order without a save. s is a fresh store; rewind closes it after making
// its database what version 11 was (the links table without the sort key
// columns and their index, version 12 not recorded) and returns the store
// opened again on it, which migrates it.
func SortKeyBackfill(t *testing.T, s wiki.Store, rewind func(t *testing.T) wiki.Store) {
	t.Helper()
	cat := wiki.Title("Category:Old")
	for _, title := range []string{"Zeta", "Help:Alpha", "Élan", "apple", "Category:Sub", "Gone"} {
		// The keys given here are lost with the columns: an older wikid
		// never stored them.
		save(t, s, title, 0, "old text", wiki.LinkSet{Categories: []wiki.Title{cat}, DefaultSort: "0", Links: []wiki.Title{"Zeta"}})
	}
	if err := s.DeletePage(ctx, "Gone", 0, "M", "", at(2)); err != nil {
		t.Fatal(err)
	}
	s = rewind(t)
	if got := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, cat, wiki.CategoryQuery{})); keyed(got) != "Help:Alpha=ALPHA,Apple=APPLE,Zeta=ZETA,Élan=ÉLAN" {
		t.Fatalf("members after the migration = %s", keyed(got))
	}
	if got := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, cat, wiki.CategoryQuery{Subcategories: true})); keyed(got) != "Category:Sub=SUB" {
		t.Fatalf("subcategories after the migration = %s", keyed(got))
	}
	// The rows of a deleted page got theirs too: it is back in its place.
	if _, err := s.UndeletePage(ctx, "Gone", 0, "M", "", at(3)); err != nil {
		t.Fatal(err)
	}
	if got := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, cat, wiki.CategoryQuery{From: wiki.CategoryCursor{SortKey: "F"}, Limit: 1})); keyed(got) != "Gone=GONE" {
		t.Fatalf("the undeleted member = %s", keyed(got))
	}
	// Rows of other kinds are as they were.
	if bl := must[[]wiki.Page](t)(s.Backlinks(ctx, "Zeta", wiki.ListQuery{})); len(bl) != 6 {
		t.Fatalf("backlinks after the migration = %s", titles(bl))
	}
	sub := must[wiki.Page](t)(s.FindPage(ctx, "Category:Sub"))
	if cats := must[[]wiki.CategoryLink](t)(s.PageCategories(ctx, sub.ID)); fmt.Sprint(cats) != fmt.Sprint([]wiki.CategoryLink{{Category: cat, SortKey: "SUB", Subcat: true}}) {
		t.Fatalf("categories of Category:Sub = %v", cats)
	}
	z := must[wiki.Page](t)(s.FindPage(ctx, "Zeta"))
	if cats := must[[]wiki.CategoryLink](t)(s.PageCategories(ctx, z.ID)); fmt.Sprint(cats) != fmt.Sprint([]wiki.CategoryLink{{Category: cat, SortKey: "ZETA"}}) {
		t.Fatalf("categories of Zeta = %v", cats)
	}
}

// saveAt saves text at title against base at time when.
func saveAt(t *testing.T, s wiki.Store, title string, base int64, text string, ls wiki.LinkSet, when time.Time) wiki.SaveResult {
	t.Helper()
	res, err := s.SavePage(ctx, wiki.SaveRequest{
		Title: wiki.MustTitle(title), Text: text, Summary: "edit " + title, UserID: 1, UserName: "Alice",
		BaseRevID: base, Links: ls, SearchText: text, Time: when,
	})
	if err != nil {
		t.Fatalf("save %q: %v", title, err)
	}
	return res
}

// added lists a category's additions as "Title@minute" items, in order.
func added(ms []wiki.CategoryMember) string {
	var b []string
	for _, m := range ms {
		b = append(b, fmt.Sprintf("%s@%d", m.Title, int(m.Added.Sub(t0)/time.Minute)))
	}
	return strings.Join(b, ",")
}

func testCategoryAdditions(t *testing.T, s wiki.Store) {
	news := wiki.Title("Category:News")
	in := wiki.LinkSet{Categories: []wiki.Title{news}}
	a := saveAt(t, s, "Alpha", 0, "a", in, at(1))
	saveAt(t, s, "Beta", 0, "b", in, at(2))
	saveAt(t, s, "Category:Sub", 0, "s", in, at(3)) // subcategories are members too
	g := saveAt(t, s, "Gamma", 0, "g", wiki.LinkSet{}, at(4))
	list := func() string {
		t.Helper()
		return added(must[[]wiki.CategoryMember](t)(s.CategoryAdditions(ctx, news, 10)))
	}
	if got := list(); got != "Category:Sub@3,Beta@2,Alpha@1" {
		t.Fatalf("additions = %s", got)
	}
	// An edit that keeps the page in the category keeps its time; one that
	// adds a page to it is an addition at the edit's time.
	a = saveAt(t, s, "Alpha", a.Revision.ID, "a2", wiki.LinkSet{Categories: []wiki.Title{news, "Category:Other"}}, at(5))
	saveAt(t, s, "Gamma", g.Revision.ID, "g2", in, at(6))
	if got := list(); got != "Gamma@6,Category:Sub@3,Beta@2,Alpha@1" {
		t.Fatalf("after edits: additions = %s", got)
	}
	if got := added(must[[]wiki.CategoryMember](t)(s.CategoryAdditions(ctx, "Category:Other", 10))); got != "Alpha@5" {
		t.Fatalf("Category:Other's additions = %s", got)
	}
	// A page that leaves the category is not listed; when it comes back,
	// that is a new addition.
	a = saveAt(t, s, "Alpha", a.Revision.ID, "a3", wiki.LinkSet{}, at(7))
	if got := list(); got != "Gamma@6,Category:Sub@3,Beta@2" {
		t.Fatalf("after Alpha left: additions = %s", got)
	}
	saveAt(t, s, "Alpha", a.Revision.ID, "a4", in, at(8))
	if got := list(); got != "Alpha@8,Gamma@6,Category:Sub@3,Beta@2" {
		t.Fatalf("after Alpha came back: additions = %s", got)
	}
	// The links job keeps the time of a membership that goes on.
	b := must[wiki.Page](t)(s.FindPage(ctx, "Beta"))
	if _, err := s.RefreshLinks(ctx, b.ID, b.LatestID, wiki.LinkSet{Categories: []wiki.Title{news}, DefaultSort: "zz"}); err != nil {
		t.Fatal(err)
	}
	// A limit, and deleted pages are not listed.
	if got := added(must[[]wiki.CategoryMember](t)(s.CategoryAdditions(ctx, news, 2))); got != "Alpha@8,Gamma@6" {
		t.Fatalf("limit 2: additions = %s", got)
	}
	if err := s.DeletePage(ctx, "Gamma", 1, "Alice", "gone", at(9)); err != nil {
		t.Fatal(err)
	}
	if got := list(); got != "Alpha@8,Category:Sub@3,Beta@2" {
		t.Fatalf("after deleting Gamma: additions = %s", got)
	}
	// An import batch records every member it adds, however many: the
	// rows go in by the statement-full. The pages are in one category or
	// two of three, each category's members a different set.
	cats := []wiki.Title{"Category:Bulk A", "Category:Bulk B", "Category:Bulk C"}
	want := map[wiki.Title][]string{}
	var reqs []wiki.SaveRequest
	for i := range 150 {
		title := fmt.Sprintf("Bulk %03d", i)
		in := []wiki.Title{cats[i%3]}
		if i%5 == 0 {
			in = append(in, cats[(i+1)%3])
		}
		for _, c := range in {
			want[c] = append(want[c], title)
		}
		reqs = append(reqs, wiki.SaveRequest{Title: wiki.Title(title), Text: "b", UserName: "Importer",
			Links: wiki.LinkSet{Categories: in}, Time: at(10)})
	}
	must[[]wiki.SaveResult](t)(s.ImportPages(ctx, reqs))
	for _, c := range cats {
		var got []string
		for _, m := range must[[]wiki.CategoryMember](t)(s.CategoryAdditions(ctx, c, 200)) {
			if !m.Added.Equal(at(10)) {
				t.Fatalf("%s: %s added at %v, want the import's time %v", c, m.Title, m.Added, at(10))
			}
			got = append(got, string(m.Title))
		}
		slices.Sort(got)
		if !slices.Equal(got, want[c]) {
			t.Fatalf("%s after an import: %d additions %v, want %d %v", c, len(got), got, len(want[c]), want[c])
		}
	}
}

func testFindRevisions(t *testing.T, s wiki.Store) {
	a := save(t, s, "Alpha", 0, "first", wiki.LinkSet{})
	a2 := save(t, s, "Alpha", a.Revision.ID, "second", wiki.LinkSet{})
	b := save(t, s, "Beta", 0, "other", wiki.LinkSet{})
	revs := must[[]wiki.Revision](t)(s.FindRevisions(ctx, []int64{b.Revision.ID, a.Revision.ID, a2.Revision.ID, 99999}))
	texts := map[int64]string{}
	for _, r := range revs {
		texts[r.ID] = r.Text
	}
	want := map[int64]string{a.Revision.ID: "first", a2.Revision.ID: "second", b.Revision.ID: "other"}
	if fmt.Sprint(texts) != fmt.Sprint(want) {
		t.Fatalf("texts = %v, want %v", texts, want)
	}
	for _, r := range revs {
		if r.ID == a2.Revision.ID && (r.ParentID != a.Revision.ID || r.Title != "Alpha" || r.ParentSize != len("first")) {
			t.Fatalf("revision %d = %+v", r.ID, r)
		}
	}
	// Revisions of a deleted page are left out.
	if err := s.DeletePage(ctx, "Beta", 1, "Alice", "gone", at(2)); err != nil {
		t.Fatal(err)
	}
	if revs := must[[]wiki.Revision](t)(s.FindRevisions(ctx, []int64{b.Revision.ID})); len(revs) != 0 {
		t.Fatalf("revisions of a deleted page: %v", revs)
	}
	if revs := must[[]wiki.Revision](t)(s.FindRevisions(ctx, nil)); len(revs) != 0 {
		t.Fatalf("no IDs: %v", revs)
	}
}
