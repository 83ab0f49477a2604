package engine_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/store/sqlite/sqlitetest"
	"github.com/wikid/wikid/internal/wiki"
)

// toyWikitext is just enough wikitext to tell which Markup read a text:
// ”'bold”' and "== Heading ==" lines, rewritten to Markdown for the
// Markdown renderer underneath, under a Version of its own.
type toyWikitext struct{ *render.Renderer }

const toyVersion = 7000

var (
	toyBold    = regexp.MustCompile(`'''(.+?)'''`)
	toyHeading = regexp.MustCompile(`(?m)^(=+) *(.+?) *=+ *$`)
)

func toMarkdown(src string) string {
	src = toyBold.ReplaceAllString(src, "**$1**")
	return toyHeading.ReplaceAllStringFunc(src, func(h string) string {
		m := toyHeading.FindStringSubmatch(h)
		return strings.Repeat("#", len(m[1])) + " " + m[2]
	})
}

func (toyWikitext) Version() int { return toyVersion }
func (w toyWikitext) Links(src string) wiki.LinkSet {
	return w.Renderer.Links(toMarkdown(src))
}
func (w toyWikitext) RenderWith(ctx context.Context, src string, exists render.Exists, o render.Options) (render.Result, error) {
	return w.Renderer.RenderWith(ctx, toMarkdown(src), exists, o)
}
func (w toyWikitext) Analyze(src string) (wiki.LinkSet, string) {
	return w.Renderer.Analyze(toMarkdown(src))
}
func (w toyWikitext) PlainText(src string) string { return w.Renderer.PlainText(toMarkdown(src)) }

// Sections splits at "== Heading ==" lines, with offsets in src.
func (toyWikitext) Sections(src string) ([]render.Section, error) {
	secs := []render.Section{{}}
	for _, loc := range toyHeading.FindAllStringSubmatchIndex(src, -1) {
		secs[len(secs)-1].End = loc[0]
		secs = append(secs, render.Section{Index: len(secs), Level: loc[3] - loc[2], Heading: src[loc[4]:loc[5]], Start: loc[0]})
	}
	secs[len(secs)-1].End = len(src)
	return secs, nil
}

func newModelEngine(t *testing.T, o engine.Options) (*sqlite.DB, *engine.Engine) {
	t.Helper()
	db := sqlitetest.Open(t)
	o.Store = db
	if o.Renderer == nil {
		o.Renderer = render.New()
	}
	return db, engine.New(o)
}

func withToy(o engine.Options) engine.Options {
	o.Markups = map[wiki.ContentModel]engine.Markup{wiki.ModelWikitext: toyWikitext{render.New()}}
	return o
}

var ed = engine.Editor{UserName: "U"}

func TestRenderingFollowsTheContentModel(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		wikitext bool // a wikitext Markup is registered
		model    wiki.ContentModel
		text     string
		want     []string
		not      []string
	}{
		{"a Markdown page reads ''' as text", true, wiki.ModelMarkdown, "'''bold''' and **strong**",
			[]string{"<strong>strong</strong>", "bold"}, []string{"<strong>bold</strong>"}},
		{"a wikitext page is read by the wikitext Markup", true, wiki.ModelWikitext, "'''bold''' text",
			[]string{"<strong>bold</strong>"}, []string{"'''", "<pre>"}},
		{"a page without a model is Markdown", true, "", "'''bold'''",
			[]string{"bold"}, []string{"<strong>"}},
		{"a wikitext page without a wikitext Markup is plain text in a <pre>", false, wiki.ModelWikitext, "'''bold''' <script>x</script>",
			[]string{"<pre>&#39;&#39;&#39;bold&#39;&#39;&#39; &lt;script&gt;x&lt;/script&gt;"}, []string{"<strong>", "<script>"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := engine.Options{}
			if tt.wikitext {
				o = withToy(o)
			}
			_, e := newModelEngine(t, o)
			out, err := e.Save(ctx, engine.Edit{Title: "Page", Text: tt.text, Editor: ed, Model: tt.model})
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Revision.Model; got != tt.model.Or(wiki.ModelMarkdown) {
				t.Errorf("saved as %q, want %q", got, tt.model.Or(wiki.ModelMarkdown))
			}
			v, err := e.ViewPage(ctx, "Page", false)
			if err != nil {
				t.Fatal(err)
			}
			p, err := e.Preview(ctx, "Page", tt.text, tt.model)
			if err != nil {
				t.Fatal(err)
			}
			for what, html := range map[string]string{"view": v.Rendered.HTML, "preview": p.HTML} {
				for _, w := range tt.want {
					if !strings.Contains(html, w) {
						t.Errorf("%s %q lacks %q", what, html, w)
					}
				}
				for _, w := range tt.not {
					if strings.Contains(html, w) {
						t.Errorf("%s %q has %q", what, html, w)
					}
				}
			}
		})
	}
}

