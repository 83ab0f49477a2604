// Package engine is the wiki's behaviour above the store: rendering with a
// render cache, saving with three-way merge, moving, deleting, and telling
// caches what to purge. Web handlers (HTML and REST) call it; it never sees
// HTTP and the store never sees markup.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/maypok86/otter/v2"

	"github.com/wikid/wikid/internal/cores"
	"github.com/wikid/wikid/internal/markup/template"
	"github.com/wikid/wikid/internal/media"
	"github.com/wikid/wikid/internal/purge"
	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/timing"
	"github.com/wikid/wikid/internal/wiki"
)

// Purger removes cached responses for titles (purge.Node): in this
// process at once, so that a writer reads its own write, and in the other
// processes on the database through the purge log, where the renders of
// pageIDs go too (this process's are the engine's to drop, first).
type Purger interface {
	// Purge drops the responses showing titles, and the listings.
	Purge(ctx context.Context, pageIDs []int64, titles ...wiki.Title)
	// Stale is for changes that only restyle the responses showing titles
	// (a link's colour): they stay cached and served, but no render that
	// started before the call is cached. It returns the titles that have
	// cached responses, which Refresh is to render again.
	Stale(ctx context.Context, pageIDs []int64, titles ...wiki.Title) []wiki.Title
	// Refresh replaces the cached responses that show titles with ones
	// rendered now, serving the old ones until then (edge.Cache.Refresh).
	// When ctx ends, what is not refreshed yet is purged. The other
	// processes drop theirs, and their renders of pageIDs.
	Refresh(ctx context.Context, pageIDs []int64, titles ...wiki.Title)
	// Outbox is what a change carries into its transaction (with its jobs)
	// so that the other processes hear of it with its commit, in place of
	// Purge's telling them after; PurgeHere then does Purge's part in this
	// process.
	Outbox(pageIDs []int64, titles ...wiki.Title) []wiki.JobSpec
	PurgeHere(ctx context.Context, titles ...wiki.Title)
	// UsersChanged has every process read the accounts of userIDs again
	// (their sessions' user bars: a new notification).
	UsersChanged(ctx context.Context, userIDs ...int64)
}

// noPurge is the Purger of an engine without caches.
type noPurge struct{}

func (noPurge) Purge(context.Context, []int64, ...wiki.Title)              {}
func (noPurge) Stale(context.Context, []int64, ...wiki.Title) []wiki.Title { return nil }
func (noPurge) Refresh(context.Context, []int64, ...wiki.Title)            {}
func (noPurge) Outbox([]int64, ...wiki.Title) []wiki.JobSpec               { return nil }
func (noPurge) PurgeHere(context.Context, ...wiki.Title)                   {}
func (noPurge) UsersChanged(context.Context, ...int64)                     {}

// Rendered is a revision's HTML with what the page chrome needs around it.
type Rendered struct {
	RevID      int64
	HTML       string
	TOC        string // table of contents HTML, empty for short pages
	Categories []wiki.Title
	Redirect   wiki.Title
	Macros     []string
	// Templates are the pages the text transcludes (for the edit form's
	// list under a preview).
	Templates []wiki.Title `json:",omitempty"`
	// TimedOut: the render ran out of time and HTML is the page as plain
	// text (render.Result.TimedOut). Such a render is kept in memory only.
	TimedOut bool `json:"-"`
	// Partial: code blocks were left plain because highlighting ran out
	// of time (render.Result.Partial); kept in memory only, too.
	Partial bool `json:"-"`
	// Made is how many bytes the render read and wrote at most: its text
	// with the templates expanded, or its HTML before a too large one was
	// replaced. A parse of a short text can make megabytes (api.php
	// charges by it). Set by a render, not kept.
	Made int `json:"-"`
}

// Engine ties the store, the renderers and the caches together.
type Engine struct {
	store wiki.Store
	cores *cores.Gate // Options.Cores
	// markups are the renderers by content model (markup.go); markdown
	// is always there, and its title rules are the wiki's.
	markups      map[wiki.ContentModel]Markup
	defaultModel wiki.ContentModel
	toMarkdown   func(context.Context, string) (string, error) // ConvertText's wikitext to Markdown, or nil
	purger       Purger
	cdn          ExternalPurger
	hasCDN       bool // a cache in front is configured: changes queue cdnpurge jobs
	onQueued     func()
	log          *slog.Logger
	maxPage      int
	now          func() time.Time
	siteName     string // {{SITENAME}}

	keepChanges, keepDoneJobs time.Duration

	// mem is the in-memory render cache in front of the store's, keyed by
	// revision. A page's entries are invalidated by bumping its epoch: an
	// entry rendered under an older epoch is ignored. (Old revisions and the
	// latest one are invalidated together without knowing their IDs.)
	mem    *otter.Cache[int64, memRender]
	epochs sync.Map // page ID → *atomic.Uint64

	noCache bool

	diffs   diffCache   // computed comparisons of revision pairs (diff.go)
	gate    *renderGate // renders and parses at once (limit.go)
	flights flights     // renders of one revision under way

	// sectionMark is the nonce of the section marks in the text of pages
	// with templates (render.MarkSections): random, so that no template
	// can write a mark.
	sectionMark string

	files     FileOptions
	thumbs    thumbFlights // thumbnails being made (files.go)
	thumbGate *renderGate  // thumbnails made at once
	// thumbFailures are the images no thumbnail could be made of.
	thumbFailures thumbFailures

	// importBatch and backlinkBatch are ImportBatch and backlinkBatch,
	// smaller in tests that cross them.
	importBatch, backlinkBatch int

	// Renders counts actual renders (cache misses at every level), for tests.
	Renders atomic.Int64
}

type memRender struct {
	epoch  uint64
	pageID int64
	r      *Rendered
	until  time.Time // zero: until evicted; set for renders cut short by time
}

// degradedFor is how long a render cut short by time (Rendered.TimedOut or
// Partial) is reused before the page is rendered again.
const degradedFor = time.Minute

