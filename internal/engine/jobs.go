package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/wikid/wikid/internal/jobs"
	"github.com/wikid/wikid/internal/markup/template"
	"github.com/wikid/wikid/internal/purge"
	"github.com/wikid/wikid/internal/wiki"
)

// What a change defers to the job queue, and what stays in its request:
//
//	in the change's transaction: revision, page row, link and category rows
//	  (WhatLinksHere and the backlinks job read them: they never lag), recent
//	  change, the jobs; a delete also drops the page's search entry at once.
//	before the response: the changed page's own renders (epoch bump) and edge
//	  entries, and its categories' listings: a writer reads its own write.
//	jobs, after commit: the search index (search), re-render of the pages
//	  whose link colour changed (backlinks, then refresh per cached page, which
//	  swaps new responses in while readers keep getting the old ones), external
//	  caches (cdnpurge), link rows re-derived from text (links, after an
//	  undelete), housekeeping (rc).
//
// Job payloads name pages by title: a job made in the same transaction as a
// page's creation cannot know its ID, and every handler re-reads the current
// state, so a job that runs late (or twice) does the right thing.

// ExternalPurger purges titles at caches outside this process (Varnish, a
// CDN). It runs in jobs: an error retries the purge with backoff.
type ExternalPurger interface {
	PurgeExternal(ctx context.Context, titles ...wiki.Title) error
}

// NoExternalPurge is the ExternalPurger of a wiki with nothing in front.
type NoExternalPurge struct{}

func (NoExternalPurge) PurgeExternal(context.Context, ...wiki.Title) error { return nil }

// backlinkBatch is how many linking pages a backlinks job handles per store
// round trip (one Backlinks read, one DeleteRenders write, one purge).
const backlinkBatch = 500

type titlePayload struct {
	Title wiki.Title `json:"title"`
	// Titles, instead of Title, are some of a bulk import batch's titles
	// (wiki.BatchBacklinks, a JobBatchBacklinks job): a job about the
	// pages linking to any of them. A part goes on from the first of
	// Titles, after AfterID.
	Titles []wiki.Title `json:"titles,omitempty"`
	// AfterID is where a backlinks or transclusions job goes on: the ID of
	// the last page of the batch its previous part handled. (A part queued
	// by an older version, which went by title, starts again from the
	// first page: its work is idempotent.)
	AfterID int64 `json:"after_id,omitempty"`
}

type titlesPayload struct {
	Titles  []wiki.Title `json:"titles"`
	Rebound bool         `json:"rebound,omitempty"` // a cdnpurge job's second sending
}

// titleJob is a job about one title, deduplicated while queued: its handler
// reads the title's current state, so one queued run serves every change.
func titleJob(kind string, t wiki.Title) wiki.JobSpec {
	b, _ := json.Marshal(titlePayload{Title: t})
	return wiki.JobSpec{Kind: kind, Payload: b, Key: kind + ":" + string(t)}
}

// cdnJobs are the purges of titles (and the listings) at the caches in
// front: none when there are none. A purge of one title is deduplicated
// while queued (a repeated purge, or an edit flood, queues one job; it runs
// after the last change that merged into it, so it purges the newest state).
// Each such job, once it ran, queues its rebound (runCDNPurge).
func (e *Engine) cdnJobs(titles ...wiki.Title) []wiki.JobSpec {
	if !e.hasCDN {
		return nil
	}
	b, _ := json.Marshal(titlesPayload{Titles: titles})
	j := wiki.JobSpec{Kind: wiki.JobCDNPurge, Payload: b}
	if len(titles) == 1 {
		j.Key = wiki.JobCDNPurge + ":" + string(titles[0])
	}
	return []wiki.JobSpec{j}
}

// CDNRebound is how long after a purge at the caches in front it is sent
// again: ten times what the other processes take to apply a change. A
// cache in front that refetched a page between the first purge and the
// moment the node it asked dropped its own copy (another process's change
// reaches a node through the purge log, within purge.FollowEvery) stored
// the old page again; the rebound drops it. It is queued when the first
// purge has run, without a key: a rebound is never merged into an earlier
// one, which would send it too soon after the later change.
const CDNRebound = 10 * purge.FollowEvery

