package engine_test

import (
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/store/sqlite/sqlitetest"
	"github.com/wikid/wikid/internal/wiki"
)

// templateWiki is an engine on a fresh database whose purges are recorded.
func templateWiki(t *testing.T) (*sqlite.DB, *engine.Engine, *purges) {
	t.Helper()
	db := sqlitetest.Open(t)
	p := &purges{}
	e := engine.New(engine.Options{Store: db, Renderer: render.New(), Purger: p, CDN: engine.NoExternalPurge{}, SiteName: "Acme"})
	return db, e, p
}

func saveText(t *testing.T, e *engine.Engine, title, text string) {
	t.Helper()
	if _, err := e.Save(ctx, engine.Edit{Title: wiki.MustTitle(title), Text: text, Editor: engine.Editor{UserName: "U"}}); err != nil {
		t.Fatalf("save %s: %v", title, err)
	}
}

func editText(t *testing.T, e *engine.Engine, db *sqlite.DB, title, text string) {
	t.Helper()
	p, err := db.FindPage(ctx, wiki.MustTitle(title))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Save(ctx, engine.Edit{Title: p.Title, Text: text, BaseRevID: p.LatestID, Editor: engine.Editor{UserName: "U"}}); err != nil {
		t.Fatalf("edit %s: %v", title, err)
	}
}

func viewHTML(t *testing.T, e *engine.Engine, title string) string {
	t.Helper()
	v, err := e.ViewPage(ctx, wiki.MustTitle(title), false)
	if err != nil {
		t.Fatalf("view %s: %v", title, err)
	}
	return v.Rendered.HTML
}

// importPages yields pages for Engine.Import.
func importPages(pages []engine.ImportPage) iter.Seq2[engine.ImportPage, error] {
	return func(yield func(engine.ImportPage, error) bool) {
		for _, p := range pages {
			if !yield(p, nil) {
				return
			}
		}
	}
}

// drainAll runs every due job, including those the jobs queue, until none is
// left.
func drainAll(t *testing.T, db *sqlite.DB, e *engine.Engine) {
	t.Helper()
	for range 20 {
		if runJobs(t, db, e, "", 1) == 0 {
			return
		}
	}
	t.Fatal("the jobs never ran out")
}

