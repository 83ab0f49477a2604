package wiki

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// JobState is where a job is in its life.
type JobState string

const (
	JobQueued  JobState = "queued"  // waiting for RunAt (first run or a retry)
	JobRunning JobState = "running" // leased by a worker until LeasedUntil
	JobDone    JobState = "done"    // finished (kept a while for listings)
	JobDead    JobState = "dead"    // failed MaxAttempts times; RetryJob revives it
)

// JobStates lists the states in life order.
var JobStates = []JobState{JobQueued, JobRunning, JobDone, JobDead}

// Job kinds: deferred work that need not happen before a response.
// Every handler is idempotent: delivery is at least once.
const (
	JobLinks     = "links"     // recompute a page's link and category rows from its latest revision
	JobBacklinks = "backlinks" // a title's existence changed: the pages linking to it are stale (refresh follows)
	// The backlinks jobs of many titles, as a bulk import queues them
	// (BatchBacklinks): a kind of its own, so that a process of a version
	// before it fails such a job (no handler), whereas as a backlinks job
	// it would find no title and do nothing. Run only by such processes, it
	// is dead after its attempts: `wikid jobs retry` revives it once a
	// process of this version runs the queue.
	JobBatchBacklinks = "batchbacklinks"
	JobRefresh        = "refresh" // render a page's cached responses again and swap them in (after backlinks)
	// A page changed: the pages transcluding it are stale (each gets a
	// reparse job, and each batch of them a reindex job).
	JobTransclusions = "transclusions"
	// Parse a page again after a page it transcludes changed: its render
	// and link rows from one parse, then every cached copy swapped for the
	// new render.
	JobReparse = "reparse"
	// Write the search entries of a batch of pages whose templates changed,
	// many to a transaction.
	JobReindex  = "reindex"
	JobSearch   = "search"   // make a page's search index entry match its current state
	JobCDNPurge = "cdnpurge" // purge titles at external caches (Varnish, CDN)
	JobRC       = "rc"       // housekeeping: trim old recent changes and finished jobs
	// Tell users an edit concerns (their talk page, a mention) and have
	// their user bars read again.
	JobNotify = "notify"
	// A file got a new current version (an upload, a revert): the pages
	// showing it are parsed again (each gets a reparse job), as for a
	// template's change.
	JobFileUses = "fileuses"
)

// SearchEntry is a page's search entry for ReindexPages: Text (the words
// readers see, without markup) made from revision RevID of page PageID.
type SearchEntry struct {
	PageID, RevID int64
	Text          string
}

// DependentsJob reports whether a job of kind is about the pages that
// link to or transclude its title: one for a title nothing links to has
// nothing to do, and a bulk import leaves it out.
func DependentsJob(kind string) bool {
	return kind == JobBacklinks || kind == JobTransclusions || kind == JobFileUses
}

// BatchBacklinks gathers the backlinks jobs of a bulk import's batch (each
// made by the engine for one title, keyed "backlinks:" and the title) into
// JobBatchBacklinks jobs of up to BatchBacklinksTitles titles each, in the
// order they came, each title once: a job's handler reads the pages
// linking to each of its titles in turn, and drops their renders and
// marks them stale together, a part of the job at a time (a page linking
// to several of the titles, once a part). Where one job a title took a
// write transaction or more per title to run and kept the queue busy long
// after the import, a batch of 4,000 new titles is 40 jobs. The zero value
// gathers none.
type BatchBacklinks struct {
	titles []Title
	seen   map[Title]bool
}

// BatchBacklinksTitles is how many titles a job of BatchBacklinks holds
// at most: a job goes on in parts (one store round trip each), each part
// holding the titles left, so that they are copied once a part (with all
// of a batch's, a 30,000-page import's parts held 13 MB of titles); and
// in the scale benchmark's corpus 100 titles of an import have about 700
// linking pages, one or two parts.
const BatchBacklinksTitles = 100

// Take keeps the title of j, when j is a backlinks job, for the batch's
// jobs, and reports whether it did (the caller then leaves j out).
func (b *BatchBacklinks) Take(j JobSpec) bool {
	t, ok := KeyTitle(j, JobBacklinks)
	if !ok {
		return false
	}
	if b.seen == nil {
		b.seen = map[Title]bool{}
	}
	if !b.seen[t] {
		b.seen[t] = true
		b.titles = append(b.titles, t)
	}
	return true
}

// KeyTitle returns the title of j when j is a job of kind about one
// title, deduplicated by it (its key is the kind, a colon and the title),
// and whether it is.
func KeyTitle(j JobSpec, kind string) (Title, bool) {
	if j.Kind != kind {
		return "", false
	}
	t, ok := strings.CutPrefix(j.Key, kind+":")
	return Title(t), ok
}