// IndexJob, LinksJob and BacklinksJob build the jobs a change enqueues;
// they are exported for maintenance commands and the benchmark backlog.
func IndexJob(t wiki.Title) wiki.JobSpec     { return titleJob(wiki.JobSearch, t) }
func LinksJob(t wiki.Title) wiki.JobSpec     { return titleJob(wiki.JobLinks, t) }
func BacklinksJob(t wiki.Title) wiki.JobSpec { return titleJob(wiki.JobBacklinks, t) }

// TransclusionsJob brings the pages transcluding t up to date with it.
func TransclusionsJob(t wiki.Title) wiki.JobSpec { return titleJob(wiki.JobTransclusions, t) }

// FileUsesJob brings the pages showing file t up to date with its
// current version (an upload, a revert, a deletion).
func FileUsesJob(t wiki.Title) wiki.JobSpec { return titleJob(wiki.JobFileUses, t) }

// RefreshJob renders page t's cached responses again (after a backlinks job).
func RefreshJob(t wiki.Title) wiki.JobSpec { return titleJob(wiki.JobRefresh, t) }

// ReparseJob brings page t up to date with the pages it transcludes
// (after a transclusions job).
func ReparseJob(t wiki.Title) wiki.JobSpec { return titleJob(wiki.JobReparse, t) }

// HousekeepingJob is the periodic recent-changes and queue trim.
func HousekeepingJob() wiki.JobSpec { return wiki.JobSpec{Kind: wiki.JobRC, Key: wiki.JobRC} }

// enqueue queues jobs (none: nothing) and wakes the workers.
func (e *Engine) enqueue(ctx context.Context, jobs []wiki.JobSpec) error {
	if len(jobs) == 0 {
		return nil
	}
	if err := e.store.EnqueueJobs(ctx, jobs); err != nil {
		return err
	}
	e.jobsQueued()
	return nil
}

func (e *Engine) jobsQueued() {
	if e.onQueued != nil {
		e.onQueued()
	}
}

// JobHandlers returns the handler of every job kind the engine enqueues.
func (e *Engine) JobHandlers() map[string]jobs.Handler {
	return map[string]jobs.Handler{
		wiki.JobLinks:          e.runLinks,
		wiki.JobSearch:         e.runSearch,
		wiki.JobBacklinks:      e.runBacklinks,
		wiki.JobBatchBacklinks: e.runBacklinks, // through its titles in turn
		wiki.JobTransclusions:  e.runTransclusions,
		wiki.JobFileUses:       e.runTransclusions,
		wiki.JobRefresh:        e.runRefresh,
		wiki.JobReparse:        e.runReparse,
		wiki.JobReindex:        e.runReindex,
		wiki.JobCDNPurge:       e.runCDNPurge,
		wiki.JobRC:             e.runHousekeeping,
		wiki.JobNotify:         e.runNotify,
	}
}

func decode[T any](j wiki.Job) (T, error) {
	var v T
	if err := json.Unmarshal(j.Payload, &v); err != nil {
		return v, jobs.Permanent(fmt.Errorf("engine: %s job %d: bad payload %q: %w", j.Kind, j.ID, j.Payload, err))
	}
	return v, nil
}

// livePage finds the live page at t; ok is false when there is none (the
// job has nothing to do: a later change enqueued its own jobs).
func (e *Engine) livePage(ctx context.Context, t wiki.Title) (wiki.Page, bool, error) {
	p, err := e.store.FindPage(ctx, t)
	if errors.Is(err, wiki.ErrNotFound) {
		return wiki.Page{}, false, nil
	}
	if err != nil {
		return wiki.Page{}, false, err
	}
	return p, !p.Deleted, nil
}

// liveRevision finds the live page at t and its latest revision; ok is
// false when there is none (deleted or moved meanwhile: that change queued
// its own jobs).
func (e *Engine) liveRevision(ctx context.Context, t wiki.Title) (wiki.Page, wiki.Revision, bool, error) {
	p, ok, err := e.livePage(ctx, t)
	if err != nil || !ok {
		return wiki.Page{}, wiki.Revision{}, false, err
	}
	rev, err := e.store.FindRevision(ctx, p.LatestID)
	if errors.Is(err, wiki.ErrNotFound) {
		return wiki.Page{}, wiki.Revision{}, false, nil // deleted meanwhile
	}
	if err != nil {
		return wiki.Page{}, wiki.Revision{}, false, err
	}
	return p, rev, true, nil
}