// Options configures New.
type Options struct {
	Store wiki.Store
	// Renderer renders Markdown pages (default: render.New()). Its title
	// rules (render.WithTitleRules) are the wiki's: templates are
	// expanded by them too, and stored renders are keyed by them
	// (Renderer.Version).
	Renderer *render.Renderer
	// Markups render the other content models (wikitext), by model; a
	// model without one shows its pages as plain text (markup.go).
	Markups map[wiki.ContentModel]Markup
	// DefaultModel is the model of pages created without one
	// (default_content_model; default Markdown).
	DefaultModel wiki.ContentModel
	// WikitextToMarkdown converts a wikitext page's text to Markdown for
	// a change of its model (ConvertText), stopping once ctx is done;
	// nil: the text is offered as it is, for the editor to rewrite.
	WikitextToMarkdown func(ctx context.Context, src string) (string, error)
	Purger             Purger
	Logger             *slog.Logger
	MaxPageBytes       int    // a page's text may not be longer, saved or previewed (default 2 MiB)
	SiteName           string // what {{SITENAME}} expands to (default "Wikid")
	MemBytes           int64  // in-memory render cache budget (default 64 MiB)
	Now                func() time.Time
	// NoRenderCache renders every view from markup: for measuring the
	// renderer (the benchmark's cache-miss case), never for production.
	NoRenderCache bool

	// CDN purges external caches from cdnpurge jobs (default: none).
	CDN ExternalPurger
	// JobsQueued is called after a change committed jobs: it wakes the
	// workers. Never blocks.
	JobsQueued func()
	// Cores is shared with the store's import writer: an import's parses
	// take the cores it leaves (nil: every core).
	Cores *cores.Gate
	// KeepChanges is how long recent-changes entries are kept (0: forever);
	// KeepDoneJobs how long finished jobs stay listed (default 24h).
	KeepChanges, KeepDoneJobs time.Duration
	// RenderLimits bounds the renders running and waiting at once (limit.go).
	RenderLimits RenderLimits
	// Files configures uploads and thumbnails.
	Files FileOptions
}

// New builds an Engine.
func New(o Options) *Engine {
	if o.SiteName == "" {
		o.SiteName = "Wikid"
	}
	if o.MaxPageBytes == 0 {
		o.MaxPageBytes = 2 << 20
	}
	if o.MemBytes == 0 {
		o.MemBytes = 64 << 20
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Purger == nil {
		o.Purger = noPurge{}
	}
	if o.Renderer == nil {
		o.Renderer = render.New()
	}
	markups := map[wiki.ContentModel]Markup{wiki.ModelMarkdown: o.Renderer}
	for m, mk := range o.Markups {
		if m != wiki.ModelMarkdown && mk != nil {
			markups[m] = mk
		}
	}
	hasCDN := o.CDN != nil
	if o.CDN == nil {
		o.CDN = NoExternalPurge{}
	}
	if o.KeepDoneJobs <= 0 {
		o.KeepDoneJobs = 24 * time.Hour
	}
	if o.Files.Allowed == nil {
		o.Files.Allowed = media.DefaultAllowed
	}
	if o.Files.ThumbSlots <= 0 {
		o.Files.ThumbSlots = 1
	}
	mem := otter.Must(&otter.Options[int64, memRender]{
		MaximumWeight: uint64(o.MemBytes),
		Weigher: func(_ int64, v memRender) uint32 {
			return uint32(len(v.r.HTML) + len(v.r.TOC) + 128)
		},
	})
	return &Engine{store: o.Store, cores: o.Cores, markups: markups, defaultModel: o.DefaultModel.Or(wiki.ModelMarkdown), toMarkdown: o.WikitextToMarkdown, purger: o.Purger, cdn: o.CDN, hasCDN: hasCDN, onQueued: o.JobsQueued,
		log: o.Logger, maxPage: o.MaxPageBytes, siteName: o.SiteName, now: o.Now, mem: mem, noCache: o.NoRenderCache,
		keepChanges: o.KeepChanges, keepDoneJobs: o.KeepDoneJobs, gate: newRenderGate(o.RenderLimits), sectionMark: newSectionMark(),
		files: o.Files, thumbGate: newRenderGate(RenderLimits{Concurrency: o.Files.ThumbSlots, Queue: o.Files.ThumbQueue}),
		importBatch: ImportBatch, backlinkBatch: backlinkBatch}
}

// Store returns the engine's store for read-only listings.
func (e *Engine) Store() wiki.Store { return e.store }

// TitleRules are the wiki's title rules, its Markdown renderer's: how
// links and template names in its pages become titles.
func (e *Engine) TitleRules() wiki.TitleRules { return e.markups[wiki.ModelMarkdown].TitleRules() }

func (e *Engine) epoch(pageID int64) *atomic.Uint64 {
	if v, ok := e.epochs.Load(pageID); ok {
		return v.(*atomic.Uint64)
	}
	v, _ := e.epochs.LoadOrStore(pageID, new(atomic.Uint64))
	return v.(*atomic.Uint64)
}

// Render returns rev's HTML from the memory cache, the store's render cache,
// or by rendering it (and then caching it at both levels). Concurrent
// renders of one revision are one render (limit.go).
func (e *Engine) Render(ctx context.Context, rev wiki.Revision) (*Rendered, error) {
	if e.noCache {
		if rev.Text == "" && rev.Size > 0 {
			full, err := e.store.FindRevision(ctx, rev.ID)
			if err != nil {
				return nil, err
			}
			rev = full
		}
		return e.renderText(ctx, rev.Title, rev.Text, rev.Model, true)
	}
	// The epoch is part of the flight's key: a request that comes after an
	// invalidation must not get a render begun before it.
	cur := e.epoch(rev.PageID).Load()
	if r, ok, err := e.cachedRender(ctx, rev, cur); ok || err != nil {
		return r, err
	}
	return e.flights.do(ctx, renderFlight(rev.ID, e.markupOf(rev.Model).Version(), cur), func(ctx context.Context) (*Rendered, error) {
		// A render that finished between the look-up and the flight.
		if r, ok, err := e.cachedRender(ctx, rev, cur); ok || err != nil {
			return r, err
		}
		return e.renderRevision(ctx, rev, cur)
	})
}

// cachedRender finds rev's render of epoch cur in memory or in the store.
func (e *Engine) cachedRender(ctx context.Context, rev wiki.Revision, cur uint64) (*Rendered, bool, error) {
	if v, ok := e.mem.GetIfPresent(rev.ID); ok && v.epoch == cur && (v.until.IsZero() || e.now().Before(v.until)) {
		return v.r, true, nil
	}
	// Renders are stored by the version of the renderer of the revision's
	// model, which tells the title rules apart (after capital_links
	// changes, the renders made under the other setting are never read)
	// and a plain-text render of a model that had no renderer from the
	// renderer's (markup.go).
	data, err := e.store.FindRender(ctx, rev.ID, e.markupOf(rev.Model).Version())
	if errors.Is(err, wiki.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, err
		}
		// A stored render that cannot be read (a corrupt row) is a miss
		// like one that does not unmarshal: the new render replaces it.
		e.log.Warn("engine: stored render unreadable; rendering again", "rev", rev.ID, "err", err)
		return nil, false, nil
	}
	var r Rendered
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, false, nil
	}
	e.mem.Set(rev.ID, memRender{epoch: cur, pageID: rev.PageID, r: &r})
	return &r, true, nil
}

