package wiki

import "time"

// HistoryRevision is one revision of an imported page history (a
// MediaWiki dump's), stored with its own time and author.
type HistoryRevision struct {
	Text     string
	Time     time.Time
	UserID   int64 // 0 for an author without an account here
	UserName string
	Summary  string
	Minor    bool
	Model    ContentModel // empty: ModelWikitext
}

// HistoryRequest imports revisions of one page, oldest first, as
// MediaWiki's importer does: a revision the page has already (same time,
// to the second, and same text) is skipped, so that importing a dump again changes
// nothing; the others are stored with no recent change. When the newest
// of them is newer than the page's latest revision (or the page is
// missing or deleted), it becomes the latest: Links, the search entry
// (SearchText) and Jobs are that revision's,
// written with it. Only that revision is analysed: older ones need no
// links or search entry.
type HistoryRequest struct {
	Title      Title
	Revisions  []HistoryRevision
	Links      LinkSet
	SearchText string
	Jobs       []JobSpec
	// Log, when its Type is set, is written (Target, PageID and Time
	// filled in) if any revision was added.
	Log LogEntry
}

// HistoryResult tells what ImportHistory did with one page.
type HistoryResult struct {
	Page    Page
	Added   int  // revisions stored
	Skipped int  // revisions the page had already
	Created bool // the page did not exist (or was deleted) before
	Latest  bool // an added revision became the page's latest
}

// LogImport is the log type of imports: action upload for a dump
// imported from a file, as MediaWiki's Special:Import logs it.
const LogImport LogType = "import"