// relink writes page p's link rows for revision revID from links and
// purges here the categories whose listings that changes (joined, left,
// another sort key there). It reports whether it wrote (not when a newer
// revision was saved meanwhile, which wrote its own rows) and returns
// those categories, for their purge at the caches in front.
func (e *Engine) relink(ctx context.Context, p wiki.Page, revID int64, links wiki.LinkSet) (bool, []wiki.Title, error) {
	old, err := e.store.PageCategories(ctx, p.ID)
	if err != nil {
		return false, nil, err
	}
	done, err := e.store.RefreshLinks(ctx, p.ID, revID, links)
	if err != nil || !done {
		return false, nil, err
	}
	cats := changedCategories(old, p.Title, links)
	if len(cats) > 0 {
		e.purger.Purge(ctx, nil, cats...)
	}
	return true, cats, nil
}

// runLinks re-derives a page's link and category rows from its latest
// revision. It writes nothing if a newer revision was saved meanwhile (that
// save wrote its own rows).
func (e *Engine) runLinks(ctx context.Context, j wiki.Job) error {
	pl, err := decode[titlePayload](j)
	if err != nil {
		return err
	}
	p, rev, ok, err := e.liveRevision(ctx, pl.Title)
	if err != nil || !ok {
		return err
	}
	// A page with templates gets its search entry from the same parse:
	// the templates' text may have changed it too.
	var links wiki.LinkSet
	var plain string
	if template.Has(rev.Text) {
		links, plain, err = e.analyze(ctx, p.Title, rev.Text, rev.Model)
	} else {
		links, err = e.links(ctx, p.Title, rev.Text, rev.Model)
	}
	if err != nil {
		return err // busy: the job runs again later
	}
	done, cats, err := e.relink(ctx, p, rev.ID, links)
	if err != nil || !done {
		return err
	}
	if len(links.Templates) > 0 {
		if err := e.store.MarkSearchStale(ctx, p.ID); err != nil {
			return err
		}
		err := e.store.UpdateSearchIndex(ctx, p.ID, func(src string, m wiki.ContentModel) string {
			if src == rev.Text && m.Or(wiki.ModelMarkdown) == rev.Model.Or(wiki.ModelMarkdown) {
				return plain
			}
			return e.plainText(ctx, p.Title, src, m) // a newer revision came meanwhile
		})
		if err != nil {
			return err
		}
	}
	if len(cats) == 0 {
		return nil
	}
	return e.enqueue(ctx, e.cdnJobs(cats...))
}

// runSearch makes the page's index entry match its current state: the
// text readers see (render's PlainText), not the markup.
func (e *Engine) runSearch(ctx context.Context, j wiki.Job) error {
	pl, err := decode[titlePayload](j)
	if err != nil {
		return err
	}
	p, err := e.store.FindPage(ctx, pl.Title)
	if errors.Is(err, wiki.ErrNotFound) {
		return nil // moved away without a redirect: the job of its new title indexes it
	}
	if err != nil {
		return err
	}
	release, err := e.gate.acquire(ctx) // the parse is a render's cost
	if err != nil {
		return err // busy: the job runs again later
	}
	defer release()
	// The text is read in the model of the revision the store indexes.
	return e.store.UpdateSearchIndex(ctx, p.ID, func(src string, m wiki.ContentModel) string { return e.plainText(ctx, p.Title, src, m) })
}

// refreshBudget bounds the time a refresh job spends rendering a page's
// cached responses again; past it, the rest are purged (the next reader of
// each renders it).
const refreshBudget = 10 * time.Second