// renderRevision renders rev, begun at epoch cur, and caches the result at
// both levels unless an invalidation came meanwhile.
func (e *Engine) renderRevision(ctx context.Context, rev wiki.Revision, cur uint64) (*Rendered, error) {
	ep := e.epoch(rev.PageID)
	if rev.Text == "" && rev.Size > 0 {
		full, err := e.store.FindRevision(ctx, rev.ID)
		if err != nil {
			return nil, err
		}
		rev = full
	}
	r, err := e.renderText(ctx, rev.Title, rev.Text, rev.Model, true)
	if err != nil {
		return nil, err
	}
	r.RevID = rev.ID
	// Keep the render only if no invalidation (a linked page created or
	// deleted) happened while rendering: it may show old link colours.
	// (Another process's invalidation arrives through the purge log:
	// Forget.)
	if ep.Load() != cur {
		return r, nil
	}
	if r.TimedOut || r.Partial {
		// Whether a render runs out of time depends on the moment: keep
		// it from the next views, not for good.
		msg := "engine: render ran out of time; the page shows as plain text for a minute, then renders again"
		if !r.TimedOut {
			msg = "engine: highlighting ran out of time; code blocks show plain for a minute, then the page renders again"
		}
		e.log.Warn(msg, "rev", rev.ID, "page", rev.PageID, "bytes", len(rev.Text))
		e.mem.Set(rev.ID, memRender{epoch: cur, pageID: rev.PageID, r: r, until: e.now().Add(degradedFor)})
		return r, nil
	}
	if data, err := json.Marshal(r); err == nil {
		if err := e.store.SaveRender(ctx, rev.ID, e.markupOf(rev.Model).Version(), data); err != nil {
			e.log.Warn("engine: save render", "rev", rev.ID, "err", err)
		}
	}
	if ep.Load() == cur {
		e.mem.Set(rev.ID, memRender{epoch: cur, pageID: rev.PageID, r: r})
	} else if err := e.store.DeleteRenders(ctx, []int64{rev.PageID}); err != nil {
		e.log.Warn("engine: drop stale render", "rev", rev.ID, "err", err)
	}
	return r, nil
}

// renderText renders text, the source of page t in model m, in a slot of
// the render gate; editLinks gives its section headings edit links (a render of the
// page's latest revision, which is also its render as an old revision
// later: the page view of an old revision drops them).
func (e *Engine) renderText(ctx context.Context, t wiki.Title, text string, m wiki.ContentModel, editLinks bool) (*Rendered, error) {
	r, _, err := e.renderLinks(ctx, t, text, m, editLinks)
	return r, err
}

// renderLinks is renderText returning also the link set its parse found,
// with the templates.
func (e *Engine) renderLinks(ctx context.Context, t wiki.Title, text string, m wiki.ContentModel, editLinks bool) (*Rendered, wiki.LinkSet, error) {
	mk := e.markupOf(m)
	src := text // text may be marked for its sections below
	release, err := e.gate.acquire(ctx)
	if err != nil {
		return nil, wiki.LinkSet{}, err
	}
	defer release()
	e.Renders.Add(1)
	// Server-Timing's render entry is the renderer's own time: the link
	// colour lookup inside it is a store call, reported under db.
	var inStore time.Duration
	exists := func(ctx context.Context, titles []wiki.Title) (map[wiki.Title]bool, error) {
		t := time.Now()
		defer func() { inStore += time.Since(t) }()
		return e.store.ExistingTitles(ctx, titles)
	}
	t0 := time.Now()
	o := render.Options{Files: func(ctx context.Context, titles []wiki.Title) (map[wiki.Title]wiki.FileVersion, error) {
		t := time.Now()
		defer func() { inStore += time.Since(t) }()
		return e.store.CurrentFiles(ctx, titles)
	}}
	if editLinks {
		o.EditPage = t
		if template.Has(text) {
			// Templates may write headings and hide the page's own:
			// the page's section headings are marked before expansion.
			if marked, err := mk.MarkSections(text, e.sectionMark); err == nil {
				text, o.SectionMark = marked, e.sectionMark
			} else {
				o.EditPage = "" // too complex to tell its sections: no links
			}
		}
	}
	expanded, err := e.expand(ctx, t, text, m)
	if err != nil {
		return nil, wiki.LinkSet{}, fmt.Errorf("engine: expand templates: %w", err)
	}
	res, err := mk.RenderWith(ctx, expanded.Text, exists, o)
	timing.From(ctx).AddRender(time.Since(t0) - inStore)
	if err != nil {
		return nil, wiki.LinkSet{}, fmt.Errorf("engine: render: %w", err)
	}
	links := res.Links
	links.Templates, links.DefaultSort = expanded.Templates, expanded.DefaultSort
	html, toc := res.HTML, render.TOCHTML(res.TOC)
	made := max(len(expanded.Text), len(html)+len(toc))
	if n, limit := len(html)+len(toc), e.maxRenderHTML(); n > limit {
		// Headings and links multiply a source by up to 60 in HTML: a page
		// at the size limit made 127 MB, too large for the caches, which
		// every view then read and decoded from the store (2 s each).
		e.log.Warn("engine: a render is larger than a page may render to; the page shows as plain text",
			"page", t, "bytes", len(src), "html_bytes", n, "limit", limit)
		html, toc = render.TooLargeHTML(src, n, limit), ""
	}
	return &Rendered{
		HTML:       html,
		TOC:        toc,
		Categories: res.Links.Categories,
		Redirect:   res.Links.Redirect,
		Macros:     res.Macros,
		Templates:  expanded.Templates,
		TimedOut:   res.TimedOut,
		Partial:    res.Partial,
		Made:       made,
	}, links, nil
}

