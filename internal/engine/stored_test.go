package engine_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/store/sqlite/sqlitetest"
	"github.com/wikid/wikid/internal/wiki"
)

// unreadableRenders is a store whose stored renders cannot be read, as
// when a row is corrupt.
type unreadableRenders struct {
	wiki.Store
	saved atomic.Int32
}

func (s *unreadableRenders) FindRender(context.Context, int64, int) ([]byte, error) {
	return nil, errors.New("sqlite: find render of revision 1: render: stored data is corrupt")
}

func (s *unreadableRenders) SaveRender(ctx context.Context, revID int64, version int, data []byte) error {
	s.saved.Add(1)
	return s.Store.SaveRender(ctx, revID, version, data)
}

func TestAnUnreadableStoredRenderIsRenderedAgain(t *testing.T) {
	t.Parallel()
	st := &unreadableRenders{Store: sqlitetest.Open(t)}
	e := engine.New(engine.Options{Store: st, Renderer: render.New(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	out, err := e.Save(ctx, engine.Edit{Title: "Page", Text: "Some **text**.", Editor: engine.Editor{UserName: "U"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Render(ctx, out.Revision)
	if err != nil {
		t.Fatalf("render: %v; want the page rendered again", err)
	}
	if r.HTML == "" || st.saved.Load() != 1 {
		t.Fatalf("HTML %q, %d renders saved; want the new render saved in place of the unreadable one", r.HTML, st.saved.Load())
	}
}

// A wiki whose capital_links changes never serves a render stored under
// the other setting: the links in it would go to the other pages.
func TestStoredRendersAreKeptApartByTitleRules(t *testing.T) {
	t.Parallel()
	db := sqlitetest.Open(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	capital := engine.New(engine.Options{Store: db, Renderer: render.New(), Logger: quiet})
	src := "[[apple]] {{fruit}}"
	for _, p := range []engine.Edit{
		{Title: "Template:Fruit", Text: "Fruit"}, {Title: "Template:fruit", Text: "fruit"}, {Title: "Doc", Text: src},
	} {
		p.Editor = engine.Editor{UserName: "U"}
		if _, err := capital.Save(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	v, err := capital.ViewPage(ctx, "Doc", false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(v.Rendered.HTML, `href="/wiki/Apple?`) || !strings.Contains(v.Rendered.HTML, "Fruit") {
		t.Fatalf("capital_links true: %s", v.Rendered.HTML)
	}
	sensitive := engine.New(engine.Options{Store: db, Renderer: render.New(render.WithTitleRules(wiki.NewTitleRules(false))), Logger: quiet})
	if sensitive.TitleRules().CapitalLinks() {
		t.Fatal("the engine's title rules are not its renderer's")
	}
	before := sensitive.Renders.Load()
	v, err = sensitive.ViewPage(ctx, "Doc", false)
	if err != nil {
		t.Fatal(err)
	}
	if sensitive.Renders.Load() != before+1 || !strings.Contains(v.Rendered.HTML, `href="/wiki/apple?`) || !strings.Contains(v.Rendered.HTML, "fruit") {
		t.Errorf("capital_links false got the other setting's stored render (%d renders): %s", sensitive.Renders.Load()-before, v.Rendered.HTML)
	}
	// Each setting's render stays stored under its own version.
	for _, version := range []int{render.New().Version(), render.New(render.WithTitleRules(wiki.NewTitleRules(false))).Version()} {
		if _, err := db.FindRender(ctx, v.Revision.ID, version); err != nil {
			t.Errorf("no render stored under version %d: %v", version, err)
		}
	}
}

// BenchmarkRenderStoredMiss is a view whose render is not in memory but in
// the store: the store's read (and decompression) and the unmarshal. Each
// view is the first of a new engine (made outside the timer), so that its
// in-memory cache is empty.
func BenchmarkRenderStoredMiss(b *testing.B) {
	article, err := os.ReadFile("../../bench/article.md")
	if err != nil {
		b.Skip("bench/article.md:", err)
	}
	for _, c := range []struct{ name, text string }{
		{"article", string(article)},
		{"5KB", string(article[:5<<10])},
	} {
		b.Run(c.name, func(b *testing.B) {
			db := sqlitetest.Open(b)
			e := engine.New(engine.Options{Store: db, Renderer: render.New()})
			out, err := e.Save(ctx, engine.Edit{Title: "Article", Text: c.text, Editor: engine.Editor{UserName: "U"}})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := e.Render(ctx, out.Revision); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				b.StopTimer()
				fresh := engine.New(engine.Options{Store: db, Renderer: render.New()})
				b.StartTimer()
				if _, err := fresh.Render(ctx, out.Revision); err != nil {
					b.Fatal(err)
				}
				if fresh.Renders.Load() != 0 {
					b.Fatal("the page was rendered; want it read from the store")
				}
			}
		})
	}
}
