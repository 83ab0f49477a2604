// Package storetest is the contract suite every wiki.Store backend runs:
//
//	func TestStore(t *testing.T) { storetest.Run(t, func(t *testing.T) wiki.Store { return sqlitetest.Open(t) }) }
package storetest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

// Run runs the contract suite; open returns a fresh, empty store for each
// subtest and arranges for it to be closed.
func Run(t *testing.T, open func(t *testing.T) wiki.Store) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s wiki.Store)
	}{
		{"saving a new page creates it with a first revision", testCreate},
		{"saving with the latest revision as base appends a revision", testEdit},
		{"saving against a stale base is a conflict and changes nothing", testConflict},
		{"creating a page that exists is ErrExists", testCreateExists},
		{"saving unchanged text is a null edit", testNullEdit},
		{"a null revision stores the latest text again as a revision and a change", testNullRevision},
		{"each revision has a content model, kept by edits, moves, deletes and imports", testContentModels},
		{"an imported history keeps its times and authors, skips what is present and makes no recent change", testImportHistory},
		{"a deleted page is hidden and can be undeleted", testDeleteUndelete},
		{"a deleted page can be created again with its old history hidden", testRecreate},
		{"moving a page renames it and can leave a redirect", testMove},
		{"moving onto a live page is ErrExists, onto a deleted one absorbs it", testMoveOnto},
		{"a deleted page's edits stay out of the lists when another page takes its title", testDeletedEditsStayArchived},
		{"existing titles reports live pages only, in one batch", testExistingTitles},
		{"history pages through revisions newest first with parent sizes", testHistory},
		{"recent changes pages newest first and filters by user", testRecentChanges},
		{"tags mark a revision and its change, in history and recent changes", testTags},
		{"page figures count revisions, editors and links, and find the first revision", testPageStats},
		{"latest revisions are read for live pages only, in one batch", testLatestRevisions},
		{"deletions, restorations and moves are logged, filtered and paged", testLog},
		{"protection is set, modified, expires, moves with its page and is logged", testProtection},
		{"all pages lists by title with prefix and cursor", testAllPages},
		{"all pages, recent changes and search filter by namespace", testNamespaceFilters},
		{"backlinks and category members list live pages only", testLinks},
		{"category members list by sort key, then title, subcategories apart", testCategorySortKeys},
		{"a category listing pages by (sort key, title) across equal keys", testCategoryPaging},
		{"the links job and imports write sort keys, and a key change moves the member", testCategorySortKeyWriters},
		{"a category's newest members come first, each with the time it was added", testCategoryAdditions},
		{"revisions are found with their texts in one batch", testFindRevisions},
		{"transclusions are listed and counted apart from links, and gate their jobs", testTransclusions},
		{"dependents are listed by page ID from a cursor, each page once, live pages only", testDependents},
		{"blobs are stored once per content and refused when the reader holds other bytes", testBlobs},
		{"a blob of several chunks is read in ranges within, across and past its chunks", testBlobRanges},
		{"an upload saves the File: page, its version and its log entry together: new, overwrite, revert", testUpload},
		{"current files are the latest visible versions of live File: pages with an upload", testCurrentFiles},
		{"file versions are listed newest first, found by content, kept by deletes and moves", testFileVersions},
		{"a deleted file's versions stay hidden when its page is created again, until an undelete", testHiddenFiles},
		{"the pages showing a file are listed by title and walked as dependents", testFileUsage},
		{"thumbnails need their blobs and the first saved for a width stays", testThumbnails},
		{"search finds English text with title matches first", testSearchEnglish},
		{"search finds Korean, Chinese and Japanese text", testSearchCJK},
		{"search never fails on query syntax", testSearchSyntax},
		{"search follows moves and deletes", testSearchFollows},
		{"search indexes the text it is given, not the source", testSearchText},
		{"search ranks title matches, then rare words by BM25, then the newest", testSearchRanking},
		{"title completion ignores case and accents and skips deleted pages", testSearchTitles},
		{"an import saves pages in one batch, found by search at once", testImportPages},
		{"an import batch saving a page twice indexes its last text only", testImportTwiceSearch},
		{"an import into a protected title needs a group that may edit it", testImportProtected},
		{"random page and page count see live pages", testRandomCount},
		{"user names are unique case-insensitively", testUsers},
		{"a user name that looks like an existing one is refused, naming it", testUserLookAlike},
		{"concurrent look-alike registrations: exactly one wins", testUserLookAlikeConcurrent},
		{"sessions expire and tokens are found", testSessionsTokens},
		{"account creation and group changes are logged in their transaction", testGroups},
		{"blocks are set, changed, expire by themselves and are lifted, with log entries", testBlocks},
		{"a password change ends the other sessions; sessions and tokens are listed and revoked", testAccountSessions},
		{"password resets are single use and expire", testPasswordResets},
		{"preferences are saved with the user", testPrefs},
		{"watchlists: expiry, filtered changes, moves, bounds", testWatchlist},
		{"notifications are stored once, listed newest first and marked read", testNotifications},
		{"a watchlist feed token is set, read and revoked", testWatchlistToken},
		{"renders are stored per revision and version and dropped per page", testRenders},
		{"concurrent saves of different pages all succeed", testConcurrentDifferent},
		{"concurrent saves on the same base: exactly one wins", testConcurrentSame},
		{"a change and its jobs commit together, or neither", testJobsAtomic},
		{"jobs are leased, completed, retried with backoff and go dead", testJobsLifecycle},
		{"a job whose lease expired is leased again, then goes dead", testJobsExpiredLease},
		{"concurrent leasing gives each job to one owner", testJobsConcurrentLease},
		{"queued jobs with the same key merge", testJobsDedupe},
		{"page tasks: refresh links, trim changes, drop done jobs", testJobTasks},
		{"the purge log numbers events one by one, reads after an ID and keeps its newest when trimmed", testPurgeLog},
		{"a change's purge log event commits with it, or not at all", testPurgeOutbox},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

var (
	ctx = context.Background()
	t0  = time.Date(2024, 5, 6, 7, 8, 9, 123_000_000, time.UTC)
)

func at(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }

// save saves text at title against base and fails the test on error.
func save(t *testing.T, s wiki.Store, title string, base int64, text string, ls wiki.LinkSet) wiki.SaveResult {
	t.Helper()
	res, err := s.SavePage(ctx, wiki.SaveRequest{
		Title: wiki.MustTitle(title), Text: text, Summary: "edit " + title, UserID: 1, UserName: "Alice",
		BaseRevID: base, Links: ls, SearchText: text, Time: at(1),
	})
	if err != nil {
		t.Fatalf("save %q: %v", title, err)
	}
	return res
}

// index does what a JobSearch does after a change: a save writes its
// search entry, moves and undeletes leave it to the job queue.
func index(t *testing.T, s wiki.Store, pageID int64) {
	t.Helper()
	if err := s.UpdateSearchIndex(ctx, pageID, sourceText); err != nil {
		t.Fatalf("update search index of page %d: %v", pageID, err)
	}
}

// sourceText indexes a revision's source as it is (the wiki indexes its
// rendered plain text; the contract is the same).
func sourceText(s string, _ wiki.ContentModel) string { return s }

func create(t *testing.T, s wiki.Store, title, text string) wiki.SaveResult {
	t.Helper()
	return save(t, s, title, 0, text, wiki.LinkSet{})
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}

func titles(ps []wiki.Page) string {
	var b []string
	for _, p := range ps {
		b = append(b, string(p.Title))
	}
	return strings.Join(b, ",")
}

// members lists the titles of a category listing, in order.
func members(ms []wiki.CategoryMember) string {
	var b []string
	for _, m := range ms {
		b = append(b, string(m.Title))
	}
	return strings.Join(b, ",")
}

func testCreate(t *testing.T, s wiki.Store) {
	res, err := s.SavePage(ctx, wiki.SaveRequest{
		Title: "Main Page", Text: "Hello", Summary: "first", Minor: true, UserID: 7, UserName: "Alice",
		Time: t0.In(time.FixedZone("KST", 9*3600)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created || res.Page.ID == 0 || res.Revision.ID == 0 || res.Page.LatestID != res.Revision.ID {
		t.Fatalf("result = %+v", res)
	}
	p := must[wiki.Page](t)(s.FindPage(ctx, "Main Page"))
	if p.ID != res.Page.ID || p.LatestID != res.Revision.ID || p.Size != 5 || p.Deleted || !p.Touched.Equal(t0) {
		t.Fatalf("page = %+v", p)
	}
	r := must[wiki.Revision](t)(s.FindRevision(ctx, res.Revision.ID))
	want := wiki.Revision{ID: res.Revision.ID, PageID: p.ID, Title: "Main Page", UserID: 7, UserName: "Alice",
		Time: t0, Summary: "first", Text: "Hello", Size: 5, SHA1: "f7ff9e8b7bb2e09b70935a5d785e0cc5d9d0abf0", Minor: true, Model: wiki.ModelMarkdown}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("revision =\n%+v, want\n%+v", r, want)
	}
	if r.Time.Location() != time.UTC {
		t.Errorf("revision time in %v, want UTC", r.Time.Location())
	}
	_, err = s.FindPage(ctx, "Missing")
	wantErr(t, err, wiki.ErrNotFound)
	_, err = s.FindRevision(ctx, 999999)
	wantErr(t, err, wiki.ErrNotFound)
}

func testEdit(t *testing.T, s wiki.Store) {
	first := create(t, s, "A", "one")
	second := save(t, s, "A", first.Revision.ID, "one two", wiki.LinkSet{})
	if second.Created || second.Revision.ParentID != first.Revision.ID || second.Revision.ParentSize != 3 {
		t.Fatalf("second = %+v", second)
	}
	p := must[wiki.Page](t)(s.FindPage(ctx, "A"))
	if p.LatestID != second.Revision.ID || p.Size != 7 {
		t.Fatalf("page = %+v", p)
	}
	r := must[wiki.Revision](t)(s.FindRevision(ctx, second.Revision.ID))
	if r.Text != "one two" || r.ParentID != first.Revision.ID || r.ParentSize != 3 {
		t.Fatalf("revision = %+v", r)
	}
}

func testConflict(t *testing.T, s wiki.Store) {
	first := create(t, s, "A", "one")
	second := save(t, s, "A", first.Revision.ID, "two", wiki.LinkSet{})
	_, err := s.SavePage(ctx, wiki.SaveRequest{Title: "A", Text: "three", BaseRevID: first.Revision.ID, UserName: "Bob"})
	wantErr(t, err, wiki.ErrConflict)
	if wiki.KindOf(err) != wiki.KindConflict {
		t.Errorf("kind = %v", wiki.KindOf(err))
	}
	p := must[wiki.Page](t)(s.FindPage(ctx, "A"))
	if p.LatestID != second.Revision.ID {
		t.Fatalf("latest = %d, want %d", p.LatestID, second.Revision.ID)
	}
	_, err = s.SavePage(ctx, wiki.SaveRequest{Title: "Nope", Text: "x", BaseRevID: first.Revision.ID, UserName: "Bob"})
	wantErr(t, err, wiki.ErrConflict)
	rc := must[[]wiki.Change](t)(s.RecentChanges(ctx, wiki.ChangeQuery{}))
	if len(rc) != 2 {
		t.Fatalf("%d changes, want 2", len(rc))
	}
}

func testCreateExists(t *testing.T, s wiki.Store) {
	create(t, s, "A", "one")
	_, err := s.SavePage(ctx, wiki.SaveRequest{Title: "A", Text: "other", UserName: "Bob"})
	wantErr(t, err, wiki.ErrExists)
}

func testNullEdit(t *testing.T, s wiki.Store) {
	first := create(t, s, "A", "same")
	res := save(t, s, "A", first.Revision.ID, "same", wiki.LinkSet{Categories: []wiki.Title{"Category:X"}})
	if res.Revision.ID != first.Revision.ID || res.Created {
		t.Fatalf("null edit made revision %d, want %d", res.Revision.ID, first.Revision.ID)
	}
	cats := must[[]wiki.CategoryLink](t)(s.PageCategories(ctx, first.Page.ID))
	if len(cats) != 1 || cats[0] != (wiki.CategoryLink{Category: "Category:X", SortKey: "A"}) {
		t.Fatalf("categories after null edit = %v", cats)
	}
	if h := must[[]wiki.Revision](t)(s.History(ctx, wiki.HistoryQuery{PageID: first.Page.ID})); len(h) != 1 {
		t.Fatalf("history has %d revisions", len(h))
	}
}

func testNullRevision(t *testing.T, s wiki.Store) {
	first := create(t, s, "Plain", "same text")
	res := must[wiki.SaveResult](t)(s.SavePage(ctx, wiki.SaveRequest{Title: "Plain", Text: "same text", Summary: "touched",
		UserID: 2, UserName: "Bob", BaseRevID: first.Revision.ID, NullRevision: true, Time: at(2)}))
	if res.Unchanged || res.Created || res.Revision.ID == first.Revision.ID || res.Revision.ParentID != first.Revision.ID ||
		res.Revision.Size != first.Revision.Size || res.Revision.ParentSize != first.Revision.Size || res.Page.LatestID != res.Revision.ID {
		t.Fatalf("result = %+v", res)
	}
	if r := must[wiki.Revision](t)(s.FindRevision(ctx, res.Revision.ID)); r.Text != "same text" || r.Summary != "touched" || r.UserName != "Bob" {
		t.Fatalf("revision = %+v", r)
	}
	rc := must[[]wiki.Change](t)(s.RecentChanges(ctx, wiki.ChangeQuery{}))
	if len(rc) != 2 || rc[0].Kind != wiki.ChangeEdit || rc[0].RevID != res.Revision.ID || rc[0].Summary != "touched" || rc[0].Size != rc[0].OldSize {
		t.Fatalf("recent changes = %+v", rc)
	}
	// Without it, the same text is a null edit still.
	again := must[wiki.SaveResult](t)(s.SavePage(ctx, wiki.SaveRequest{Title: "Plain", Text: "same text", UserName: "Bob",
		BaseRevID: res.Revision.ID, Time: at(3)}))
	if !again.Unchanged || again.Revision.ID != res.Revision.ID {
		t.Fatalf("null edit = %+v", again)
	}
	// An import asks for one as a save does.
	imp := must[[]wiki.SaveResult](t)(s.ImportPages(ctx, []wiki.SaveRequest{
		{Title: "Plain", Text: "same text", Summary: "imported", UserName: "Importer", NullRevision: true, Time: at(4)},
		{Title: "Plain", Text: "same text", Summary: "no-op", UserName: "Importer", Time: at(4)},
	}))
	if imp[0].Unchanged || imp[0].Revision.ParentID != res.Revision.ID || !imp[1].Unchanged || imp[1].Revision.ID != imp[0].Revision.ID {
		t.Fatalf("import = %+v", imp)
	}
	if n := len(must[[]wiki.Revision](t)(s.History(ctx, wiki.HistoryQuery{PageID: first.Page.ID}))); n != 3 {
		t.Fatalf("%d revisions, want 3", n)
	}
}

func testDeleteUndelete(t *testing.T, s wiki.Store) {
	a := create(t, s, "A", "alpha")
	a2 := save(t, s, "A", a.Revision.ID, "alpha beta", wiki.LinkSet{})
	save(t, s, "B", 0, "links to target", wiki.LinkSet{Links: []wiki.Title{"Target"}})
	save(t, s, "A", a2.Revision.ID, "alpha beta gamma", wiki.LinkSet{Links: []wiki.Title{"Target"}, Categories: []wiki.Title{"Category:C"}})

	if err := s.DeletePage(ctx, "A", 2, "Admin", "spam", at(5)); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.DeletePage(ctx, "A", 2, "Admin", "again", at(6)), wiki.ErrNotFound)
	wantErr(t, s.DeletePage(ctx, "Missing", 2, "Admin", "x", at(6)), wiki.ErrNotFound)
	p := must[wiki.Page](t)(s.FindPage(ctx, "A"))
	if !p.Deleted || !p.Touched.Equal(at(5)) {
		t.Fatalf("page = %+v", p)
	}
	_, err := s.FindRevision(ctx, a.Revision.ID)
	wantErr(t, err, wiki.ErrNotFound)
	if ex := must[map[wiki.Title]bool](t)(s.ExistingTitles(ctx, []wiki.Title{"A", "B"})); ex["A"] || !ex["B"] {
		t.Fatalf("existing = %v", ex)
	}
	if bl := must[[]wiki.Page](t)(s.Backlinks(ctx, "Target", wiki.ListQuery{})); titles(bl) != "B" {
		t.Fatalf("backlinks = %s", titles(bl))
	}
	if m := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, "Category:C", wiki.CategoryQuery{})); len(m) != 0 {
		t.Fatalf("members = %s", members(m))
	}
	if h := must[[]wiki.Revision](t)(s.History(ctx, wiki.HistoryQuery{PageID: p.ID})); len(h) != 0 {
		t.Fatalf("history of deleted page has %d revisions", len(h))
	}
	rc := must[[]wiki.Change](t)(s.RecentChanges(ctx, wiki.ChangeQuery{Limit: 1}))
	if rc[0].Kind != wiki.ChangeDelete || rc[0].Title != "A" || rc[0].RevID != 0 || rc[0].Summary != "spam" || rc[0].UserName != "Admin" {
		t.Fatalf("change = %+v", rc[0])
	}
	// A deleted page's edits (and their summaries) leave every list of
	// changes, as MediaWiki archives them; its deletion stays, and an
	// undeletion brings them back.
	changes := func(q wiki.ChangeQuery) string {
		var out []string
		for _, c := range must[[]wiki.Change](t)(s.RecentChanges(ctx, q)) {
			out = append(out, string(c.Kind)+" "+string(c.Title))
		}
		return strings.Join(out, ",")
	}
	if got := changes(wiki.ChangeQuery{}); got != "delete A,new B" {
		t.Fatalf("recent changes after delete = %s", got)
	}
	if got := changes(wiki.ChangeQuery{UserName: "Alice"}); got != "new B" {
		t.Fatalf("contributions after delete = %s", got)
	}
	if got := changes(wiki.ChangeQuery{Limit: 1, Before: rc[0].ID}); got != "new B" {
		t.Fatalf("recent changes before the delete, one = %s", got)
	}

	u, err := s.UndeletePage(ctx, "A", 2, "Admin", "oops", at(7))
	if err != nil {
		t.Fatal(err)
	}
	if u.Deleted || u.LatestID != p.LatestID || u.Size != len("alpha beta gamma") {
		t.Fatalf("undeleted = %+v (was %+v)", u, p)
	}
	if h := must[[]wiki.Revision](t)(s.History(ctx, wiki.HistoryQuery{PageID: p.ID})); len(h) != 3 {
		t.Fatalf("history after undelete has %d revisions", len(h))
	}
	if m := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, "Category:C", wiki.CategoryQuery{})); members(m) != "A" {
		t.Fatalf("members = %s", members(m))
	}
	rc = must[[]wiki.Change](t)(s.RecentChanges(ctx, wiki.ChangeQuery{Limit: 1}))
	if rc[0].Kind != wiki.ChangeUndelete || rc[0].RevID != u.LatestID {
		t.Fatalf("change = %+v", rc[0])
	}
	if got := changes(wiki.ChangeQuery{UserName: "Alice"}); got != "edit A,new B,edit A,new A" {
		t.Fatalf("contributions after undelete = %s", got)
	}
	_, err = s.UndeletePage(ctx, "A", 2, "Admin", "again", at(8))
	wantErr(t, err, wiki.ErrNotFound)
	_, err = s.UndeletePage(ctx, "Missing", 2, "Admin", "x", at(8))
	wantErr(t, err, wiki.ErrNotFound)
}

