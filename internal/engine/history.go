package engine

import (
	"context"
	"fmt"
	"iter"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/wikid/wikid/internal/wiki"
)

// A history import writes a transaction per HistoryBatchPages pages, or
// fewer when their revisions pass HistoryBatchRevisions or their text
// HistoryBatchBytes: texts of history revisions are written, not parsed,
// so that a batch holds many more revisions than an import of pages.
const (
	HistoryBatchPages     = 1000
	HistoryBatchRevisions = 5000
	HistoryBatchBytes     = 16 << 20
)

// HistoryPage is one page of a history import: its revisions, oldest
// first. A page with a very long history may come in several parts, one
// after the other, each a HistoryPage of the same title.
type HistoryPage struct {
	Title     wiki.Title
	Revisions []wiki.HistoryRevision
	// Redirect is the target the source says the latest revision
	// redirects to (a dump's <redirect>), when its markup's link set has
	// none.
	Redirect wiki.Title
}

// HistoryStats counts what a history import did.
type HistoryStats struct {
	Pages     int // pages (or parts of pages) read
	Revisions int // revisions read
	Added     int // revisions stored
	Skipped   int // revisions the wiki had already
	Created   int // pages created (or created again after a deletion)
	Updated   int // existing pages whose latest revision is now an imported one
}

// HistoryOptions say who imports and how the import is logged.
type HistoryOptions struct {
	Editor Editor
	// Log, when not empty, is the import log entries' comment: one entry
	// (import/upload) per page that got revisions.
	Log string
	// Progress, if not nil, is called after each batch.
	Progress func(HistoryStats)
}

// ImportHistory stores page histories with their own times and authors,
// as MediaWiki's importer does: a revision the page has already (same
// time, same text) is skipped, so that importing again changes nothing
// and an import that stopped half-way completes when run again. Only each
// page's newest revision is parsed (links, categories, search text, on
// every core, while the previous batch is written); history revisions are
// stored as they are, with no recent change. A page whose text is over the
// size limit stops the import with an error naming it; the pages before it
// are imported.
func (e *Engine) ImportHistory(ctx context.Context, pages iter.Seq2[HistoryPage, error], opts HistoryOptions) (HistoryStats, error) {
	var st HistoryStats
	type batch struct {
		pages []HistoryPage
		reqs  []wiki.HistoryRequest
		err   error // after the pages: those before the error are written
	}
	// Three stages, each a goroutine or the caller: the dump is read
	// while the previous batch is parsed and the one before it written.
	read := make(chan batch, 1)
	parsed := make(chan batch, 1)
	ctx, cancel := context.WithCancel(ctx)
	// The stages end before the import returns: the caller may read what
	// its pages iterator wrote.
	var stages sync.WaitGroup
	defer func() { cancel(); stages.Wait() }()
	send := func(ch chan<- batch, b batch) bool {
		select {
		case ch <- b:
			return b.err == nil
		case <-ctx.Done():
			return false
		}
	}
	stages.Go(func() {
		defer close(read)
		var pending []HistoryPage
		revs, size := 0, 0
		flush := func() bool {
			b := batch{pages: pending}
			pending, revs, size = nil, 0, 0
			return send(read, b)
		}
		for p, err := range pages {
			if err != nil {
				if len(pending) > 0 && !flush() {
					return
				}
				send(read, batch{err: err})
				return
			}
			// Two parts of one page go in two transactions: the store
			// writes a page's links once per batch.
			if n := len(pending); n > 0 && pending[n-1].Title == p.Title && !flush() {
				return
			}
			pending = append(pending, p)
			revs += len(p.Revisions)
			for _, v := range p.Revisions {
				size += len(v.Text)
			}
			if (len(pending) >= HistoryBatchPages || revs >= HistoryBatchRevisions || size >= HistoryBatchBytes) && !flush() {
				return
			}
		}
		if len(pending) > 0 {
			flush()
		}
	})
	stages.Go(func() {
		defer close(parsed)
		for b := range read {
			if len(b.pages) > 0 {
				reqs, err := e.historyRequests(ctx, b.pages, opts)
				if !send(parsed, batch{reqs: reqs, err: err}) {
					return
				}
			}
			if b.err != nil {
				send(parsed, b)
				return
			}
		}
	})
	// As in Import: a page parsed before a template it uses from this
	// import was written gets a links job.
	imported := map[wiki.Title]bool{}
	for b := range parsed {
		for _, r := range b.reqs {
			imported[r.Title] = true
		}
		for i, r := range b.reqs {
			if slices.ContainsFunc(r.Links.Templates, func(t wiki.Title) bool { return imported[t] }) {
				b.reqs[i].Jobs = append(r.Jobs, LinksJob(r.Title))
			}
		}
		if len(b.reqs) > 0 {
			res, err := e.store.ImportHistory(ctx, b.reqs)
			if err != nil {
				return st, err
			}
			var ids []int64
			var titles []wiki.Title
			for i, r := range res {
				st.Pages++
				st.Revisions += len(b.reqs[i].Revisions)
				st.Added += r.Added
				st.Skipped += r.Skipped
				switch {
				case r.Created:
					st.Created++
				case r.Latest:
					st.Updated++
				}
				if r.Latest {
					ids = append(ids, r.Page.ID)
					titles = append(append(titles, b.reqs[i].Title), b.reqs[i].Links.Categories...)
				}
				if r.Created {
					titles = withPair(titles, b.reqs[i].Title)
				}
			}
			e.importWritten(ctx, ids, titles)
			if opts.Progress != nil {
				opts.Progress(st)
			}
		}
		if b.err != nil {
			return st, b.err
		}
	}
	return st, ctx.Err()
}

