package storetest

import (
	"slices"
	"testing"

	"github.com/wikid/wikid/internal/wiki"
)

func testImportHistory(t *testing.T, s wiki.Store) {
	rev := func(text string, n int, user string, minor bool) wiki.HistoryRevision {
		return wiki.HistoryRevision{Text: text, Time: at(n), UserName: user, Summary: "s " + text, Minor: minor}
	}
	req := wiki.HistoryRequest{
		Title:     "Hist",
		Revisions: []wiki.HistoryRevision{rev("one", 1, "imported>Ann", false), rev("two", 2, "192.0.2.1", true), rev("three [[Dest]]", 3, "imported>Bob", false)},
		Links:     wiki.LinkSet{Links: []wiki.Title{"Dest"}}, SearchText: "three tortoise",
		Log: wiki.LogEntry{Type: wiki.LogImport, Action: "upload", UserName: "Importer", Comment: "dump"},
	}
	res, err := s.ImportHistory(ctx, []wiki.HistoryRequest{req, {Title: "Other", Revisions: []wiki.HistoryRevision{rev("x", 4, "imported>Ann", false)}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; r.Added != 3 || r.Skipped != 0 || !r.Created || !r.Latest || r.Page.ID == 0 {
		t.Fatalf("first import: %+v", r)
	}
	p := must[wiki.Page](t)(s.FindPage(ctx, "Hist"))
	hist := must[[]wiki.Revision](t)(s.History(ctx, wiki.HistoryQuery{PageID: p.ID, Limit: 10}))
	if len(hist) != 3 {
		t.Fatalf("history: %d revisions", len(hist))
	}
	for i, want := range []string{"imported>Bob", "192.0.2.1", "imported>Ann"} {
		h := hist[i]
		if h.UserName != want || !h.Time.Equal(at(3-i)) || h.Model != wiki.ModelWikitext || h.Minor != (i == 1) {
			t.Errorf("revision %d: %+v", i, h)
		}
		if i < 2 && h.ParentID != hist[i+1].ID {
			t.Errorf("revision %d: parent %d, want %d", i, h.ParentID, hist[i+1].ID)
		}
	}
	if p.LatestID != hist[0].ID || p.Model != wiki.ModelWikitext {
		t.Errorf("page %+v", p)
	}
	// The latest revision's links and search entry are written; history
	// revisions make no recent change.
	if bl := must[[]wiki.Page](t)(s.Backlinks(ctx, "Dest", wiki.ListQuery{Limit: 5})); len(bl) != 1 {
		t.Errorf("backlinks of Dest: %v", bl)
	}
	if hits := must[[]wiki.SearchHit](t)(s.Search(ctx, wiki.SearchQuery{Text: "tortoise", Limit: 5})); len(hits) != 1 {
		t.Errorf("search: %v", hits)
	}
	if ch := must[[]wiki.Change](t)(s.RecentChanges(ctx, wiki.ChangeQuery{Limit: 10})); len(ch) != 0 {
		t.Errorf("recent changes: %+v", ch)
	}
	if log := must[[]wiki.LogEntry](t)(s.Log(ctx, wiki.LogQuery{Type: wiki.LogImport, Limit: 5})); len(log) != 1 || log[0].Target != "Hist" || log[0].Params["count"] != "3" {
		t.Errorf("import log: %+v", log)
	}

	// Importing again adds nothing; a newer revision goes on top, an older
	// new one into the history only.
	res = must[[]wiki.HistoryResult](t)(s.ImportHistory(ctx, []wiki.HistoryRequest{req}))
	if r := res[0]; r.Added != 0 || r.Skipped != 3 || r.Latest {
		t.Fatalf("second import: %+v", r)
	}
	more := req
	more.Revisions = append(append([]wiki.HistoryRevision{}, req.Revisions...), rev("four", 5, "imported>Ann", false))
	more.Links = wiki.LinkSet{}
	res = must[[]wiki.HistoryResult](t)(s.ImportHistory(ctx, []wiki.HistoryRequest{more}))
	if r := res[0]; r.Added != 1 || r.Skipped != 3 || !r.Latest || r.Created {
		t.Fatalf("third import: %+v", r)
	}
	if bl := must[[]wiki.Page](t)(s.Backlinks(ctx, "Dest", wiki.ListQuery{Limit: 5})); len(bl) != 0 {
		t.Errorf("backlinks of Dest after the newer revision: %v", bl)
	}
	old := wiki.HistoryRequest{Title: "Hist", Revisions: []wiki.HistoryRevision{rev("zero", 0, "imported>Old", false)}}
	res = must[[]wiki.HistoryResult](t)(s.ImportHistory(ctx, []wiki.HistoryRequest{old}))
	if r := res[0]; r.Added != 1 || r.Latest {
		t.Fatalf("older import: %+v", r)
	}
	p2 := must[wiki.Page](t)(s.FindPage(ctx, "Hist"))
	if latest := must[wiki.Revision](t)(s.FindRevision(ctx, p2.LatestID)); latest.Text != "four" {
		t.Errorf("latest after an older import: %q", latest.Text)
	}

	// A deleted page is created again by an import; its hidden revisions
	// stay hidden.
	if err := s.DeletePage(ctx, "Other", 1, "Admin", "gone", at(6)); err != nil {
		t.Fatal(err)
	}
	res = must[[]wiki.HistoryResult](t)(s.ImportHistory(ctx, []wiki.HistoryRequest{{Title: "Other", Revisions: []wiki.HistoryRevision{rev("x", 4, "imported>Ann", false), rev("y", 7, "imported>Ann", false)}}}))
	if r := res[0]; r.Added != 2 || !r.Created || !r.Latest {
		t.Fatalf("import onto a deleted page: %+v", r)
	}
	o := must[wiki.Page](t)(s.FindPage(ctx, "Other"))
	if h := must[[]wiki.Revision](t)(s.History(ctx, wiki.HistoryQuery{PageID: o.ID, Limit: 10})); len(h) != 2 || o.Deleted {
		t.Errorf("recreated page: %+v, %d revisions", o, len(h))
	}

	// The backlinks jobs of the titles pages link to are gathered into
	// one for the batch; an unlinked title has none.
	_, before := queuedBacklinks(t, s)
	save(t, s, "History linker", 0, "[[H1]] [[H2]]", wiki.LinkSet{Links: []wiki.Title{"H1", "H2"}})
	hreq := func(title string, n int) wiki.HistoryRequest {
		return wiki.HistoryRequest{Title: wiki.Title(title), Revisions: []wiki.HistoryRevision{rev(title, n, "imported>Ann", false)},
			Jobs: []wiki.JobSpec{{Kind: wiki.JobBacklinks, Payload: []byte(`{"title":"` + title + `"}`), Key: "backlinks:" + title}}}
	}
	must[[]wiki.HistoryResult](t)(s.ImportHistory(ctx, []wiki.HistoryRequest{hreq("H1", 8), hreq("Lonely history", 8), hreq("H2", 8)}))
	kinds, n := queuedBacklinks(t, s)
	if n != before+1 || len(kinds) < 2 || !slices.Equal(kinds[:2], []string{"backlinks:H1", "backlinks:H2"}) || slices.Contains(kinds, "backlinks:Lonely history") {
		t.Fatalf("backlinks jobs = %v (%d jobs, %d before), want one more for the batch's two linked titles", kinds, n, before)
	}
}