func testRecreate(t *testing.T, s wiki.Store) {
	old := create(t, s, "A", "old text")
	if err := s.DeletePage(ctx, "A", 0, "Admin", "", at(2)); err != nil {
		t.Fatal(err)
	}
	_, err := s.SavePage(ctx, wiki.SaveRequest{Title: "A", Text: "x", BaseRevID: old.Revision.ID, UserName: "Bob"})
	wantErr(t, err, wiki.ErrConflict)
	res := create(t, s, "A", "new text")
	if !res.Created || res.Revision.ParentID != 0 || res.Page.Deleted {
		t.Fatalf("recreated = %+v", res)
	}
	h := must[[]wiki.Revision](t)(s.History(ctx, wiki.HistoryQuery{PageID: res.Page.ID}))
	if len(h) != 1 || h[0].ID != res.Revision.ID {
		t.Fatalf("history = %+v", h)
	}
	if _, err := s.FindRevision(ctx, old.Revision.ID); !errors.Is(err, wiki.ErrNotFound) {
		t.Fatalf("old revision visible: %v", err)
	}
	rc := must[[]wiki.Change](t)(s.RecentChanges(ctx, wiki.ChangeQuery{Limit: 1}))
	if rc[0].Kind != wiki.ChangeNew {
		t.Fatalf("change kind = %s", rc[0].Kind)
	}
	// Undelete restores the old revisions into the history; the latest stays.
	u := must[wiki.Page](t)(s.UndeletePage(ctx, "A", 0, "Admin", "", at(3)))
	if u.LatestID != res.Revision.ID {
		t.Fatalf("latest after undelete = %d, want %d", u.LatestID, res.Revision.ID)
	}
	if h := must[[]wiki.Revision](t)(s.History(ctx, wiki.HistoryQuery{PageID: res.Page.ID})); len(h) != 2 {
		t.Fatalf("history after undelete has %d revisions", len(h))
	}
}

func testMove(t *testing.T, s wiki.Store) {
	a := save(t, s, "Old", 0, "content [[X]]", wiki.LinkSet{Links: []wiki.Title{"X"}})
	p, err := s.MovePage(ctx, wiki.MoveRequest{From: "Old", To: "New", Reason: "better name", UserID: 3, UserName: "Mover",
		LeaveRedirect: true, RedirectText: "#REDIRECT [[New]]", RedirectLinks: wiki.LinkSet{Redirect: "New"}, Time: at(4)})
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != a.Page.ID || p.Title != "New" || p.LatestID == a.Revision.ID {
		t.Fatalf("moved = %+v", p)
	}
	null := must[wiki.Revision](t)(s.FindRevision(ctx, p.LatestID))
	if null.Text != "content [[X]]" || null.Summary != "better name" || null.ParentID != a.Revision.ID || null.Title != "New" || null.SHA1 != a.Revision.SHA1 {
		t.Fatalf("null revision = %+v", null)
	}
	redir := must[wiki.Page](t)(s.FindPage(ctx, "Old"))
	if redir.ID == p.ID || redir.Redirect != "New" || redir.Deleted {
		t.Fatalf("redirect page = %+v", redir)
	}
	if r := must[wiki.Revision](t)(s.FindRevision(ctx, redir.LatestID)); r.Text != "#REDIRECT [[New]]" {
		t.Fatalf("redirect revision = %+v", r)
	}
	if bl := must[[]wiki.Page](t)(s.Backlinks(ctx, "New", wiki.ListQuery{})); titles(bl) != "Old" {
		t.Fatalf("backlinks of New = %s", titles(bl))
	}
	if bl := must[[]wiki.Page](t)(s.Backlinks(ctx, "X", wiki.ListQuery{})); titles(bl) != "New" {
		t.Fatalf("backlinks of X = %s", titles(bl))
	}
	rc := must[[]wiki.Change](t)(s.RecentChanges(ctx, wiki.ChangeQuery{Limit: 1}))
	if rc[0].Kind != wiki.ChangeMove || rc[0].Title != "Old" || rc[0].NewTitle != "New" || rc[0].RevID != p.LatestID || rc[0].OldRevID != a.Revision.ID {
		t.Fatalf("change = %+v", rc[0])
	}

	// Without a redirect, the old title is free.
	must[wiki.Page](t)(s.MovePage(ctx, wiki.MoveRequest{From: "New", To: "Newer", Reason: "again", UserName: "Mover", Time: at(5)}))
	if _, err := s.FindPage(ctx, "New"); !errors.Is(err, wiki.ErrNotFound) {
		t.Fatalf("find New after move = %v", err)
	}
	_, err = s.MovePage(ctx, wiki.MoveRequest{From: "Missing", To: "Elsewhere", UserName: "Mover"})
	wantErr(t, err, wiki.ErrNotFound)
}

func testMoveOnto(t *testing.T, s wiki.Store) {
	create(t, s, "A", "a")
	create(t, s, "B", "b")
	_, err := s.MovePage(ctx, wiki.MoveRequest{From: "A", To: "B", UserName: "M"})
	wantErr(t, err, wiki.ErrExists)
	if err := s.DeletePage(ctx, "B", 0, "M", "", at(2)); err != nil {
		t.Fatal(err)
	}
	p := must[wiki.Page](t)(s.MovePage(ctx, wiki.MoveRequest{From: "A", To: "B", UserName: "M", Time: at(3)}))
	got := must[wiki.Page](t)(s.FindPage(ctx, "B"))
	if got.ID != p.ID || got.Deleted {
		t.Fatalf("B = %+v, want the moved page %+v", got, p)
	}
	if h := must[[]wiki.Revision](t)(s.History(ctx, wiki.HistoryQuery{PageID: p.ID})); len(h) != 2 {
		t.Fatalf("history has %d revisions, want 2", len(h))
	}
}

