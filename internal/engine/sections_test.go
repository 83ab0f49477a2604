package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/store/sqlite/sqlitetest"
	"github.com/wikid/wikid/internal/wiki"
)

var (
	ann = engine.Editor{UserID: 1, UserName: "Ann", Group: wiki.GroupUser}
	ben = engine.Editor{UserID: 2, UserName: "Ben", Group: wiki.GroupUser}
)

func newSectionEngine(t *testing.T) *engine.Engine {
	t.Helper()
	now := time.Date(2026, 11, 26, 12, 34, 0, 0, time.UTC)
	return engine.New(engine.Options{Store: sqlitetest.Open(t), Now: func() time.Time { return now }})
}

func save(t *testing.T, e *engine.Engine, ed engine.Edit) engine.SaveOutcome {
	t.Helper()
	out, err := e.Save(context.Background(), ed)
	if err != nil {
		t.Fatalf("save %+v: %v", ed, err)
	}
	return out
}

func text(t *testing.T, e *engine.Engine, title wiki.Title) string {
	t.Helper()
	p, err := e.Store().FindPage(context.Background(), title)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := e.Store().FindRevision(context.Background(), p.LatestID)
	if err != nil {
		t.Fatal(err)
	}
	return rev.Text
}

func TestSaveSection(t *testing.T) {
	e := newSectionEngine(t)
	const page = "Intro.\n\n## A\na\n\n## B\nb\n\n### B1\nb1\n\n## C\nc\n"
	base := save(t, e, engine.Edit{Title: "P", Text: page, Editor: ann}).Revision.ID

	t.Run("a section is put in place, with a summary naming it", func(t *testing.T) {
		out := save(t, e, engine.Edit{Title: "P", Text: "## B\nb, changed\n\n### B1\nb1\n", Section: "2", BaseRevID: base, Editor: ann})
		if got := text(t, e, "P"); got != strings.Replace(page, "b\n\n###", "b, changed\n\n###", 1) {
			t.Errorf("text %q", got)
		}
		if out.Revision.Summary != "/* B */" {
			t.Errorf("summary %q", out.Revision.Summary)
		}
	})
	t.Run("an edit of another section from the old base merges", func(t *testing.T) {
		out := save(t, e, engine.Edit{Title: "P", Text: "## C\nc, by Ben", Section: "4", BaseRevID: base, Editor: ben, Summary: "mine"})
		if !out.Merged {
			t.Error("not merged")
		}
		if got := text(t, e, "P"); !strings.Contains(got, "b, changed") || !strings.HasSuffix(got, "## C\nc, by Ben\n") {
			t.Errorf("text %q", got)
		}
	})
	t.Run("an edit of the same section from the old base conflicts", func(t *testing.T) {
		_, err := e.Save(context.Background(), engine.Edit{Title: "P", Text: "## B\nb, by Ben\n", Section: "2", BaseRevID: base, Editor: ben})
		var c *engine.ConflictError
		if !errors.As(err, &c) || !strings.Contains(c.Current, "b, changed") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a section without a trailing blank line keeps the next heading apart", func(t *testing.T) {
		save(t, e, engine.Edit{Title: "Setext", Text: "One\n===\none\n\nTwo\n===\ntwo\n", Editor: ann})
		save(t, e, engine.Edit{Title: "Setext", Text: "One\n===\none, changed", Section: "1", Editor: ann})
		if got := text(t, e, "Setext"); got != "One\n===\none, changed\n\nTwo\n===\ntwo\n" {
			t.Errorf("text %q", got)
		}
	})
	t.Run("an unchanged section makes no revision", func(t *testing.T) {
		save(t, e, engine.Edit{Title: "Tight", Text: "## A\na\n## B\nb\n", Editor: ann})
		if out := save(t, e, engine.Edit{Title: "Tight", Text: "## A\na", Section: "1", Editor: ann}); !out.NoChange {
			t.Errorf("a null section edit saved revision %d: %q", out.Revision.ID, text(t, e, "Tight"))
		}
	})
	t.Run("a section past the end or of a missing page is an error", func(t *testing.T) {
		_, err := e.Save(context.Background(), engine.Edit{Title: "P", Text: "x", Section: "9", Editor: ann})
		if wiki.KindOf(err) != wiki.KindInvalid || !strings.Contains(err.Error(), "no section 9") {
			t.Errorf("err = %v", err)
		}
		_, err = e.Save(context.Background(), engine.Edit{Title: "Missing", Text: "x", Section: "1", Editor: ann})
		if wiki.KindOf(err) != wiki.KindNotFound {
			t.Errorf("err = %v", err)
		}
		_, err = e.Save(context.Background(), engine.Edit{Title: "P", Text: "x", Section: "-1", Editor: ann})
		if wiki.KindOf(err) != wiki.KindInvalid {
			t.Errorf("err = %v", err)
		}
	})
}