// runBacklinks handles a title whose existence changed: every page linking
// to it changes link colour (red ↔ blue). Per batch of linking pages: drop
// their stored renders, then bump their in-memory epochs (in this order, so
// that a view racing the job cannot cache a stale render under the new
// epoch), then mark their cached responses stale (Purger.Stale: readers
// keep getting them as hits, but no earlier render is cached), and queue a
// refresh job for each page that has cached responses and the purge at
// external caches of the others. A refresh job is deduplicated per page
// while queued: a page linking to many titles that were created together
// is rendered once, after the last of their backlinks jobs that came first.
func (e *Engine) runBacklinks(ctx context.Context, j wiki.Job) error {
	pl, err := decode[titlePayload](j)
	if err != nil {
		return err
	}
	return e.staleDependents(ctx, j.Kind, pl, wiki.LinkUse)
}

// runTransclusions handles a change of a page that others transclude, or
// of a file others show (JobFileUses): in batches, as runBacklinks, each
// page using it gets a reparse job (runReparse), and the batch a reindex
// job for their search entries (runReindex). Until its job has run, every
// cached copy of a page, the stored render too, stays as it was and is
// served: readers never wait for the new version.
func (e *Engine) runTransclusions(ctx context.Context, j wiki.Job) error {
	pl, err := decode[titlePayload](j)
	if err != nil {
		return err
	}
	use := wiki.TemplateUse
	if j.Kind == wiki.JobFileUses {
		use = wiki.FileUse
	}
	return e.dependents(ctx, j.Kind, pl, use, func(ids []int64, titles []wiki.Title) ([]wiki.JobSpec, error) {
		jobs := make([]wiki.JobSpec, len(titles), len(titles)+1)
		for i, t := range titles {
			jobs[i] = ReparseJob(t)
		}
		b, _ := json.Marshal(titlesPayload{Titles: titles})
		return append(jobs, wiki.JobSpec{Kind: wiki.JobReindex, Payload: b}), nil
	})
}

// staleDependents marks stale one batch of the pages that use pl.Title as
// use says, after pl.AfterID (see runBacklinks, and dependents for the
// batches).
func (e *Engine) staleDependents(ctx context.Context, kind string, pl titlePayload, use wiki.Use) error {
	return e.dependents(ctx, kind, pl, use, func(ids []int64, titles []wiki.Title) ([]wiki.JobSpec, error) {
		// The epochs move on before the stored renders go: a render begun
		// before, and stored after the deletion, then finds its epoch gone
		// and drops what it stored (renderRevision, runReparse). The other
		// order lets one store between the two and keep it.
		e.invalidate(ids...)
		if err := e.store.DeleteRenders(ctx, ids); err != nil {
			return nil, err
		}
		cached := e.purger.Stale(ctx, ids, titles...)
		var jobs []wiki.JobSpec
		for _, t := range cached {
			jobs = append(jobs, RefreshJob(t))
		}
		if rest := slices.DeleteFunc(titles, func(t wiki.Title) bool { return slices.Contains(cached, t) }); len(rest) > 0 {
			jobs = append(jobs, e.cdnJobs(rest...)...)
		}
		return jobs, nil
	})
}

// dependents handles one batch of the pages that use pl.Title (or each of
// pl.Titles in turn) as use says, in page ID order after pl.AfterID
// (wiki.Store.Dependents, one read per title): batch returns the batch's
// jobs, given each of its pages once. When there are more, it queues the
// job of kind for the next batch behind the batch's own jobs: a batch is
// handled when the jobs before it are done, so that a stale page's
// refresh comes within the time a stale response is served
// (edge.StaleGrace) however many pages use the title, and the queue holds
// one batch's jobs at a time. Such a part has no key: an edit meanwhile
// queues a job from the first page, which must not merge into a part.
func (e *Engine) dependents(ctx context.Context, kind string, pl titlePayload, use wiki.Use, batch func(ids []int64, titles []wiki.Title) ([]wiki.JobSpec, error)) error {
	titles := pl.Titles
	if len(titles) == 0 {
		titles = []wiki.Title{pl.Title}
	}
	var pages []wiki.Page
	var next []byte // the next part's payload, when there may be more
	after := pl.AfterID
	for i, t := range titles {
		if err := ctx.Err(); err != nil {
			return err
		}
		got, err := e.store.Dependents(ctx, t, use, after, e.backlinkBatch-len(pages))
		if err != nil {
			return err
		}
		pages = append(pages, got...)
		if len(pages) == e.backlinkBatch {
			rest := titlePayload{Title: pl.Title, AfterID: pages[len(pages)-1].ID}
			if len(pl.Titles) > 0 {
				rest.Title, rest.Titles = "", titles[i:]
			}
			next, _ = json.Marshal(rest)
			break
		}
		after = 0
	}
	if len(pages) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(pages))
	names := make([]wiki.Title, 0, len(pages))
	seen := make(map[int64]bool, len(pages))
	for _, p := range pages {
		if !seen[p.ID] {
			seen[p.ID] = true
			ids, names = append(ids, p.ID), append(names, p.Title)
		}
	}
	jobs, err := batch(ids, names)
	if err != nil {
		return err
	}
	if next != nil {
		jobs = append(jobs, wiki.JobSpec{Kind: kind, Payload: next})
	}
	return e.enqueue(ctx, jobs)
}