// analyze parses text, the source of page t in model m, for its link set
// and plain text (the search entry) in a slot of the render gate.
func (e *Engine) analyze(ctx context.Context, t wiki.Title, text string, m wiki.ContentModel) (wiki.LinkSet, string, error) {
	release, err := e.gate.acquire(ctx)
	if err != nil {
		return wiki.LinkSet{}, "", err
	}
	defer release()
	return e.analyzeNow(ctx, t, text, m)
}

// analyzeNow is analyze's work, for a caller that holds a slot (or is
// an import, which runs one parse per core).
func (e *Engine) analyzeNow(ctx context.Context, t wiki.Title, text string, m wiki.ContentModel) (wiki.LinkSet, string, error) {
	expanded, err := e.expand(ctx, t, text, m)
	if err != nil {
		return wiki.LinkSet{}, "", fmt.Errorf("engine: expand templates: %w", err)
	}
	ls, plain := e.markupOf(m).Analyze(expanded.Text)
	ls.Templates, ls.DefaultSort = expanded.Templates, expanded.DefaultSort
	return ls, plain, nil
}

// links parses text, the source of page t in model m, for its link set in
// a slot of the render gate: the parse is most of a render's cost.
func (e *Engine) links(ctx context.Context, t wiki.Title, text string, m wiki.ContentModel) (wiki.LinkSet, error) {
	release, err := e.gate.acquire(ctx)
	if err != nil {
		return wiki.LinkSet{}, err
	}
	defer release()
	expanded, err := e.expand(ctx, t, text, m)
	if err != nil {
		return wiki.LinkSet{}, fmt.Errorf("engine: expand templates: %w", err)
	}
	ls := e.markupOf(m).Links(expanded.Text)
	ls.Templates, ls.DefaultSort = expanded.Templates, expanded.DefaultSort
	return ls, nil
}

// checkSize refuses a text longer than the page limit (max_page_bytes).
func (e *Engine) checkSize(text string) error {
	if len(text) > e.maxPage {
		return wiki.Errorf(wiki.KindTooLarge, "the page text is %d bytes; the limit (max_page_bytes) is %d bytes. Split the page into smaller pages", len(text), e.maxPage)
	}
	return nil
}

// MaxPageBytes is the longest page text the engine saves or previews.
func (e *Engine) MaxPageBytes() int { return e.maxPage }

// maxRenderHTML bounds a render's HTML (with its table of contents): four
// times the largest page, 8 MB by default, which the longest articles of
// Wikipedia stay well under. A larger render shows its page as plain text.
func (e *Engine) maxRenderHTML() int { return 4 * e.maxPage }

// ParseUnit is how many bytes of text rendered outside the render cache
// (a preview, an Action API parse of a text) count as one event of a
// client's parse rate limit, charged by the text and again by what its
// render made (Rendered.Made): a client may render a few MiB a minute
// this way (a 2 MiB page's links take a core for a second or two), while
// the texts of ordinary pages cost nothing by their size (api.php counts
// one event per parse besides).
const ParseUnit = 64 << 10

// Preview renders text, as page t's in model m (empty: Markdown),
// without saving it; text over the page limit is refused as a save would
// be, and so is a model the wiki does not know.
func (e *Engine) Preview(ctx context.Context, t wiki.Title, text string, m wiki.ContentModel) (*Rendered, error) {
	if err := e.checkSize(text); err != nil {
		return nil, err
	}
	if err := checkModel(m); err != nil {
		return nil, err
	}
	return e.renderText(ctx, t, text, m, false)
}

// View is what a page view needs.
type View struct {
	Page           wiki.Page
	Revision       wiki.Revision // Text empty
	Rendered       *Rendered
	RedirectedFrom wiki.Title // set when a redirect was followed
}

// ViewPage loads t's latest revision, following one redirect unless
// noRedirect. A missing or deleted page is wiki.ErrNotFound.
func (e *Engine) ViewPage(ctx context.Context, t wiki.Title, noRedirect bool) (View, error) {
	p, err := e.store.FindPage(ctx, t)
	if err != nil {
		return View{}, err
	}
	if p.Deleted {
		return View{Page: p}, wiki.ErrNotFound
	}
	var from wiki.Title
	if p.Redirect != "" && !noRedirect && p.Redirect != p.Title {
		if q, err := e.store.FindPage(ctx, p.Redirect); err == nil && !q.Deleted {
			from, p = p.Title, q
		}
	}
	rev, err := e.store.FindRevision(ctx, p.LatestID)
	if err != nil {
		return View{}, err
	}
	r, err := e.Render(ctx, rev)
	if err != nil {
		return View{}, err
	}
	rev.Text = ""
	return View{Page: p, Revision: rev, Rendered: r, RedirectedFrom: from}, nil
}

// Editor says who makes a change. Group decides what protected titles
// they may change; the zero Group is anonymous.
type Editor struct {
	UserID   int64
	UserName string
	Group    wiki.Group
	// Signature is the user's custom signature (wiki.Prefs.Signature):
	// what ~~~ expands to, when it passes CheckSignature.
	Signature string
}

// Edit is a save request from a form or the API.
type Edit struct {
	Title     wiki.Title
	Text      string
	Summary   string
	Minor     bool
	BaseRevID int64 // revision the user started from; 0 when creating
	Editor    Editor
	// Section makes Text one section of the page rather than all of it:
	// a section number ("0", "1"…, as render.Sections numbers them in the
	// base revision, the latest when BaseRevID is 0), or NewSection to
	// append Text as a new section headed SectionTitle (sections.go).
	Section      string
	SectionTitle string
	// Verbatim saves Text as it is, without expanding signatures: a
	// revert restores a revision's text as it was.
	Verbatim bool
	// Tags mark the change (wiki.TagUndo, wiki.TagRollback).
	Tags []string
	// ExactBase refuses the save with a wiki.KindConflict error when the
	// page's latest revision is no longer BaseRevID, instead of merging:
	// for a change decided on that revision (a rollback).
	ExactBase bool
	// Model is the markup of Text (wiki.ContentModels): empty keeps the
	// page's model, or for a new page the site default (DefaultModel).
	// The same text in another model is a change, not a null edit.
	Model wiki.ContentModel
}

// ConflictError is returned when an edit overlaps a concurrent one.
// It carries both versions so the user can merge them by hand.
type ConflictError struct {
	Yours      string
	Current    string
	CurrentRev int64
	Merged     string // with conflict markers
}