// Jobs returns the batch's JobBatchBacklinks jobs (none when no job was
// taken): the payload of each is {"titles": [...]}. They have no key:
// another batch's job, or an edit's backlinks job for one of their
// titles, never merges into one.
func (b *BatchBacklinks) Jobs() []JobSpec {
	var jobs []JobSpec
	for c := range slices.Chunk(b.titles, BatchBacklinksTitles) {
		p, _ := json.Marshal(struct {
			Titles []Title `json:"titles"`
		}{c})
		jobs = append(jobs, JobSpec{Kind: JobBatchBacklinks, Payload: p})
	}
	return jobs
}

// DefaultJobAttempts is how many times a job runs before it is dead.
const DefaultJobAttempts = 5

// Job is one unit of deferred work in the durable queue.
type Job struct {
	ID          int64
	Kind        string
	Payload     []byte // JSON, owned by the kind's handler
	Key         string // deduplication key: at most one queued job per non-empty key
	Attempts    int    // runs started so far (a lease counts as a run)
	MaxAttempts int
	State       JobState
	RunAt       time.Time // when a queued job becomes due
	LeasedUntil time.Time // for a running job: when its lease expires and it may be leased again
	Owner       string    // the worker that leased it last
	LastError   string
	Created     time.Time
	Updated     time.Time
}

// JobSpec is a job to enqueue. Changes carry their JobSpecs into the store
// call so that the change and its jobs commit in one transaction (an outbox).
type JobSpec struct {
	Kind    string
	Payload []byte // JSON; nil is {}
	// Key deduplicates: while a queued job has the same non-empty Key, the
	// new one is merged into it (the earlier RunAt wins). Handlers that read
	// the current state (search, links, backlinks) can share a key per title.
	Key         string
	RunAt       time.Time // zero: now
	MaxAttempts int       // 0: DefaultJobAttempts
}

// JobStats summarizes the queue for metrics and `wikid jobs stats`.
type JobStats struct {
	Counts       map[JobState]int
	OldestQueued time.Time // Created of the oldest queued job; zero when none is queued
}

// JobStore is the durable job queue, plus the page tasks that jobs perform.
// The queue lives in the same database as the pages so that a change and
// its jobs commit together (SQLite: a table; PostgreSQL: the same table
// leased with SELECT … FOR UPDATE SKIP LOCKED).
type JobStore interface {
	// EnqueueJobs adds jobs in their own transaction (jobs caused by a
	// change travel in its request instead).
	EnqueueJobs(ctx context.Context, jobs []JobSpec) error
	// LeaseJobs hands up to n due jobs to owner until now+leaseFor: queued
	// jobs whose RunAt has come, and running jobs whose lease expired (their
	// worker died). Each lease counts an attempt; a job whose lease expired
	// after its last attempt becomes dead instead. A job goes to one owner.
	LeaseJobs(ctx context.Context, owner string, n int, leaseFor time.Duration, now time.Time) ([]Job, error)
	// CompleteJob marks a running job done.
	CompleteJob(ctx context.Context, id int64) error
	// FailJob records a failed run: the job is queued again at retryAt, or
	// dead when dead is set.
	FailJob(ctx context.Context, id int64, errMsg string, retryAt time.Time, dead bool) error
	// ListJobs lists jobs in state (all states when empty), newest first.
	ListJobs(ctx context.Context, state JobState, limit int) ([]Job, error)
	JobStats(ctx context.Context) (JobStats, error)
	// RetryJob queues a dead job again with fresh attempts; ErrNotFound if
	// there is no dead job id.
	RetryJob(ctx context.Context, id int64) error
	// DeleteDoneJobs drops finished jobs last updated before before.
	DeleteDoneJobs(ctx context.Context, before time.Time) (int, error)

	// RefreshLinks replaces page pageID's link and category rows with ls if
	// revID is still its latest revision (and the page is live); it reports
	// whether it did.
	RefreshLinks(ctx context.Context, pageID, revID int64, ls LinkSet) (bool, error)
	// UpdateSearchIndex makes the page's index entry match its current state:
	// its title and text(latest revision's source) when live, no entry when
	// deleted or gone. text (the words readers see, without markup) runs
	// outside any write transaction: it may take a while.
	UpdateSearchIndex(ctx context.Context, pageID int64, text func(source string, model ContentModel) string) error
	// ReindexPages writes, in one transaction, the search entries of the
	// pages in entries from their texts, made from their latest revision
	// (SearchEntry.RevID): the entries of pages whose templates changed,
	// whose revision did not. An entry whose page is gone, deleted or has a
	// newer revision is skipped: that change indexed the page.
	ReindexPages(ctx context.Context, entries []SearchEntry) error
	// MarkSearchStale makes the next UpdateSearchIndex of the page write
	// its entry again even though it was made from the latest revision:
	// the page's text shows templates that changed since.
	MarkSearchStale(ctx context.Context, pageID int64) error
	// TrimChanges drops recent-changes entries older than before.
	TrimChanges(ctx context.Context, before time.Time) (int, error)
}