// runRefresh renders the cached responses of a page again and swaps them
// in (Purger.Refresh), then queues its purge at external caches, which
// refill from the new responses. A process that restarted before the job
// ran has nothing cached: the job then only purges the external caches.
func (e *Engine) runRefresh(ctx context.Context, j wiki.Job) error {
	pl, err := decode[titlePayload](j)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, refreshBudget)
	e.purger.Refresh(rctx, nil, pl.Title)
	cancel()
	return e.enqueue(ctx, e.cdnJobs(pl.Title))
}

// runReparse brings a page up to date with the pages it transcludes, one
// of which changed: one parse of its latest revision gives its new render
// and link rows (its search entry is its batch's reindex job's). The rows
// are written first; then the new render replaces the stored one before
// the page's epoch moves on (a view that sees the new epoch reads the new
// render), and the cached responses are rendered again from it and
// swapped in (Purger.Refresh). Until then readers get the old version
// from every cache, as from a stale response. A render that an
// invalidation overtook (a linked page created meanwhile) is not kept:
// the page's renders are dropped and its next view renders it.
func (e *Engine) runReparse(ctx context.Context, j wiki.Job) error {
	pl, err := decode[titlePayload](j)
	if err != nil {
		return err
	}
	p, rev, ok, err := e.liveRevision(ctx, pl.Title)
	if err != nil || !ok {
		return err
	}
	ep := e.epoch(p.ID)
	cur := ep.Load()
	r, links, err := e.renderLinks(ctx, p.Title, rev.Text, rev.Model, true)
	if err != nil {
		return err // busy: the job runs again later
	}
	r.RevID = rev.ID
	done, cats, err := e.relink(ctx, p, rev.ID, links)
	if err != nil || !done {
		return err // !done: a newer revision was saved, with all of this
	}

	// The stored renders go (older revisions' too: they show the old
	// version of the template), and the new one takes their place.
	if err := e.store.DeleteRenders(ctx, []int64{p.ID}); err != nil {
		return err
	}
	keep := !e.noCache && !r.TimedOut && !r.Partial
	if keep {
		data, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("engine: reparse %q: %w", p.Title, err)
		}
		if err := e.store.SaveRender(ctx, rev.ID, e.markupOf(rev.Model).Version(), data); err != nil {
			return err
		}
	}
	if keep && ep.CompareAndSwap(cur, cur+1) {
		e.mem.Set(rev.ID, memRender{epoch: cur + 1, pageID: p.ID, r: r})
	} else {
		if keep {
			// Overtaken: the render may show old link colours.
			if err := e.store.DeleteRenders(ctx, []int64{p.ID}); err != nil {
				return err
			}
		}
		e.invalidate(p.ID)
	}
	rctx, cancel := context.WithTimeout(ctx, refreshBudget)
	e.purger.Refresh(rctx, []int64{p.ID}, p.Title)
	cancel()

	jobs := e.cdnJobs(p.Title)
	if len(cats) > 0 {
		jobs = append(jobs, e.cdnJobs(cats...)...)
	}
	return e.enqueue(ctx, jobs)
}

// reindexBatch is how many search entries a reindex job writes per
// transaction: SQLite's full-text index costs about as much to commit one
// entry as a hundred, and the writer is held for a few tens of ms.
const reindexBatch = 100

