package app

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/wiki"
)

//go:embed seed/main_page.md
var mainPageText string

//go:embed seed/help_syntax.md
var helpSyntaxText string

// Seed creates the main page and the syntax help on an empty wiki.
// Pages that exist (or were deleted) are left alone, and so are pages
// longer than max_page_bytes.
func Seed(ctx context.Context, e *engine.Engine, cfg config.Config) error {
	pages := []struct {
		title string
		text  string
	}{
		{cfg.MainPage, mainPageText},
		{"Help:Syntax", helpSyntaxText},
	}
	for _, p := range pages {
		if len(p.text) > cfg.MaxPageBytes {
			continue // a wiki whose limit is below the page's size goes without it
		}
		t, err := cfg.TitleRules().Parse(p.title)
		if err != nil {
			return err
		}
		if _, err := e.Store().FindPage(ctx, t); err == nil {
			continue
		} else if !errors.Is(err, wiki.ErrNotFound) {
			return fmt.Errorf("app: seed %q: %w", t, err)
		}
		_, err = e.Save(ctx, engine.Edit{Title: t, Text: p.text, Summary: "Created by Wikid on first start",
			Editor: engine.Editor{UserName: "Wikid", Group: wiki.GroupAdmin}})
		if err != nil && !errors.Is(err, wiki.ErrExists) {
			return fmt.Errorf("app: seed %q: %w", t, err)
		}
	}
	return nil
}