// A page shows its templates' text with its parameters; an edit of a
// template, directly used or through another template, reaches every page
// using it through jobs, with the links and categories its new text makes.
func TestTemplateEditReachesItsPages(t *testing.T) {
	t.Parallel()
	db, e, p := templateWiki(t)
	saveText(t, e, "Template:Inner", "inner {{{1|none}}}")
	saveText(t, e, "Template:Box", "Box of {{{what}}} on {{PAGENAME}} at {{SITENAME}}: {{Inner|{{{what}}}}}")
	saveText(t, e, "Apple", "Intro.\n\n{{Box|what=apples}}")
	saveText(t, e, "Pear", "{{Inner}}")
	drainAll(t, db, e)
	if h := viewHTML(t, e, "Apple"); !strings.Contains(h, "Box of apples on Apple at Acme: inner apples") {
		t.Fatalf("Apple renders %q", h)
	}
	if h := viewHTML(t, e, "Pear"); !strings.Contains(h, "inner none") {
		t.Fatalf("Pear renders %q", h)
	}
	users, err := db.Dependents(ctx, "Template:Inner", wiki.TemplateUse, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := titlesOf(users); got != "Template:Box,Apple,Pear" {
		t.Fatalf("Template:Inner is transcluded by %s", got)
	}

	p.titles = nil
	editText(t, e, db, "Template:Inner", "changed {{{1|none}}} [[Elsewhere]] [[Category:Boxed]]")
	// Until the jobs run, readers keep the page as it was.
	if h := viewHTML(t, e, "Apple"); !strings.Contains(h, "inner apples") {
		t.Fatalf("Apple changed before its jobs ran: %q", h)
	}
	drainAll(t, db, e)
	if h := viewHTML(t, e, "Apple"); !strings.Contains(h, "changed apples") || !strings.Contains(h, "Elsewhere") {
		t.Fatalf("after the jobs Apple renders %q", h)
	}
	if h := viewHTML(t, e, "Pear"); !strings.Contains(h, "changed none") {
		t.Fatalf("after the jobs Pear renders %q", h)
	}
	for _, want := range []string{"Apple", "Pear", "Template:Box"} {
		if !slices.Contains(p.titles, want) {
			t.Errorf("%s was not refreshed (refreshed: %v)", want, p.titles)
		}
	}
	members, err := db.CategoryMembers(ctx, "Category:Boxed", wiki.CategoryQuery{})
	if err != nil {
		t.Fatal(err)
	}
	// By sort key: names without the namespace prefix.
	if got := memberTitles(members); got != "Apple,Template:Box,Template:Inner,Pear" {
		t.Fatalf("Category:Boxed holds %s, want every page the template's category reaches", got)
	}
	back, err := db.Backlinks(ctx, "Elsewhere", wiki.ListQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if got := titlesOf(back); !strings.Contains(got, "Apple") {
		t.Fatalf("Elsewhere is linked from %s, want Apple among them (through its template)", got)
	}
}

// A missing template is a red link that turns into the template's text
// once it is created; a deleted one turns back into a red link.
func TestMissingTemplateFilledWhenCreated(t *testing.T) {
	t.Parallel()
	db, e, _ := templateWiki(t)
	saveText(t, e, "Page", "Before {{Later|x}} after")
	drainAll(t, db, e)
	if h := viewHTML(t, e, "Page"); !strings.Contains(h, `class="new"`) || !strings.Contains(h, "Template:Later") {
		t.Fatalf("a missing template renders %q, want a red link to it", h)
	}
	saveText(t, e, "Template:Later", "LATER {{{1}}}")
	drainAll(t, db, e)
	if h := viewHTML(t, e, "Page"); !strings.Contains(h, "Before LATER x after") || strings.Contains(h, `class="new"`) {
		t.Fatalf("after the template's creation the page renders %q", h)
	}
	if err := e.Delete(ctx, "Template:Later", "gone", engine.Editor{UserName: "U"}); err != nil {
		t.Fatal(err)
	}
	drainAll(t, db, e)
	if h := viewHTML(t, e, "Page"); strings.Contains(h, "LATER") || !strings.Contains(h, `class="new"`) {
		t.Fatalf("after the template's deletion the page renders %q", h)
	}
}

// A template loop is an error box naming it, never a hang, and the page
// still saves and renders.
func TestTemplateLoopIsAnError(t *testing.T) {
	t.Parallel()
	db, e, _ := templateWiki(t)
	saveText(t, e, "Template:A", "a {{B}}")
	saveText(t, e, "Template:B", "b {{A}}")
	saveText(t, e, "Looping", "Start {{A}} end")
	drainAll(t, db, e)
	done := make(chan string, 1)
	go func() { done <- viewHTML(t, e, "Looping") }()
	select {
	case h := <-done:
		if !strings.Contains(h, `class="error"`) || !strings.Contains(h, "loop") || !strings.Contains(h, "Template:A") {
			t.Fatalf("a loop renders %q, want an error box naming it", h)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a template loop did not finish rendering")
	}
}

// Pages without templates pay nothing: no template rows, no
// transclusions job for a title no page transcludes.
func TestNoTemplateNoJob(t *testing.T) {
	t.Parallel()
	db, e, _ := templateWiki(t)
	saveText(t, e, "Plain", "No braces here, a [[Link]].")
	editText(t, e, db, "Plain", "Still none.")
	jobs, err := db.ListJobs(ctx, wiki.JobQueued, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Kind == wiki.JobTransclusions {
			t.Fatalf("a page nothing transcludes queued %s", j.Key)
		}
	}
}

// The dynamic macros stay what they were: not templates.
func TestMacrosAreNotTemplates(t *testing.T) {
	t.Parallel()
	db, e, _ := templateWiki(t)
	saveText(t, e, "Template:Recentchanges", "NOT THE MACRO")
	saveText(t, e, "Home", "{{recentchanges}} and {{pagecount}}")
	drainAll(t, db, e)
	h := viewHTML(t, e, "Home")
	if strings.Contains(h, "NOT THE MACRO") || !strings.Contains(h, `data-macro="recentchanges"`) || !strings.Contains(h, `data-macro="pagecount"`) {
		t.Fatalf("macros render %q", h)
	}
}

func titlesOf(ps []wiki.Page) string {
	var ts []string
	for _, p := range ps {
		ts = append(ts, string(p.Title))
	}
	return strings.Join(ts, ",")
}

// memberTitles lists the titles of a category listing, in order.
func memberTitles(ms []wiki.CategoryMember) string {
	var ts []string
	for _, m := range ms {
		ts = append(ts, string(m.Title))
	}
	return strings.Join(ts, ",")
}

// A moved page's rows follow its new name ({{PAGENAME}} in a template's
// name), so that the templates it uses now reach it.
func TestMovedPageFollowsItsNewTemplates(t *testing.T) {
	t.Parallel()
	db, e, _ := templateWiki(t)
	saveText(t, e, "Template:Doc Foo", "doc of foo")
	saveText(t, e, "Template:Doc Bar", "doc of bar")
	saveText(t, e, "Foo", "{{Doc {{PAGENAME}}}}")
	drainAll(t, db, e)
	if _, err := e.Move(ctx, "Foo", "Bar", "rename", false, engine.Editor{UserName: "U"}); err != nil {
		t.Fatal(err)
	}
	drainAll(t, db, e)
	if h := viewHTML(t, e, "Bar"); !strings.Contains(h, "doc of bar") {
		t.Fatalf("the moved page renders %q", h)
	}
	editText(t, e, db, "Template:Doc Bar", "doc of bar, edited")
	drainAll(t, db, e)
	if h := viewHTML(t, e, "Bar"); !strings.Contains(h, "doc of bar, edited") {
		t.Fatalf("after its new template's edit the moved page renders %q", h)
	}
}

// A page deleted while a template it uses changed shows the template's
// new text once restored.
func TestUndeletedPageShowsCurrentTemplates(t *testing.T) {
	t.Parallel()
	db, e, _ := templateWiki(t)
	saveText(t, e, "Template:X", "old text")
	saveText(t, e, "P", "page {{X}}")
	drainAll(t, db, e)
	if h := viewHTML(t, e, "P"); !strings.Contains(h, "page old text") {
		t.Fatalf("P renders %q", h)
	}
	ed := engine.Editor{UserName: "U", Group: wiki.GroupAdmin}
	if err := e.Delete(ctx, "P", "", ed); err != nil {
		t.Fatal(err)
	}
	editText(t, e, db, "Template:X", "new text")
	drainAll(t, db, e)
	if _, err := e.Undelete(ctx, "P", "", ed); err != nil {
		t.Fatal(err)
	}
	drainAll(t, db, e)
	if h := viewHTML(t, e, "P"); !strings.Contains(h, "page new text") {
		t.Fatalf("the restored page renders %q", h)
	}
}

// Search finds a page by its templates' text, as it is now.
func TestSearchFollowsTemplates(t *testing.T) {
	t.Parallel()
	db, e, _ := templateWiki(t)
	saveText(t, e, "Template:X", "alphaword")
	saveText(t, e, "Host page", "Some text {{X}}")
	drainAll(t, db, e)
	found := func(word string) bool {
		hits, _, err := e.Search(ctx, wiki.SearchQuery{Text: word, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(hits, func(h wiki.SearchHit) bool { return h.Title == "Host page" })
	}
	if !found("alphaword") {
		t.Fatal("the page is not found by its template's text")
	}
	editText(t, e, db, "Template:X", "omegaword")
	drainAll(t, db, e)
	if !found("omegaword") || found("alphaword") {
		t.Fatalf("after the template's edit: found by the new word %v, by the old %v; want true, false", found("omegaword"), found("alphaword"))
	}
}

// An import whose pages use a template imported in an earlier batch (or
// their own) ends with their rows made from the template.
func TestImportAcrossBatchesWithTemplates(t *testing.T) {
	t.Parallel()
	db, e, _ := templateWiki(t)
	const batch = 40 // pages per import transaction
	engine.SetBatches(e, batch, 0)
	pages := []engine.ImportPage{{Title: "Template:X", Text: "from X [[Linked]] [[Category:Xcat]]"}}
	for i := range batch {
		pages = append(pages, engine.ImportPage{Title: wiki.Title(fmt.Sprintf("Filler %d", i)), Text: "filler"})
	}
	pages = append(pages, engine.ImportPage{Title: "P", Text: "{{X}}"})
	if _, err := e.Import(ctx, importPages(pages), engine.Editor{UserName: "U"}, "import", nil); err != nil {
		t.Fatal(err)
	}
	drainAll(t, db, e)
	p, err := db.FindPage(ctx, "P")
	if err != nil {
		t.Fatal(err)
	}
	cats, err := db.PageCategories(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	back, err := db.Backlinks(ctx, "Linked", wiki.ListQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cats) != 1 || cats[0].Category != "Category:Xcat" || !strings.Contains(titlesOf(back), "P") {
		t.Fatalf("P's categories %v, pages linking to Linked %s; want the template's", cats, titlesOf(back))
	}
}

// A template used by more pages than a batch reaches them all, batch
// after batch: each part of the job queues one batch's reparse jobs and
// its reindex job, then the next part behind them.
func TestTemplateCascadeInBatches(t *testing.T) {
	t.Parallel()
	db, e, p := templateWiki(t)
	const batch = 50 // pages per part of a job
	engine.SetBatches(e, 0, batch)
	const n = 2*batch + batch/5
	pages := []engine.ImportPage{{Title: "Template:Stamp", Text: "STAMP-v1"}}
	for i := range n {
		pages = append(pages, engine.ImportPage{Title: wiki.Title(fmt.Sprintf("User %04d", i)), Text: "{{Stamp}}"})
	}
	if _, err := e.Import(ctx, importPages(pages), engine.Editor{UserName: "U"}, "import", nil); err != nil {
		t.Fatal(err)
	}
	drainAll(t, db, e)
	p.titles = nil
	editText(t, e, db, "Template:Stamp", "STAMP-v2")
	// The first part: one batch of reparses, then the next part.
	if n := runJobs(t, db, e, wiki.JobTransclusions, 1); n != 1 {
		t.Fatalf("%d transclusions jobs ran, want 1", n)
	}
	queued, err := db.ListJobs(ctx, wiki.JobQueued, 5000)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, j := range queued {
		kinds[j.Kind]++
	}
	// ListJobs lists the newest first.
	if kinds[wiki.JobReparse] != batch || kinds[wiki.JobReindex] != 1 || kinds[wiki.JobTransclusions] != 1 || len(kinds) != 3 || queued[0].Kind != wiki.JobTransclusions {
		t.Fatalf("after the first part: %v queued, the last a %s; want one batch of reparses and its reindex, then the next part", kinds, queued[0].Kind)
	}
	drainAll(t, db, e)
	for _, i := range []int{0, batch - 1, batch, 2*batch - 1, 2 * batch, n - 1} {
		title := fmt.Sprintf("User %04d", i)
		if h := viewHTML(t, e, title); !strings.Contains(h, "STAMP-v2") {
			t.Fatalf("%s renders %q", title, h)
		}
		if !slices.Contains(p.titles, title) {
			t.Errorf("%s was not refreshed", title)
		}
	}
}

// Between a template's edit and a page's reparse job, a view of the page
// is served from its stored render (the old version), never rendered;
// the job renders the page once, and that render is what views get after
// it, with the rows of the same parse; the batch's reindex job writes its
// search entry.
func TestReparseSwapsTheRenderIn(t *testing.T) {
	t.Parallel()
	db, e, p := templateWiki(t)
	saveText(t, e, "Template:Stamp", "STAMP-v1")
	saveText(t, e, "Page", "Stamped: {{Stamp}}")
	drainAll(t, db, e)
	if h := viewHTML(t, e, "Page"); !strings.Contains(h, "STAMP-v1") {
		t.Fatalf("Page renders %q", h)
	}
	editText(t, e, db, "Template:Stamp", "STAMP-v2 [[Linked]] [[Category:Stamped]]")
	if n := runJobs(t, db, e, wiki.JobTransclusions, 1); n != 1 {
		t.Fatalf("%d transclusions jobs ran, want 1", n)
	}
	renders := e.Renders.Load()
	if h := viewHTML(t, e, "Page"); !strings.Contains(h, "STAMP-v1") {
		t.Fatalf("before its reparse, Page renders %q; want the stored render", h)
	}
	if n := e.Renders.Load() - renders; n != 0 {
		t.Fatalf("a view before the reparse rendered %d times; want the stored render", n)
	}
	p.titles = nil
	// The page's reparse job, and its batch's reindex job.
	if n := runJobs(t, db, e, "", 1); n != 2 {
		t.Fatalf("%d jobs ran, want 2", n)
	}
	if n := e.Renders.Load() - renders; n != 1 {
		t.Fatalf("the reparse rendered %d times, want 1", n)
	}
	if !slices.Contains(p.titles, "Page") {
		t.Errorf("the reparse did not refresh Page's cached responses (refreshed %v)", p.titles)
	}
	if h := viewHTML(t, e, "Page"); !strings.Contains(h, "STAMP-v2") {
		t.Fatalf("after its reparse, Page renders %q", h)
	}
	if n := e.Renders.Load() - renders; n != 1 {
		t.Fatalf("a view after the reparse rendered again (%d renders); want the job's", n)
	}
	// The job's render was stored: a process starting now serves it too.
	fresh := engine.New(engine.Options{Store: db, Renderer: render.New(), Purger: &purges{}, CDN: engine.NoExternalPurge{}, SiteName: "Acme"})
	if h := viewHTML(t, fresh, "Page"); !strings.Contains(h, "STAMP-v2") || fresh.Renders.Load() != 0 {
		t.Fatalf("another engine renders %q after %d renders; want the stored new render", h, fresh.Renders.Load())
	}
	page, err := db.FindPage(ctx, "Page")
	if err != nil {
		t.Fatal(err)
	}
	cats, err := db.PageCategories(ctx, page.ID)
	if err != nil {
		t.Fatal(err)
	}
	back, err := db.Backlinks(ctx, "Linked", wiki.ListQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cats) != 1 || cats[0].Category != "Category:Stamped" || !strings.Contains(titlesOf(back), "Page") {
		t.Fatalf("Page's categories %v, pages linking to Linked %s; want the template's", cats, titlesOf(back))
	}
	if !slices.Contains(p.titles, "Category:Stamped") {
		t.Errorf("the category Page joined was not purged (purged %v)", p.titles)
	}
	hits, _, err := e.Search(ctx, wiki.SearchQuery{Text: "STAMP-v2", Limit: 10})
	if err != nil || !slices.ContainsFunc(hits, func(h wiki.SearchHit) bool { return h.Title == "Page" }) {
		t.Fatalf("search for the new text: %v, %v; want Page among the hits", hits, err)
	}
}

// A category's page lists its members by title: moving, deleting or
// restoring a member purges it, as an edit that changes the member's
// categories does.
func TestMemberChangesPurgeTheirCategories(t *testing.T) {
	t.Parallel()
	db, e, p := templateWiki(t)
	saveText(t, e, "Member", "In [[Category:Fruit]] and [[Category:Red things|Apple]].")
	drainAll(t, db, e)
	ed := engine.Editor{UserName: "U"}
	for _, step := range []struct {
		name string
		do   func() error
	}{
		{"move", func() error { _, err := e.Move(ctx, "Member", "Moved", "", false, ed); return err }},
		{"delete", func() error { return e.Delete(ctx, "Moved", "", ed) }},
		{"undelete", func() error { _, err := e.Undelete(ctx, "Moved", "", ed); return err }},
	} {
		p.mu.Lock()
		p.titles = nil
		p.mu.Unlock()
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		p.mu.Lock()
		got := slices.Clone(p.titles)
		p.mu.Unlock()
		for _, cat := range []string{"Category:Fruit", "Category:Red things"} {
			if !slices.Contains(got, cat) {
				t.Errorf("%s purged %v, not %s", step.name, got, cat)
			}
		}
	}
}