// wikitextRedirect is MediaWiki's redirect syntax, which a page imported
// from it keeps whatever renderer reads it.
var wikitextRedirect = regexp.MustCompile(`(?i)^\s*#REDIRECT\s*:?\s*\[\[([^\]|#]+)`)

// historyRequests makes a batch's requests, parsing each page's newest
// revision on every core. On a page refused (too large, or its parse
// failed) it returns the requests of the pages before it and the error.
func (e *Engine) historyRequests(ctx context.Context, pages []HistoryPage, opts HistoryOptions) ([]wiki.HistoryRequest, error) {
	reqs := make([]wiki.HistoryRequest, len(pages))
	errs := make([]error, len(pages))
	rules := e.TitleRules()
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), len(pages))
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(pages); i += workers {
				p := pages[i]
				revs := slices.Clone(p.Revisions)
				for j := range revs {
					revs[j].Text = normalizeText(revs[j].Text)
					if err := e.checkSize(revs[j].Text); err != nil {
						errs[i] = fmt.Errorf("page %q, revision of %s: %w", p.Title, revs[j].Time.Format("2006-01-02 15:04:05"), err)
						break
					}
				}
				if errs[i] != nil || len(revs) == 0 {
					reqs[i] = wiki.HistoryRequest{Title: p.Title, Revisions: revs}
					continue
				}
				latest := revs[len(revs)-1]
				e.cores.Acquire()
				links, plain, err := e.analyzeHistory(ctx, p.Title, latest)
				e.cores.Release()
				if err != nil {
					errs[i] = fmt.Errorf("page %q: %w", p.Title, err)
					continue
				}
				if links.Redirect == "" && latest.Model.Or(wiki.ModelWikitext) == wiki.ModelWikitext {
					if m := wikitextRedirect.FindStringSubmatch(latest.Text); m != nil {
						if t, _, err := rules.ParseLink(strings.TrimSpace(m[1])); err == nil {
							links.Redirect = t
						}
					}
				}
				if links.Redirect == "" && p.Redirect != "" {
					links.Redirect = p.Redirect
				}
				reqs[i] = wiki.HistoryRequest{
					Title: p.Title, Revisions: revs, Links: links, SearchText: plain,
					Jobs: e.changeJobs(p.Title, true, false, withPair(slices.Clone(links.Categories), p.Title)...),
				}
				if opts.Log != "" {
					reqs[i].Log = wiki.LogEntry{Type: wiki.LogImport, Action: "upload", UserID: opts.Editor.UserID,
						UserName: opts.Editor.UserName, Comment: opts.Log, Time: e.now()}
				}
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return reqs[:i], err
		}
	}
	return reqs, nil
}

// analyzeHistory parses the newest revision of an imported page for its
// link set and search text, in the revision's model (a dump's revision
// without one is wikitext, MediaWiki's default).
func (e *Engine) analyzeHistory(ctx context.Context, t wiki.Title, rev wiki.HistoryRevision) (wiki.LinkSet, string, error) {
	return e.analyzeNow(ctx, t, rev.Text, rev.Model.Or(wiki.ModelWikitext))
}