func (c *ConflictError) Error() string {
	return "edit conflict: someone else changed the same part of the page while you were editing"
}

// Unwrap makes a ConflictError a wiki.ErrConflict for status mapping.
func (c *ConflictError) Unwrap() error { return wiki.ErrConflict }

// SaveOutcome tells the caller what happened.
type SaveOutcome struct {
	Page     wiki.Page
	Revision wiki.Revision
	Created  bool
	Merged   bool // a concurrent edit was merged in
	NoChange bool // the text equals the current text: no revision was made
}

// Save stores an edit. If the page changed since BaseRevID, non-overlapping
// changes are merged three-way; overlapping ones return *ConflictError. An
// edit based on a revision of a page deleted or moved since returns
// *DeletedError or *MovedError (stale.go); one the title's protection does
// not allow, *ProtectedError (protect.go).
func (e *Engine) Save(ctx context.Context, ed Edit) (SaveOutcome, error) {
	if err := e.checkSize(ed.Text); err != nil {
		return SaveOutcome{}, err
	}
	if ed.Title.IsSpecial() {
		return SaveOutcome{}, wiki.Errorf(wiki.KindInvalid, "special pages are generated by the wiki and cannot be edited")
	}
	if err := checkModel(ed.Model); err != nil {
		return SaveOutcome{}, err
	}
	n, err := ParseSection(ed.Section)
	if err != nil {
		return SaveOutcome{}, err
	}
	// The model is decided once, before the text is read in it (its
	// signatures, its sections): the page's when the edit names none.
	if ed.Model == "" {
		cur, err := e.store.FindPage(ctx, ed.Title)
		if err != nil && !errors.Is(err, wiki.ErrNotFound) {
			return SaveOutcome{}, err
		}
		ed.Model = e.modelOf("", cur, err == nil)
	}
	if !ed.Verbatim {
		if ed.Text, err = e.Sign(ed.Text, ed.Model, ed.Editor); err != nil {
			return SaveOutcome{}, err
		}
	}
	// topic is the subject of a new section: appended to whatever the
	// latest text is at each attempt, never merged.
	var topic string
	switch {
	case ed.Section == NewSection:
		if topic, err = TopicSubject(ed.SectionTitle); err != nil {
			return SaveOutcome{}, err
		}
		if strings.TrimSpace(ed.Summary) == "" {
			ed.Summary = SectionSummary(topic) + "new section"
		}
	case n >= 0:
		if err := e.spliceSection(ctx, &ed, n); err != nil {
			return SaveOutcome{}, err
		}
		if err := e.checkSize(ed.Text); err != nil {
			return SaveOutcome{}, err
		}
	}
	ed.Text = normalizeText(ed.Text)
	ed.Summary = wiki.OneLine(ed.Summary, 500)
	merged := false
	for attempt := 0; attempt < 3; attempt++ {
		cur, err := e.store.FindPage(ctx, ed.Title)
		exists := err == nil && !cur.Deleted
		if err != nil && !errors.Is(err, wiki.ErrNotFound) {
			return SaveOutcome{}, err
		}
		if err := e.checkProtection(ctx, ed.Title, wiki.ProtectEdit, !exists, ed.Editor); err != nil {
			return SaveOutcome{}, err
		}
		base := ed.BaseRevID
		if ed.ExactBase && (!exists || cur.LatestID != base) {
			return SaveOutcome{}, errChangedMeanwhile
		}
		text := ed.Text
		if topic != "" {
			base = 0
			if exists {
				base = cur.LatestID
			}
			text = appendTopic("", topic, ed.Text, ed.Model)
		}
		var baseText, oldText string
		if base != 0 && (!exists || base != cur.LatestID) {
			b, err := e.staleBase(ctx, ed, cur, exists)
			if err != nil {
				return SaveOutcome{}, err
			}
			baseText = b.Text
		}
		if exists {
			latest, err := e.store.FindRevision(ctx, cur.LatestID)
			if err != nil {
				return SaveOutcome{}, err
			}
			if topic != "" {
				if text = appendTopic(latest.Text, topic, ed.Text, ed.Model); len(text) > e.maxPage {
					return SaveOutcome{}, e.checkSize(text)
				}
			}
			sameModel := latest.Model.Or(wiki.ModelMarkdown) == ed.Model
			if latest.Text == text && sameModel {
				return SaveOutcome{Page: cur, Revision: latest, NoChange: true}, nil
			}
			oldText = latest.Text
			if base != cur.LatestID {
				m, conflict, err := e.merge(ctx, baseText, text, latest.Text)
				if err != nil {
					return SaveOutcome{}, err
				}
				if conflict {
					return SaveOutcome{}, &ConflictError{Yours: ed.Text, Current: latest.Text, CurrentRev: latest.ID, Merged: m}
				}
				text, merged = m, true
				if err := e.checkSize(text); err != nil {
					return SaveOutcome{}, err
				}
				if text == latest.Text && sameModel {
					return SaveOutcome{Page: cur, Revision: latest, NoChange: true, Merged: true}, nil
				}
			}
			base = cur.LatestID
		} else {
			base = 0
		}
		var oldCats []wiki.CategoryLink
		var oldFiles []wiki.Title
		if exists {
			if oldCats, err = e.store.PageCategories(ctx, cur.ID); err != nil {
				return SaveOutcome{}, err
			}
			if oldFiles, err = e.store.PageFiles(ctx, cur.ID); err != nil {
				return SaveOutcome{}, err
			}
		}
		links, plain, err := e.analyze(ctx, ed.Title, text, ed.Model)
		if err != nil {
			return SaveOutcome{}, err
		}
		// Purged with the page: the categories it joined or left or where
		// its sort key changed and, when it is created, its talk page or
		// subject.
		cats := changedCategories(oldCats, ed.Title, links)
		// The pages of the files it started or stopped showing list it.
		cats = append(cats, changedFiles(oldFiles, links.Files)...)
		if base == 0 {
			cats = withPair(cats, ed.Title)
		}
		if exists && cur.Model.Or(wiki.ModelMarkdown) != ed.Model {
			// The store logs the change of model: the log's listings show it.
			cats = append(cats, purge.LogTitle)
		}
		var ids []int64 // a page created has no renders anywhere yet
		if exists {
			ids = []int64{cur.ID}
		}
		jobs := append(e.changeJobs(ed.Title, base == 0, false, cats...), e.purger.Outbox(ids, append([]wiki.Title{ed.Title}, cats...)...)...)
		if j, ok := e.notifyJob(ed.Title, base, ed.Editor.UserName, oldText, text, !ed.Verbatim); ok {
			jobs = append(jobs, j)
		}
		// base 0 creates the page (or fails with ErrExists): pages linking
		// to it turn blue.
		res, err := e.store.SavePage(ctx, wiki.SaveRequest{
			Title: ed.Title, Text: text, Summary: ed.Summary, Minor: ed.Minor,
			UserID: ed.Editor.UserID, UserName: ed.Editor.UserName,
			BaseRevID: base, Links: links, SearchText: plain, Time: e.now(), Group: ed.Editor.Group, Tags: ed.Tags,
			Jobs: jobs, Model: ed.Model,
		})
		if errors.Is(err, wiki.ErrProtected) {
			// Protected since the check above: say so as it would have.
			if perr := e.checkProtection(ctx, ed.Title, wiki.ProtectEdit, base == 0, ed.Editor); perr != nil {
				return SaveOutcome{}, perr
			}
		}
		if errors.Is(err, wiki.ErrConflict) || errors.Is(err, wiki.ErrExists) {
			continue // lost a race with another save: merge against the new latest
		}
		if err != nil {
			e.maybeCommitted(ctx, err, ids, append([]wiki.Title{ed.Title}, cats...)...)
			return SaveOutcome{}, err
		}
		e.afterCommit(ctx, res.Page.ID, ed.Title, cats...)
		if base != 0 {
			// The revision just replaced is rarely viewed again: keep memory
			// for current pages (its render stays in the store).
			e.mem.Invalidate(base)
		}
		return SaveOutcome{Page: res.Page, Revision: res.Revision, Created: res.Created, Merged: merged}, nil
	}
	return SaveOutcome{}, wiki.Errorf(wiki.KindConflict, "the page is being edited very often right now; try saving again")
}