func TestAnEditKeepsThePageModel(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name         string
		defaultModel wiki.ContentModel
		first, then  wiki.ContentModel // the edits' models
		want         wiki.ContentModel // the second revision's
	}{
		{"a wikitext page edited without a model stays wikitext", "", wiki.ModelWikitext, "", wiki.ModelWikitext},
		{"a new page gets the site default", wiki.ModelWikitext, "", "", wiki.ModelWikitext},
		{"the site default does not change an existing page", wiki.ModelWikitext, wiki.ModelMarkdown, "", wiki.ModelMarkdown},
		{"an edit naming a model changes it", "", wiki.ModelWikitext, wiki.ModelMarkdown, wiki.ModelMarkdown},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, e := newModelEngine(t, withToy(engine.Options{DefaultModel: tt.defaultModel}))
			first, err := e.Save(ctx, engine.Edit{Title: "Page", Text: "one", Editor: ed, Model: tt.first})
			if err != nil {
				t.Fatal(err)
			}
			out, err := e.Save(ctx, engine.Edit{Title: "Page", Text: "two", Editor: ed, Model: tt.then, BaseRevID: first.Revision.ID})
			if err != nil {
				t.Fatal(err)
			}
			if out.Revision.Model != tt.want || out.Page.Model != tt.want {
				t.Errorf("revision in %q, page in %q; want %q", out.Revision.Model, out.Page.Model, tt.want)
			}
		})
	}
	t.Run("an unknown model is refused, naming the known ones", func(t *testing.T) {
		t.Parallel()
		_, e := newModelEngine(t, engine.Options{})
		_, err := e.Save(ctx, engine.Edit{Title: "Page", Text: "x", Editor: ed, Model: "html"})
		if wiki.KindOf(err) != wiki.KindInvalid || !strings.Contains(err.Error(), "markdown or wikitext") {
			t.Fatalf("save in model html: %v, want an invalid-request error naming the models", err)
		}
		if _, err := e.Preview(ctx, "Page", "x", "html"); wiki.KindOf(err) != wiki.KindInvalid {
			t.Fatalf("preview in model html: %v, want an invalid-request error", err)
		}
	})
}

// The same text in another model renders otherwise: the render of the
// new revision is made and stored by the new model's renderer, and the
// old revision's render stays its own.
func TestAModelChangeIsRenderedByTheNewModel(t *testing.T) {
	t.Parallel()
	db, e := newModelEngine(t, withToy(engine.Options{}))
	const text = "Some '''bold''' text.\n"
	first, err := e.Save(ctx, engine.Edit{Title: "Page", Text: text, Editor: ed})
	if err != nil {
		t.Fatal(err)
	}
	before, err := e.ViewPage(ctx, "Page", false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(before.Rendered.HTML, "<strong>") {
		t.Fatalf("the Markdown page shows %q", before.Rendered.HTML)
	}
	out, err := e.ChangeModel(ctx, engine.ModelChange{Title: "Page", Model: wiki.ModelWikitext, Text: text, Editor: ed})
	if err != nil {
		t.Fatal(err)
	}
	if out.NoChange || out.Revision.ID == first.Revision.ID {
		t.Fatal("the same text in another model made no revision")
	}
	if out.Revision.Summary != "Changed content model from Markdown to wikitext" {
		t.Errorf("summary %q", out.Revision.Summary)
	}
	after, err := e.ViewPage(ctx, "Page", false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(after.Rendered.HTML, "<strong>bold</strong>") {
		t.Fatalf("after the change to wikitext the page shows %q", after.Rendered.HTML)
	}
	if _, err := db.FindRender(ctx, out.Revision.ID, toyVersion); err != nil {
		t.Errorf("no render of the wikitext revision under the wikitext renderer's version: %v", err)
	}
	if _, err := db.FindRender(ctx, out.Revision.ID, render.New().Version()); !errors.Is(err, wiki.ErrNotFound) {
		t.Errorf("a render of the wikitext revision under Markdown's version: %v", err)
	}
	// A fresh engine (another process) reads the stored renders.
	_, fresh := db, engine.New(withToy(engine.Options{Store: db, Renderer: render.New()}))
	old, err := fresh.Render(ctx, first.Revision)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(old.HTML, "<strong>") {
		t.Errorf("the old Markdown revision now renders as %q", old.HTML)
	}
	// Without a wikitext renderer, the stored wikitext render is not
	// served for plain text, nor the other way round.
	bare := engine.New(engine.Options{Store: db, Renderer: render.New()})
	plain, err := bare.Render(ctx, out.Revision)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plain.HTML, "<pre>") {
		t.Errorf("an engine without wikitext serves %q", plain.HTML)
	}
	again, err := fresh.Render(ctx, out.Revision)
	if err != nil || !strings.Contains(again.HTML, "<strong>bold</strong>") {
		t.Errorf("the plain-text render replaced the wikitext one: %q, %v", again.HTML, err)
	}
}

func TestChangeModelRefusals(t *testing.T) {
	t.Parallel()
	_, e := newModelEngine(t, withToy(engine.Options{}))
	first, err := e.Save(ctx, engine.Edit{Title: "Page", Text: "one", Editor: ed})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Save(ctx, engine.Edit{Title: "Page", Text: "two", Editor: ed, BaseRevID: first.Revision.ID}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		c    engine.ModelChange
		kind wiki.Kind
	}{
		{"to the model the page is in", engine.ModelChange{Title: "Page", Model: wiki.ModelMarkdown, Text: "x"}, wiki.KindInvalid},
		{"to an unknown model", engine.ModelChange{Title: "Page", Model: "html", Text: "x"}, wiki.KindInvalid},
		{"of a page edited since the form", engine.ModelChange{Title: "Page", Model: wiki.ModelWikitext, Text: "one", BaseRevID: first.Revision.ID}, wiki.KindConflict},
		{"of a page that does not exist", engine.ModelChange{Title: "Nothing", Model: wiki.ModelWikitext, Text: "x"}, wiki.KindNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.c.Editor = ed
			if _, err := e.ChangeModel(ctx, tt.c); wiki.KindOf(err) != tt.kind {
				t.Fatalf("%v, want kind %v", err, tt.kind)
			}
		})
	}
}