// runReindex writes the search entries of pages whose templates changed,
// reindexBatch to a transaction (wiki.Store.ReindexPages). Each page's
// text is made in a slot of the render gate, one page at a time. A page
// gone or moved meanwhile is left out: its change indexed it.
//
// A page's text can take as long as a render to make, and the job must
// end within its lease (ctx's deadline): once half the time left at its
// start is spent, it writes the entries it made and leaves the titles it
// did not reach to a reindex job of their own. Every run so writes some
// entries, where a run that ran out of time would fail with none, and
// so would every retry, from the same first title.
func (e *Engine) runReindex(ctx context.Context, j wiki.Job) error {
	pl, err := decode[titlesPayload](j)
	if err != nil {
		return err
	}
	var stopAt time.Time
	if deadline, ok := ctx.Deadline(); ok {
		stopAt = time.Now().Add(time.Until(deadline) / 2)
	}
	over := func() bool { return !stopAt.IsZero() && time.Now().After(stopAt) }
	for titles := pl.Titles; len(titles) > 0; {
		entries := make([]wiki.SearchEntry, 0, min(len(titles), reindexBatch))
		n := 0
		// At least one title per transaction, however late.
		for n < len(titles) && n < reindexBatch && (n == 0 || !over()) {
			t := titles[n]
			n++
			p, rev, ok, err := e.liveRevision(ctx, t)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			release, err := e.gate.acquire(ctx)
			if err != nil {
				return err // busy: the job runs again later
			}
			text := e.plainText(ctx, p.Title, rev.Text, rev.Model)
			release()
			entries = append(entries, wiki.SearchEntry{PageID: p.ID, RevID: rev.ID, Text: text})
		}
		if err := e.store.ReindexPages(ctx, entries); err != nil {
			return err
		}
		if titles = titles[n:]; len(titles) > 0 && over() {
			b, _ := json.Marshal(titlesPayload{Titles: titles})
			return e.enqueue(ctx, []wiki.JobSpec{{Kind: wiki.JobReindex, Payload: b}})
		}
	}
	return nil
}

func (e *Engine) runCDNPurge(ctx context.Context, j wiki.Job) error {
	pl, err := decode[titlesPayload](j)
	if err != nil {
		return err
	}
	if err := e.cdn.PurgeExternal(ctx, pl.Titles...); err != nil {
		return err
	}
	if pl.Rebound {
		return nil
	}
	pl.Rebound = true
	b, _ := json.Marshal(pl)
	if err := e.store.EnqueueJobs(ctx, []wiki.JobSpec{{Kind: wiki.JobCDNPurge, Payload: b, RunAt: e.now().Add(CDNRebound)}}); err != nil {
		// The purge was sent: only its rebound is lost.
		e.log.Warn("engine: queue the rebound of a CDN purge", "titles", len(pl.Titles), "err", err)
	}
	return nil
}

// runHousekeeping trims recent changes older than KeepChanges (when set),
// the purge log, and finished jobs older than KeepDoneJobs.
func (e *Engine) runHousekeeping(ctx context.Context, _ wiki.Job) error {
	now := e.now()
	if e.keepChanges > 0 {
		n, err := e.store.TrimChanges(ctx, now.Add(-e.keepChanges))
		if err != nil {
			return err
		}
		if n > 0 {
			e.log.Info("engine: trimmed recent changes", "entries", n, "older_than", e.keepChanges)
			e.purger.Purge(ctx, nil) // the lists
			e.purgeExternal(ctx)
		}
	}
	if _, err := e.store.TrimPurges(ctx, now.Add(-KeepPurges)); err != nil {
		return err
	}
	_, err := e.store.DeleteDoneJobs(ctx, now.Add(-e.keepDoneJobs))
	return err
}

// KeepPurges is how long the purge log keeps an event: far longer than a
// process that follows it takes between two reads, unless it is stuck
// (and then it finds the gap and drops its caches).
const KeepPurges = time.Hour

// HousekeepingEvery is how often the runner should enqueue HousekeepingJob.
const HousekeepingEvery = time.Hour