// changeJobs is what a change to title t defers: the link colour of pages
// linking to it when its existence changed, its link rows and search entry
// when they must be re-derived from text (a save writes both itself), and
// the external purge of t and the other titles whose responses changed
// (its categories).
func (e *Engine) changeJobs(t wiki.Title, existenceChanged, reindex bool, also ...wiki.Title) []wiki.JobSpec {
	var jobs []wiki.JobSpec
	if reindex {
		jobs = append(jobs, IndexJob(t), LinksJob(t))
	}
	if existenceChanged {
		jobs = append(jobs, BacklinksJob(t))
	}
	// The pages transcluding t show its text: every change reaches them.
	jobs = append(jobs, TransclusionsJob(t))
	if existenceChanged && t.Namespace() == wiki.NSFile {
		// A file page created or deleted shows or hides its file.
		jobs = append(jobs, FileUsesJob(t))
	}
	return append(jobs, e.cdnJobs(append([]wiki.Title{t}, also...)...)...)
}

// categoriesOf returns the categories page pageID is in: their pages list
// it, so a change of its title or of its existence changes them.
func (e *Engine) categoriesOf(ctx context.Context, pageID int64) ([]wiki.Title, error) {
	links, err := e.store.PageCategories(ctx, pageID)
	if err != nil {
		return nil, err
	}
	cats := make([]wiki.Title, len(links))
	for i, l := range links {
		cats[i] = l.Category
	}
	return cats, nil
}

// withPair returns titles and the talk page or subject of t (Title.Pair),
// for a change that creates or removes page t: the views of that other
// page show whether t exists (their Page or Discussion tab, blue or red),
// so they are purged with t's, as MediaWiki purges the "other page".
func withPair(titles []wiki.Title, t wiki.Title) []wiki.Title {
	if p, ok := t.Pair(); ok {
		return append(titles, p)
	}
	return titles
}

// afterCommit runs after a change committed with its Outbox, before the
// response: it invalidates the changed page's own renders and cached
// responses here (and those of also), so that the writer reads its own
// write, and wakes the job workers. The other processes heard of it from
// the purge log event committed with it; everything else the change made
// stale is the jobs' business.
func (e *Engine) afterCommit(ctx context.Context, pageID int64, t wiki.Title, also ...wiki.Title) {
	// The local purge comes first: the jobs woken next purge the caches in
	// front, which refill from this node, and must find the new state.
	e.invalidate(pageID)
	e.purger.PurgeHere(ctx, append([]wiki.Title{t}, also...)...)
	e.jobsQueued()
}

// maybeCommitted follows a change whose store call failed with err: an
// error that is not the store's answer (a lost connection, a reply lost
// at COMMIT) leaves unknown whether the change and its purge log event
// committed, and this process skips its own events. So it purges here as
// if they had: a purge of what did not change costs a render.
func (e *Engine) maybeCommitted(ctx context.Context, err error, pageIDs []int64, titles ...wiki.Title) {
	var we *wiki.Error
	for _, known := range []error{wiki.ErrNotFound, wiki.ErrConflict, wiki.ErrExists, wiki.ErrProtected} {
		if errors.Is(err, known) {
			return
		}
	}
	if errors.As(err, &we) {
		return
	}
	e.invalidate(pageIDs...)
	e.purger.PurgeHere(context.WithoutCancel(ctx), titles...)
}

func (e *Engine) invalidate(pageIDs ...int64) {
	for _, id := range pageIDs {
		e.epoch(id).Add(1)
	}
}

// Invalidate drops the in-memory renders of pages that another process
// changed (purge.Node applies its events), and keeps renders begun before
// from being cached.
func (e *Engine) Invalidate(pageIDs ...int64) { e.invalidate(pageIDs...) }

// Forget drops the renders of pages whose links another process found
// changed colour (purge.Node applies its events): the in-memory ones,
// then the stored ones, which a render of this process that began before
// the change may have saved after that process dropped them. In that
// order, a render of this process stored after the deletion finds its
// epoch gone and drops it (renderRevision).
func (e *Engine) Forget(ctx context.Context, pageIDs ...int64) {
	e.invalidate(pageIDs...)
	// A process stopping (ctx ended: `wikid import` at its end) renders
	// no more, and says nothing of the deletion it gave up.
	if err := e.store.DeleteRenders(ctx, pageIDs); err != nil && ctx.Err() == nil {
		e.log.Warn("engine: drop renders another process invalidated", "pages", len(pageIDs), "err", err)
	}
}

