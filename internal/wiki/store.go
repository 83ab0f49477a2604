package wiki

import (
	"context"
	"time"
)

// Store is everything Wikid keeps. It speaks the wiki's language, not SQL,
// so that SQLite (embedded) and PostgreSQL (scale-out) can both satisfy it;
// internal/store/storetest holds the contract suite every backend runs.
//
// Errors: a missing thing is ErrNotFound (possibly wrapped), a lost race
// ErrConflict, a taken name ErrExists; anything else is internal.
type Store interface {
	PageStore
	UserStore
	RenderStore
	JobStore
	PurgeStore
	WatchStore
	NotificationStore
	FileStore
	Close() error
}

// SaveRequest is one edit: a new revision of Title, with the link set
// extracted from Text. BaseRevID is the revision the edit was made against
// (after any merge): 0 creates the page; if the page's latest revision is not
// BaseRevID when the transaction runs, SavePage returns ErrConflict (and
// ErrExists when creating a page that exists) and changes nothing.
// Creating a deleted page is allowed: it gets a new first revision while the
// old ones stay hidden. Saving text identical to the latest revision is a null
// edit: links are refreshed, no revision or change is stored, and the result
// holds the latest revision.
//
// Links and the search entry (made from SearchText) are written in the
// edit's transaction: WhatLinksHere and the backlinks job read the links,
// and a page just saved is found by search at once.
type SaveRequest struct {
	Title     Title
	Text      string
	Summary   string
	Minor     bool
	UserID    int64 // 0 for anonymous
	UserName  string
	BaseRevID int64
	Links     LinkSet
	// SearchText is Text as readers see it (render's PlainText), for the
	// search index, which the store makes its terms of (an import's on
	// other cores than its writer's, as it builds the batch's segment).
	SearchText string
	Time       time.Time
	Jobs       []JobSpec // enqueued in the same transaction, or not at all
	// Group is the editor's: an edit protection of the title above it
	// refuses the save with ErrProtected, checked in the transaction.
	Group Group
	// Tags mark the revision and its change (TagUndo, TagRollback); the
	// store keeps the valid ones (JoinTags). A null edit stores none.
	Tags []string
	// NullRevision stores a revision even when Text is the latest
	// revision's (as a move does): an upload's new version of a file
	// shows in history and recent changes with its summary.
	NullRevision bool
	// Model is the markup of Text; empty keeps the page's model (the
	// latest revision's, even when the page is deleted), or for a new
	// page ModelMarkdown.
	Model ContentModel
}

// SaveResult tells what SavePage did.
type SaveResult struct {
	Page      Page
	Revision  Revision // Text not filled
	Created   bool     // the page did not exist (or was deleted) before: pages linking to it change colour
	Unchanged bool     // a null edit: the text was the latest revision's, nothing was stored
}

// MoveRequest renames a page. The moved page gets a null revision with the
// move summary; with LeaveRedirect the old title becomes a redirect page
// (RedirectLinks is its link set). To naming a live page is ErrExists; a
// deleted page at To is absorbed (its hidden revisions join the moved page,
// and so do its file versions, which are hidden with their page only: they
// show as the moved page's older versions).
type MoveRequest struct {
	From, To      Title
	Reason        string
	UserID        int64
	UserName      string
	LeaveRedirect bool
	RedirectText  string
	RedirectLinks LinkSet
	Time          time.Time
	Jobs          []JobSpec // enqueued in the same transaction, or not at all
	// Group is the mover's: the move and edit protections of From and the
	// edit protection of To must let it through (else ErrProtected),
	// checked in the transaction.
	Group Group
}

// ProtectRequest sets a title's protection (see Protection). Both levels
// empty removes it. The title need not name a page: edit protection of a
// missing title protects its creation.
type ProtectRequest struct {
	Title    Title
	Edit     ProtectionLevel
	Move     ProtectionLevel
	Expiry   time.Time // zero: never
	Reason   string
	UserID   int64
	UserName string
	Time     time.Time
	Jobs     []JobSpec // enqueued in the same transaction, or not at all
}

// ListQuery pages through a list ordered by title.
type ListQuery struct {
	Prefix string // titles starting with this (display form)
	From   Title  // first title to include (cursor)
	After  Title  // titles after this one only (cursor past the last one read)
	Limit  int
	// Namespaces: pages in these namespaces only (canonical names, "" the
	// main one), by their pages.ns column; nil lists every namespace.
	Namespaces []string
}