func TestSaveNewSection(t *testing.T) {
	e := newSectionEngine(t)
	out := save(t, e, engine.Edit{Title: "Talk:T", Text: "First ~~~~", Section: engine.NewSection, SectionTitle: "Hello", Editor: ann})
	if !out.Created || out.Revision.Summary != "/* Hello */ new section" {
		t.Errorf("outcome %+v", out)
	}
	save(t, e, engine.Edit{Title: "Talk:T", Text: "Second", Section: engine.NewSection, SectionTitle: "Issue #", Editor: ben, BaseRevID: 0})
	want := "## Hello\n\nFirst [[User:Ann|Ann]] ([[User talk:Ann|talk]]) 12:34, 26 November 2026 (UTC)\n\n## Issue \\#\n\nSecond\n"
	if got := text(t, e, "Talk:T"); got != want {
		t.Errorf("text\n%q\nwant\n%q", got, want)
	}
	if _, err := e.Save(context.Background(), engine.Edit{Title: "Talk:T", Text: "x", Section: engine.NewSection, Editor: ann}); wiki.KindOf(err) != wiki.KindInvalid {
		t.Errorf("a new section without subject: %v", err)
	}
}

func TestSignatureExpansion(t *testing.T) {
	e := newSectionEngine(t)
	const ts = "12:34, 26 November 2026 (UTC)"
	cases := []struct {
		name string
		ed   engine.Editor
		in   string
		want string
	}{
		{"default", ann, "a ~~~ b ~~~~ c ~~~~~", "a [[User:Ann|Ann]] ([[User talk:Ann|talk]]) b [[User:Ann|Ann]] ([[User talk:Ann|talk]]) " + ts + " c " + ts},
		{"custom", engine.Editor{UserID: 1, UserName: "Ann", Signature: "[[User:Ann|A]]"}, "x ~~~~", "x [[User:Ann|A]] " + ts},
		{"an invalid custom signature falls back", engine.Editor{UserID: 1, UserName: "Ann", Signature: "[[User:Ben|A]]"}, "x ~~~", "x [[User:Ann|Ann]] ([[User talk:Ann|talk]])"},
		{"anonymous", engine.Editor{UserName: "192.0.2.7"}, "x ~~~~", "x [[Special:Contributions/192.0.2.7|192.0.2.7]] " + ts},
		{"code stays", ann, "`~~~~` and\n\n    ~~~~\n", "`~~~~` and\n\n    ~~~~\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := e.Sign(c.in, wiki.ModelMarkdown, c.ed)
			if err != nil || got != c.want {
				t.Errorf("Sign(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
		})
	}
	t.Run("a revert keeps the tildes it restores", func(t *testing.T) {
		// A text saved before signatures were expanded.
		first := save(t, e, engine.Edit{Title: "R", Text: "old ~~~~\n", Editor: ann, Verbatim: true}).Revision.ID
		save(t, e, engine.Edit{Title: "R", Text: "other\n", Editor: ann, BaseRevID: first})
		if _, err := e.Revert(context.Background(), "R", first, ann); err != nil {
			t.Fatal(err)
		}
		if got := text(t, e, "R"); got != "old ~~~~\n" {
			t.Errorf("text %q", got)
		}
	})
}

func TestCheckSignature(t *testing.T) {
	e := newSectionEngine(t)
	for _, ok := range []string{"[[User:Ann|Ann]]", "[[User talk:Ann]]", "[[Special:Contributions/Ann|me]]", "**[[User:Ann|Ann]]** _here_", "[[user:Ann|x]]"} {
		if err := e.CheckSignature(ok, "Ann"); err != nil {
			t.Errorf("CheckSignature(%q): %v", ok, err)
		}
	}
	for sig, msg := range map[string]string{
		"Ann":                     "must link to your user page",
		"[[User:Ben|Ann]]":        "not yours",
		"[[User:Ann|Ann]] <pre>":  "HTML",
		"[[User:Ann|Ann]] <!-- x": "HTML",
		"[[User:Ann|Ann]] [[User talk:Mal|talk]]":          "not yours",
		"[[User:Ann|Ann]] [[Special:Contributions/Mal|c]]": "not yours",
		"`[[User:Ann]]`":                          "must link to your user page",
		"[[User:Ann]] ~~~":                        "~~~",
		"[[User:Ann]] {{x}}":                      "templates",
		"[[User:Ann]]\r\nx":                       "one line",
		"[[User:Ann]]" + strings.Repeat("é", 250): "limit is 255",
	} {
		err := e.CheckSignature(sig, "Ann")
		if wiki.KindOf(err) != wiki.KindInvalid || !strings.Contains(wiki.Message(err), msg) {
			t.Errorf("CheckSignature(%q) = %v, want %q", sig, err, msg)
		}
	}
}

// A moved page's renders go: their section edit links name the old title.
func TestMoveDropsRenders(t *testing.T) {
	e := newSectionEngine(t)
	ctx := context.Background()
	save(t, e, engine.Edit{Title: "Old", Text: "## A\na\n", Editor: ann})
	v, err := e.ViewPage(ctx, "Old", true)
	if err != nil || !strings.Contains(v.Rendered.HTML, "/wiki/Old?action=edit&amp;section=1") {
		t.Fatalf("view: %v\n%v", err, v.Rendered)
	}
	if _, err := e.Move(ctx, "Old", "New", "", false, ann); err != nil {
		t.Fatal(err)
	}
	v, err = e.ViewPage(ctx, "New", true)
	if err != nil || !strings.Contains(v.Rendered.HTML, "/wiki/New?action=edit&amp;section=1") {
		t.Fatalf("view after the move: %v\n%s", err, v.Rendered.HTML)
	}
}

func TestSectionEditLinksWithTemplates(t *testing.T) {
	e := newSectionEngine(t)
	ctx := context.Background()
	save(t, e, engine.Edit{Title: "Template:Heads", Text: "## From the template\nt\n", Editor: ann})
	save(t, e, engine.Edit{Title: "Page", Text: "## Own {{PAGENAME}}\n{{Heads}}\n## Second\nx\n", Editor: ann})
	v, err := e.ViewPage(ctx, "Page", true)
	if err != nil {
		t.Fatal(err)
	}
	h := v.Rendered.HTML
	if !strings.Contains(h, `<h2 id="Own_Page">Own Page <a class="anchor" href="#Own_Page" aria-hidden="true">#</a> <span class="mw-editsection"><a href="/wiki/Page?action=edit&amp;section=1"`) ||
		!strings.Contains(h, `/wiki/Page?action=edit&amp;section=2" title="Edit section: Second"`) ||
		strings.Count(h, "mw-editsection") != 2 {
		t.Errorf("render:\n%s", h)
	}
}
