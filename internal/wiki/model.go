package wiki

import (
	"iter"
	"strings"
	"time"
)

// Group is a user's permission group. Anonymous readers have GroupAnonymous.
// Each group has the rights of the groups below it.
type Group string

const (
	GroupAnonymous Group = "anonymous"
	GroupUser      Group = "user"
	// GroupRollbacker may roll back a streak of edits in one click, besides
	// what users may do.
	GroupRollbacker Group = "rollbacker"
	GroupAdmin      Group = "admin"
)

// UserGroups are the groups an account may be in, from the lowest, as
// Special:UserRights and `wikid user set-groups` offer them.
var UserGroups = []Group{GroupUser, GroupRollbacker, GroupAdmin}

// Ranks is the number of group ranks: Rank is below it.
const Ranks = 4

// Rank orders groups: anonymous < user < rollbacker < admin.
func (g Group) Rank() int {
	switch g {
	case GroupAdmin:
		return 3
	case GroupRollbacker:
		return 2
	case GroupUser:
		return 1
	}
	return 0
}

// AtLeast reports whether g has the rights of min.
func (g Group) AtLeast(min Group) bool { return g.Rank() >= min.Rank() }

// CanRollback reports whether members of g may roll back edits
// (rollbackers and administrators).
func (g Group) CanRollback() bool { return g.AtLeast(GroupRollbacker) }

// UserGroupNames is UserGroups as text: "user, rollbacker or admin".
func UserGroupNames() string {
	var b strings.Builder
	for i, g := range UserGroups {
		switch {
		case i == len(UserGroups)-1:
			b.WriteString(" or ")
		case i > 0:
			b.WriteString(", ")
		}
		b.WriteString(string(g))
	}
	return b.String()
}

// ValidUserGroup reports whether g is one of UserGroups.
func ValidUserGroup(g Group) bool {
	for _, x := range UserGroups {
		if g == x {
			return true
		}
	}
	return false
}

// Change tags mark edits made by a tool rather than typed: they show as
// labels on RecentChanges, histories and contributions, as MediaWiki's
// mw-undo and mw-rollback.
const (
	TagUndo     = "undo"
	TagRollback = "rollback"
)

