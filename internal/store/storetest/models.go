package storetest

import (
	"testing"

	"github.com/wikid/wikid/internal/wiki"
)

// saveModel saves text at title on base with content model m (empty: the
// page's).
func saveModel(t *testing.T, s wiki.Store, title string, base int64, text string, m wiki.ContentModel, n int) wiki.SaveResult {
	t.Helper()
	res, err := s.SavePage(ctx, wiki.SaveRequest{
		Title: wiki.MustTitle(title), Text: text, Summary: "edit " + title, UserID: 1, UserName: "Alice",
		BaseRevID: base, SearchText: text, Time: at(n), Model: m,
	})
	if err != nil {
		t.Fatalf("save %q as %q: %v", title, m, err)
	}
	return res
}

// wantModel checks the model of page title and of its latest revision.
func wantModel(t *testing.T, s wiki.Store, title string, m wiki.ContentModel) {
	t.Helper()
	p := must[wiki.Page](t)(s.FindPage(ctx, wiki.MustTitle(title)))
	if p.Model != m {
		t.Errorf("page %q: model %q, want %q", title, p.Model, m)
	}
	if r := must[wiki.Revision](t)(s.FindRevision(ctx, p.LatestID)); r.Model != m {
		t.Errorf("latest revision of %q: model %q, want %q", title, r.Model, m)
	}
}

func testContentModels(t *testing.T, s wiki.Store) {
	// A new page without a model is Markdown; one with a model keeps it
	// through edits that do not name one.
	md := saveModel(t, s, "Plain", 0, "# Hi", "", 1)
	if md.Revision.Model != wiki.ModelMarkdown || md.Page.Model != wiki.ModelMarkdown {
		t.Fatalf("new page without a model: %+v", md)
	}
	wt := saveModel(t, s, "Wiki", 0, "== Hi ==", wiki.ModelWikitext, 1)
	if wt.Revision.Model != wiki.ModelWikitext || wt.Page.Model != wiki.ModelWikitext {
		t.Fatalf("new wikitext page: %+v", wt)
	}
	wt = saveModel(t, s, "Wiki", wt.Revision.ID, "== Hello ==", "", 2)
	wantModel(t, s, "Wiki", wiki.ModelWikitext)

	// The same text in another model is a revision, not a null edit; the
	// same text in the same model is a null edit.
	conv := saveModel(t, s, "Wiki", wt.Revision.ID, "== Hello ==", wiki.ModelMarkdown, 3)
	if conv.Unchanged || conv.Revision.ID == wt.Revision.ID {
		t.Fatalf("a model change with the same text was a null edit: %+v", conv)
	}
	wantModel(t, s, "Wiki", wiki.ModelMarkdown)
	if again := saveModel(t, s, "Wiki", conv.Revision.ID, "== Hello ==", wiki.ModelMarkdown, 4); !again.Unchanged {
		t.Fatalf("the same text and model was not a null edit: %+v", again)
	}
	wt = saveModel(t, s, "Wiki", conv.Revision.ID, "== Hello ==", wiki.ModelWikitext, 5)
	if old := must[wiki.Revision](t)(s.FindRevision(ctx, conv.Revision.ID)); old.Model != wiki.ModelMarkdown {
		t.Fatalf("an old revision's model changed: %+v", old)
	}
	// Each change of model of a live page is logged, with the save's
	// summary, as MediaWiki's contentmodel log; a creation is not.
	logged := must[[]wiki.LogEntry](t)(s.Log(ctx, wiki.LogQuery{Type: wiki.LogContentModel, Limit: 10}))
	if len(logged) != 2 {
		t.Fatalf("content model log: %+v, want the two changes of Wiki", logged)
	}
	for i, want := range [][2]string{{"markdown", "wikitext"}, {"wikitext", "markdown"}} {
		e := logged[i]
		if e.Target != "Wiki" || e.Action != "change" || e.PageID != wt.Page.ID || e.UserName != "Alice" || e.Comment != "edit Wiki" ||
			e.Params["old"] != want[0] || e.Params["new"] != want[1] {
			t.Errorf("content model log entry %d: %+v, want %s to %s", i, e, want[0], want[1])
		}
	}
	if hist := must[[]wiki.Revision](t)(s.History(ctx, wiki.HistoryQuery{PageID: wt.Page.ID, Limit: 10})); len(hist) != 4 || hist[0].Model != wiki.ModelWikitext || hist[1].Model != wiki.ModelMarkdown {
		t.Fatalf("history models: %+v", hist)
	}

	// A move keeps the model, and the redirect left behind has it too.
	if _, err := s.MovePage(ctx, wiki.MoveRequest{From: "Wiki", To: "Wiki2", Reason: "rename", UserName: "Mover",
		LeaveRedirect: true, RedirectText: "#REDIRECT [[Wiki2]]", RedirectLinks: wiki.LinkSet{Redirect: "Wiki2"}, Time: at(6)}); err != nil {
		t.Fatal(err)
	}
	wantModel(t, s, "Wiki2", wiki.ModelWikitext)
	wantModel(t, s, "Wiki", wiki.ModelWikitext)

	// A deleted page re-created without a model takes its old one; an
	// undelete restores the latest revision's.
	if err := s.DeletePage(ctx, "Wiki2", 2, "Admin", "test", at(7)); err != nil {
		t.Fatal(err)
	}
	re := saveModel(t, s, "Wiki2", 0, "again", "", 8)
	if re.Revision.Model != wiki.ModelWikitext {
		t.Fatalf("re-created page: model %q", re.Revision.Model)
	}
	if err := s.DeletePage(ctx, "Wiki2", 2, "Admin", "test", at(9)); err != nil {
		t.Fatal(err)
	}
	saveModel(t, s, "Wiki2", 0, "new start", wiki.ModelMarkdown, 10)
	if err := s.DeletePage(ctx, "Wiki2", 2, "Admin", "test", at(11)); err != nil {
		t.Fatal(err)
	}
	if p := must[wiki.Page](t)(s.UndeletePage(ctx, "Wiki2", 2, "Admin", "back", at(12))); p.Model != wiki.ModelMarkdown {
		t.Fatalf("undeleted page: model %q", p.Model)
	}
	wantModel(t, s, "Wiki2", wiki.ModelMarkdown)

	// An import batch keeps each request's model, and a listing tells it.
	res, err := s.ImportPages(ctx, []wiki.SaveRequest{
		{Title: "Imp", Text: "one", UserName: "imported>Bob", Time: at(13), Model: wiki.ModelWikitext},
		{Title: "Imp", Text: "one", UserName: "imported>Bob", Time: at(14), Model: wiki.ModelWikitext},
		{Title: "Imp", Text: "two", UserName: "imported>Bob", Time: at(15)},
		{Title: "Plain", Text: "# Hi", UserName: "imported>Bob", Time: at(16), Model: wiki.ModelWikitext},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res[1].Unchanged || res[2].Unchanged || res[3].Unchanged {
		t.Fatalf("import results: %+v", res)
	}
	wantModel(t, s, "Imp", wiki.ModelWikitext)
	wantModel(t, s, "Plain", wiki.ModelWikitext)
	pages := must[[]wiki.Page](t)(s.AllPages(ctx, wiki.ListQuery{Limit: 10}))
	for _, p := range pages {
		if p.Model == "" {
			t.Errorf("all pages: %q has no model", p.Title)
		}
	}
}