// A deleted page's edits stay archived when another page takes its title,
// created there or moved there, even when that page's row is the deleted
// page's or has its ID again.
func testDeletedEditsStayArchived(t *testing.T, s wiki.Store) {
	saveAs := func(title, user, summary string) wiki.SaveResult {
		t.Helper()
		res, err := s.SavePage(ctx, wiki.SaveRequest{Title: wiki.MustTitle(title), Text: "text of " + title, Summary: summary, UserName: user, Time: at(1)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	summaries := func(q wiki.ChangeQuery) string {
		var out []string
		for _, c := range must[[]wiki.Change](t)(s.RecentChanges(ctx, q)) {
			out = append(out, string(c.Kind)+" "+string(c.Title)+" "+c.Summary)
		}
		return strings.Join(out, ",")
	}
	saveAs("Pills", "Spammer", "buy pills")
	if err := s.DeletePage(ctx, "Pills", 0, "Admin", "spam", at(2)); err != nil {
		t.Fatal(err)
	}
	saveAs("Pills", "Ann", "a real article")
	if got := summaries(wiki.ChangeQuery{}); got != "new Pills a real article,delete Pills spam" {
		t.Errorf("created again: %s", got)
	}
	if got := summaries(wiki.ChangeQuery{UserName: "Spammer"}); got != "" {
		t.Errorf("created again, the spammer's contributions: %s", got)
	}

	// The highest page ID deleted, then a move onto its title: the
	// redirect left behind is a new row, which may take the freed ID.
	saveAs("Alpha", "Ann", "alpha")
	saveAs("Beta", "Spammer", "beta spam")
	if err := s.DeletePage(ctx, "Beta", 0, "Admin", "spam", at(3)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MovePage(ctx, wiki.MoveRequest{From: "Alpha", To: "Beta", UserName: "Ann", LeaveRedirect: true,
		RedirectText: "#REDIRECT [[Beta]]", RedirectLinks: wiki.LinkSet{Redirect: "Beta", Links: []wiki.Title{"Beta"}}, Time: at(4)}); err != nil {
		t.Fatal(err)
	}
	if got := summaries(wiki.ChangeQuery{UserName: "Spammer"}); got != "" {
		t.Errorf("moved onto, the spammer's contributions: %s", got)
	}
	if got := summaries(wiki.ChangeQuery{}); strings.Contains(got, "beta spam") || strings.Contains(got, "buy pills") {
		t.Errorf("moved onto: %s", got)
	}
}

func testExistingTitles(t *testing.T, s wiki.Store) {
	create(t, s, "A", "a")
	create(t, s, "한국어", "b")
	create(t, s, "Gone", "c")
	if err := s.DeletePage(ctx, "Gone", 0, "M", "", at(2)); err != nil {
		t.Fatal(err)
	}
	batch := []wiki.Title{"A", "한국어", "Gone", "Missing"}
	for i := range 1200 {
		batch = append(batch, wiki.Title(fmt.Sprintf("Nope %d", i)))
	}
	ex := must[map[wiki.Title]bool](t)(s.ExistingTitles(ctx, batch))
	if len(ex) != 2 || !ex["A"] || !ex["한국어"] {
		t.Fatalf("existing = %v", ex)
	}
	if ex := must[map[wiki.Title]bool](t)(s.ExistingTitles(ctx, nil)); len(ex) != 0 {
		t.Fatalf("existing of nothing = %v", ex)
	}
}

func testHistory(t *testing.T, s wiki.Store) {
	r := create(t, s, "A", "1")
	ids := []int64{r.Revision.ID}
	text := "1"
	for range 4 {
		text += "2"
		r = save(t, s, "A", r.Revision.ID, text, wiki.LinkSet{})
		ids = append(ids, r.Revision.ID)
	}
	h := must[[]wiki.Revision](t)(s.History(ctx, wiki.HistoryQuery{PageID: r.Page.ID, Limit: 2}))
	if len(h) != 2 || h[0].ID != ids[4] || h[1].ID != ids[3] {
		t.Fatalf("first page = %+v", h)
	}
	if h[0].Text != "" || h[0].Size != 5 || h[0].ParentSize != 4 || h[0].Title != "A" || h[0].SHA1 == "" {
		t.Fatalf("listing entry = %+v", h[0])
	}
	h = must[[]wiki.Revision](t)(s.History(ctx, wiki.HistoryQuery{PageID: r.Page.ID, Before: h[1].ID, Limit: 10}))
	if len(h) != 3 || h[0].ID != ids[2] || h[2].ID != ids[0] || h[2].ParentSize != 0 {
		t.Fatalf("second page = %+v", h)
	}
}

func testTags(t *testing.T, s wiki.Store) {
	first := create(t, s, "T", "one")
	res := must[wiki.SaveResult](t)(s.SavePage(ctx, wiki.SaveRequest{Title: "T", Text: "two", UserName: "Alice",
		BaseRevID: first.Revision.ID, Time: at(2), Tags: []string{wiki.TagUndo, "Bad Tag", wiki.TagUndo, wiki.TagRollback}}))
	want := []string{wiki.TagUndo, wiki.TagRollback} // invalid and repeated tags are dropped
	if !slices.Equal(res.Revision.Tags, want) {
		t.Fatalf("saved revision tags = %q, want %q", res.Revision.Tags, want)
	}
	if got := must[wiki.Revision](t)(s.FindRevision(ctx, res.Revision.ID)); !slices.Equal(got.Tags, want) {
		t.Fatalf("found revision tags = %q, want %q", got.Tags, want)
	}
	h := must[[]wiki.Revision](t)(s.History(ctx, wiki.HistoryQuery{PageID: res.Page.ID, Limit: 10}))
	if len(h) != 2 || !slices.Equal(h[0].Tags, want) || h[1].Tags != nil {
		t.Fatalf("history = %+v", h)
	}
	rc := must[[]wiki.Change](t)(s.RecentChanges(ctx, wiki.ChangeQuery{Limit: 10}))
	if len(rc) != 2 || !slices.Equal(rc[0].Tags, want) || rc[1].Tags != nil {
		t.Fatalf("recent changes = %+v", rc)
	}
	// A null edit stores nothing, tags included.
	null := must[wiki.SaveResult](t)(s.SavePage(ctx, wiki.SaveRequest{Title: "T", Text: "two", UserName: "Bob",
		BaseRevID: res.Revision.ID, Time: at(3), Tags: []string{"other"}}))
	if !null.Unchanged || len(must[[]wiki.Change](t)(s.RecentChanges(ctx, wiki.ChangeQuery{Limit: 10}))) != 2 {
		t.Fatalf("null edit = %+v", null)
	}
	// Imports keep tags too.
	imp := must[[]wiki.SaveResult](t)(s.ImportPages(ctx, []wiki.SaveRequest{{Title: "I", Text: "i", UserName: "Imp", Time: at(4), Tags: []string{wiki.TagRollback}}}))
	if got := must[wiki.Revision](t)(s.FindRevision(ctx, imp[0].Revision.ID)); !slices.Equal(got.Tags, []string{wiki.TagRollback}) {
		t.Fatalf("imported revision tags = %q", got.Tags)
	}
}

func testPageStats(t *testing.T, s wiki.Store) {
	users := []string{"Alice", "Bob", "Alice", "Carol"}
	var res wiki.SaveResult
	for i, u := range users {
		var err error
		res, err = s.SavePage(ctx, wiki.SaveRequest{Title: "Target", Text: strings.Repeat("t", i+1), UserName: u,
			BaseRevID: res.Revision.ID, Time: at(i), Links: wiki.LinkSet{Links: []wiki.Title{"X", "Y"}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	save(t, s, "Linker", 0, "l", wiki.LinkSet{Links: []wiki.Title{"Target"}})
	save(t, s, "Redir", 0, "r", wiki.LinkSet{Redirect: "Target"})
	save(t, s, "Gone", 0, "g", wiki.LinkSet{Links: []wiki.Title{"Target"}})
	if err := s.DeletePage(ctx, "Gone", 0, "Admin", "x", at(9)); err != nil {
		t.Fatal(err)
	}
	st := must[wiki.PageStats](t)(s.PageStats(ctx, res.Page.ID, "Target"))
	if st.Revisions != 4 || st.Editors != 3 || st.Backlinks != 2 || st.Redirects != 1 || st.LinksOut != 2 {
		t.Fatalf("figures = %+v", st)
	}
	if st.First.UserName != "Alice" || st.First.ParentID != 0 || !st.First.Time.Equal(at(0)) || st.First.Text != "" {
		t.Fatalf("first revision = %+v", st.First)
	}
	_, err := s.PageStats(ctx, 999999, "Nothing")
	wantErr(t, err, wiki.ErrNotFound)
}

func testLatestRevisions(t *testing.T, s wiki.Store) {
	a := create(t, s, "A", "a")
	a2 := save(t, s, "A", a.Revision.ID, "aa", wiki.LinkSet{})
	b := create(t, s, "B", "b")
	if err := s.DeletePage(ctx, "B", 0, "Admin", "x", at(3)); err != nil {
		t.Fatal(err)
	}
	got := must[map[int64]int64](t)(s.LatestRevisions(ctx, []int64{a.Page.ID, b.Page.ID, 999999}))
	if len(got) != 1 || got[a.Page.ID] != a2.Revision.ID {
		t.Fatalf("latest revisions = %v, want only %d → %d", got, a.Page.ID, a2.Revision.ID)
	}
	if got := must[map[int64]int64](t)(s.LatestRevisions(ctx, nil)); len(got) != 0 {
		t.Fatalf("latest revisions of none = %v", got)
	}
}

func testRecentChanges(t *testing.T, s wiki.Store) {
	for i := range 5 {
		user := "Alice"
		if i%2 == 1 {
			user = "Bob"
		}
		_, err := s.SavePage(ctx, wiki.SaveRequest{Title: wiki.Title(fmt.Sprintf("P%d", i)), Text: strings.Repeat("x", i+1),
			UserName: user, Summary: "s", Time: at(i)})
		if err != nil {
			t.Fatal(err)
		}
	}
	first := create(t, s, "E", "e")
	save(t, s, "E", first.Revision.ID, "ee", wiki.LinkSet{})
	rc := must[[]wiki.Change](t)(s.RecentChanges(ctx, wiki.ChangeQuery{Limit: 3}))
	if len(rc) != 3 || rc[0].Kind != wiki.ChangeEdit || rc[0].Size != 2 || rc[0].OldSize != 1 || rc[0].OldRevID != first.Revision.ID {
		t.Fatalf("first page = %+v", rc)
	}
	if rc[1].Kind != wiki.ChangeNew || rc[1].OldSize != 0 || rc[2].Title != "P4" || !rc[2].Time.Equal(at(4)) {
		t.Fatalf("first page = %+v", rc)
	}
	rest := must[[]wiki.Change](t)(s.RecentChanges(ctx, wiki.ChangeQuery{Before: rc[2].ID, Limit: 10}))
	if len(rest) != 4 || rest[0].Title != "P3" || rest[3].Title != "P0" {
		t.Fatalf("second page = %+v", rest)
	}
	bob := must[[]wiki.Change](t)(s.RecentChanges(ctx, wiki.ChangeQuery{UserName: "Bob"}))
	if len(bob) != 2 || bob[0].Title != "P3" || bob[1].Title != "P1" {
		t.Fatalf("Bob's contributions = %+v", bob)
	}
}

func testNamespaceFilters(t *testing.T, s wiki.Store) {
	for _, n := range []string{"Apple", "Talk:Apple", "User:Bob", "User talk:Bob", "Project:About", "Template:Box",
		"Help:Start", "Talkative", "Category:Fruit", "Zebra", "Talk:Zebra", "Gone talk"} {
		create(t, s, n, "banana split for "+n)
	}
	create(t, s, "Talk:Gone", "banana split for a page deleted")
	if err := s.DeletePage(ctx, "Talk:Gone", 0, "M", "", at(2)); err != nil {
		t.Fatal(err)
	}
	// Titles as older versions stored them, when Wikid: was the project
	// namespace and Image: was no namespace (the store keeps what it is
	// given): recent changes read a title's namespace from its prefix.
	for _, n := range []string{"Wikid:Old", "Image:old.png"} {
		if _, err := s.SavePage(ctx, wiki.SaveRequest{Title: wiki.Title(n), Text: "banana split", UserName: "Alice", Time: at(3)}); err != nil {
			t.Fatal(err)
		}
	}
	in := func(ns ...string) []string { return ns }

	t.Run("all pages", func(t *testing.T) {
		for _, tc := range []struct {
			q    wiki.ListQuery
			want string
		}{
			// The old titles' ns column is what the title is today (Project,
			// File), their titles not in its normal form: wikid fix-titles
			// moves such pages.
			{wiki.ListQuery{Namespaces: in("")}, "Apple,Gone talk,Talkative,Zebra"},
			{wiki.ListQuery{Namespaces: in("Talk")}, "Talk:Apple,Talk:Zebra"},
			{wiki.ListQuery{Namespaces: in("User", "User talk")}, "User talk:Bob,User:Bob"},
			{wiki.ListQuery{Namespaces: in("Project")}, "Project:About"},
			{wiki.ListQuery{Namespaces: in("File")}, ""},
			{wiki.ListQuery{Namespaces: in("Talk"), Limit: 1}, "Talk:Apple"},
			{wiki.ListQuery{Namespaces: in("Talk"), After: "Talk:Apple"}, "Talk:Zebra"},
			{wiki.ListQuery{Namespaces: in("Talk"), From: "Talk:B"}, "Talk:Zebra"},
			{wiki.ListQuery{Namespaces: in("Talk"), Prefix: "Talk:Z"}, "Talk:Zebra"},
			{wiki.ListQuery{Namespaces: in("Talk"), Prefix: "T"}, "Talk:Apple,Talk:Zebra"},
			{wiki.ListQuery{Namespaces: in(""), Prefix: "Talk"}, "Talkative"},
			{wiki.ListQuery{Namespaces: in("Talk"), Prefix: "User"}, ""},
			{wiki.ListQuery{Namespaces: in("Talk"), Prefix: "Zebra"}, ""},
		} {
			if got := titles(must[[]wiki.Page](t)(s.AllPages(ctx, tc.q))); got != tc.want {
				t.Errorf("%+v: %s, want %s", tc.q, got, tc.want)
			}
		}
	})

	t.Run("recent changes", func(t *testing.T) {
		changed := func(q wiki.ChangeQuery) string {
			t.Helper()
			var b []string
			for _, c := range must[[]wiki.Change](t)(s.RecentChanges(ctx, q)) {
				b = append(b, string(c.Title))
			}
			slices.Sort(b)
			return strings.Join(slices.Compact(b), ",")
		}
		for _, tc := range []struct {
			q    wiki.ChangeQuery
			want string
		}{
			{wiki.ChangeQuery{Namespaces: in("")}, "Apple,Gone talk,Talkative,Zebra"},
			// Talk:Gone's deletion; its creation, by Alice, is archived.
			{wiki.ChangeQuery{Namespaces: in("Talk")}, "Talk:Apple,Talk:Gone,Talk:Zebra"},
			{wiki.ChangeQuery{Namespaces: in("Project")}, "Project:About,Wikid:Old"},
			{wiki.ChangeQuery{Namespaces: in("File")}, "Image:old.png"},
			{wiki.ChangeQuery{Namespaces: in("User talk", "Template")}, "Template:Box,User talk:Bob"},
			{wiki.ChangeQuery{Namespaces: in("", "Help")}, "Apple,Gone talk,Help:Start,Talkative,Zebra"},
			{wiki.ChangeQuery{Namespaces: in("Talk"), UserName: "Alice"}, "Talk:Apple,Talk:Zebra"},
			{wiki.ChangeQuery{Namespaces: in("Talk"), UserName: "Bob"}, ""},
			{wiki.ChangeQuery{Namespaces: in("Category talk")}, ""},
		} {
			if got := changed(tc.q); got != tc.want {
				t.Errorf("%+v: %s, want %s", tc.q, got, tc.want)
			}
		}
		// Paging stays within the namespace.
		first := must[[]wiki.Change](t)(s.RecentChanges(ctx, wiki.ChangeQuery{Namespaces: in("Talk"), Limit: 1}))
		if len(first) != 1 {
			t.Fatalf("first Talk change: %+v", first)
		}
		rest := must[[]wiki.Change](t)(s.RecentChanges(ctx, wiki.ChangeQuery{Namespaces: in("Talk"), Before: first[0].ID}))
		for _, c := range rest {
			if !strings.HasPrefix(string(c.Title), "Talk:") || c.ID >= first[0].ID {
				t.Errorf("after change %d: %+v", first[0].ID, c)
			}
		}
		// Page by page through several namespaces, one an alias's (File,
		// as Image:), the changes come newest first, as in one list.
		q := wiki.ChangeQuery{Namespaces: in("Talk", "File", "Project")}
		var all, paged []string
		for _, c := range must[[]wiki.Change](t)(s.RecentChanges(ctx, q)) {
			all = append(all, fmt.Sprint(c.ID, " ", c.Title))
		}
		for q.Limit = 2; ; {
			page := must[[]wiki.Change](t)(s.RecentChanges(ctx, q))
			for _, c := range page {
				paged = append(paged, fmt.Sprint(c.ID, " ", c.Title))
			}
			if len(page) < q.Limit {
				break
			}
			q.Before = page[len(page)-1].ID
		}
		if len(all) != 6 || !slices.IsSortedFunc(all, func(a, b string) int { return -cmpID(a, b) }) || !slices.Equal(all, paged) {
			t.Errorf("Talk, File and Project: all %q, paged %q", all, paged)
		}
	})

	t.Run("search", func(t *testing.T) {
		for _, tc := range []struct {
			q    wiki.SearchQuery
			want string
		}{
			// A rare word: every match is ranked (BM25).
			{wiki.SearchQuery{Text: "banana", Namespaces: in("Talk")}, "Talk:Apple,Talk:Zebra"},
			// A prefix: the newest matches are read.
			{wiki.SearchQuery{Text: "bana*", Namespaces: in("Talk")}, "Talk:Apple,Talk:Zebra"},
			{wiki.SearchQuery{Text: "banana split", Namespaces: in("User", "Template")}, "Template:Box,User:Bob"},
			{wiki.SearchQuery{Text: "banana", Namespaces: in("File")}, ""},
			// Title matches, and the page titled as the query, stay in the namespace.
			{wiki.SearchQuery{Text: "apple", Namespaces: in("Talk")}, "Talk:Apple"},
			{wiki.SearchQuery{Text: "apple", Namespaces: in("")}, "Apple"},
			{wiki.SearchQuery{Text: "apple"}, "Apple,Talk:Apple"},
			{wiki.SearchQuery{Text: "zebra", Namespaces: in("Help")}, ""},
		} {
			tc.q.Limit = 20
			hits, err := s.Search(ctx, tc.q)
			if err != nil {
				t.Fatalf("%+v: %v", tc.q, err)
			}
			got := strings.Split(hitTitles(hits), ",")
			slices.Sort(got)
			if g := strings.Join(got, ","); g != tc.want {
				t.Errorf("%+v: %s, want %s", tc.q, g, tc.want)
			}
		}
		// The page titled as the query comes first.
		if hits := must[[]wiki.SearchHit](t)(s.Search(ctx, wiki.SearchQuery{Text: "apple", Limit: 20})); len(hits) == 0 || hits[0].Title != "Apple" {
			t.Errorf("apple: %s, want Apple first", hitTitles(hits))
		}
		page2 := must[[]wiki.SearchHit](t)(s.Search(ctx, wiki.SearchQuery{Text: "banana", Namespaces: in("Talk"), Offset: 1, Limit: 1}))
		if len(page2) != 1 || !strings.HasPrefix(string(page2[0].Title), "Talk:") {
			t.Errorf("second Talk hit: %s", hitTitles(page2))
		}
	})
}

func testAllPages(t *testing.T, s wiki.Store) {
	for _, n := range []string{"Banana", "Apple", "Apricot", "Help:Start", "한국어", "Avocado", "Gone"} {
		create(t, s, n, n)
	}
	if err := s.DeletePage(ctx, "Gone", 0, "M", "", at(2)); err != nil {
		t.Fatal(err)
	}
	all := must[[]wiki.Page](t)(s.AllPages(ctx, wiki.ListQuery{}))
	if got := titles(all); got != "Apple,Apricot,Avocado,Banana,Help:Start,한국어" {
		t.Fatalf("all = %s", got)
	}
	p1 := must[[]wiki.Page](t)(s.AllPages(ctx, wiki.ListQuery{Prefix: "A", Limit: 2}))
	if titles(p1) != "Apple,Apricot" {
		t.Fatalf("page 1 = %s", titles(p1))
	}
	p2 := must[[]wiki.Page](t)(s.AllPages(ctx, wiki.ListQuery{Prefix: "A", From: "Avocado", Limit: 2}))
	if titles(p2) != "Avocado" {
		t.Fatalf("page 2 = %s", titles(p2))
	}
	if ps := must[[]wiki.Page](t)(s.AllPages(ctx, wiki.ListQuery{Prefix: "한"})); titles(ps) != "한국어" {
		t.Fatalf("Korean prefix = %s", titles(ps))
	}
	if ps := must[[]wiki.Page](t)(s.AllPages(ctx, wiki.ListQuery{From: "B"})); titles(ps) != "Banana,Help:Start,한국어" {
		t.Fatalf("from B = %s", titles(ps))
	}
	if ps := must[[]wiki.Page](t)(s.AllPages(ctx, wiki.ListQuery{Prefix: "A", After: "Apricot"})); titles(ps) != "Avocado" {
		t.Fatalf("prefix A after Apricot = %s", titles(ps))
	}
}

func testLinks(t *testing.T, s wiki.Store) {
	cat := wiki.Title("Category:Fruit")
	save(t, s, "Apple", 0, "a", wiki.LinkSet{Links: []wiki.Title{"Tree", "Seed"}, Categories: []wiki.Title{cat}})
	save(t, s, "Cherry", 0, "c", wiki.LinkSet{Links: []wiki.Title{"Tree", "Tree"}, Categories: []wiki.Title{cat, "Category:Red"}})
	save(t, s, "Banana", 0, "b", wiki.LinkSet{Categories: []wiki.Title{cat}})
	save(t, s, "Trees", 0, "#REDIRECT [[Tree]]", wiki.LinkSet{Redirect: "Tree", Links: []wiki.Title{"Tree"}})
	save(t, s, "Durian", 0, "d", wiki.LinkSet{Links: []wiki.Title{"Tree"}, Categories: []wiki.Title{cat}})
	if err := s.DeletePage(ctx, "Durian", 0, "M", "", at(2)); err != nil {
		t.Fatal(err)
	}
	if bl := must[[]wiki.Page](t)(s.Backlinks(ctx, "Tree", wiki.ListQuery{})); titles(bl) != "Apple,Cherry,Trees" {
		t.Fatalf("backlinks = %s", titles(bl))
	}
	if bl := must[[]wiki.Page](t)(s.Backlinks(ctx, "Tree", wiki.ListQuery{From: "B", Limit: 1})); titles(bl) != "Cherry" {
		t.Fatalf("backlinks page = %s", titles(bl))
	}
	// After is exclusive: the cursor past the last title read.
	if bl := must[[]wiki.Page](t)(s.Backlinks(ctx, "Tree", wiki.ListQuery{After: "Apple", Limit: 1})); titles(bl) != "Cherry" {
		t.Fatalf("backlinks after Apple = %s", titles(bl))
	}
	if p := must[wiki.Page](t)(s.FindPage(ctx, "Trees")); p.Redirect != "Tree" {
		t.Fatalf("redirect = %q", p.Redirect)
	}
	if m := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, cat, wiki.CategoryQuery{})); members(m) != "Apple,Banana,Cherry" {
		t.Fatalf("members = %s", members(m))
	}
	if m := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, cat, wiki.CategoryQuery{Limit: 2})); members(m) != "Apple,Banana" {
		t.Fatalf("members page = %s", members(m))
	}
	c := must[wiki.Page](t)(s.FindPage(ctx, "Cherry"))
	if cats := must[[]wiki.CategoryLink](t)(s.PageCategories(ctx, c.ID)); len(cats) != 2 || cats[0].Category != cat || cats[1].Category != "Category:Red" {
		t.Fatalf("categories = %v", cats)
	}
	// An edit replaces the link set.
	save(t, s, "Cherry", c.LatestID, "c2", wiki.LinkSet{})
	if bl := must[[]wiki.Page](t)(s.Backlinks(ctx, "Tree", wiki.ListQuery{})); titles(bl) != "Apple,Trees" {
		t.Fatalf("backlinks after edit = %s", titles(bl))
	}
	if cats := must[[]wiki.CategoryLink](t)(s.PageCategories(ctx, c.ID)); len(cats) != 0 {
		t.Fatalf("categories after edit = %v", cats)
	}
}

func searchTitles(t *testing.T, s wiki.Store, q string) []wiki.SearchHit {
	t.Helper()
	hits, err := s.Search(ctx, wiki.SearchQuery{Text: q, Limit: 20})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	for i, h := range hits {
		// What the engine does: the snippet from the text readers see.
		hits[i].Snippet = store.Snippet(h.Source, store.ParseQuery(q))
		p, err := s.FindPage(ctx, h.Title)
		if err != nil || p.ID != h.PageID {
			t.Fatalf("search %q: hit %q has page id %d, the page's is %d (%v)", q, h.Title, h.PageID, p.ID, err)
		}
	}
	return hits
}

func hitTitles(hits []wiki.SearchHit) string {
	var b []string
	for _, h := range hits {
		b = append(b, string(h.Title))
	}
	return strings.Join(b, ",")
}

func marked(s string) []string {
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

func testSearchEnglish(t *testing.T, s wiki.Store) {
	create(t, s, "Gardening", "How to grow tomatoes and potatoes in a small garden.")
	create(t, s, "Tomato", "The tomato is a red fruit.")
	create(t, s, "Cooking", "Recipes with tomatoes: sauce, soup. "+strings.Repeat("Filler words here. ", 40)+"Tomato again at the end.")
	hits := searchTitles(t, s, "tomato")
	if len(hits) != 3 || hits[0].Title != "Tomato" || !hits[0].TitleMatch || hits[1].TitleMatch {
		t.Fatalf("hits = %+v", hits)
	}
	for _, h := range hits {
		m := marked(h.Snippet)
		if len(m) == 0 || !strings.HasPrefix(strings.ToLower(m[0]), "tomato") {
			t.Errorf("snippet of %s = %q", h.Title, h.Snippet)
		}
		if n := len([]rune(h.Snippet)); n > 200 {
			t.Errorf("snippet of %s is %d characters", h.Title, n)
		}
	}
	if hits := searchTitles(t, s, "grow potatoes"); hitTitles(hits) != "Gardening" {
		t.Fatalf("two terms = %s", hitTitles(hits))
	}
	if hits := searchTitles(t, s, "GARDEN"); hitTitles(hits) != "Gardening" {
		t.Fatalf("upper case = %s", hitTitles(hits))
	}
	if hits := searchTitles(t, s, "a red"); hitTitles(hits) != "Tomato" {
		t.Fatalf("short terms = %s", hitTitles(hits))
	}
	create(t, s, "Fox", "The quick brown fox jumps.")
	if hits := searchTitles(t, s, `"quick brown"`); hitTitles(hits) != "Fox" {
		t.Fatalf("phrase = %s", hitTitles(hits))
	}
	if hits := searchTitles(t, s, `"brown quick"`); len(hits) != 0 {
		t.Fatalf("a phrase in another order matched %s", hitTitles(hits))
	}
	if hits := searchTitles(t, s, `brown quick`); hitTitles(hits) != "Fox" {
		t.Fatalf("words in another order = %s", hitTitles(hits))
	}
	if hits := searchTitles(t, s, "nothing-like-this"); len(hits) != 0 {
		t.Fatalf("no match = %+v", hits)
	}
	page2, err := s.Search(ctx, wiki.SearchQuery{Text: "tomato", Offset: 1, Limit: 1})
	if err != nil || len(page2) != 1 || page2[0].Title != hits[1].Title {
		t.Fatalf("offset 1 = %+v, %v", page2, err)
	}
	if hits := searchTitles(t, s, ""); len(hits) != 0 {
		t.Fatalf("empty query = %+v", hits)
	}
}

func testSearchCJK(t *testing.T, s wiki.Store) {
	create(t, s, "한국어 위키", "위키는 누구나 편집할 수 있는 웹사이트입니다")
	create(t, s, "다른 문서", "이 문서는 위키에 관한 것이 아닙니다")
	create(t, s, "中文", "维基百科是一个自由的百科全书")
	create(t, s, "日本語", "ウィキペディアは誰でも編集できるフリー百科事典です")
	create(t, s, "Games", "ポケモンGO and ポケモンカード, 東京-2020, 東京 大阪")
	for _, tc := range []struct{ q, want, mark string }{
		// A CJK run followed by a word in the same query term: its last
		// character stays in the query, as in the text.
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
		hits := searchTitles(t, s, tc.q)
		if got := hitTitles(hits); got != tc.want {
			t.Errorf("search %q = %s, want %s", tc.q, got, tc.want)
			continue
		}
		if m := marked(hits[0].Snippet); len(m) == 0 || m[0] != tc.mark {
			t.Errorf("search %q: snippet %q, want %q marked", tc.q, hits[0].Snippet, tc.mark)
		}
	}
	if hits := searchTitles(t, s, "위키"); !hits[0].TitleMatch || hits[1].TitleMatch {
		t.Errorf("title match flags = %+v", hits)
	}
}

func testSearchSyntax(t *testing.T, s wiki.Store) {
	create(t, s, "Syntax", `He said "hello" (twice) AND NEAR the * star; 100% of a_b \ c`)
	for _, q := range []string{`"`, `""`, `"hello`, `hello"`, `*`, `hel*`, `(`, `)`, `(twice)`, `AND`, `NEAR`, `NEAR(a b)`,
		`OR`, `NOT`, `-`, `^`, `:`, `title:x`, `{title}`, `'`, `%`, `_`, `\`, `a AND`, `"a" OR "b"`, `100%`, `a_b`, "\x00", "\uE000"} {
		if _, err := s.Search(ctx, wiki.SearchQuery{Text: q, Limit: 10}); err != nil {
			t.Errorf("search %q: %v", q, err)
		}
	}
	if hits := searchTitles(t, s, `"hello"`); hitTitles(hits) != "Syntax" {
		t.Errorf(`search "hello" (with quotes) = %s`, hitTitles(hits))
	}
	create(t, s, "Other", "percent 100 and ab")
	// Words are letters and digits: punctuation separates them and is not
	// searched for.
	if hits := searchTitles(t, s, `100%`); hitTitles(hits) != "Other,Syntax" && hitTitles(hits) != "Syntax,Other" {
		t.Errorf(`search 100%% = %s`, hitTitles(hits))
	}
	if hits := searchTitles(t, s, `%`); len(hits) != 0 {
		t.Errorf(`search %% = %s`, hitTitles(hits))
	}
	if hits := searchTitles(t, s, `a_b`); hitTitles(hits) != "Syntax" {
		t.Errorf(`search a_b = %s`, hitTitles(hits))
	}
}

func testSearchFollows(t *testing.T, s wiki.Store) {
	r := create(t, s, "Old Name", "searchable content here")
	if hits := searchTitles(t, s, "searchable"); hitTitles(hits) != "Old Name" {
		t.Fatalf("before move = %s", hitTitles(hits))
	}
	save(t, s, "Old Name", r.Revision.ID, "replaced words", wiki.LinkSet{})
	if hits := searchTitles(t, s, "searchable"); len(hits) != 0 {
		t.Fatalf("after edit = %s", hitTitles(hits))
	}
	moved := must[wiki.Page](t)(s.MovePage(ctx, wiki.MoveRequest{From: "Old Name", To: "New Name", UserName: "M", Time: at(3)}))
	index(t, s, moved.ID)
	if hits := searchTitles(t, s, "replaced"); hitTitles(hits) != "New Name" {
		t.Fatalf("after move = %s", hitTitles(hits))
	}
	if err := s.DeletePage(ctx, "New Name", 0, "M", "", at(4)); err != nil {
		t.Fatal(err)
	}
	if hits := searchTitles(t, s, "replaced"); len(hits) != 0 {
		t.Fatalf("after delete = %s", hitTitles(hits))
	}
	if hits := searchTitles(t, s, "replaced"); len(hits) != 0 {
		t.Fatalf("after delete, before any job = %s", hitTitles(hits))
	}
	index(t, s, moved.ID) // a job that runs after the delete keeps it out
	must[wiki.Page](t)(s.UndeletePage(ctx, "New Name", 0, "M", "", at(5)))
	index(t, s, moved.ID)
	index(t, s, moved.ID) // twice: the same entry
	if hits := searchTitles(t, s, "replaced"); hitTitles(hits) != "New Name" {
		t.Fatalf("after undelete = %s", hitTitles(hits))
	}
}

func testSearchText(t *testing.T, s wiki.Store) {
	src := "Some **bold** words and a [[Target|link label]]."
	plain := strings.NewReplacer("**", "", "[[Target|", "", "]]", "").Replace
	r, err := s.SavePage(ctx, wiki.SaveRequest{Title: "Markup", Text: src, UserName: "Alice", SearchText: plain(src), Time: at(1)})
	if err != nil {
		t.Fatal(err)
	}
	if hits := searchTitles(t, s, "Target"); len(hits) != 0 {
		t.Errorf("the markup is indexed: %+v", hits)
	}
	hits := searchTitles(t, s, "link label")
	if hitTitles(hits) != "Markup" || hits[0].Source != src {
		t.Fatalf("search = %+v", hits)
	}
	// A long page's hit carries the start of its text that a snippet is
	// made from, whole characters, not megabytes of text per hit.
	long := "Zebra " + strings.Repeat("ab é ", 3*store.SnippetScan/6)
	if _, err := s.SavePage(ctx, wiki.SaveRequest{Title: "Long", Text: long, UserName: "Alice", SearchText: long, Time: at(1)}); err != nil {
		t.Fatal(err)
	}
	hits = searchTitles(t, s, "zebra")
	want := store.SnippetSource(long, store.ParseQuery("zebra"))
	if hitTitles(hits) != "Long" || !strings.HasPrefix(long, hits[0].Source) || !utf8.ValidString(hits[0].Source) ||
		len(hits[0].Source) < store.SnippetHead-utf8.UTFMax || len(hits[0].Source) == len(long) ||
		store.SnippetSource(hits[0].Source, store.ParseQuery("zebra")) != want {
		t.Fatalf("search of a long page = %s, %d bytes of %d", hitTitles(hits), len(hits[0].Source), len(long))
	}
	// A match near the end of what is searched keeps its whole line.
	late := strings.Repeat("x ", (store.SnippetScan-300)/2) + "Quagga " + strings.Repeat("lorem ", 300) + "end\n" + strings.Repeat("y ", store.SnippetScan)
	if _, err := s.SavePage(ctx, wiki.SaveRequest{Title: "Late", Text: late, UserName: "Alice", SearchText: late, Time: at(1)}); err != nil {
		t.Fatal(err)
	}
	hits = searchTitles(t, s, "quagga")
	q := store.ParseQuery("quagga")
	if hitTitles(hits) != "Late" || store.SnippetSource(hits[0].Source, q) != store.SnippetSource(late, q) {
		t.Fatalf("search of a late match = %s, %d bytes of %d", hitTitles(hits), len(hits[0].Source), len(late))
	}
	// A job finds the entry current: it does not ask for the text.
	if err := s.UpdateSearchIndex(ctx, r.Page.ID, func(string, wiki.ContentModel) string {
		t.Error("a current entry's text was asked for")
		return ""
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeletePage(ctx, "Markup", 0, "M", "", at(2)); err != nil {
		t.Fatal(err)
	}
	err = s.UpdateSearchIndex(ctx, r.Page.ID, func(string, wiki.ContentModel) string {
		t.Error("a deleted page's text was asked for")
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
}

func testRandomCount(t *testing.T, s wiki.Store) {
	if _, err := s.RandomPage(ctx); !errors.Is(err, wiki.ErrNotFound) {
		t.Fatalf("random of empty wiki: %v", err)
	}
	if n := must[int](t)(s.PageCount(ctx)); n != 0 {
		t.Fatalf("count = %d", n)
	}
	create(t, s, "A", "a")
	create(t, s, "B", "b")
	create(t, s, "Help:H", "h")
	save(t, s, "R", 0, "#REDIRECT [[A]]", wiki.LinkSet{Redirect: "A"})
	if err := s.DeletePage(ctx, "B", 0, "M", "", at(2)); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if got := must[wiki.Title](t)(s.RandomPage(ctx)); got != "A" {
			t.Fatalf("random = %q, want the only live article A", got)
		}
	}
	if n := must[int](t)(s.PageCount(ctx)); n != 3 {
		t.Fatalf("count = %d, want 3", n)
	}
}

func testUsers(t *testing.T, s wiki.Store) {
	u, err := s.CreateUser(ctx, wiki.User{Name: "Alice", PasswordHash: "h1", Group: wiki.GroupAdmin, Created: t0})
	if err != nil || u.ID == 0 {
		t.Fatalf("create = %+v, %v", u, err)
	}
	for _, name := range []string{"Alice", "alice", "ALICE"} {
		_, err := s.CreateUser(ctx, wiki.User{Name: name, PasswordHash: "x", Group: wiki.GroupUser})
		wantErr(t, err, wiki.ErrExists)
	}
	must[wiki.User](t)(s.CreateUser(ctx, wiki.User{Name: "Ärger", PasswordHash: "x", Group: wiki.GroupUser}))
	_, err = s.CreateUser(ctx, wiki.User{Name: "ärger", PasswordHash: "x", Group: wiki.GroupUser})
	wantErr(t, err, wiki.ErrExists)

	got := must[wiki.User](t)(s.FindUser(ctx, u.ID))
	if got != u {
		t.Fatalf("find = %+v, want %+v", got, u)
	}
	if got := must[wiki.User](t)(s.FindUserByName(ctx, "aLiCe")); got.ID != u.ID {
		t.Fatalf("find by name = %+v", got)
	}
	_, err = s.FindUserByName(ctx, "Nobody")
	wantErr(t, err, wiki.ErrNotFound)
	_, err = s.FindUser(ctx, 9999)
	wantErr(t, err, wiki.ErrNotFound)

	u.PasswordHash, u.Group = "h2", wiki.GroupUser
	if err := s.UpdateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if got := must[wiki.User](t)(s.FindUser(ctx, u.ID)); got.PasswordHash != "h2" || got.Group != wiki.GroupUser {
		t.Fatalf("after update = %+v", got)
	}
	wantErr(t, s.UpdateUser(ctx, wiki.User{ID: 9999, Name: "Ghost"}), wiki.ErrNotFound)
	u.Name = "ärger"
	wantErr(t, s.UpdateUser(ctx, u), wiki.ErrExists)
	if n := must[int](t)(s.CountUsers(ctx)); n != 2 {
		t.Fatalf("count = %d", n)
	}
}

func testUserLookAlike(t *testing.T, s wiki.Store) {
	must[wiki.User](t)(s.CreateUser(ctx, wiki.User{Name: "Admin", PasswordHash: "x"}))
	for _, name := range []string{"\u0410dmin", "Adrnin", "\u0410DMIN"} {
		_, err := s.CreateUser(ctx, wiki.User{Name: name, PasswordHash: "x"})
		if wiki.KindOf(err) != wiki.KindConflict || errors.Is(err, wiki.ErrExists) ||
			wiki.Message(err) != "The name “"+name+"” is too similar to the existing account “Admin”. Choose another name." {
			t.Fatalf("create %q: %v; want the look-alike error naming Admin", name, err)
		}
	}
	_, err := s.CreateUser(ctx, wiki.User{Name: "admin", PasswordHash: "x"})
	wantErr(t, err, wiki.ErrExists)
	must[wiki.User](t)(s.CreateUser(ctx, wiki.User{Name: "Administrator", PasswordHash: "x"}))
	if n := must[int](t)(s.CountUsers(ctx)); n != 2 {
		t.Fatalf("count = %d, want 2", n)
	}
}

func testUserLookAlikeConcurrent(t *testing.T, s wiki.Store) {
	names := []string{"Olga", "\u039flga", "\u041elga", "0lga", "OLGA", "Оlgа"}
	var wg sync.WaitGroup
	errs := make([]error, len(names))
	for i, name := range names {
		wg.Go(func() {
			_, errs[i] = s.CreateUser(ctx, wiki.User{Name: name, PasswordHash: "x"})
		})
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case wiki.KindOf(err) != wiki.KindConflict:
			t.Errorf("create %q: %v", names[i], err)
		}
	}
	if n := must[int](t)(s.CountUsers(ctx)); won != 1 || n != 1 {
		t.Fatalf("%d registrations succeeded, %d users stored; want 1", won, n)
	}
}

func testSessionsTokens(t *testing.T, s wiki.Store) {
	u := must[wiki.User](t)(s.CreateUser(ctx, wiki.User{Name: "Alice", PasswordHash: "h", Group: wiki.GroupUser}))
	nowT := time.Now().UTC().Truncate(time.Millisecond)
	live := wiki.Session{ID: "live", UserID: u.ID, CSRF: "c1", Created: nowT, Expires: nowT.Add(time.Hour)}
	old := wiki.Session{ID: "old", UserID: u.ID, CSRF: "c2", Created: nowT.Add(-2 * time.Hour), Expires: nowT.Add(-time.Hour)}
	for _, ss := range []wiki.Session{live, old} {
		if err := s.CreateSession(ctx, ss); err != nil {
			t.Fatal(err)
		}
	}
	if got := must[wiki.Session](t)(s.FindSession(ctx, "live")); got != live {
		t.Fatalf("session = %+v, want %+v", got, live)
	}
	_, err := s.FindSession(ctx, "old")
	wantErr(t, err, wiki.ErrNotFound)
	_, err = s.FindSession(ctx, "missing")
	wantErr(t, err, wiki.ErrNotFound)
	if n := must[int](t)(s.DeleteExpiredSessions(ctx, nowT)); n != 1 {
		t.Fatalf("deleted %d expired sessions, want 1", n)
	}
	if err := s.DeleteSession(ctx, "live"); err != nil {
		t.Fatal(err)
	}
	_, err = s.FindSession(ctx, "live")
	wantErr(t, err, wiki.ErrNotFound)
	if err := s.DeleteSession(ctx, "live"); err != nil {
		t.Fatalf("deleting a missing session: %v", err)
	}

	tok := wiki.Token{ID: "abc", UserID: u.ID, Name: "bot", Created: nowT, Expires: nowT.Add(time.Hour)}
	if err := s.CreateToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if got := must[wiki.Token](t)(s.FindToken(ctx, "abc")); got != tok {
		t.Fatalf("token = %+v, want %+v", got, tok)
	}
	_, err = s.FindToken(ctx, "nope")
	wantErr(t, err, wiki.ErrNotFound)

	// Revoking a token ends the sessions started with it, and only those.
	tok2 := wiki.Token{ID: "def", UserID: u.ID, Name: "bot2", Created: nowT}
	if err := s.CreateToken(ctx, tok2); err != nil {
		t.Fatal(err)
	}
	for _, ss := range []wiki.Session{
		{ID: "password", UserID: u.ID, CSRF: "c3", Created: nowT, Expires: nowT.Add(time.Hour)},
		{ID: "by-abc", UserID: u.ID, CSRF: "c4", Created: nowT, Expires: nowT.Add(time.Hour), TokenID: "abc"},
		{ID: "by-def", UserID: u.ID, CSRF: "c5", Created: nowT, Expires: nowT.Add(time.Hour), TokenID: "def"},
	} {
		if err := s.CreateSession(ctx, ss); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteToken(ctx, "abc"); err != nil {
		t.Fatal(err)
	}
	_, err = s.FindSession(ctx, "by-abc")
	wantErr(t, err, wiki.ErrNotFound)
	must[wiki.Session](t)(s.FindSession(ctx, "by-def"))
	wantErr(t, s.DeleteToken(ctx, "abc"), wiki.ErrNotFound)
	if n := must[int](t)(s.DeleteUserTokens(ctx, u.ID)); n != 1 {
		t.Fatalf("deleted %d tokens, want 1", n)
	}
	_, err = s.FindSession(ctx, "by-def")
	wantErr(t, err, wiki.ErrNotFound)
	must[wiki.Session](t)(s.FindSession(ctx, "password"))
}

func testRenders(t *testing.T, s wiki.Store) {
	a := create(t, s, "A", "a")
	a2 := save(t, s, "A", a.Revision.ID, "aa", wiki.LinkSet{})
	b := create(t, s, "B", "b")
	for _, r := range []struct {
		rev int64
		v   int
	}{{a.Revision.ID, 1}, {a2.Revision.ID, 1}, {a2.Revision.ID, 2}, {b.Revision.ID, 1}} {
		if err := s.SaveRender(ctx, r.rev, r.v, fmt.Appendf(nil, "html %d %d", r.rev, r.v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveRender(ctx, b.Revision.ID, 1, []byte("replaced")); err != nil {
		t.Fatal(err)
	}
	if got := string(must[[]byte](t)(s.FindRender(ctx, a2.Revision.ID, 2))); got != fmt.Sprintf("html %d 2", a2.Revision.ID) {
		t.Fatalf("render = %q", got)
	}
	if got := string(must[[]byte](t)(s.FindRender(ctx, b.Revision.ID, 1))); got != "replaced" {
		t.Fatalf("render = %q", got)
	}
	_, err := s.FindRender(ctx, a2.Revision.ID, 3)
	wantErr(t, err, wiki.ErrNotFound)
	if err := s.DeleteRenders(ctx, []int64{a.Page.ID}); err != nil {
		t.Fatal(err)
	}
	for _, rev := range []int64{a.Revision.ID, a2.Revision.ID} {
		if _, err := s.FindRender(ctx, rev, 1); !errors.Is(err, wiki.ErrNotFound) {
			t.Fatalf("render of %d after delete: %v", rev, err)
		}
	}
	must[[]byte](t)(s.FindRender(ctx, b.Revision.ID, 1))
	if err := s.DeleteRenders(ctx, nil); err != nil {
		t.Fatal(err)
	}
}

func testConcurrentDifferent(t *testing.T, s wiki.Store) {
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Go(func() {
			title := wiki.Title(fmt.Sprintf("Page %d", i))
			res, err := s.SavePage(ctx, wiki.SaveRequest{Title: title, Text: "v1", UserName: "U"})
			if err == nil {
				_, err = s.SavePage(ctx, wiki.SaveRequest{Title: title, Text: "v2", UserName: "U", BaseRevID: res.Revision.ID})
			}
			if err == nil {
				_, err = s.FindPage(ctx, title)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := must[int](t)(s.PageCount(ctx)); n != 20 {
		t.Fatalf("count = %d", n)
	}
	if rc := must[[]wiki.Change](t)(s.RecentChanges(ctx, wiki.ChangeQuery{Limit: 100})); len(rc) != 40 {
		t.Fatalf("%d changes, want 40", len(rc))
	}
}

func testConcurrentSame(t *testing.T, s wiki.Store) {
	base := create(t, s, "Hot", "v0")
	for round := range 3 {
		var wg sync.WaitGroup
		type result struct {
			res wiki.SaveResult
			err error
		}
		results := make(chan result, 20)
		for i := range 20 {
			wg.Go(func() {
				res, err := s.SavePage(ctx, wiki.SaveRequest{Title: "Hot", Text: fmt.Sprintf("round %d writer %d", round, i),
					UserName: "U", BaseRevID: base.Revision.ID})
				results <- result{res, err}
			})
		}
		wg.Wait()
		close(results)
		wins := 0
		for r := range results {
			switch {
			case r.err == nil:
				wins++
				base = r.res
			case errors.Is(r.err, wiki.ErrConflict):
			default:
				t.Fatalf("unexpected error: %v", r.err)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d writers won, want exactly 1", round, wins)
		}
	}
	h := must[[]wiki.Revision](t)(s.History(ctx, wiki.HistoryQuery{PageID: base.Page.ID}))
	if len(h) != 4 || h[0].ID != base.Revision.ID {
		t.Fatalf("history = %+v", h)
	}
}

func spec(kind, payload string) wiki.JobSpec {
	return wiki.JobSpec{Kind: kind, Payload: []byte(payload)}
}

func jobCount(t *testing.T, s wiki.Store) int {
	t.Helper()
	st := must[wiki.JobStats](t)(s.JobStats(ctx))
	n := 0
	for _, c := range st.Counts {
		n += c
	}
	return n
}

func testJobsAtomic(t *testing.T, s wiki.Store) {
	first := create(t, s, "A", "one")
	res := must[wiki.SaveResult](t)(s.SavePage(ctx, wiki.SaveRequest{Title: "A", Text: "two", UserName: "U",
		BaseRevID: first.Revision.ID, Jobs: []wiki.JobSpec{spec("search", `{"title":"A"}`), spec("cdnpurge", "")}}))
	if n := jobCount(t, s); n != 2 {
		t.Fatalf("a successful save enqueued %d jobs, want 2", n)
	}
	failing := []struct {
		name string
		err  error
		fn   func(jobs []wiki.JobSpec) error
	}{
		{"a save against a stale base", wiki.ErrConflict, func(jobs []wiki.JobSpec) error {
			_, err := s.SavePage(ctx, wiki.SaveRequest{Title: "A", Text: "three", UserName: "U", BaseRevID: first.Revision.ID, Jobs: jobs})
			return err
		}},
		{"creating a page that exists", wiki.ErrExists, func(jobs []wiki.JobSpec) error {
			_, err := s.SavePage(ctx, wiki.SaveRequest{Title: "A", Text: "three", UserName: "U", Jobs: jobs})
			return err
		}},
		{"a move onto a live page", wiki.ErrExists, func(jobs []wiki.JobSpec) error {
			create(t, s, "B", "b")
			_, err := s.MovePage(ctx, wiki.MoveRequest{From: "B", To: "A", UserName: "U", Jobs: jobs})
			return err
		}},
		{"deleting a missing page", wiki.ErrNotFound, func(jobs []wiki.JobSpec) error {
			return s.DeletePage(ctx, "Missing", 0, "U", "", at(2), jobs...)
		}},
		{"undeleting a live page", wiki.ErrNotFound, func(jobs []wiki.JobSpec) error {
			_, err := s.UndeletePage(ctx, "A", 0, "U", "", at(2), jobs...)
			return err
		}},
		{"a job without a kind rolls the save back", nil, func(jobs []wiki.JobSpec) error {
			_, err := s.SavePage(ctx, wiki.SaveRequest{Title: "A", Text: "four", UserName: "U", BaseRevID: res.Revision.ID,
				Jobs: append(jobs, wiki.JobSpec{})})
			if err == nil {
				return errors.New("saved with an invalid job")
			}
			if p := must[wiki.Page](t)(s.FindPage(ctx, "A")); p.LatestID != res.Revision.ID {
				return fmt.Errorf("the revision was stored: latest %d", p.LatestID)
			}
			return nil
		}},
	}
	for _, f := range failing {
		before := jobCount(t, s)
		err := f.fn([]wiki.JobSpec{spec("search", `{"title":"A"}`), spec("backlinks", `{"title":"A"}`)})
		if f.err != nil {
			wantErr(t, err, f.err)
		} else if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if n := jobCount(t, s); n != before {
			t.Errorf("%s enqueued %d jobs", f.name, n-before)
		}
	}
	if err := s.DeletePage(ctx, "A", 0, "U", "", at(3), spec("backlinks", `{"title":"A"}`)); err != nil {
		t.Fatal(err)
	}
	must[wiki.Page](t)(s.UndeletePage(ctx, "A", 0, "U", "", at(4), spec("links", `{"title":"A"}`)))
	must[wiki.Page](t)(s.MovePage(ctx, wiki.MoveRequest{From: "A", To: "C", UserName: "U", Jobs: []wiki.JobSpec{spec("search", `{"title":"C"}`)}}))
	jobs := must[[]wiki.Job](t)(s.ListJobs(ctx, wiki.JobQueued, 100))
	var kinds []string
	for _, j := range jobs {
		kinds = append(kinds, j.Kind)
	}
	if got := strings.Join(kinds, ","); got != "search,links,backlinks,cdnpurge,search" {
		t.Fatalf("queued jobs newest first = %s", got)
	}
	if j := jobs[0]; string(j.Payload) != `{"title":"C"}` || j.State != wiki.JobQueued || j.Attempts != 0 ||
		j.MaxAttempts != wiki.DefaultJobAttempts || j.Created.IsZero() || j.RunAt.IsZero() {
		t.Fatalf("job = %+v", j)
	}
	if j := jobs[3]; string(j.Payload) != `{}` {
		t.Fatalf("empty payload stored as %q", j.Payload)
	}
}

func testJobsLifecycle(t *testing.T, s wiki.Store) {
	now := time.Now()
	if err := s.EnqueueJobs(ctx, []wiki.JobSpec{spec("a", `{"n":1}`), {Kind: "b", MaxAttempts: 2}, {Kind: "later", RunAt: now.Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	st := must[wiki.JobStats](t)(s.JobStats(ctx))
	if st.Counts[wiki.JobQueued] != 3 || st.OldestQueued.IsZero() || st.OldestQueued.After(time.Now()) {
		t.Fatalf("stats = %+v", st)
	}
	leased := must[[]wiki.Job](t)(s.LeaseJobs(ctx, "w1", 10, time.Minute, now.Add(time.Second)))
	if len(leased) != 2 || leased[0].Kind != "a" || leased[1].Kind != "b" {
		t.Fatalf("leased %+v, want a and b (later is not due)", leased)
	}
	a, b := leased[0], leased[1]
	if a.State != wiki.JobRunning || a.Attempts != 1 || a.Owner != "w1" || string(a.Payload) != `{"n":1}` ||
		a.LeasedUntil.Before(now.Add(time.Minute)) {
		t.Fatalf("leased job = %+v", a)
	}
	if more := must[[]wiki.Job](t)(s.LeaseJobs(ctx, "w2", 10, time.Minute, now.Add(2*time.Second))); len(more) != 0 {
		t.Fatalf("leased jobs are leased again: %+v", more)
	}
	if err := s.CompleteJob(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	// b fails: back in the queue at its retry time, not before.
	retryAt := now.Add(30 * time.Second)
	if err := s.FailJob(ctx, b.ID, "boom", retryAt, false); err != nil {
		t.Fatal(err)
	}
	if got := must[[]wiki.Job](t)(s.LeaseJobs(ctx, "w1", 10, time.Minute, now.Add(10*time.Second))); len(got) != 0 {
		t.Fatalf("leased before its retry time: %+v", got)
	}
	got := must[[]wiki.Job](t)(s.LeaseJobs(ctx, "w1", 10, time.Minute, retryAt))
	if len(got) != 1 || got[0].ID != b.ID || got[0].Attempts != 2 || got[0].LastError != "boom" {
		t.Fatalf("retry lease = %+v", got)
	}
	if err := s.FailJob(ctx, b.ID, "boom again", time.Time{}, true); err != nil {
		t.Fatal(err)
	}
	dead := must[[]wiki.Job](t)(s.ListJobs(ctx, wiki.JobDead, 10))
	if len(dead) != 1 || dead[0].ID != b.ID || dead[0].LastError != "boom again" {
		t.Fatalf("dead = %+v", dead)
	}
	if got := must[[]wiki.Job](t)(s.LeaseJobs(ctx, "w1", 10, time.Minute, now.Add(time.Hour+time.Second))); len(got) != 1 || got[0].Kind != "later" {
		t.Fatalf("lease after an hour = %+v, want only the delayed job", got)
	}
	st = must[wiki.JobStats](t)(s.JobStats(ctx))
	if st.Counts[wiki.JobDone] != 1 || st.Counts[wiki.JobDead] != 1 || st.Counts[wiki.JobRunning] != 1 || st.Counts[wiki.JobQueued] != 0 || !st.OldestQueued.IsZero() {
		t.Fatalf("stats = %+v", st)
	}
	// Completing or failing a job that is not running changes nothing.
	if err := s.CompleteJob(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if j := must[[]wiki.Job](t)(s.ListJobs(ctx, wiki.JobDead, 10)); len(j) != 1 {
		t.Fatalf("completing a dead job revived it: %+v", j)
	}
	// Retry revives a dead job with fresh attempts; only dead jobs.
	if err := s.RetryJob(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.RetryJob(ctx, b.ID), wiki.ErrNotFound)
	wantErr(t, s.RetryJob(ctx, a.ID), wiki.ErrNotFound)
	got = must[[]wiki.Job](t)(s.LeaseJobs(ctx, "w1", 10, time.Minute, time.Now().Add(time.Second)))
	if len(got) != 1 || got[0].ID != b.ID || got[0].Attempts != 1 {
		t.Fatalf("lease after retry = %+v", got)
	}
	all := must[[]wiki.Job](t)(s.ListJobs(ctx, "", 10))
	if len(all) != 3 || all[0].Kind != "later" {
		t.Fatalf("all jobs newest first = %+v", all)
	}
}

func testJobsExpiredLease(t *testing.T, s wiki.Store) {
	now := time.Now()
	if err := s.EnqueueJobs(ctx, []wiki.JobSpec{{Kind: "crashy", MaxAttempts: 2}}); err != nil {
		t.Fatal(err)
	}
	first := must[[]wiki.Job](t)(s.LeaseJobs(ctx, "dies", 1, 10*time.Second, now.Add(time.Second)))
	if len(first) != 1 {
		t.Fatalf("leased %d", len(first))
	}
	if got := must[[]wiki.Job](t)(s.LeaseJobs(ctx, "other", 1, 10*time.Second, now.Add(5*time.Second))); len(got) != 0 {
		t.Fatalf("a live lease was taken: %+v", got)
	}
	second := must[[]wiki.Job](t)(s.LeaseJobs(ctx, "other", 1, 10*time.Second, now.Add(12*time.Second)))
	if len(second) != 1 || second[0].ID != first[0].ID || second[0].Owner != "other" || second[0].Attempts != 2 {
		t.Fatalf("expired lease = %+v", second)
	}
	// The second worker dies too: that was the last attempt.
	if got := must[[]wiki.Job](t)(s.LeaseJobs(ctx, "third", 1, 10*time.Second, now.Add(30*time.Second))); len(got) != 0 {
		t.Fatalf("leased after its last attempt: %+v", got)
	}
	dead := must[[]wiki.Job](t)(s.ListJobs(ctx, wiki.JobDead, 10))
	if len(dead) != 1 || !strings.Contains(dead[0].LastError, "lease expired") {
		t.Fatalf("dead = %+v", dead)
	}
}

func testJobsConcurrentLease(t *testing.T, s wiki.Store) {
	const n = 200
	specs := make([]wiki.JobSpec, n)
	for i := range specs {
		specs[i] = spec("k", fmt.Sprintf(`{"i":%d}`, i))
	}
	if err := s.EnqueueJobs(ctx, specs); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[int64]string{}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			owner := fmt.Sprintf("w%d", w)
			for {
				jobs, err := s.LeaseJobs(ctx, owner, 7, time.Minute, time.Now().Add(time.Second))
				if err != nil {
					t.Error(err)
					return
				}
				if len(jobs) == 0 {
					return
				}
				mu.Lock()
				for _, j := range jobs {
					if prev, ok := seen[j.ID]; ok {
						t.Errorf("job %d leased by %s and %s", j.ID, prev, owner)
					}
					seen[j.ID] = owner
				}
				mu.Unlock()
				for _, j := range jobs {
					if err := s.CompleteJob(ctx, j.ID); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("%d jobs leased, want %d", len(seen), n)
	}
	if st := must[wiki.JobStats](t)(s.JobStats(ctx)); st.Counts[wiki.JobDone] != n {
		t.Fatalf("stats = %+v", st)
	}
}

func testJobsDedupe(t *testing.T, s wiki.Store) {
	later := time.Now().Add(time.Hour)
	for range 3 {
		if err := s.EnqueueJobs(ctx, []wiki.JobSpec{{Kind: "search", Key: "search:A", RunAt: later}, {Kind: "cdnpurge"}}); err != nil {
			t.Fatal(err)
		}
	}
	if st := must[wiki.JobStats](t)(s.JobStats(ctx)); st.Counts[wiki.JobQueued] != 4 {
		t.Fatalf("queued = %d, want 1 keyed + 3 unkeyed", st.Counts[wiki.JobQueued])
	}
	// A merge keeps the earlier run time.
	if err := s.EnqueueJobs(ctx, []wiki.JobSpec{{Kind: "search", Key: "search:A"}}); err != nil {
		t.Fatal(err)
	}
	got := must[[]wiki.Job](t)(s.LeaseJobs(ctx, "w", 10, time.Minute, time.Now().Add(time.Second)))
	if len(got) != 4 {
		t.Fatalf("leased %d, want 4 (the keyed job is due now)", len(got))
	}
	// A running job frees its key: a change made while it runs queues anew,
	// and the running job's retry then merges into that one.
	var keyed wiki.Job
	for _, j := range got {
		if j.Key == "search:A" {
			keyed = j
		}
	}
	if err := s.EnqueueJobs(ctx, []wiki.JobSpec{{Kind: "search", Key: "search:A"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.FailJob(ctx, keyed.ID, "x", time.Now(), false); err != nil {
		t.Fatal(err)
	}
	st := must[wiki.JobStats](t)(s.JobStats(ctx))
	if st.Counts[wiki.JobQueued] != 1 || st.Counts[wiki.JobDone] != 1 {
		t.Fatalf("stats after a retry into a queued duplicate = %+v", st)
	}
}

func testJobTasks(t *testing.T, s wiki.Store) {
	a := save(t, s, "A", 0, "a", wiki.LinkSet{Links: []wiki.Title{"X"}})
	a2 := save(t, s, "A", a.Revision.ID, "aa", wiki.LinkSet{Links: []wiki.Title{"X"}})
	// A job for an older revision is skipped: the newer save wrote its links.
	if ok := must[bool](t)(s.RefreshLinks(ctx, a.Page.ID, a.Revision.ID, wiki.LinkSet{Links: []wiki.Title{"Y"}})); ok {
		t.Fatal("refreshed links from a stale revision")
	}
	for range 2 {
		if ok := must[bool](t)(s.RefreshLinks(ctx, a.Page.ID, a2.Revision.ID, wiki.LinkSet{Links: []wiki.Title{"Z"}, Categories: []wiki.Title{"Category:C"}})); !ok {
			t.Fatal("did not refresh the latest revision's links")
		}
	}
	if bl := must[[]wiki.Page](t)(s.Backlinks(ctx, "Z", wiki.ListQuery{})); titles(bl) != "A" {
		t.Fatalf("backlinks of Z = %s", titles(bl))
	}
	if bl := must[[]wiki.Page](t)(s.Backlinks(ctx, "X", wiki.ListQuery{})); len(bl) != 0 {
		t.Fatalf("backlinks of X = %s", titles(bl))
	}
	if ok := must[bool](t)(s.RefreshLinks(ctx, 99999, 1, wiki.LinkSet{})); ok {
		t.Fatal("refreshed a missing page")
	}
	// Changes: the two saves are at at(1); trim before at(2) drops both.
	if n := must[int](t)(s.TrimChanges(ctx, at(0))); n != 0 {
		t.Fatalf("trimmed %d changes before at(0)", n)
	}
	if n := must[int](t)(s.TrimChanges(ctx, at(2))); n != 2 {
		t.Fatalf("trimmed %d changes, want 2", n)
	}
	if err := s.EnqueueJobs(ctx, []wiki.JobSpec{{Kind: "x"}, {Kind: "y"}}); err != nil {
		t.Fatal(err)
	}
	jobs := must[[]wiki.Job](t)(s.LeaseJobs(ctx, "w", 1, time.Minute, time.Now().Add(time.Second)))
	if err := s.CompleteJob(ctx, jobs[0].ID); err != nil {
		t.Fatal(err)
	}
	if n := must[int](t)(s.DeleteDoneJobs(ctx, time.Now().Add(-time.Hour))); n != 0 {
		t.Fatalf("deleted %d recent done jobs", n)
	}
	if n := must[int](t)(s.DeleteDoneJobs(ctx, time.Now().Add(time.Hour))); n != 1 {
		t.Fatalf("deleted %d done jobs, want 1 (queued ones stay)", n)
	}
	if n := jobCount(t, s); n != 1 {
		t.Fatalf("%d jobs left, want 1", n)
	}
}

func testLog(t *testing.T, s wiki.Store) {
	ctx := context.Background()
	must[wiki.SaveResult](t)(s.SavePage(ctx, wiki.SaveRequest{Title: "A", Text: "a", UserName: "Alice", Time: at(1)}))
	must[wiki.SaveResult](t)(s.SavePage(ctx, wiki.SaveRequest{Title: "B", Text: "b", UserName: "Alice", Time: at(1)}))
	if err := s.DeletePage(ctx, "A", 7, "Admin", "spam", at(2)); err != nil {
		t.Fatal(err)
	}
	must[wiki.Page](t)(s.UndeletePage(ctx, "A", 7, "Admin", "not spam", at(3)))
	must[wiki.Page](t)(s.MovePage(ctx, wiki.MoveRequest{From: "B", To: "C", Reason: "better", UserID: 8, UserName: "Mover", Time: at(4)}))

	all := must[[]wiki.LogEntry](t)(s.Log(ctx, wiki.LogQuery{}))
	if len(all) != 3 {
		t.Fatalf("log has %d entries, want 3: %+v", len(all), all)
	}
	mv, rs, del := all[0], all[1], all[2]
	if mv.Type != wiki.LogMove || mv.Action != "move" || mv.Target != "B" || mv.Params["to"] != "C" || mv.Params["noredirect"] != "1" ||
		mv.UserID != 8 || mv.UserName != "Mover" || mv.Comment != "better" || !mv.Time.Equal(at(4)) {
		t.Errorf("move entry = %+v", mv)
	}
	if rs.Type != wiki.LogDelete || rs.Action != "restore" || rs.Target != "A" || rs.Comment != "not spam" {
		t.Errorf("restore entry = %+v", rs)
	}
	if del.Type != wiki.LogDelete || del.Action != "delete" || del.Target != "A" || del.UserName != "Admin" || del.PageID == 0 || del.Params != nil {
		t.Errorf("delete entry = %+v", del)
	}
	if l := must[[]wiki.LogEntry](t)(s.Log(ctx, wiki.LogQuery{Type: wiki.LogDelete})); len(l) != 2 || l[0].ID != rs.ID {
		t.Errorf("delete log = %+v", l)
	}
	if l := must[[]wiki.LogEntry](t)(s.Log(ctx, wiki.LogQuery{UserName: "Mover"})); len(l) != 1 || l[0].ID != mv.ID {
		t.Errorf("Mover's log = %+v", l)
	}
	if l := must[[]wiki.LogEntry](t)(s.Log(ctx, wiki.LogQuery{Target: "A", Type: wiki.LogDelete, Limit: 1})); len(l) != 1 || l[0].ID != rs.ID {
		t.Errorf("first page of A's log = %+v", l)
	}
	if l := must[[]wiki.LogEntry](t)(s.Log(ctx, wiki.LogQuery{Target: "A", Before: rs.ID})); len(l) != 1 || l[0].ID != del.ID {
		t.Errorf("second page of A's log = %+v", l)
	}
}

func testGroups(t *testing.T, s wiki.Store) {
	u := must[wiki.User](t)(s.CreateUser(ctx, wiki.User{Name: "Carol", PasswordHash: "h", Group: wiki.GroupUser, Created: at(1)}))
	must[wiki.User](t)(s.CreateUser(ctx, wiki.User{Name: "Bob", PasswordHash: "h", Created: at(1)}))
	l := must[[]wiki.LogEntry](t)(s.Log(ctx, wiki.LogQuery{Type: wiki.LogNewUsers}))
	if len(l) != 2 || l[1].Action != "create" || l[1].Target != "User:Carol" || l[1].UserName != "Carol" || l[1].UserID != u.ID {
		t.Fatalf("newusers log = %+v", l)
	}
	by := wiki.Actor{ID: 99, Name: "Admin"}
	old := must[wiki.Group](t)(s.SetUserGroup(ctx, wiki.GroupChange{UserID: u.ID, Group: wiki.GroupAdmin, By: by, Reason: "trusted", Time: at(2)}))
	if old != wiki.GroupUser {
		t.Errorf("old group = %q", old)
	}
	if got := must[wiki.User](t)(s.FindUser(ctx, u.ID)); got.Group != wiki.GroupAdmin {
		t.Errorf("group after change = %q", got.Group)
	}
	// The same group again changes and logs nothing.
	must[wiki.Group](t)(s.SetUserGroup(ctx, wiki.GroupChange{UserID: u.ID, Group: wiki.GroupAdmin, By: by, Time: at(3)}))
	l = must[[]wiki.LogEntry](t)(s.Log(ctx, wiki.LogQuery{Type: wiki.LogRights}))
	if len(l) != 1 || l[0].Params["old"] != "user" || l[0].Params["new"] != "admin" || l[0].UserName != "Admin" ||
		l[0].Comment != "trusted" || l[0].Target != "User:Carol" {
		t.Errorf("rights log = %+v", l)
	}
	_, err := s.SetUserGroup(ctx, wiki.GroupChange{UserID: 9999, Group: wiki.GroupAdmin, By: by})
	wantErr(t, err, wiki.ErrNotFound)
	us := must[[]wiki.User](t)(s.ListUsers(ctx, wiki.UserQuery{Limit: 1}))
	if len(us) != 1 || us[0].Name != "Bob" {
		t.Errorf("first user = %+v", us)
	}
	if us := must[[]wiki.User](t)(s.ListUsers(ctx, wiki.UserQuery{From: "C"})); len(us) != 1 || us[0].Name != "Carol" {
		t.Errorf("users from C = %+v", us)
	}
}

func testBlocks(t *testing.T, s wiki.Store) {
	u := must[wiki.User](t)(s.CreateUser(ctx, wiki.User{Name: "Vandal", PasswordHash: "h"}))
	v := must[wiki.User](t)(s.CreateUser(ctx, wiki.User{Name: "Other", PasswordHash: "h"}))
	by := wiki.MaintenanceActor
	_, err := s.FindBlock(ctx, u.ID, at(0))
	wantErr(t, err, wiki.ErrNotFound)
	wantErr(t, s.UnblockUser(ctx, u.ID, by, "", at(0)), wiki.ErrNotFound)

	if re := must[bool](t)(s.BlockUser(ctx, wiki.Block{UserID: u.ID, By: by, Reason: "spam", Created: at(1), Expires: at(61)})); re {
		t.Error("a first block is a reblock")
	}
	b := must[wiki.Block](t)(s.FindBlock(ctx, u.ID, at(2)))
	if b.UserName != "Vandal" || b.Reason != "spam" || !b.Expires.Equal(at(61)) || b.By != by {
		t.Errorf("block = %+v", b)
	}
	if re := must[bool](t)(s.BlockUser(ctx, wiki.Block{UserID: u.ID, By: by, Reason: "more spam", Created: at(3)})); !re {
		t.Error("changing a block in force is not a reblock")
	}
	if b := must[wiki.Block](t)(s.FindBlock(ctx, u.ID, at(1000))); !b.Expires.IsZero() || b.Reason != "more spam" {
		t.Errorf("infinite block = %+v", b)
	}
	must[bool](t)(s.BlockUser(ctx, wiki.Block{UserID: v.ID, By: by, Created: at(4), Expires: at(10)}))
	if bs := must[[]wiki.Block](t)(s.ListBlocks(ctx, wiki.BlockQuery{At: at(5)})); len(bs) != 2 || bs[0].UserName != "Other" {
		t.Errorf("blocks at 5 = %+v", bs)
	}
	// Other's block expires by itself.
	if bs := must[[]wiki.Block](t)(s.ListBlocks(ctx, wiki.BlockQuery{At: at(10)})); len(bs) != 1 || bs[0].UserName != "Vandal" {
		t.Errorf("blocks at 10 = %+v", bs)
	}
	_, err = s.FindBlock(ctx, v.ID, at(10))
	wantErr(t, err, wiki.ErrNotFound)
	if bs := must[[]wiki.Block](t)(s.ListBlocks(ctx, wiki.BlockQuery{At: at(5), Limit: 1})); len(bs) != 1 {
		t.Errorf("first page = %+v", bs)
	} else if bs2 := must[[]wiki.Block](t)(s.ListBlocks(ctx, wiki.BlockQuery{At: at(5), Before: bs[0].ID})); len(bs2) != 1 || bs2[0].UserName != "Vandal" {
		t.Errorf("second page = %+v", bs2)
	}
	// Blocking after expiry is a new block, not a reblock.
	if re := must[bool](t)(s.BlockUser(ctx, wiki.Block{UserID: v.ID, By: by, Created: at(11)})); re {
		t.Error("a block after the last one expired is a reblock")
	}
	if err := s.UnblockUser(ctx, u.ID, wiki.Actor{ID: 5, Name: "Admin"}, "sorry", at(20)); err != nil {
		t.Fatal(err)
	}
	_, err = s.FindBlock(ctx, u.ID, at(21))
	wantErr(t, err, wiki.ErrNotFound)
	l := must[[]wiki.LogEntry](t)(s.Log(ctx, wiki.LogQuery{Type: wiki.LogBlock}))
	var got []string
	for _, e := range l {
		got = append(got, e.Action+" "+string(e.Target)+" "+e.Params["expiry"])
	}
	want := []string{"unblock User:Vandal ", "block User:Other infinite", "block User:Other " + at(10).Format(time.RFC3339),
		"reblock User:Vandal infinite", "block User:Vandal " + at(61).Format(time.RFC3339)}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("block log:\n got %q\nwant %q", got, want)
	}
	if l[0].UserName != "Admin" || l[0].Comment != "sorry" || l[4].UserName != "Maintenance script" || l[4].UserID != 0 {
		t.Errorf("performers: %+v", l)
	}
}

func testAccountSessions(t *testing.T, s wiki.Store) {
	u := must[wiki.User](t)(s.CreateUser(ctx, wiki.User{Name: "Dora", PasswordHash: "old"}))
	nowT := time.Now().UTC().Truncate(time.Millisecond)
	for i, id := range []string{"s1", "s2", "s3"} {
		if err := s.CreateSession(ctx, wiki.Session{ID: id, UserID: u.ID, CSRF: "c", Created: nowT.Add(time.Duration(i) * time.Second), Expires: nowT.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if ss := must[[]wiki.Session](t)(s.ListSessions(ctx, u.ID, nowT)); len(ss) != 3 || ss[0].ID != "s3" {
		t.Fatalf("sessions = %+v", ss)
	}
	if err := s.SetPassword(ctx, u.ID, "new", "s2"); err != nil {
		t.Fatal(err)
	}
	if ss := must[[]wiki.Session](t)(s.ListSessions(ctx, u.ID, nowT)); len(ss) != 1 || ss[0].ID != "s2" {
		t.Fatalf("sessions after password change = %+v", ss)
	}
	if got := must[wiki.User](t)(s.FindUser(ctx, u.ID)); got.PasswordHash != "new" {
		t.Errorf("hash = %q", got.PasswordHash)
	}
	wantErr(t, s.SetPassword(ctx, 9999, "x", ""), wiki.ErrNotFound)
	if n := must[int](t)(s.DeleteUserSessions(ctx, u.ID, "")); n != 1 {
		t.Errorf("deleted %d sessions, want 1", n)
	}

	for i, id := range []string{"t1", "t2"} {
		if err := s.CreateToken(ctx, wiki.Token{ID: id, UserID: u.ID, Name: id, Created: nowT.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.TouchToken(ctx, "t1", nowT); err != nil {
		t.Fatal(err)
	}
	ts := must[[]wiki.Token](t)(s.ListTokens(ctx, u.ID))
	if len(ts) != 2 || ts[0].ID != "t2" || !ts[1].LastUsed.Equal(nowT) || !ts[0].LastUsed.IsZero() || !ts[0].Expires.IsZero() {
		t.Fatalf("tokens = %+v", ts)
	}
	if err := s.DeleteToken(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.DeleteToken(ctx, "t1"), wiki.ErrNotFound)
	_, err := s.FindToken(ctx, "t1")
	wantErr(t, err, wiki.ErrNotFound)
	if n := must[int](t)(s.DeleteUserTokens(ctx, u.ID)); n != 1 {
		t.Errorf("revoked %d tokens, want 1", n)
	}
}

func testPasswordResets(t *testing.T, s wiki.Store) {
	u := must[wiki.User](t)(s.CreateUser(ctx, wiki.User{Name: "Eve", PasswordHash: "old"}))
	if err := s.CreateSession(ctx, wiki.Session{ID: "s", UserID: u.ID, CSRF: "c", Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateToken(ctx, wiki.Token{ID: "t", UserID: u.ID, Name: "bot", Created: at(0)}); err != nil {
		t.Fatal(err)
	}
	for _, pr := range []wiki.PasswordReset{{ID: "r1", UserID: u.ID, Created: at(0), Expires: at(60)}, {ID: "r2", UserID: u.ID, Created: at(0), Expires: at(60)}} {
		if err := s.CreatePasswordReset(ctx, pr); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.FindPasswordReset(ctx, "r1", at(60)); !errors.Is(err, wiki.ErrNotFound) {
		t.Errorf("an expired reset is found: %v", err)
	}
	_, err := s.ResetPassword(ctx, "r1", "new", at(60))
	wantErr(t, err, wiki.ErrNotFound)
	must[wiki.PasswordReset](t)(s.FindPasswordReset(ctx, "r1", at(1)))
	got := must[wiki.User](t)(s.ResetPassword(ctx, "r1", "new", at(1)))
	if got.ID != u.ID || got.PasswordHash != "new" {
		t.Errorf("user after reset = %+v", got)
	}
	// Used: the link and every other link of the user are spent, and the
	// user's sessions ended.
	for _, id := range []string{"r1", "r2"} {
		_, err = s.ResetPassword(ctx, id, "again", at(2))
		wantErr(t, err, wiki.ErrNotFound)
	}
	_, err = s.FindSession(ctx, "s")
	wantErr(t, err, wiki.ErrNotFound)
	_, err = s.FindToken(ctx, "t")
	wantErr(t, err, wiki.ErrNotFound)

	// A password change spends the links sent before it.
	if err := s.CreatePasswordReset(ctx, wiki.PasswordReset{ID: "r3", UserID: u.ID, Created: at(2), Expires: at(60)}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetPassword(ctx, u.ID, "changed", ""); err != nil {
		t.Fatal(err)
	}
	_, err = s.ResetPassword(ctx, "r3", "again", at(3))
	wantErr(t, err, wiki.ErrNotFound)
}

func testPrefs(t *testing.T, s wiki.Store) {
	u := must[wiki.User](t)(s.CreateUser(ctx, wiki.User{Name: "Fay", PasswordHash: "h"}))
	p := wiki.Prefs{TimeZone: "Europe/Paris", DateFormat: "iso", MinorDefault: true, NoAutoWatch: true, Signature: "[[User:Fay|Fay]] ([[User talk:Fay|talk]])"}
	if err := s.UpdatePrefs(ctx, u.ID, p); err != nil {
		t.Fatal(err)
	}
	if got := must[wiki.User](t)(s.FindUser(ctx, u.ID)); got.Prefs != p {
		t.Errorf("prefs = %+v", got.Prefs)
	}
	wantErr(t, s.UpdatePrefs(ctx, 9999, p), wiki.ErrNotFound)
}

func testProtection(t *testing.T, s wiki.Store) {
	ctx := context.Background()
	if _, err := s.FindProtection(ctx, "A"); !errors.Is(err, wiki.ErrNotFound) {
		t.Fatalf("protection of an unprotected title: %v, want ErrNotFound", err)
	}
	if _, err := s.ProtectPage(ctx, wiki.ProtectRequest{Title: "A", UserName: "Admin", Time: at(1)}); !errors.Is(err, wiki.ErrNotFound) {
		t.Errorf("unprotecting an unprotected title: %v, want ErrNotFound", err)
	}
	if _, err := s.ProtectPage(ctx, wiki.ProtectRequest{Title: "A", Edit: "everyone", UserName: "Admin", Time: at(1)}); wiki.KindOf(err) != wiki.KindInvalid {
		t.Errorf("an unknown level: %v, want KindInvalid", err)
	}
	a := must[wiki.SaveResult](t)(s.SavePage(ctx, wiki.SaveRequest{Title: "A", Text: "a", UserName: "Alice", Time: at(1)}))

	act := must[string](t)(s.ProtectPage(ctx, wiki.ProtectRequest{Title: "A", Edit: wiki.ProtectAdmins, Move: wiki.ProtectAdmins,
		Expiry: at(60), Reason: "vandalism", UserID: 7, UserName: "Admin", Time: at(2)}))
	if act != "protect" {
		t.Errorf("first protection's action = %q, want protect", act)
	}
	p := must[wiki.Protection](t)(s.FindProtection(ctx, "A"))
	if p.Edit != wiki.ProtectAdmins || p.Move != wiki.ProtectAdmins || !p.Expiry.Equal(at(60)) || p.UserName != "Admin" ||
		p.Reason != "vandalism" || !p.Time.Equal(at(2)) || !p.Active(at(59)) || p.Active(at(60)) {
		t.Errorf("protection = %+v", p)
	}
	if act := must[string](t)(s.ProtectPage(ctx, wiki.ProtectRequest{Title: "A", Edit: wiki.ProtectUsers, UserName: "Admin", Time: at(3)})); act != "modify" {
		t.Errorf("changing a protection's action = %q, want modify", act)
	}
	if p := must[wiki.Protection](t)(s.FindProtection(ctx, "A")); p.Edit != wiki.ProtectUsers || p.Move != "" || !p.Expiry.IsZero() {
		t.Errorf("modified protection = %+v", p)
	}

	// The protection is checked in the change's transaction: the group
	// given must pass it.
	_, err := s.SavePage(ctx, wiki.SaveRequest{Title: "A", Text: "anonymous change", UserName: "192.0.2.1", BaseRevID: a.Revision.ID, Time: at(3)})
	wantErr(t, err, wiki.ErrProtected)
	_, err = s.MovePage(ctx, wiki.MoveRequest{From: "A", To: "B", UserName: "Anon", Time: at(3)})
	wantErr(t, err, wiki.ErrProtected)
	must[string](t)(s.ProtectPage(ctx, wiki.ProtectRequest{Title: "Locked", Edit: wiki.ProtectAdmins, UserName: "Admin", Time: at(3)}))
	_, err = s.SavePage(ctx, wiki.SaveRequest{Title: "Locked", Text: "by a user", UserName: "U", Group: wiki.GroupUser, Time: at(3)})
	wantErr(t, err, wiki.ErrProtected)
	must[wiki.SaveResult](t)(s.SavePage(ctx, wiki.SaveRequest{Title: "Locked", Text: "by an admin", UserName: "Admin", Group: wiki.GroupAdmin, Time: at(3)}))

	// A protection follows its page when it moves; the redirect left behind is not protected.
	must[wiki.Page](t)(s.MovePage(ctx, wiki.MoveRequest{From: "A", To: "B", Reason: "rename", UserName: "Mover", Group: wiki.GroupUser, Time: at(4),
		LeaveRedirect: true, RedirectText: "#REDIRECT [[B]]", RedirectLinks: wiki.LinkSet{Redirect: "B"}}))
	if _, err := s.FindProtection(ctx, "A"); !errors.Is(err, wiki.ErrNotFound) {
		t.Errorf("the old title is still protected after the move: %v", err)
	}
	if p := must[wiki.Protection](t)(s.FindProtection(ctx, "B")); p.Edit != wiki.ProtectUsers {
		t.Errorf("the moved page's protection = %+v", p)
	}

	if act := must[string](t)(s.ProtectPage(ctx, wiki.ProtectRequest{Title: "B", UserName: "Admin", Reason: "calm", Time: at(5)})); act != "unprotect" {
		t.Errorf("unprotecting's action = %q", act)
	}
	if _, err := s.FindProtection(ctx, "B"); !errors.Is(err, wiki.ErrNotFound) {
		t.Errorf("protection after unprotect: %v", err)
	}

	// An expired protection counts as none: protecting again is "protect".
	must[string](t)(s.ProtectPage(ctx, wiki.ProtectRequest{Title: "Nowhere", Edit: wiki.ProtectAdmins, Expiry: at(7), UserName: "Admin", Time: at(6)}))
	if act := must[string](t)(s.ProtectPage(ctx, wiki.ProtectRequest{Title: "Nowhere", Edit: wiki.ProtectUsers, UserName: "Admin", Time: at(8)})); act != "protect" {
		t.Errorf("protecting after expiry: action %q, want protect", act)
	}

	log := must[[]wiki.LogEntry](t)(s.Log(ctx, wiki.LogQuery{Type: wiki.LogProtect}))
	var got []string
	for _, e := range log {
		got = append(got, string(e.Target)+":"+e.Action)
	}
	if want := "Nowhere:protect Nowhere:protect B:unprotect B:move_prot Locked:protect A:modify A:protect"; strings.Join(got, " ") != want {
		t.Errorf("protect log = %s, want %s", strings.Join(got, " "), want)
	}
	first := log[len(log)-1]
	if first.Params["edit"] != "admins" || first.Params["move"] != "admins" || first.Params["expiry"] != at(60).UTC().Format(time.RFC3339) ||
		first.PageID != a.Page.ID || first.Comment != "vandalism" || first.UserID != 7 {
		t.Errorf("protect entry = %+v", first)
	}
	if e := log[len(log)-2]; e.Params["expiry"] != "infinite" || e.Params["move"] != "" {
		t.Errorf("modify entry = %+v", e)
	}
	if e := log[3]; e.Params["from"] != "A" || e.Target != "B" {
		t.Errorf("move_prot entry = %+v", e)
	}
	if e := log[0]; e.PageID != 0 {
		t.Errorf("a missing title's protection names page %d", e.PageID)
	}
}

func testSearchRanking(t *testing.T, s wiki.Store) {
	create(t, s, "Once", "zebra appears once among many other words here and there in this text")
	create(t, s, "Often", "zebra zebra zebra, a zebra page")
	create(t, s, "Zebra crossing", "a road crossing")
	create(t, s, "Zebra", "the animal")
	hits := searchTitles(t, s, "zebra")
	if got := hitTitles(hits); got != "Zebra,Zebra crossing,Often,Once" {
		t.Fatalf("ranking = %s, want the exact title, the other title match, then by BM25", got)
	}
	if !hits[0].TitleMatch || !hits[1].TitleMatch || hits[2].TitleMatch {
		t.Fatalf("title match flags = %+v", hits)
	}
	// Common words (in every page here, but the wiki is small: every word
	// is rare) still find all.
	if got := hitTitles(searchTitles(t, s, "a")); !strings.Contains(got, "Often") || !strings.Contains(got, "Zebra crossing") {
		t.Fatalf("search a = %s", got)
	}
}

func testSearchTitles(t *testing.T, s wiki.Store) {
	create(t, s, "Éclair", "a pastry")
	create(t, s, "Eclipse", "the sun")
	create(t, s, "ecology", "nature")
	create(t, s, "Gone", "x")
	create(t, s, "Economy", "money")
	if err := s.DeletePage(ctx, "Economy", 0, "M", "", at(2)); err != nil {
		t.Fatal(err)
	}
	pages := must[[]wiki.Page](t)(s.SearchTitles(ctx, "ECL", 10))
	if got := titles(pages); got != "Éclair,Eclipse" {
		t.Fatalf("ECL = %s", got)
	}
	if got := titles(must[[]wiki.Page](t)(s.SearchTitles(ctx, "ec", 2))); got != "Éclair,Eclipse" {
		t.Fatalf("ec, limit 2 = %s", got)
	}
	if got := titles(must[[]wiki.Page](t)(s.SearchTitles(ctx, "eco", 10))); got != "Ecology" {
		t.Fatalf("eco = %s (a deleted page is not offered)", got)
	}
	if got := must[[]wiki.Page](t)(s.SearchTitles(ctx, "  ", 10)); len(got) != 0 {
		t.Fatalf("blank = %+v", got)
	}
	// A move is offered under its new title at once, and its redirect
	// under the old one, before any search job ran.
	must[wiki.Page](t)(s.MovePage(ctx, wiki.MoveRequest{From: "Eclipse", To: "Solar eclipse", UserName: "M", Time: at(3),
		LeaveRedirect: true, RedirectText: "#REDIRECT [[Solar eclipse]]", RedirectLinks: wiki.LinkSet{Redirect: "Solar eclipse"}}))
	if got := titles(must[[]wiki.Page](t)(s.SearchTitles(ctx, "solar", 10))); got != "Solar eclipse" {
		t.Fatalf("solar, after the move = %s", got)
	}
	if got := must[[]wiki.Page](t)(s.SearchTitles(ctx, "eclipse", 10)); len(got) != 1 || got[0].Redirect != "Solar eclipse" {
		t.Fatalf("eclipse, after the move = %+v, want the redirect alone", got)
	}
}

func testImportPages(t *testing.T, s wiki.Store) {
	old := create(t, s, "Existing", "old text")
	save(t, s, "Linker", 0, "links to [[Linked]]", wiki.LinkSet{Links: []wiki.Title{"Linked"}})
	backlinks := func(t wiki.Title) wiki.JobSpec {
		return wiki.JobSpec{Kind: wiki.JobBacklinks, Payload: []byte(`{"title":"` + string(t) + `"}`), Key: "backlinks:" + string(t)}
	}
	req := func(title, text string) wiki.SaveRequest {
		return wiki.SaveRequest{Title: wiki.Title(title), Text: text, SearchText: text, UserName: "Importer", Summary: "import",
			Time: at(3), BaseRevID: 12345, Jobs: []wiki.JobSpec{backlinks(wiki.Title(title))}}
	}
	res := must[[]wiki.SaveResult](t)(s.ImportPages(ctx, []wiki.SaveRequest{
		req("Existing", "new imported text"), req("Fresh", "brand quokka words"), req("Linked", "now it exists"),
	}))
	if !res[1].Created || !res[2].Created || res[0].Created || res[0].Revision.ParentID != old.Revision.ID || res[0].Unchanged {
		t.Fatalf("results = %+v", res)
	}
	if hits := searchTitles(t, s, "quokka"); hitTitles(hits) != "Fresh" {
		t.Fatalf("search after import = %s", hitTitles(hits))
	}
	if hits := searchTitles(t, s, "old"); len(hits) != 0 {
		t.Fatalf("the replaced text is still found: %s", hitTitles(hits))
	}
	again := must[[]wiki.SaveResult](t)(s.ImportPages(ctx, []wiki.SaveRequest{req("Fresh", "brand quokka words")}))
	if !again[0].Unchanged || again[0].Revision.ID != res[1].Revision.ID {
		t.Fatalf("importing the same text again = %+v", again)
	}
	kinds, n := queuedBacklinks(t, s)
	if got := strings.Join(kinds, ","); got != "backlinks:Linked" || n != 1 {
		t.Fatalf("backlinks jobs = %s, want only the one of the title a page links to", got)
	}

	// One batch: a page linking to a title created later in the batch
	// (its backlinks job is kept), and a page saved twice, whose links
	// are those of its second text.
	linking := req("Batch linker", "links to [[Batch target]] and [[Gone]]")
	linking.Links = wiki.LinkSet{Links: []wiki.Title{"Batch target", "Gone"}}
	again2 := req("Batch linker", "links to [[Batch target]] only")
	again2.Links = wiki.LinkSet{Links: []wiki.Title{"Batch target"}}
	must[[]wiki.SaveResult](t)(s.ImportPages(ctx, []wiki.SaveRequest{linking, req("Batch target", "here"), again2}))
	var targets []string
	for _, title := range []wiki.Title{"Batch target", "Gone"} {
		for _, p := range must[[]wiki.Page](t)(s.Backlinks(ctx, title, wiki.ListQuery{Limit: 10})) {
			targets = append(targets, string(title)+"<-"+string(p.Title))
		}
	}
	if got := strings.Join(targets, ","); got != "Batch target<-Batch linker" {
		t.Fatalf("links after a batch saving a page twice = %s, want only its second text's", got)
	}
	kinds, _ = queuedBacklinks(t, s)
	if !slices.Contains(kinds, "backlinks:Batch target") {
		t.Fatalf("backlinks jobs = %v, want the one of a title linked earlier in the same batch", kinds)
	}

	// A title that only a page rewritten earlier in the batch linked to,
	// and no longer does, is linked by none: no job. One that a page
	// rewritten later in the batch still links to when it comes is.
	save(t, s, "Old linker", 0, "links to [[Unlinked later]] and [[Still linked]]",
		wiki.LinkSet{Links: []wiki.Title{"Unlinked later", "Still linked"}})
	save(t, s, "Late linker", 0, "links to [[Still linked 2]]", wiki.LinkSet{Links: []wiki.Title{"Still linked 2"}})
	must[[]wiki.SaveResult](t)(s.ImportPages(ctx, []wiki.SaveRequest{
		req("Old linker", "links to nothing now"), req("Unlinked later", "here"),
		req("Still linked 2", "here"), req("Late linker", "links to nothing now"),
	}))
	kinds, _ = queuedBacklinks(t, s)
	if slices.Contains(kinds, "backlinks:Unlinked later") || !slices.Contains(kinds, "backlinks:Still linked 2") {
		t.Fatalf("backlinks jobs = %v, want the one of the title linked when its page came, not the one no longer linked", kinds)
	}

	// The titles of one batch that pages link to share one job.
	_, before := queuedBacklinks(t, s)
	save(t, s, "Two linker", 0, "links to [[Pair one]] and [[Pair two]]", wiki.LinkSet{Links: []wiki.Title{"Pair one", "Pair two"}})
	must[[]wiki.SaveResult](t)(s.ImportPages(ctx, []wiki.SaveRequest{req("Pair one", "here"), req("Lonely", "here"), req("Pair two", "here")}))
	kinds, n = queuedBacklinks(t, s)
	if n != before+1 || !slices.Equal(kinds[:2], []string{"backlinks:Pair one", "backlinks:Pair two"}) || slices.Contains(kinds, "backlinks:Lonely") {
		t.Fatalf("backlinks jobs = %v (%d jobs, %d before), want one more job for the batch's two linked titles", kinds, n, before)
	}
}

// queuedBacklinks returns the titles of the queued backlinks jobs,
// "backlinks:" and the title each, the newest job's first, and how
// many jobs hold them: an import batch gathers its titles into jobs of
// their own kind (wiki.BatchBacklinks), without a key.
func queuedBacklinks(t *testing.T, s wiki.Store) (titles []string, jobs int) {
	t.Helper()
	for _, j := range must[[]wiki.Job](t)(s.ListJobs(ctx, wiki.JobQueued, 100)) {
		if j.Kind != wiki.JobBacklinks && j.Kind != wiki.JobBatchBacklinks {
			continue
		}
		jobs++
		var p struct {
			Title  string   `json:"title"`
			Titles []string `json:"titles"`
		}
		if err := json.Unmarshal(j.Payload, &p); err != nil {
			t.Fatalf("backlinks job %d: payload %q: %v", j.ID, j.Payload, err)
		}
		if p.Title != "" {
			p.Titles = append(p.Titles, p.Title)
		}
		if j.Kind == wiki.JobBatchBacklinks && (j.Key != "" || p.Title != "") || j.Kind == wiki.JobBacklinks && (len(p.Titles) != 1 || j.Key != "backlinks:"+p.Titles[0]) {
			t.Fatalf("backlinks job %d: key %q with payload %s", j.ID, j.Key, j.Payload)
		}
		for _, title := range p.Titles {
			titles = append(titles, "backlinks:"+title)
		}
	}
	return titles, jobs
}

// A dump with a page's history holds its title more than once, and an
// import batch may save it twice or more: the search index holds its last
// text, as after the same saves one by one.
func testImportTwiceSearch(t *testing.T, s wiki.Store) {
	create(t, s, "Before", "earlier page")
	req := func(title, text string) wiki.SaveRequest {
		return wiki.SaveRequest{Title: wiki.Title(title), Text: text, SearchText: text, UserName: "Importer", Summary: "import", Time: at(3)}
	}
	must[[]wiki.SaveResult](t)(s.ImportPages(ctx, []wiki.SaveRequest{
		req("Twice", "first wombat text"), req("Before", "later numbat text"), req("Twice", "second quokka text"), req("Before", "last bilby text"),
	}))
	for q, want := range map[string]string{"wombat": "", "quokka": "Twice", "earlier": "", "numbat": "", "bilby": "Before"} {
		if got := hitTitles(searchTitles(t, s, q)); got != want {
			t.Errorf("search %q after the import = %q, want %q", q, got, want)
		}
	}
}

// An import checks each title's protection, as an edit does: a page the
// importer's group may not edit fails the batch, and no page of it is
// written.
func testImportProtected(t *testing.T, s wiki.Store) {
	create(t, s, "Guarded", "guarded text")
	must[string](t)(s.ProtectPage(ctx, wiki.ProtectRequest{Title: "Guarded", Edit: wiki.ProtectAdmins, UserName: "Admin", Time: at(2)}))
	req := func(title string, g wiki.Group) wiki.SaveRequest {
		return wiki.SaveRequest{Title: wiki.Title(title), Text: "imported " + title, UserName: "Importer", Group: g, Time: at(3)}
	}
	_, err := s.ImportPages(ctx, []wiki.SaveRequest{req("Unguarded", wiki.GroupUser), req("Guarded", wiki.GroupUser)})
	if !errors.Is(err, wiki.ErrProtected) {
		t.Fatalf("import of a protected title by a user: %v, want ErrProtected", err)
	}
	if _, err := s.FindPage(ctx, "Unguarded"); !errors.Is(err, wiki.ErrNotFound) {
		t.Fatalf("a page of the refused batch: %v, want ErrNotFound", err)
	}
	res := must[[]wiki.SaveResult](t)(s.ImportPages(ctx, []wiki.SaveRequest{req("Unguarded", wiki.GroupAdmin), req("Guarded", wiki.GroupAdmin)}))
	if !res[0].Created || res[1].Created || res[1].Unchanged {
		t.Fatalf("import by an admin = %+v", res)
	}
}

func testPurgeLog(t *testing.T, s wiki.Store) {
	if id := must[int64](t)(s.LastPurge(ctx)); id != 0 {
		t.Fatalf("empty log: last purge %d, want 0", id)
	}
	evs := []wiki.PurgeEvent{
		{Origin: "a", Titles: []wiki.Title{"Main Page", "Special:Log"}, PageIDs: []int64{1}, Time: at(1)},
		{Origin: "b", Stale: true, Titles: []wiki.Title{"Linked"}, PageIDs: []int64{7, 8}, Time: at(2)},
		{Origin: "a", Users: []int64{5, 6}, Sessions: []string{"9f86d081", "60303ae2"}, Time: at(3)}, // accounts, and the listings
	}
	if err := s.AppendPurges(ctx, evs[:2]); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendPurges(ctx, evs[2:]); err != nil {
		t.Fatal(err)
	}
	got := must[[]wiki.PurgeEvent](t)(s.PurgesAfter(ctx, 0, 10))
	if len(got) != 3 {
		t.Fatalf("got %d events, want 3", len(got))
	}
	for i, ev := range got {
		if ev.ID != got[0].ID+int64(i) {
			t.Fatalf("IDs %d, %d, %d: not one by one", got[0].ID, got[1].ID, got[2].ID)
		}
		want := evs[i]
		if ev.Origin != want.Origin || ev.Stale != want.Stale || !slices.Equal(ev.Titles, want.Titles) ||
			!slices.Equal(ev.PageIDs, want.PageIDs) || !slices.Equal(ev.Users, want.Users) ||
			!slices.Equal(ev.Sessions, want.Sessions) || !ev.Time.Equal(want.Time) {
			t.Fatalf("event %d: %+v, want %+v", i, ev, want)
		}
	}
	if last := must[int64](t)(s.LastPurge(ctx)); last != got[2].ID {
		t.Fatalf("last purge %d, want %d", last, got[2].ID)
	}
	if after := must[[]wiki.PurgeEvent](t)(s.PurgesAfter(ctx, got[0].ID, 1)); len(after) != 1 || after[0].ID != got[1].ID {
		t.Fatalf("one after the first: %+v", after)
	}
	// Trimming everything older than the last keeps the last.
	if n := must[int](t)(s.TrimPurges(ctx, at(10))); n != 2 {
		t.Fatalf("trimmed %d, want 2", n)
	}
	left := must[[]wiki.PurgeEvent](t)(s.PurgesAfter(ctx, 0, 10))
	if len(left) != 1 || left[0].ID != got[2].ID {
		t.Fatalf("after trimming: %+v, want the newest alone", left)
	}
	// IDs are never reused, so a reader behind sees the gap.
	if err := s.AppendPurges(ctx, evs[:1]); err != nil {
		t.Fatal(err)
	}
	if last := must[int64](t)(s.LastPurge(ctx)); last != got[2].ID+1 {
		t.Fatalf("after trimming, the next ID is %d, want %d", last, got[2].ID+1)
	}
	// Processes' clocks differ: an old event between two recent ones stays,
	// or a reader would miss it without seeing a gap.
	for _, m := range []int{101, 99, 101} {
		if err := s.AppendPurges(ctx, []wiki.PurgeEvent{{Origin: "c", Time: at(m)}}); err != nil {
			t.Fatal(err)
		}
	}
	before := len(must[[]wiki.PurgeEvent](t)(s.PurgesAfter(ctx, 0, 100)))
	if n := must[int](t)(s.TrimPurges(ctx, at(100))); n != before-3 {
		t.Fatalf("trimmed %d of %d, want all but the last three (the oldest before the first recent one)", n, before)
	}
}

// A change carries its purge log event with its jobs (wiki.PurgeSpec): the
// event is appended in the change's transaction, not queued as a job, and
// a change that fails leaves none.
func testPurgeOutbox(t *testing.T, s wiki.Store) {
	ev := func(title string) wiki.JobSpec {
		return wiki.PurgeSpec(wiki.PurgeEvent{Origin: "node-a", Titles: []wiki.Title{wiki.Title(title)}, PageIDs: []int64{3}, Time: at(1)})
	}
	events := func() []wiki.PurgeEvent { return must[[]wiki.PurgeEvent](t)(s.PurgesAfter(ctx, 0, 100)) }
	r, err := s.SavePage(ctx, wiki.SaveRequest{Title: "A", Text: "one", UserName: "U", Time: at(1),
		Jobs: []wiki.JobSpec{spec("search", `{"title":"A"}`), ev("A")}})
	if err != nil {
		t.Fatal(err)
	}
	got := events()
	if len(got) != 1 || got[0].Origin != "node-a" || !slices.Equal(got[0].Titles, []wiki.Title{"A"}) || !slices.Equal(got[0].PageIDs, []int64{3}) {
		t.Fatalf("events after the save: %+v", got)
	}
	if n := jobCount(t, s); n != 1 {
		t.Fatalf("%d jobs queued, want the save's one job (the event is not a job)", n)
	}
	// A save on a stale base commits nothing, its event included.
	_, err = s.SavePage(ctx, wiki.SaveRequest{Title: "A", Text: "two", UserName: "U", BaseRevID: r.Revision.ID + 100, Time: at(2),
		Jobs: []wiki.JobSpec{ev("A")}})
	wantErr(t, err, wiki.ErrConflict)
	if n := len(events()); n != 1 {
		t.Fatalf("%d events after a failed save, want 1", n)
	}
	// The other changes carry theirs the same way.
	if _, err := s.MovePage(ctx, wiki.MoveRequest{From: "A", To: "B", UserName: "U", Time: at(3), Jobs: []wiki.JobSpec{ev("B")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeletePage(ctx, "B", 0, "U", "", at(4), ev("B")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UndeletePage(ctx, "B", 0, "U", "", at(5), ev("B")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ProtectPage(ctx, wiki.ProtectRequest{Title: "B", Edit: wiki.ProtectAdmins, UserName: "U", Time: at(6), Jobs: []wiki.JobSpec{ev("B")}}); err != nil {
		t.Fatal(err)
	}
	got = events()
	if len(got) != 5 {
		t.Fatalf("%d events after a save, a move, a deletion, a restoration and a protection, want 5", len(got))
	}
	for i := range got[1:] {
		if got[i+1].ID != got[i].ID+1 {
			t.Fatalf("event IDs not one by one: %d then %d", got[i].ID, got[i+1].ID)
		}
	}
}

func testTransclusions(t *testing.T, s wiki.Store) {
	box := wiki.Title("Template:Box")
	save(t, s, "Template:Box", 0, "box", wiki.LinkSet{Templates: []wiki.Title{"Template:Inner"}})
	save(t, s, "Apple", 0, "{{Box}}", wiki.LinkSet{Templates: []wiki.Title{box, "Template:Inner"}})
	save(t, s, "Banana", 0, "[[Template:Box]]", wiki.LinkSet{Links: []wiki.Title{box}})
	save(t, s, "Cherry", 0, "{{Box}}", wiki.LinkSet{Templates: []wiki.Title{box}})
	save(t, s, "Durian", 0, "{{Box}}", wiki.LinkSet{Templates: []wiki.Title{box}})
	if err := s.DeletePage(ctx, "Durian", 0, "M", "", at(2)); err != nil {
		t.Fatal(err)
	}
	// In page ID order: Template:Box was saved first.
	if ps := must[[]wiki.Page](t)(s.Dependents(ctx, box, wiki.TemplateUse, 0, 10)); titles(ps) != "Apple,Cherry" {
		t.Fatalf("transclusions = %s, want the live pages transcluding it", titles(ps))
	}
	apple := must[wiki.Page](t)(s.FindPage(ctx, "Apple"))
	if ps := must[[]wiki.Page](t)(s.Dependents(ctx, box, wiki.TemplateUse, apple.ID, 1)); titles(ps) != "Cherry" {
		t.Fatalf("transclusions after Apple = %s", titles(ps))
	}
	if ps := must[[]wiki.Page](t)(s.Dependents(ctx, "Template:Inner", wiki.TemplateUse, 0, 10)); titles(ps) != "Template:Box,Apple" {
		t.Fatalf("transclusions of the inner template = %s, want the direct and the indirect user", titles(ps))
	}
	if ps := must[[]wiki.Page](t)(s.Backlinks(ctx, box, wiki.ListQuery{})); titles(ps) != "Banana" {
		t.Fatalf("backlinks = %s, want the link only", titles(ps))
	}
	if n := must[int](t)(s.CountTransclusions(ctx, box)); n != 2 {
		t.Fatalf("count = %d, want 2", n)
	}
	if n := must[int](t)(s.CountTransclusions(ctx, "Template:None")); n != 0 {
		t.Fatalf("count of an unused title = %d", n)
	}
	// A transclusions job is enqueued only for a title some page
	// transcludes; a backlinks job is not held to that.
	job := func(kind string, t wiki.Title) wiki.JobSpec {
		return wiki.JobSpec{Kind: kind, Payload: []byte(`{"title":"` + string(t) + `"}`), Key: kind + ":" + string(t)}
	}
	if err := s.EnqueueJobs(ctx, []wiki.JobSpec{job(wiki.JobTransclusions, box), job(wiki.JobTransclusions, "Banana"),
		job(wiki.JobBacklinks, "Banana")}); err != nil {
		t.Fatal(err)
	}
	queued := must[[]wiki.Job](t)(s.ListJobs(ctx, wiki.JobQueued, 100))
	var got []string
	for _, j := range queued {
		got = append(got, j.Key)
	}
	slices.Sort(got)
	if want := "backlinks:Banana,transclusions:Template:Box"; strings.Join(got, ",") != want {
		t.Fatalf("queued %v, want %s", got, want)
	}
	a := must[wiki.Page](t)(s.FindPage(ctx, "Apple"))
	if ts := must[[]wiki.Title](t)(s.PageTemplates(ctx, a.ID)); len(ts) != 2 || ts[0] != box || ts[1] != "Template:Inner" {
		t.Fatalf("Apple's templates = %v", ts)
	}
	b := must[wiki.Page](t)(s.FindPage(ctx, "Banana"))
	if ls := must[[]wiki.Title](t)(s.PageLinks(ctx, b.ID)); len(ls) != 1 || ls[0] != box {
		t.Fatalf("Banana's links = %v", ls)
	}
	if ls := must[[]wiki.Title](t)(s.PageLinks(ctx, a.ID)); len(ls) != 0 {
		t.Fatalf("Apple's links (it only transcludes) = %v", ls)
	}
	// The rows go with the page's next save.
	save(t, s, "Apple", a.LatestID, "plain", wiki.LinkSet{})
	if n := must[int](t)(s.CountTransclusions(ctx, box)); n != 1 {
		t.Fatalf("count after an edit dropped the template = %d, want 1", n)
	}
	// An entry made from the latest revision is made again only once
	// marked stale (a template it shows changed).
	c := must[wiki.Page](t)(s.FindPage(ctx, "Cherry"))
	calls := 0
	reindex := func() {
		t.Helper()
		if err := s.UpdateSearchIndex(ctx, c.ID, func(string, wiki.ContentModel) string { calls++; return "zebrafinch" }); err != nil {
			t.Fatal(err)
		}
	}
	reindex()
	if calls != 0 {
		t.Fatalf("an entry made from the latest revision was made again (%d calls)", calls)
	}
	if err := s.MarkSearchStale(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	reindex()
	if hits := must[[]wiki.SearchHit](t)(s.Search(ctx, wiki.SearchQuery{Text: "zebrafinch", Limit: 5})); calls != 1 || len(hits) != 1 || hits[0].Title != "Cherry" {
		t.Fatalf("after MarkSearchStale: %d calls, hits %v; want the entry made again", calls, hits)
	}
	// ReindexPages writes the entries of pages at their entry's revision
	// and skips the others: a newer revision, a deleted page, no page.
	c = must[wiki.Page](t)(s.FindPage(ctx, "Cherry"))
	a = must[wiki.Page](t)(s.FindPage(ctx, "Apple"))
	stale := a.LatestID
	save(t, s, "Apple", a.LatestID, "plain again", wiki.LinkSet{})
	err := s.ReindexPages(ctx, []wiki.SearchEntry{
		{PageID: c.ID, RevID: c.LatestID, Text: "quetzal"},
		{PageID: a.ID, RevID: stale, Text: "quetzal"},
		{PageID: 1 << 40, RevID: 1, Text: "quetzal"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if hits := must[[]wiki.SearchHit](t)(s.Search(ctx, wiki.SearchQuery{Text: "quetzal", Limit: 5})); len(hits) != 1 || hits[0].Title != "Cherry" {
		t.Fatalf("after ReindexPages: hits %v; want Cherry alone", hits)
	}
	if hits := must[[]wiki.SearchHit](t)(s.Search(ctx, wiki.SearchQuery{Text: "zebrafinch", Limit: 5})); len(hits) != 0 {
		t.Fatalf("after ReindexPages: the old entry is still found: %v", hits)
	}
	if err := s.ReindexPages(ctx, nil); err != nil {
		t.Fatal(err)
	}
}

func testDependents(t *testing.T, s wiki.Store) {
	const target = "Target"
	link := wiki.LinkSet{Links: []wiki.Title{target}}
	// Saved in this order, so that IDs rise from Zed to Alpha: the order
	// is by ID, not by title.
	save(t, s, "Zed", 0, "links", link)
	save(t, s, "Young", 0, "#REDIRECT [[Target]]", wiki.LinkSet{Links: []wiki.Title{target}, Redirect: target})
	save(t, s, "Xray", 0, "uses", wiki.LinkSet{Links: []wiki.Title{target}, Templates: []wiki.Title{target}})
	save(t, s, "Gone", 0, "links", link)
	save(t, s, "Alpha", 0, "uses", wiki.LinkSet{Templates: []wiki.Title{target}})
	save(t, s, "Other", 0, "links elsewhere", wiki.LinkSet{Links: []wiki.Title{"Elsewhere"}})
	if err := s.DeletePage(ctx, "Gone", 2, "Admin", "gone", at(2)); err != nil {
		t.Fatal(err)
	}
	names := func(ps []wiki.Page) string {
		var out []string
		for i, p := range ps {
			if i > 0 && p.ID <= ps[i-1].ID {
				t.Errorf("not in ID order: %v", ps)
			}
			out = append(out, string(p.Title))
		}
		return strings.Join(out, ",")
	}
	walk := func(use wiki.Use, limit int) string {
		var parts []string
		after := int64(0)
		for range 10 {
			ps := must[[]wiki.Page](t)(s.Dependents(ctx, target, use, after, limit))
			if len(ps) == 0 {
				return strings.Join(parts, "|")
			}
			if len(ps) > limit {
				t.Fatalf("%d pages for a limit of %d", len(ps), limit)
			}
			parts = append(parts, names(ps))
			after = ps[len(ps)-1].ID
		}
		t.Fatal("the walk does not end")
		return ""
	}
	if got, want := walk(wiki.LinkUse, 2), "Zed,Young|Xray"; got != want {
		t.Errorf("links in batches of 2: %s, want %s", got, want)
	}
	if got, want := walk(wiki.LinkUse, 500), "Zed,Young,Xray"; got != want {
		t.Errorf("links: %s, want %s", got, want)
	}
	if got, want := walk(wiki.TemplateUse, 1), "Xray|Alpha"; got != want {
		t.Errorf("transclusions in batches of 1: %s, want %s", got, want)
	}
}

// cmpID compares the leading change IDs of "ID title" strings.
func cmpID(a, b string) int {
	var x, y int64
	fmt.Sscan(a, &x)
	fmt.Sscan(b, &y)
	return cmp.Compare(x, y)
}