// ValidTag reports whether tag may be stored: 1 to 32 bytes of lower-case
// ASCII letters, digits and hyphens (tags are stored comma-separated).
func ValidTag(tag string) bool {
	if tag == "" || len(tag) > 32 {
		return false
	}
	for i := 0; i < len(tag); i++ {
		c := tag[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// JoinTags is tags as a store column holds them: valid tags, each once,
// comma-separated, in the order given; invalid ones are dropped.
func JoinTags(tags []string) string {
	var b strings.Builder
	seen := make(map[string]bool, len(tags))
	for _, t := range tags {
		if !ValidTag(t) || seen[t] {
			continue
		}
		seen[t] = true
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(t)
	}
	return b.String()
}

// SplitTags reads a column JoinTags wrote (nil for none).
func SplitTags(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// Page is a page's current state.
type Page struct {
	ID       int64
	Title    Title
	LatestID int64 // latest visible revision
	Redirect Title // non-empty when the latest revision is a #REDIRECT
	Deleted  bool
	Touched  time.Time // time of the latest revision, move, delete or undelete
	Size     int
	Model    ContentModel // the latest revision's
}

// ContentModel is the markup language of a revision's text, as MediaWiki's
// content_model names it.
type ContentModel string

const (
	ModelMarkdown ContentModel = "markdown"
	ModelWikitext ContentModel = "wikitext"
)

// ContentModels are the models a page may have, the default first.
var ContentModels = []ContentModel{ModelMarkdown, ModelWikitext}

// Valid reports whether m is one of ContentModels.
func (m ContentModel) Valid() bool { return m == ModelMarkdown || m == ModelWikitext }

// Or is m, or def when m is empty.
func (m ContentModel) Or(def ContentModel) ContentModel {
	if m == "" {
		return def
	}
	return m
}

// Revision is one saved version of a page. Text is empty in listings
// (history, recent changes) to keep them cheap.
type Revision struct {
	ID         int64
	PageID     int64
	Title      Title // the page's title when read (not when saved)
	ParentID   int64 // previous revision of the page, 0 for the first
	UserID     int64 // 0 for anonymous edits
	UserName   string
	Time       time.Time
	Summary    string
	Text       string
	Size       int    // bytes of Text
	SHA1       string // hex SHA-1 of Text, as MediaWiki
	Minor      bool
	ParentSize int // size of the parent revision, for the ±bytes in listings
	// Tags mark how the edit was made (TagUndo, TagRollback), nil for most.
	Tags  []string
	Model ContentModel // the markup of Text
}

// ChangeKind says what a recent-changes entry records.
type ChangeKind string

const (
	ChangeNew      ChangeKind = "new"
	ChangeEdit     ChangeKind = "edit"
	ChangeMove     ChangeKind = "move"
	ChangeDelete   ChangeKind = "delete"
	ChangeUndelete ChangeKind = "undelete"
)

// Change is one entry of RecentChanges and of a user's contributions.
type Change struct {
	ID       int64
	Kind     ChangeKind
	Title    Title
	NewTitle Title // for moves
	PageID   int64
	RevID    int64 // 0 for delete
	OldRevID int64 // the parent revision, for diff links
	UserID   int64
	UserName string
	Time     time.Time
	Summary  string
	Size     int
	OldSize  int
	Minor    bool
	Tags     []string // the edit's tags (Revision.Tags)
}

// User is a registered account.
type User struct {
	ID           int64
	Name         string // a valid title text: "User:" + Name is the user page
	PasswordHash string
	Group        Group
	Created      time.Time
	Prefs        Prefs
}

// Prefs are what a user chose on Special:Preferences.
type Prefs struct {
	TimeZone     string // an IANA zone name such as "Europe/Paris"; "" is UTC
	DateFormat   string // one of DateFormats; "" is the first
	MinorDefault bool   // the edit form's "minor edit" box starts ticked
	// NoAutoWatch: pages the user creates or edits are not added to their
	// watchlist (they are by default, as in MediaWiki).
	NoAutoWatch bool
	// Signature is the markup ~~~ and ~~~~ sign with; "" is the default
	// (links to the user's page and talk page).
	Signature string
}

// DateFormats are the date formats a user may choose, by name, as Go
// layouts. The first is the default.
var DateFormats = []struct{ Name, Layout string }{
	{"dmy", "15:04, 2 January 2006"},
	{"mdy", "15:04, January 2, 2006"},
	{"ymd", "15:04, 2006 January 2"},
	{"iso", "2006-01-02T15:04:05"},
}

// DateLayout returns the Go layout of date format name (the default for an
// unknown name).
func DateLayout(name string) string {
	for _, f := range DateFormats {
		if f.Name == name {
			return f.Layout
		}
	}
	return DateFormats[0].Layout
}

// Actor is who performs an administrative action: a user, or the wiki's
// own maintenance (ID 0).
type Actor struct {
	ID   int64
	Name string
}

// MaintenanceActor performs what the command line does, under the name
// MediaWiki's maintenance scripts use.
var MaintenanceActor = Actor{Name: "Maintenance script"}

// Block stops a user from changing anything until Expires (never, when
// zero); reading and logging in stay allowed. A user has at most one block.
type Block struct {
	ID       int64
	UserID   int64
	UserName string // the blocked user's name, filled when read
	By       Actor
	Reason   string
	Created  time.Time
	Expires  time.Time // zero: infinite
}

// Active reports whether the block is in force at t.
func (b Block) Active(t time.Time) bool { return b.Expires.IsZero() || t.Before(b.Expires) }

// ExpiryText is the block's expiry as the log records it: "infinite" or
// an RFC 3339 time in UTC.
func (b Block) ExpiryText() string {
	if b.Expires.IsZero() {
		return "infinite"
	}
	return b.Expires.UTC().Format(time.RFC3339)
}

// GroupChange sets a user's group (Special:UserRights).
type GroupChange struct {
	UserID int64
	Group  Group
	By     Actor
	Reason string
	Time   time.Time
}

// PasswordReset is a one-time permission to set a user's password. ID is
// the SHA-256 (hex) of the secret in the link; the secret is never stored.
type PasswordReset struct {
	ID      string
	UserID  int64
	Created time.Time
	Expires time.Time
}

// UserQuery pages through accounts by name.
type UserQuery struct {
	From  string // first name to include (cursor)
	Limit int
}

// BlockQuery pages through the blocks in force at At, newest first.
type BlockQuery struct {
	At     time.Time
	Before int64 // blocks with ID < Before; 0 for the newest
	Limit  int
}

// Session is a server-side login session. ID is the SHA-256 (hex) of the
// token in the cookie; the token itself is never stored.
type Session struct {
	ID      string
	UserID  int64
	CSRF    string // per-session CSRF secret
	Created time.Time
	Expires time.Time
	// TokenID is the API token (Token.ID) the session was started with
	// (api.php's action=login), "" for a login with a password: revoking
	// the token ends the session.
	TokenID string
}

// Token is an API bearer token; ID is the SHA-256 (hex) of the secret.
type Token struct {
	ID       string
	UserID   int64
	Name     string
	Created  time.Time
	Expires  time.Time // zero: never
	LastUsed time.Time // zero: never used; updated at most once a minute
}

// Valid reports whether the token may authenticate at t.
func (t Token) Valid(at time.Time) bool { return t.Expires.IsZero() || at.Before(t.Expires) }

// LinkSet is what a revision's text links to, extracted by the renderer
// before saving so that the store can update its link tables in the same
// transaction as the revision.
type LinkSet struct {
	Links      []Title // wiki links, deduplicated, without fragments
	Categories []Title // "Category:…" titles
	// SortKeys are the sort keys the text's category links give
	// ([[Category:X|key]]), by category, as written (the last one when a
	// category is linked twice); DefaultSort is the text's
	// {{DEFAULTSORT:key}}. CategorySortKey makes a member's key of them.
	SortKeys    map[Title]string
	DefaultSort string
	Redirect    Title // non-empty for #REDIRECT pages
	// Templates are the pages the text transcludes ({{Name}}), directly
	// or through other templates, existing or not: an edit of one of them
	// makes this page's renders and rows stale.
	Templates []Title
	// Files are the files the text shows or links to as media
	// ([[File:X]], ![…](File:X), [[Media:X]]), as "File:" titles: a new
	// upload of one of them makes this page's renders stale.
	Files []Title
}

// Targets yields every title the set links to, in any way (links,
// categories, templates, files, the redirect), a title once per way.
func (ls LinkSet) Targets() iter.Seq[Title] {
	return func(yield func(Title) bool) {
		for _, ts := range [][]Title{ls.Links, ls.Categories, ls.Templates, ls.Files} {
			for _, t := range ts {
				if !yield(t) {
					return
				}
			}
		}
		if ls.Redirect != "" {
			yield(ls.Redirect)
		}
	}
}

// SearchHit is one search result. Snippet is plain text in which matches
// are enclosed in MarkStart … MarkEnd; the view escapes the text and turns
// the marks into <mark> elements.
type SearchHit struct {
	PageID     int64
	Title      Title
	Snippet    string
	TitleMatch bool
	// Source is the latest revision's text, or as much of its start as a
	// snippet is made from (store.SnippetHead), from which the engine
	// makes Snippet (then Source is emptied); Model is its markup.
	Source string
	Model  ContentModel
}

// Private-use code points that delimit matches in SearchHit.Snippet.
const (
	MarkStart = "\uE000"
	MarkEnd   = "\uE001"
)

// LogType is a kind of Special:Log entry, as MediaWiki names them.
type LogType string

const (
	LogDelete   LogType = "delete"   // actions: delete, restore
	LogMove     LogType = "move"     // actions: move, move_redir (over a redirect)
	LogProtect  LogType = "protect"  // actions: protect, modify, unprotect
	LogBlock    LogType = "block"    // actions: block, reblock, unblock
	LogRights   LogType = "rights"   // actions: rights
	LogNewUsers LogType = "newusers" // actions: create, byemail (by an admin)
	LogUpload   LogType = "upload"   // actions: upload, overwrite, revert
	// LogContentModel records a save that changed a page's content model
	// (action change; params "old" and "new", the models).
	LogContentModel LogType = "contentmodel"
)

// LogTypes lists every log type, in the order Special:Log offers them.
var LogTypes = []LogType{LogBlock, LogContentModel, LogDelete, LogImport, LogMove, LogProtect, LogRights, LogNewUsers, LogUpload}

// LogEntry is one entry of Special:Log: who did what to which target.
type LogEntry struct {
	ID       int64
	Type     LogType
	Action   string // within the type, e.g. "delete" or "restore"
	Time     time.Time
	UserID   int64  // the performer; 0 for the wiki itself
	UserName string // the performer
	Target   Title  // the page, or "User:Name" for actions on accounts
	PageID   int64  // 0 when the target is not a page
	Comment  string // the performer's reason
	// Params holds what the type records besides: the new title of a
	// move ("to"), a block's expiry ("expiry"), old and new groups…
	Params map[string]string
}

// LogQuery pages through the log, newest first. Empty fields match all.
type LogQuery struct {
	Type     LogType
	UserName string // performer
	Target   Title
	Before   int64 // entries with ID < Before; 0 for the newest
	Limit    int
}

// ProtectionLevel says who may still do an action on a protected title:
// everyone the wiki lets do it (""), registered users only, or
// administrators only.
type ProtectionLevel string

const (
	ProtectNone   ProtectionLevel = ""
	ProtectUsers  ProtectionLevel = "users"
	ProtectAdmins ProtectionLevel = "admins"
)

// ProtectionLevels lists the levels, from the weakest, as Special:Protect
// offers them.
var ProtectionLevels = []ProtectionLevel{ProtectNone, ProtectUsers, ProtectAdmins}

// Allows reports whether a member of group g passes level l.
func (l ProtectionLevel) Allows(g Group) bool {
	switch l {
	case ProtectAdmins:
		return g.AtLeast(GroupAdmin)
	case ProtectUsers:
		return g.AtLeast(GroupUser)
	}
	return true
}

// Valid reports whether l is one of ProtectionLevels.
func (l ProtectionLevel) Valid() bool {
	return l == ProtectNone || l == ProtectUsers || l == ProtectAdmins
}

// The actions a protection restricts. Edit protection of a title that has
// no page restricts its creation.
const (
	ProtectEdit = "edit"
	ProtectMove = "move"
)

// Protection is a title's protection: who may edit (or create) it and who
// may move it, until Expiry. It belongs to the title, not to a page row: it
// stays when the page is deleted (then it protects the title's creation)
// and moves with the page.
type Protection struct {
	Title    Title
	Edit     ProtectionLevel
	Move     ProtectionLevel
	Expiry   time.Time // zero: never expires
	UserID   int64     // who set it
	UserName string
	Reason   string
	Time     time.Time
}

// Active reports whether p restricts anything at time now. An expired
// protection stops applying by itself: nothing has to remove it.
func (p Protection) Active(now time.Time) bool {
	return (p.Edit != ProtectNone || p.Move != ProtectNone) && (p.Expiry.IsZero() || now.Before(p.Expiry))
}

// Level returns the level p sets for action (ProtectEdit or ProtectMove)
// at time now.
func (p Protection) Level(action string, now time.Time) ProtectionLevel {
	if !p.Active(now) {
		return ProtectNone
	}
	switch action {
	case ProtectEdit:
		return p.Edit
	case ProtectMove:
		return p.Move
	}
	return ProtectNone
}

// OneLine folds s to one line (runs of white space and control characters
// become one space; bytes that are not UTF-8, U+FFFD) of at most max
// bytes, cut at a character boundary: reasons and summaries.
func OneLine(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' ' // control characters (NUL among them, which PostgreSQL text refuses)
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		cut := max
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut]
	}
	return s
}