// MaxCount bounds the counts shown on forms: a count stops past it, so
// that a form of a page used everywhere costs a bounded read.
const MaxCount = 100_000

// ChangeQuery pages through changes, newest first.
type ChangeQuery struct {
	Before   int64 // changes with ID < Before; 0 for the newest
	UserName string
	Limit    int
	// Namespaces: changes of titles in these namespaces only (canonical
	// names, "" the main one), by the title's prefix as the change
	// recorded it; nil lists every namespace.
	Namespaces []string
	// HideUser leaves out the changes of this user (the viewer's own,
	// "hide my edits").
	HideUser string
	// HideMinor leaves out minor edits; OnlyNew keeps page creations only.
	HideMinor, OnlyNew bool
	// Since keeps the changes made at or after it (zero: all).
	Since time.Time
}

// Use is how pages use a title, for Store.Dependents.
type Use int

const (
	LinkUse     Use = iota // wiki links and redirects to the title
	TemplateUse            // transclusions of the title
	FileUse                // the file shown or linked as media (LinkSet.Files)
)

// SearchQuery is one page of a full-text search.
type SearchQuery struct {
	Text   string // the words, phrases and prefixes (store.ParseQuery)
	Offset int
	Limit  int
	// Namespaces: pages in these namespaces only (canonical names, "" the
	// main one); nil searches every namespace.
	Namespaces []string
}

// HistoryQuery pages through a page's revisions, newest first.
type HistoryQuery struct {
	PageID int64
	Before int64 // revisions with ID < Before; 0 for the newest
	Limit  int
}

// PageStats are the figures of a page's information page (action=info).
// Each count stops past MaxCount (MaxCount + 1 means more), so that the
// page of a title used everywhere costs a bounded read.
type PageStats struct {
	Revisions int // visible revisions
	// Editors counts the distinct editors of the latest MaxCount + 1
	// visible revisions (of all of them when there are no more).
	Editors   int
	Backlinks int      // live pages that link to or redirect to the page
	Redirects int      // live redirects to the page
	LinksOut  int      // wiki links of the page's text (its link rows)
	First     Revision // the first visible revision, without text
}

