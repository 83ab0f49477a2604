package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/wikid/wikid/internal/app"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/wiki"
)

const pageUsage = "usage: wikid page move --id ID NEWTITLE [--reason TEXT]"

func pageCommand(ctx context.Context, cfg config.Config, log *slog.Logger, sub string, args []string, id int64, reason string, stdout io.Writer) error {
	if sub != "move" || len(args) != 1 || id <= 0 {
		return errors.New(pageUsage)
	}
	to, err := cfg.TitleRules().Parse(args[0])
	if err != nil {
		return fmt.Errorf("new title: %s", wiki.Message(err))
	}
	return pageMove(ctx, cfg, log, id, to, reason, stdout)
}

// pageMove renames the page with the given ID as the maintenance script,
// logged as any move. The page is found by ID, so that a page whose stored
// title today's rules refuse (and no URL reaches) can be renamed; no
// redirect is left at such a title.
func pageMove(ctx context.Context, cfg config.Config, log *slog.Logger, id int64, to wiki.Title, reason string, stdout io.Writer) error {
	cfg.JobWorkers = 0 // the move's jobs wait for the server's workers
	a, err := app.Open(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()
	p, err := a.Store.FindPageByID(ctx, id)
	if errors.Is(err, wiki.ErrNotFound) {
		return fmt.Errorf("there is no page %d; `wikid check` lists pages by id", id)
	}
	if err != nil {
		return err
	}
	if p.Deleted {
		return fmt.Errorf("page %d %q is deleted; only live pages can be moved", id, string(p.Title))
	}
	// A redirect is left only at a title that URLs still reach.
	now, err := cfg.TitleRules().Parse(string(p.Title))
	redirect := err == nil && now == p.Title
	ed := engine.Editor{UserName: wiki.MaintenanceActor.Name, Group: wiki.GroupAdmin}
	if _, err := a.Engine.Move(ctx, p.Title, to, reason, redirect, ed); err != nil {
		var we *wiki.Error
		switch {
		case errors.Is(err, wiki.ErrExists):
			return fmt.Errorf("a page %q already exists; choose another title", string(to))
		case errors.As(err, &we) && we.Kind != wiki.KindInternal:
			return errors.New(we.Msg)
		}
		return err
	}
	fmt.Fprintf(stdout, "moved page %d from %q to %q\n", id, string(p.Title), string(to))
	return nil
}
