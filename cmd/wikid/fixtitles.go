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
	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

const fixTitlesUsage = "usage: wikid fix-titles [--dry-run] [--reason TEXT]"

// titleFixer is what fix-titles asks of either engine besides wiki.Store.
type titleFixer interface {
	EachPageTitle(ctx context.Context, fn func(store.CheckTitle) error) error
	SetPageNamespace(ctx context.Context, id int64, ns string) error
}

// titleFix is one page whose stored title or namespace today's title
// rules read otherwise.
type titleFix struct {
	page store.CheckTitle
	to   wiki.Title // the title it parses to; "" when it does not parse
	err  error      // why it does not
}

// fixTitles brings the pages whose stored title no longer parses to
// itself (a title saved before its namespace existed: "Talk:foo" is now
// "Talk:Foo", "Wikid:About" is "Project:About") to the title it parses
// to, each by the engine's move as the maintenance script (history, log,
// recent changes, purges and jobs as for any move), without a redirect:
// URLs reach the new title, never the old one, so a redirect there would
// be a page no one can reach, which check reports again; the pages
// linking to the old title get their link rows derived again. A page
// whose title is in normal form but whose namespace column is not the
// title's gets its column corrected. What cannot be done (the new title
// is taken, the title is refused, the page is deleted) is reported and
// skipped: exit status 1. dryRun says what would be done.
func fixTitles(ctx context.Context, cfg config.Config, log *slog.Logger, args []string, dryRun bool, reason string, stdout io.Writer) error {
	if len(args) != 0 {
		return &exitError{2, errors.New(fixTitlesUsage)}
	}
	cfg.JobWorkers = 0 // the moves' jobs wait for the server's workers
	a, err := app.Open(ctx, cfg, log)
	if err != nil {
		return &exitError{2, err}
	}
	defer a.Close()
	db, ok := a.Store.(titleFixer)
	if !ok {
		return &exitError{2, fmt.Errorf("this store cannot list its titles for fix-titles")}
	}
	// The pages to fix are read first, then fixed: a move changes the
	// table being read.
	var fixes []titleFix
	rules := cfg.TitleRules() // with capital_links on, "apple" is now "Apple"
	err = db.EachPageTitle(ctx, func(p store.CheckTitle) error {
		t, err := rules.Parse(p.Title)
		switch {
		case err != nil:
			fixes = append(fixes, titleFix{page: p, err: err})
		case string(t) != p.Title || t.Namespace() != p.NS:
			fixes = append(fixes, titleFix{page: p, to: t})
		}
		return nil
	})
	if err != nil {
		return &exitError{2, err}
	}
	if reason == "" {
		reason = "title in the normal form of today's title rules"
	}
	would := ""
	if dryRun {
		would = "would "
	}
	ed := engine.Editor{UserName: wiki.MaintenanceActor.Name, Group: wiki.GroupAdmin}
	taken := map[wiki.Title]int64{} // titles this run moved (or would move) a page to
	var moved, renumbered, skipped int
	for _, f := range fixes {
		p := f.page
		switch {
		case f.err != nil:
			skipped++
			fmt.Fprintf(stdout, "skipped page %d %s: %s; rename it with: wikid page move --id %d NEW_TITLE\n",
				p.PageID, quoteName(p.Title), wiki.Message(f.err), p.PageID)
		case string(f.to) == p.Title:
			// The title is right; the namespace recorded with it is not
			// (saved before its namespace existed).
			if !dryRun {
				if err := db.SetPageNamespace(ctx, p.PageID, f.to.Namespace()); err != nil {
					return &exitError{2, err}
				}
			}
			renumbered++
			fmt.Fprintf(stdout, "%sset the namespace of page %d %s from %s to %s\n", would, p.PageID, quoteName(p.Title), nsName(p.NS), nsName(f.to.Namespace()))
		case p.Deleted:
			skipped++
			fmt.Fprintf(stdout, "skipped page %d %s: it is deleted, and only live pages move; it would be %s\n",
				p.PageID, quoteName(p.Title), quoteName(string(f.to)))
		default:
			if other, ok := taken[f.to]; ok {
				skipped++
				fmt.Fprintf(stdout, "skipped page %d %s: page %d goes to %s too; merge the two by hand, then delete this one\n",
					p.PageID, quoteName(p.Title), other, quoteName(string(f.to)))
				continue
			}
			if err := moveToParsed(ctx, a, p, f.to, reason, ed, dryRun); err != nil {
				var we *wiki.Error
				if !errors.As(err, &we) || we.Kind == wiki.KindInternal {
					return &exitError{2, err}
				}
				skipped++
				fmt.Fprintf(stdout, "skipped page %d %s: %s\n", p.PageID, quoteName(p.Title), wiki.Message(err))
				continue
			}
			taken[f.to] = p.PageID
			moved++
			fmt.Fprintf(stdout, "%smove page %d from %s to %s\n", would, p.PageID, quoteName(p.Title), quoteName(string(f.to)))
		}
	}
	if renumbered > 0 && !dryRun {
		a.Engine.Purge(ctx) // the listings filtered by namespace, here, in the other processes and in front
	}
	if dryRun {
		fmt.Fprintf(stdout, "%s to move, %s to correct, %d to skip; nothing was changed\n", countPages(moved), countNamespaces(renumbered), skipped)
	} else {
		fmt.Fprintf(stdout, "%s moved, %s corrected, %d skipped\n", countPages(moved), countNamespaces(renumbered), skipped)
	}
	if skipped > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// moveToParsed moves page p to title to, as the maintenance script; with
// dryRun it only checks that the move could be made.
func moveToParsed(ctx context.Context, a *app.App, p store.CheckTitle, to wiki.Title, reason string, ed engine.Editor, dryRun bool) error {
	switch cur, err := a.Store.FindPage(ctx, to); {
	case err == nil && !cur.Deleted:
		return wiki.Errorf(wiki.KindConflict, "a page %s (id %d) exists already; merge the two by hand, then delete this one or move it with: wikid page move --id %d NEW_TITLE",
			quoteName(string(to)), cur.ID, p.PageID)
	case err != nil && !errors.Is(err, wiki.ErrNotFound):
		return err
	}
	if dryRun {
		return nil
	}
	from := wiki.Title(p.Title)
	_, err := a.Engine.Move(ctx, from, to, reason, false, ed)
	if errors.Is(err, wiki.ErrExists) {
		return wiki.Errorf(wiki.KindConflict, "a page %s was created meanwhile; merge the two by hand", quoteName(string(to)))
	}
	if err != nil {
		return err
	}
	return relink(ctx, a, from)
}

// relink queues the re-derivation of the link rows of the pages linking to
// old, a title saved before today's rules: their rows name it as it was
// parsed then, and their text now links to the title it has become. (The
// move re-renders them already.)
func relink(ctx context.Context, a *app.App, old wiki.Title) error {
	q := wiki.ListQuery{Limit: 1000}
	for {
		pages, err := a.Store.Backlinks(ctx, old, q)
		if err != nil || len(pages) == 0 {
			return err
		}
		jobs := make([]wiki.JobSpec, len(pages))
		for i, p := range pages {
			jobs[i] = engine.LinksJob(p.Title)
		}
		if err := a.Store.EnqueueJobs(ctx, jobs); err != nil {
			return err
		}
		if len(pages) < q.Limit {
			return nil
		}
		q.After = pages[len(pages)-1].Title
	}
}

func countPages(n int) string      { return plural(n, "page", "pages") }
func countNamespaces(n int) string { return plural(n, "namespace", "namespaces") }

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