// PageStore keeps pages, revisions, links, recent changes and the search index.
type PageStore interface {
	// FindPage returns the page with title t, deleted or not (Deleted set;
	// LatestID is then the revision that was latest when it was deleted).
	FindPage(ctx context.Context, t Title) (Page, error)
	// FindPageByID returns the page with the given ID, deleted or not,
	// with its title as stored (a title today's rules refuse included).
	FindPageByID(ctx context.Context, id int64) (Page, error)
	// FindRevision returns a revision with its text; ErrNotFound for a
	// revision of a deleted page.
	FindRevision(ctx context.Context, id int64) (Revision, error)
	// FindRevisions returns the revisions with the given IDs, with their
	// texts, in one query, in no particular order; a revision of a deleted
	// page, or one that does not exist, is left out. Listings that show
	// several revisions' texts (feeds) read them with it, never one by one.
	FindRevisions(ctx context.Context, ids []int64) ([]Revision, error)
	// ExistingTitles returns which of titles name live (not deleted) pages.
	// One query for the whole batch.
	ExistingTitles(ctx context.Context, titles []Title) (map[Title]bool, error)

	// SavePage stores a revision, updates the page, links, categories,
	// search entry and recent changes, and enqueues req.Jobs, in one
	// transaction.
	SavePage(ctx context.Context, req SaveRequest) (SaveResult, error)
	// ImportPages saves many pages in one transaction, each on top of its
	// latest revision (BaseRevID ignored; a missing title is created). A
	// job about a title's dependents (DependentsJob) is not enqueued when
	// no page links to or transcludes the title when its request comes
	// (a page rewritten earlier in the batch by its new text); the
	// backlinks jobs enqueued are gathered into a few for the batch
	// (BatchBacklinks), as in ImportHistory.
	ImportPages(ctx context.Context, reqs []SaveRequest) ([]SaveResult, error)
	// ImportHistory stores page histories in one transaction (see
	// HistoryRequest), with one result per request.
	ImportHistory(ctx context.Context, reqs []HistoryRequest) ([]HistoryResult, error)
	// MovePage renames a page in one transaction (see MoveRequest).
	MovePage(ctx context.Context, req MoveRequest) (Page, error)
	// DeletePage hides a page and all its revisions, removes it from the
	// search index at once, and enqueues jobs, in one transaction;
	// UndeletePage restores them (the index follows through a job).
	DeletePage(ctx context.Context, t Title, userID int64, userName, reason string, at time.Time, jobs ...JobSpec) error
	UndeletePage(ctx context.Context, t Title, userID int64, userName, reason string, at time.Time, jobs ...JobSpec) (Page, error)

	// FindProtection returns t's protection, expired or not (compare with
	// Protection.Active); ErrNotFound when t has none.
	FindProtection(ctx context.Context, t Title) (Protection, error)
	// ProtectPage sets t's protection and writes its protect log entry in
	// one transaction, and returns the entry's action: "protect" when t had
	// no active protection, "modify" when it changes one, "unprotect" when
	// both levels are empty (ErrNotFound if t had no active protection).
	ProtectPage(ctx context.Context, req ProtectRequest) (string, error)

	History(ctx context.Context, q HistoryQuery) ([]Revision, error)
	// PageStats returns the figures of page pageID, titled t (see
	// PageStats); ErrNotFound when it has no visible revision.
	PageStats(ctx context.Context, pageID int64, t Title) (PageStats, error)
	// LatestRevisions returns the latest revision of each live page among
	// pageIDs (deleted and unknown ones are left out), in one query: which
	// rows of a listing are a page's current version.
	LatestRevisions(ctx context.Context, pageIDs []int64) (map[int64]int64, error)
	RecentChanges(ctx context.Context, q ChangeQuery) ([]Change, error)
	// Log lists Special:Log entries matching q, newest first.
	Log(ctx context.Context, q LogQuery) ([]LogEntry, error)
	AllPages(ctx context.Context, q ListQuery) ([]Page, error)
	// Backlinks returns live pages linking to t (by wiki link or redirect), by title.
	Backlinks(ctx context.Context, t Title, q ListQuery) ([]Page, error)
	// CountTransclusions counts the live pages that transclude t (directly
	// or through other templates), up to MaxCount + 1 (more than
	// MaxCount); Dependents lists them.
	CountTransclusions(ctx context.Context, t Title) (int, error)
	// Dependents returns up to limit live pages that use t as use says,
	// in page ID order after afterID: the pages a change of t makes stale,
	// which jobs walk in batches. Each call reads one index range per kind
	// of row from afterID on, so walking N pages costs O(N) whatever N is
	// (Backlinks and Transclusions order by title, for people).
	Dependents(ctx context.Context, t Title, use Use, afterID int64, limit int) ([]Page, error)
	// CategoryMembers returns live pages in category cat ("Category:…")
	// with their sort keys there, by (sort key, title): its subcategories
	// or its other members (q.Subcategories). One index range, as long as
	// q.Limit.
	CategoryMembers(ctx context.Context, cat Title, q CategoryQuery) ([]CategoryMember, error)
	// CategoryAdditions returns up to limit live pages in category cat,
	// subcategories included, the most recently added first, with the
	// time each was added (CategoryMember.Added): the time the page's
	// links first put it there since it was last out of it. One index
	// range.
	CategoryAdditions(ctx context.Context, cat Title, limit int) ([]CategoryMember, error)
	// PageCategories returns the categories page pageID is in, with its
	// sort key in each and whether its rows list it as a subcategory, by
	// category.
	PageCategories(ctx context.Context, pageID int64) ([]CategoryLink, error)
	// PageTemplates returns the pages page pageID transcludes, by title.
	PageTemplates(ctx context.Context, pageID int64) ([]Title, error)
	// PageLinks returns the pages page pageID links to (its link rows,
	// LinkSet.Links, templates' links included), by title.
	PageLinks(ctx context.Context, pageID int64) ([]Title, error)
	// PageFiles returns the files page pageID shows or links as media
	// (its file rows, LinkSet.Files), by title.
	PageFiles(ctx context.Context, pageID int64) ([]Title, error)
	// Search finds live pages by title and text in any language, title
	// matches first, then by relevance; hits carry Source, not Snippet:
	// the page's text, or at least the part of its start a snippet is
	// made from (store.SnippetSource).
	// Its cost is bounded by a backend's candidate limit, not by the
	// number of matches.
	Search(ctx context.Context, q SearchQuery) ([]SearchHit, error)
	// SearchTitles returns live pages whose title starts with prefix,
	// ignoring case and accents (title completion).
	SearchTitles(ctx context.Context, prefix string, limit int) ([]Page, error)
	RandomPage(ctx context.Context) (Title, error)
	PageCount(ctx context.Context) (int, error)
}