// ForgetAll drops every render held in memory, for a process that missed
// other processes' invalidations.
func (e *Engine) ForgetAll() { e.mem.InvalidateAll() }

// changedCategories returns the categories whose listings a new link set
// ls of page changes, from the categories it was in (old, as its rows
// were): the ones it joined or left, and the ones where it moves in the
// listing, as MediaWiki counts a new sort key as a change of membership:
// its sort key changed, or it moved in or out of the subcategories (its
// rows are derived again after a move).
func changedCategories(old []wiki.CategoryLink, page wiki.Title, ls wiki.LinkSet) []wiki.Title {
	was := make(map[wiki.Title]wiki.CategoryLink, len(old))
	for _, c := range old {
		was[c.Category] = c
	}
	var out []wiki.Title
	for _, cat := range ls.Categories {
		c, ok := was[cat]
		if !ok || c.SortKey != ls.CategorySortKey(page, cat) || c.Subcat != page.IsSubcategory() {
			out = append(out, cat)
		}
		delete(was, cat)
	}
	for _, c := range old {
		if _, left := was[c.Category]; left {
			out = append(out, c.Category)
		}
	}
	return out
}

// Revert saves the text of revision revID as the page's new latest revision.
func (e *Engine) Revert(ctx context.Context, t wiki.Title, revID int64, ed Editor) (SaveOutcome, error) {
	p, err := e.store.FindPage(ctx, t)
	if err != nil {
		return SaveOutcome{}, err
	}
	old, err := e.store.FindRevision(ctx, revID)
	if err != nil {
		return SaveOutcome{}, err
	}
	if old.PageID != p.ID {
		return SaveOutcome{}, wiki.Errorf(wiki.KindInvalid, "revision %d is not a revision of %q", revID, t)
	}
	return e.Save(ctx, Edit{Title: t, Text: old.Text, BaseRevID: p.LatestID, Editor: ed, Verbatim: true,
		Model: old.Model, Summary: fmt.Sprintf("Reverted to revision %d by %s", old.ID, old.UserName)})
}

// Move renames from to to, leaving a redirect when asked.
func (e *Engine) Move(ctx context.Context, from, to wiki.Title, reason string, leaveRedirect bool, ed Editor) (wiki.Page, error) {
	if from.IsSpecial() || to.IsSpecial() {
		return wiki.Page{}, wiki.Errorf(wiki.KindInvalid, "special pages cannot be moved, and pages cannot be moved into the Special namespace")
	}
	if from == to {
		return wiki.Page{}, wiki.Errorf(wiki.KindInvalid, "the new title is the same as the old one; choose a different title")
	}
	// Moving needs the source's move and edit levels (as in MediaWiki:
	// otherwise a page protected from editing only could be moved away,
	// taking its protection along, and its title edited as a redirect)
	// and the target's edit (or creation) level.
	if err := e.checkProtection(ctx, from, wiki.ProtectMove, false, ed); err != nil {
		return wiki.Page{}, err
	}
	if err := e.checkProtection(ctx, from, wiki.ProtectEdit, false, ed); err != nil {
		return wiki.Page{}, err
	}
	if err := e.checkProtection(ctx, to, wiki.ProtectEdit, true, ed); err != nil {
		return wiki.Page{}, err
	}
	summary := fmt.Sprintf("moved [[%s]] to [[%s]]", from, to)
	if r := wiki.OneLine(reason, 400); r != "" {
		summary += ": " + r
	}
	redirect := "#REDIRECT [[" + to.String() + "]]\n"
	var ids []int64
	var cats []wiki.Title
	model := e.defaultModel
	if cur, err := e.store.FindPage(ctx, from); err == nil {
		// The redirect left behind is in the moved page's model (the
		// store gives it that model): its link is read as that markup.
		model = cur.Model.Or(wiki.ModelMarkdown)
		ids = []int64{cur.ID}
		if cats, err = e.categoriesOf(ctx, cur.ID); err != nil {
			return wiki.Page{}, err
		}
	}
	// To now exists; From stops existing unless a redirect stays. Both
	// titles' search entries follow (the moved page's, the redirect's).
	// The pages of its categories list it under its new title.
	also := withPair(append([]wiki.Title{from, purge.LogTitle}, cats...), to)
	if !leaveRedirect {
		also = withPair(also, from)
	}
	// The moved page's rows are derived again: its text may expand
	// differently under its new name ({{PAGENAME}} in a template's name).
	jobs := e.changeJobs(to, true, true, also...)
	jobs = append(jobs, e.changeJobs(from, !leaveRedirect, false)...)
	if leaveRedirect {
		jobs = append(jobs, IndexJob(from))
	}
	jobs = append(jobs, e.purger.Outbox(ids, append([]wiki.Title{to}, also...)...)...)
	p, err := e.store.MovePage(ctx, wiki.MoveRequest{
		From: from, To: to, Reason: summary, UserID: ed.UserID, UserName: ed.UserName,
		LeaveRedirect: leaveRedirect, RedirectText: redirect, RedirectLinks: e.markupOf(model).Links(redirect),
		Time: e.now(), Jobs: jobs, Group: ed.Group,
	})
	if errors.Is(err, wiki.ErrProtected) {
		// Protected since the checks above: say so as they would have.
		for _, c := range []struct {
			t      wiki.Title
			action string
		}{{from, wiki.ProtectMove}, {from, wiki.ProtectEdit}, {to, wiki.ProtectEdit}} {
			if perr := e.checkProtection(ctx, c.t, c.action, c.t == to, ed); perr != nil {
				return wiki.Page{}, perr
			}
		}
	}
	if err != nil {
		e.maybeCommitted(ctx, err, ids, append([]wiki.Title{to}, also...)...)
		return wiki.Page{}, err
	}
	// The page's stored renders name it by its old title (its section
	// edit links, {{PAGENAME}}): they go before its cached responses do,
	// so that no view refills them from an old render.
	if err := e.store.DeleteRenders(ctx, []int64{p.ID}); err != nil {
		e.log.Warn("engine: drop the renders of a moved page", "page", p.ID, "err", err)
	}
	e.afterCommit(ctx, p.ID, to, also...)
	return p, nil
}