// A conversion that runs past its time gives up with a message for the
// editor, who gets the text as it is.
func TestConvertTextTimesOut(t *testing.T) {
	t.Parallel()
	stuck := func(ctx context.Context, src string) (string, error) {
		<-ctx.Done()
		return "", fmt.Errorf("converter: %w", ctx.Err())
	}
	_, e := newModelEngine(t, engine.Options{WikitextToMarkdown: stuck})
	start := time.Now()
	_, converted, err := e.ConvertText(context.Background(), "x", wiki.ModelWikitext, wiki.ModelMarkdown)
	if converted || wiki.KindOf(err) != wiki.KindInvalid || !strings.Contains(wiki.Message(err), "longer than 3s") {
		t.Fatalf("converted %v, %v (%q)", converted, err, wiki.Message(err))
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("took %v", d)
	}
}

// A conversion whose Markdown would pass the page limit is refused, with
// the sizes, rather than offered in a form that cannot be saved.
func TestConvertTextOverThePageLimit(t *testing.T) {
	t.Parallel()
	grow := func(_ context.Context, src string) (string, error) { return strings.Repeat(src, 3), nil }
	_, e := newModelEngine(t, engine.Options{WikitextToMarkdown: grow})
	text := strings.Repeat("x", e.MaxPageBytes()/2)
	_, converted, err := e.ConvertText(context.Background(), text, wiki.ModelWikitext, wiki.ModelMarkdown)
	if converted || wiki.KindOf(err) != wiki.KindTooLarge || !strings.Contains(wiki.Message(err), "max_page_bytes") {
		t.Fatalf("converted %v, %v (%q)", converted, err, wiki.Message(err))
	}
	if _, converted, err = e.ConvertText(context.Background(), text[:e.MaxPageBytes()/3], wiki.ModelWikitext, wiki.ModelMarkdown); !converted || err != nil {
		t.Fatalf("at the limit: converted %v, %v", converted, err)
	}
}

func TestConvertText(t *testing.T) {
	t.Parallel()
	conv := func(_ context.Context, src string) (string, error) { return toMarkdown(src), nil }
	for _, tt := range []struct {
		name      string
		conv      func(context.Context, string) (string, error)
		from, to  wiki.ContentModel
		want      string
		converted bool
	}{
		{"wikitext to Markdown by the converter", conv, wiki.ModelWikitext, wiki.ModelMarkdown, "== H ==\n'''b'''", true},
		{"wikitext to Markdown without a converter", nil, wiki.ModelWikitext, wiki.ModelMarkdown, "== H ==\n'''b'''", false},
		{"Markdown to wikitext is kept", conv, wiki.ModelMarkdown, wiki.ModelWikitext, "== H ==\n'''b'''", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, e := newModelEngine(t, engine.Options{WikitextToMarkdown: tt.conv})
			got, converted, err := e.ConvertText(context.Background(), "== H ==\n'''b'''", tt.from, tt.to)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if tt.converted {
				want = "## H\n**b**"
			}
			if got != want || converted != tt.converted || e.CanConvert(tt.from, tt.to) != tt.converted {
				t.Errorf("%q, converted %v; want %q, %v", got, converted, want, tt.converted)
			}
		})
	}
}