// UserStore keeps accounts, sessions, API tokens, blocks and password
// resets. Every change to an account's rights (group, block) writes its
// Special:Log entry in the same transaction.
type UserStore interface {
	// CreateUser stores an account and logs it (newusers/create, performed
	// by the new user); ErrExists if the name is taken (case-insensitive).
	CreateUser(ctx context.Context, u User) (User, error)
	FindUser(ctx context.Context, id int64) (User, error)
	FindUserByName(ctx context.Context, name string) (User, error) // case-insensitive, like CreateUser
	UpdateUser(ctx context.Context, u User) error
	CountUsers(ctx context.Context) (int, error)
	// ListUsers pages through accounts by name.
	ListUsers(ctx context.Context, q UserQuery) ([]User, error)
	// SetUserGroup changes a user's group and logs it (rights/rights, with
	// params old and new); it returns the old group. Setting the group a
	// user has changes and logs nothing.
	SetUserGroup(ctx context.Context, c GroupChange) (Group, error)
	// SetPassword stores a new password hash and deletes every session of
	// the user but keepSession ("" for none), in one transaction.
	SetPassword(ctx context.Context, userID int64, hash, keepSession string) error
	UpdatePrefs(ctx context.Context, userID int64, p Prefs) error

	// BlockUser blocks b.UserID, or changes the block the user has, and logs
	// it (block/block or block/reblock, param expiry); reblock says which.
	BlockUser(ctx context.Context, b Block) (reblock bool, err error)
	// UnblockUser lifts the user's block and logs it (block/unblock);
	// ErrNotFound if the user has no block in force at at.
	UnblockUser(ctx context.Context, userID int64, by Actor, reason string, at time.Time) error
	// FindBlock returns the user's block in force at at; ErrNotFound if none.
	FindBlock(ctx context.Context, userID int64, at time.Time) (Block, error)
	// ListBlocks pages through the blocks in force at q.At, newest first.
	ListBlocks(ctx context.Context, q BlockQuery) ([]Block, error)

	CreateSession(ctx context.Context, s Session) error
	FindSession(ctx context.Context, id string) (Session, error) // ErrNotFound when missing or expired
	DeleteSession(ctx context.Context, id string) error          // nil if already gone
	DeleteExpiredSessions(ctx context.Context, now time.Time) (int, error)
	// ListSessions returns the user's unexpired sessions, newest first.
	ListSessions(ctx context.Context, userID int64, at time.Time) ([]Session, error)
	// DeleteUserSessions deletes the user's sessions but except ("" for
	// none) and says how many.
	DeleteUserSessions(ctx context.Context, userID int64, except string) (int, error)

	CreateToken(ctx context.Context, t Token) error
	FindToken(ctx context.Context, id string) (Token, error)
	// ListTokens returns the user's tokens (expired ones too), newest first.
	ListTokens(ctx context.Context, userID int64) ([]Token, error)
	// DeleteToken revokes a token; ErrNotFound if there is none with that ID.
	DeleteToken(ctx context.Context, id string) error
	// DeleteUserTokens revokes all of a user's tokens and says how many.
	DeleteUserTokens(ctx context.Context, userID int64) (int, error)
	// TouchToken records that the token was used at at.
	TouchToken(ctx context.Context, id string, at time.Time) error

	CreatePasswordReset(ctx context.Context, pr PasswordReset) error
	// FindPasswordReset returns an unused reset valid at at; ErrNotFound otherwise.
	FindPasswordReset(ctx context.Context, id string, at time.Time) (PasswordReset, error)
	// ResetPassword uses reset id (valid at at) to set the user's password
	// hash, deletes every reset and session of the user, in one
	// transaction, and returns the user; ErrNotFound if the reset is
	// unknown, used or expired.
	ResetPassword(ctx context.Context, id, hash string, at time.Time) (User, error)
}

// RenderStore persists rendered HTML per revision and renderer version,
// so that a restart is warm. Data is opaque to the store.
type RenderStore interface {
	FindRender(ctx context.Context, revID int64, version int) ([]byte, error)
	SaveRender(ctx context.Context, revID int64, version int, data []byte) error
	// DeleteRenders drops every stored render of the given pages' revisions:
	// their link colours changed.
	DeleteRenders(ctx context.Context, pageIDs []int64) error
}