// Delete hides a page and its history (admins only; the caller checks).
func (e *Engine) Delete(ctx context.Context, t wiki.Title, reason string, ed Editor) error {
	p, err := e.store.FindPage(ctx, t)
	if err != nil {
		return err
	}
	cats, err := e.categoriesOf(ctx, p.ID)
	if err != nil {
		return err
	}
	files, err := e.store.PageFiles(ctx, p.ID)
	if err != nil {
		return err
	}
	cats = append(cats, files...) // their pages list it
	if t.Namespace() == wiki.NSFile {
		cats = append(cats, wiki.FileMediaTitle(t)) // its bytes are hidden
	}
	// The store drops the search entry in the transaction; the jobs only
	// recolour the links to t, bring the pages transcluding it up to date
	// and purge external caches. The pages of its categories list it.
	titles := withPair(append([]wiki.Title{t, purge.LogTitle}, cats...), t)
	jobs := append([]wiki.JobSpec{BacklinksJob(t), TransclusionsJob(t)}, e.cdnJobs(titles...)...)
	if t.Namespace() == wiki.NSFile {
		jobs = append(jobs, FileUsesJob(t)) // the pages showing the file show a red link
	}
	jobs = append(jobs, e.purger.Outbox([]int64{p.ID}, titles...)...)
	if err := e.store.DeletePage(ctx, t, ed.UserID, ed.UserName, wiki.OneLine(reason, 500), e.now(), jobs...); err != nil {
		e.maybeCommitted(ctx, err, []int64{p.ID}, titles...)
		return err
	}
	e.afterCommit(ctx, p.ID, t, titles[1:]...)
	return nil
}

// Undelete restores a deleted page and its history.
func (e *Engine) Undelete(ctx context.Context, t wiki.Title, reason string, ed Editor) (wiki.Page, error) {
	// The restored latest revision may not be the one the kept link rows
	// came from (a page recreated, then its old history restored): relink.
	var ids []int64
	var cats []wiki.Title
	if old, err := e.store.FindPage(ctx, t); err == nil {
		ids = []int64{old.ID} // the page's renders, if another process kept any
		// Its link rows were kept: the pages of its categories list it again.
		if cats, err = e.categoriesOf(ctx, old.ID); err != nil {
			return wiki.Page{}, err
		}
	}
	also := withPair(append([]wiki.Title{purge.LogTitle}, cats...), t)
	if t.Namespace() == wiki.NSFile {
		also = append(also, wiki.FileMediaTitle(t)) // its bytes are shown again
	}
	jobs := e.changeJobs(t, true, true, also...)
	jobs = append(jobs, e.purger.Outbox(ids, append([]wiki.Title{t}, also...)...)...)
	p, err := e.store.UndeletePage(ctx, t, ed.UserID, ed.UserName, wiki.OneLine(reason, 500), e.now(), jobs...)
	if err != nil {
		e.maybeCommitted(ctx, err, ids, append([]wiki.Title{t}, also...)...)
		return wiki.Page{}, err
	}
	// A render stored before the deletion may show templates as they were
	// then: the jobs of their edits since did not reach a deleted page.
	if err := e.store.DeleteRenders(ctx, []int64{p.ID}); err != nil {
		e.log.Warn("engine: drop the renders of an undeleted page", "page", p.ID, "err", err)
	}
	e.afterCommit(ctx, p.ID, t, also...)
	return p, nil
}

// normalizeText makes line endings \n and the text end in one newline,
// as browsers submit \r\n from textareas. Blank lines at the end go, but
// the last line keeps its spaces and tabs: in a code block they are text.
// Bytes that are not UTF-8 and NUL become U+FFFD, as CommonMark renders
// them: every store keeps the text as it is shown (PostgreSQL's text
// refuses both).
func normalizeText(s string) string {
	// Each step copies s only when it changes something: most texts
	// need none of them (an import normalizes every page).
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	for {
		t := strings.TrimRight(s, "\n")
		last := t[strings.LastIndexByte(t, '\n')+1:]
		if strings.Trim(last, " \t") != "" {
			if len(t) < len(s) {
				return s[:len(t)+1] // t and the newline s has after it
			}
			return t + "\n"
		}
		if s = t[:len(t)-len(last)]; s == "" {
			return ""
		}
	}
}

// Purge drops t's renders and cached responses (MediaWiki's action=purge),
// here at once and in external caches through a job.
func (e *Engine) Purge(ctx context.Context, titles ...wiki.Title) {
	var ids []int64
	for _, t := range titles {
		if p, err := e.store.FindPage(ctx, t); err == nil {
			e.invalidate(p.ID)
			if err := e.store.DeleteRenders(ctx, []int64{p.ID}); err != nil {
				e.log.Error("engine: purge renders", "title", t, "err", err)
			}
			ids = append(ids, p.ID)
		}
	}
	e.purger.Purge(ctx, ids, titles...)
	e.purgeExternal(ctx, titles...)
}

// purgeExternal queues the purge of titles (and the listings) at external
// caches, for a purge that no change's transaction queued.
func (e *Engine) purgeExternal(ctx context.Context, titles ...wiki.Title) {
	jobs := e.cdnJobs(titles...)
	if len(jobs) == 0 {
		return
	}
	if err := e.store.EnqueueJobs(ctx, jobs); err != nil {
		e.log.Error("engine: queue external purge", "titles", titles, "err", err)
		return
	}
	e.jobsQueued()
}

// MaxSearchHits is the most hits one search returns.
const MaxSearchHits = 100

// Search runs a search (see wiki.Store.Search) for q.Limit hits (1 to
// MaxSearchHits) and makes each hit's snippet from its page's text as
// readers see it: the lines around the first match, as text. more reports
// that hits follow the page.
func (e *Engine) Search(ctx context.Context, sq wiki.SearchQuery) (hits []wiki.SearchHit, more bool, err error) {
	// A search takes a render slot (limit.go): a flood of searches waits
	// in the renders' line and is refused past it, as renders are.
	release, err := e.gate.acquire(ctx)
	if err != nil {
		return nil, false, err
	}
	defer release()
	limit := min(max(sq.Limit, 1), MaxSearchHits)
	sq.Limit = limit + 1
	hits, err = e.store.Search(ctx, sq)
	if err != nil {
		return nil, false, err
	}
	if len(hits) > limit {
		hits, more = hits[:limit], true
	}
	q := store.ParseQuery(sq.Text)
	for i := range hits {
		hits[i].Snippet = store.Snippet(e.markupOf(hits[i].Model).PlainText(store.SnippetSource(hits[i].Source, q)), q)
		hits[i].Source = ""
	}
	return hits, more, nil
}