// The search entry and its snippets are the words of the text read in its
// model: no ”' of wikitext's bold.
func TestSearchReadsTheTextInItsModel(t *testing.T) {
	t.Parallel()
	db, e := newModelEngine(t, withToy(engine.Options{}))
	if _, err := e.Save(ctx, engine.Edit{Title: "Wiki", Text: "Some '''findme''' words.", Editor: ed, Model: wiki.ModelWikitext}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Save(ctx, engine.Edit{Title: "Md", Text: "Other **findme** words.", Editor: ed}); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		hits, _, err := e.Search(ctx, wiki.SearchQuery{Text: "findme", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 2 {
			t.Fatalf("%s: %d hits, want 2", when, len(hits))
		}
		for _, h := range hits {
			if strings.ContainsAny(h.Snippet, "'*") || !strings.Contains(h.Snippet, "findme") {
				t.Errorf("%s: the snippet of %s is %q; want its words without markup", when, h.Title, h.Snippet)
			}
		}
	}
	check("after the saves")
	// The jobs index the pages again (a template changed): the text
	// function gets each revision's model.
	for _, title := range []wiki.Title{"Wiki", "Md"} {
		if err := db.EnqueueJobs(ctx, []wiki.JobSpec{engine.IndexJob(title)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := runJobs(t, db, e, wiki.JobSearch, 1); n < 2 {
		t.Fatalf("%d search jobs ran", n)
	}
	check("after the search jobs")
}

// A section of a wikitext page is found by wikitext's headings, and a new
// section gets a wikitext heading.
func TestSectionsOfAWikitextPage(t *testing.T) {
	t.Parallel()
	_, e := newModelEngine(t, withToy(engine.Options{}))
	first, err := e.Save(ctx, engine.Edit{Title: "Talk:Page", Text: "Intro.\n\n== A ==\nFirst.\n\n== B ==\nSecond.\n", Editor: ed, Model: wiki.ModelWikitext})
	if err != nil {
		t.Fatal(err)
	}
	text, heading, err := e.SectionText(ctx, "Talk:Page", "Intro.\n\n== A ==\nFirst.\n\n== B ==\nSecond.\n", wiki.ModelWikitext, 2)
	if err != nil || heading != "B" || text != "== B ==\nSecond.\n" {
		t.Fatalf("section 2: %q, heading %q, %v", text, heading, err)
	}
	out, err := e.Save(ctx, engine.Edit{Title: "Talk:Page", Section: "1", Text: "== A ==\nChanged.\n", Editor: ed, BaseRevID: first.Revision.ID})
	if err != nil {
		t.Fatal(err)
	}
	full, err := e.Store().FindRevision(ctx, out.Revision.ID)
	if err != nil {
		t.Fatal(err)
	}
	if full.Text != "Intro.\n\n== A ==\nChanged.\n\n== B ==\nSecond.\n" || full.Model != wiki.ModelWikitext || full.Summary != "/* A */" {
		t.Errorf("after the section edit: %q in %q, summary %q", full.Text, full.Model, full.Summary)
	}
	out, err = e.Save(ctx, engine.Edit{Title: "Talk:Page", Section: engine.NewSection, SectionTitle: "C", Text: "Third.", Editor: ed})
	if err != nil {
		t.Fatal(err)
	}
	if full, err = e.Store().FindRevision(ctx, out.Revision.ID); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(full.Text, "\n\n== C ==\n\nThird.\n") {
		t.Errorf("the new section of a wikitext page: %q", full.Text)
	}
	if got := engine.TopicText("C", "x", wiki.ModelMarkdown); got != "## C\n\nx\n" {
		t.Errorf("a Markdown topic: %q", got)
	}
}

// Moving a wikitext page leaves a wikitext redirect, followed like any.
func TestAMovedWikitextPageLeavesARedirect(t *testing.T) {
	t.Parallel()
	for _, wikitext := range []bool{true, false} {
		o := engine.Options{}
		if wikitext {
			o = withToy(o)
		}
		_, e := newModelEngine(t, o)
		if _, err := e.Save(ctx, engine.Edit{Title: "Old", Text: "'''x'''", Editor: ed, Model: wiki.ModelWikitext}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Move(ctx, "Old", "New", "", true, ed); err != nil {
			t.Fatal(err)
		}
		v, err := e.ViewPage(ctx, "Old", false)
		if err != nil {
			t.Fatal(err)
		}
		if v.Page.Title != "New" || v.RedirectedFrom != "Old" {
			t.Errorf("wikitext renderer %v: the old title shows %q (from %q), want the redirect to New followed", wikitext, v.Page.Title, v.RedirectedFrom)
		}
	}
}

// An import keeps each page's model (the site default when it names
// none) and reads its links in it.
func TestImportReadsEachPageInItsModel(t *testing.T) {
	t.Parallel()
	db, e := newModelEngine(t, withToy(engine.Options{DefaultModel: wiki.ModelWikitext}))
	pages := importPages([]engine.ImportPage{
		{Title: "Wiki", Text: "'''[[Target]]'''", Model: wiki.ModelWikitext},
		{Title: "Md", Text: "**[[Target]]**", Model: wiki.ModelMarkdown},
		{Title: "Default", Text: "[[Target]]"},
	})
	if _, err := e.Import(ctx, pages, ed, "import", nil); err != nil {
		t.Fatal(err)
	}
	for title, want := range map[wiki.Title]wiki.ContentModel{"Wiki": wiki.ModelWikitext, "Md": wiki.ModelMarkdown, "Default": wiki.ModelWikitext} {
		p, err := db.FindPage(ctx, title)
		if err != nil {
			t.Fatal(err)
		}
		if p.Model != want {
			t.Errorf("%s imported in %q, want %q", title, p.Model, want)
		}
	}
	bl, err := db.Backlinks(ctx, "Target", wiki.ListQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(bl) != 3 {
		t.Errorf("%d pages link to Target, want the 3 imported", len(bl))
	}
	bad := func(yield func(engine.ImportPage, error) bool) {
		yield(engine.ImportPage{Title: "Bad", Text: "x", Model: "html"}, nil)
	}
	if _, err := e.Import(ctx, bad, ed, "import", nil); wiki.KindOf(err) != wiki.KindInvalid {
		t.Errorf("an import in model html: %v, want an invalid-request error", err)
	}
}

// A render larger than four times the page limit shows its page as plain
// text with a note, in views and previews: headings multiply their source
// by up to 60 in HTML, too much for the caches to keep.
func TestRenderTooLarge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, e := newModelEngine(t, engine.Options{MaxPageBytes: 64 << 10})
	text := strings.Repeat("# a\n", (64<<10)/4)
	if _, err := e.Save(ctx, engine.Edit{Title: "Page", Text: text, Editor: ed}); err != nil {
		t.Fatal(err)
	}
	v, err := e.ViewPage(ctx, "Page", false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Preview(ctx, "Page", text, "")
	if err != nil {
		t.Fatal(err)
	}
	for what, r := range map[string]*engine.Rendered{"view": v.Rendered, "preview": p} {
		if !strings.Contains(r.HTML, "of HTML, more than the 256 KiB a page may render to, so it is shown as plain text") || r.TOC != "" {
			t.Errorf("%s: %d bytes, TOC %d bytes: %.200q", what, len(r.HTML), len(r.TOC), r.HTML)
		}
		if len(r.HTML) > 2*len(text) {
			t.Errorf("%s: %d bytes of HTML for %d of text", what, len(r.HTML), len(text))
		}
	}
	// Text that escaping makes larger is cut where it could pass the bound.
	amps := strings.Repeat("&", 64<<10-4)
	if p, err := e.Preview(ctx, "Page", "# a\n"+amps, ""); err != nil {
		t.Error(err)
	} else if len(p.HTML) > 4*(64<<10) || !strings.Contains(p.HTML, "(The first ") {
		t.Errorf("a page of ampersands: %d bytes: %.300q", len(p.HTML), p.HTML)
	}
	// Below the bound, the same headings render.
	if _, err := e.Save(ctx, engine.Edit{Title: "Small", Text: strings.Repeat("# a\n", 100), Editor: ed}); err != nil {
		t.Fatal(err)
	}
	if v, err := e.ViewPage(ctx, "Small", false); err != nil || strings.Contains(v.Rendered.HTML, "plain text") || !strings.Contains(v.Rendered.HTML, "<h1") {
		t.Errorf("small page: %v %.200q", err, v.Rendered.HTML)
	}
}
