package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

// An import saves ImportBatch pages per transaction, fewer when their text
// passes ImportBatchBytes. Larger batches cost the writer less per page:
// each transaction's search entries become one segment of the index,
// merged with the others later; and the link target, title and search
// indexes grow at random places, so that a batch dirties pages all over
// them, each written once to the WAL and once by the checkpoint however
// many rows it took (at 100,000 pages, 2,000 pages a batch took the
// writer a sixth less CPU than 1,000, and 4,000 took the import about a
// tenth less time than 2,000, on a machine whose timings varied almost as
// much). A larger batch holds the write lock longer from the server's
// edits, which wait for it: on the same loaded machine, 4,000 pages of 5
// KB held it 2.2 s (3.1 s at most), 2,000 held it 1.3 s (1.9 s).
const (
	ImportBatch      = 4000
	ImportBatchBytes = 32 << 20
)

// ImportPage is one page of an import: its title and text, in Model
// (empty: the site default, DefaultModel).
type ImportPage struct {
	Title wiki.Title
	Text  string
	Model wiki.ContentModel
}

// ImportStats counts what an import did.
type ImportStats struct {
	Pages     int // read
	Created   int
	Changed   int // a new revision on an existing page
	Unchanged int // the text was the latest revision's
}

// Import saves pages as edits by ed with summary, in batches of
// ImportBatch pages (or ImportBatchBytes) per transaction: each page is
// parsed once (links and search text, on every core) while the previous
// batch is written, and its search entry is written with it. A page that exists gets a new revision on top of its
// latest (no merge, no conflict). Protection is not checked: importing is
// an operator's action. progress, if not nil, is called after each batch.
// A page refused (too large) stops the import with an error naming it;
// the batches before it stay imported.
func (e *Engine) Import(ctx context.Context, pages iter.Seq2[ImportPage, error], ed Editor, summary string, progress func(ImportStats)) (ImportStats, error) {
	var st ImportStats
	type batch struct {
		reqs []wiki.SaveRequest
		err  error
	}
	parsed := make(chan batch, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		defer close(parsed)
		var pending []ImportPage
		size := 0
		flush := func() bool {
			reqs, err := e.importRequests(ctx, pending, ed, summary)
			pending, size = nil, 0
			select {
			case parsed <- batch{reqs, err}:
				return err == nil
			case <-ctx.Done():
				return false
			}
		}
		for p, err := range pages {
			if err != nil {
				select {
				case parsed <- batch{err: err}:
				case <-ctx.Done():
				}
				return
			}
			pending, size = append(pending, p), size+len(p.Text)
			if (len(pending) == e.importBatch || size >= ImportBatchBytes) && !flush() {
				return
			}
		}
		if len(pending) > 0 {
			flush()
		}
	}()
	// The titles this import wrote or is writing. A page is parsed while
	// the batch before it is written: a template it uses from that batch,
	// or from its own, was missing (or older) when it was expanded. Such a
	// page gets a links job, which derives its rows again once the
	// template is in.
	imported := map[wiki.Title]bool{}
	for b := range parsed {
		if b.err != nil {
			return st, b.err
		}
		for _, r := range b.reqs {
			imported[r.Title] = true
		}
		for i, r := range b.reqs {
			if slices.ContainsFunc(r.Links.Templates, func(t wiki.Title) bool { return imported[t] }) {
				b.reqs[i].Jobs = append(r.Jobs, LinksJob(r.Title))
			}
		}
		res, err := e.store.ImportPages(ctx, b.reqs)
		if err != nil {
			return st, err
		}
		// The pages the batch changed, purged together (importWritten).
		var ids []int64
		var titles []wiki.Title
		for i, r := range res {
			st.Pages++
			switch {
			case r.Created:
				st.Created++
			case r.Unchanged:
				st.Unchanged++
			default:
				st.Changed++
			}
			if !r.Unchanged {
				ids = append(ids, r.Page.ID)
				titles = append(append(titles, b.reqs[i].Title), b.reqs[i].Links.Categories...)
			}
			if r.Created {
				titles = withPair(titles, b.reqs[i].Title)
			}
		}
		e.importWritten(ctx, ids, titles)
		if progress != nil {
			progress(st)
		}
	}
	return st, ctx.Err()
}

// importRequests parses a batch of pages on every core the writer of
// the batch before leaves (Options.Cores).
func (e *Engine) importRequests(ctx context.Context, pages []ImportPage, ed Editor, summary string) ([]wiki.SaveRequest, error) {
	reqs := make([]wiki.SaveRequest, len(pages))
	errs := make([]error, len(pages))
	now := e.now()
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), len(pages))
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(pages); i += workers {
				e.cores.Acquire()
				reqs[i], errs[i] = e.importRequest(ctx, pages[i], ed, summary, now)
				e.cores.Release()
			}
		})
	}
	wg.Wait()
	return reqs, errors.Join(errs...)
}

// importRequest parses page p for importRequests.
func (e *Engine) importRequest(ctx context.Context, p ImportPage, ed Editor, summary string, now time.Time) (wiki.SaveRequest, error) {
	text := normalizeText(p.Text)
	if err := e.checkSize(text); err != nil {
		return wiki.SaveRequest{}, fmt.Errorf("page %q: %w", p.Title, err)
	}
	if err := checkModel(p.Model); err != nil {
		return wiki.SaveRequest{}, fmt.Errorf("page %q: %w", p.Title, err)
	}
	model := p.Model.Or(e.defaultModel)
	links, plain, err := e.analyzeNow(ctx, p.Title, text, model)
	if err != nil {
		return wiki.SaveRequest{}, fmt.Errorf("page %q: %w", p.Title, err)
	}
	return wiki.SaveRequest{
		Title: p.Title, Text: text, Summary: summary, UserID: ed.UserID, UserName: ed.UserName,
		Links: links, SearchText: plain, Time: now, Group: ed.Group,
		Model: model,
		// Whether the page is created is known after: its pair is purged
		// at external caches either way.
		Jobs: e.changeJobs(p.Title, true, false, withPair(slices.Clone(links.Categories), p.Title)...),
	}, nil
}

// importWritten does for a written import batch what afterChange does for
// an edit, once for the batch: one purge (and one event in the purge log)
// for its pages ids and the titles whose listings they change.
func (e *Engine) importWritten(ctx context.Context, ids []int64, titles []wiki.Title) {
	if len(ids) == 0 {
		return
	}
	e.invalidate(ids...)
	e.purger.Purge(ctx, ids, titles...)
	e.jobsQueued()
}
