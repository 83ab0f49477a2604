package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wikid/wikid/internal/feed"
	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/wiki"
)

// Feeds, as MediaWiki offers them: feed=atom or feed=rss on
// Special:RecentChanges, Special:Contributions/Name, a page's history and
// a category page. A feed is the same listing as its page, read by the
// same handler with the same parameters, and cached as that page is:
// RecentChanges and contributions for list_ttl, tagged with the lists
// (every change purges them); a history and a category with their page's
// tag (every change of the page, or of the category's members, purges
// it). Absolute URLs come from canonical_url; without it they come from
// the request's Host, and the feed is then private (a shared cache must
// not hand one client's Host to another).

// feedParam is the feed parameter of the routes that have a feed.
var feedParam = httpx.Param{Name: "feed", Kind: httpx.Enum, Values: feed.Formats, What: "a feed format"}

// The bounds of one feed's work beyond its one listing query: the entries
// whose change is shown in full (a diff, or the start of a new page's
// text), and the revision text read for them, in bytes, in one query.
// Other entries link to their diff.
const (
	feedFullEntries = 10
	feedTextBudget  = 4 << 20
	feedTextStart   = 1000 // bytes of a new page's text shown
)

// emptyFeedTime is the updated time of a feed without entries: a fixed
// time, so that its bytes and validators stay the same.
var emptyFeedTime = time.Unix(0, 0).UTC()

// FeedLink is a feed the page offers (<link rel="alternate"> in the head).
type FeedLink struct {
	Title, URL string
	Format     feed.Format
}

// feedLinks are the Atom and RSS links of the listing at path with the
// canonical parameters p (those that filter it: a page of an older offset
// or a later place in a category starts its feed at the newest entry).
func feedLinks(path string, p httpx.Params, title string) []FeedLink {
	p = p.With("offset", "").With("pagefrom", "")
	var out []FeedLink
	for _, f := range []feed.Format{feed.Atom, feed.RSS} {
		name := "Atom"
		if f == feed.RSS {
			name = "RSS"
		}
		out = append(out, FeedLink{Title: title + " (" + name + ")", Format: f, URL: httpx.URL(path, p.With("feed", string(f)))})
	}
	return out
}

// feedFormat returns the feed the request asks for, or "" for its page.
func feedFormat(r *http.Request) feed.Format {
	return feed.Format(httpx.From(r).Get("feed"))
}

// feedBase returns the base of the feed's absolute URLs, and whether the
// feed may be shared (the base does not come from the request).
func (s *Server) feedBase(r *http.Request) (string, bool) {
	if s.cfg.CanonicalURL != "" {
		return strings.TrimRight(s.cfg.CanonicalURL, "/"), true
	}
	return (&url.URL{Scheme: s.client(r).Scheme, Host: r.Host}).String(), false
}

// hostFeed reports whether q asks for a feed whose URLs come from the
// request's Host (no canonical_url): the edge cache must not answer it.
func (s *Server) hostFeed(q *httpx.Request) bool {
	return s.cfg.CanonicalURL == "" && q.Has("feed")
}

// newFeed starts the feed of the listing r asks for: its IDs and links.
func (s *Server) newFeed(r *http.Request, title, subtitle string) (*feed.Feed, string, bool) {
	rq := httpx.From(r)
	base, shared := s.feedBase(r)
	f := &feed.Feed{
		Title: s.cfg.SiteName + " – " + title, Subtitle: subtitle,
		ID: base + rq.Key(), Self: base + rq.Key(),
		Alternate: base + httpx.URL(rq.Path, rq.Params.With("feed", "")),
		Language:  "en", Generator: "Wikid",
	}
	return f, base, shared
}

// writeFeed answers with f in format, cached as mode says when it may be
// shared. Last-Modified is the newest entry's time when withModified
// (a listing where every change adds a newer entry); otherwise the ETag
// alone validates it.
func (s *Server) writeFeed(w http.ResponseWriter, r *http.Request, f *feed.Feed, shared bool, mode cacheMode, withModified bool) {
	format := feedFormat(r)
	if f.Updated.IsZero() {
		f.Updated = emptyFeedTime
	}
	for _, e := range f.Entries {
		if e.Updated.After(f.Updated) {
			f.Updated = e.Updated
		}
	}
	var modified time.Time
	if withModified && len(f.Entries) > 0 {
		modified = f.Updated
	}
	body := feed.Write(f, format)
	if !shared {
		httpx.Write(w, r, &httpx.Response{Type: format.ContentType(), Body: body, Cache: httpx.Private, Modified: modified, Header: takeHeader(w)})
		return
	}
	s.writeBody(w, r, http.StatusOK, format.ContentType(), body, mode, modified)
}

// feedItem is one change or revision a feed shows.
type feedItem struct {
	changeID          int64 // the recent-changes entry, 0 for a revision
	kind              wiki.ChangeKind
	title, newTitle   wiki.Title
	revID, parentID   int64
	time              time.Time
	user, summary     string
	size, oldSize     int
	minor             bool
	newText, oldText  *wiki.Revision // loaded for the entries shown in full
	diffHTML, diffErr string
}

func changeItems(cs []wiki.Change) []feedItem {
	items := make([]feedItem, len(cs))
	for i, c := range cs {
		items[i] = feedItem{changeID: c.ID, kind: c.Kind, title: c.Title, newTitle: c.NewTitle, revID: c.RevID, parentID: c.OldRevID,
			time: c.Time, user: c.UserName, summary: c.Summary, size: c.Size, oldSize: c.OldSize, minor: c.Minor}
	}
	return items
}

func revisionItems(t wiki.Title, revs []wiki.Revision) []feedItem {
	items := make([]feedItem, len(revs))
	for i, rv := range revs {
		kind := wiki.ChangeEdit
		if rv.ParentID == 0 {
			kind = wiki.ChangeNew
		}
		items[i] = feedItem{kind: kind, title: t, revID: rv.ID, parentID: rv.ParentID, time: rv.Time, user: rv.UserName,
			summary: rv.Summary, size: rv.Size, oldSize: rv.ParentSize, minor: rv.Minor}
	}
	return items
}

// loadTexts reads, in one query, the texts of the first feedFullEntries
// items that show a revision, as long as they fit feedTextBudget together.
func (s *Server) loadTexts(r *http.Request, items []feedItem) error {
	var ids []int64
	budget, full := feedTextBudget, 0
	for i := range items {
		it := &items[i]
		if full == feedFullEntries {
			break
		}
		if it.revID == 0 || (it.kind != wiki.ChangeNew && it.kind != wiki.ChangeEdit) {
			continue
		}
		cost := it.size
		if it.kind == wiki.ChangeEdit {
			cost += it.oldSize
		}
		full++
		if cost > budget {
			continue
		}
		budget -= cost
		ids = append(ids, it.revID)
		if it.kind == wiki.ChangeEdit && it.parentID != 0 {
			ids = append(ids, it.parentID)
		}
	}
	revs, err := s.store.FindRevisions(r.Context(), ids)
	if err != nil {
		return err
	}
	byID := make(map[int64]*wiki.Revision, len(revs))
	for i := range revs {
		byID[revs[i].ID] = &revs[i]
	}
	for i := range items {
		it := &items[i]
		it.newText = byID[it.revID]
		if it.kind == wiki.ChangeEdit {
			it.oldText = byID[it.parentID]
		}
	}
	return nil
}

// feedEntries makes the entries of items: diffs by the engine's bounded
// comparison (cached per pair of revisions) for the edits whose texts
// were loaded.
func (s *Server) feedEntries(r *http.Request, base string, items []feedItem) []feed.Entry {
	out := make([]feed.Entry, 0, len(items))
	for i := range items {
		it := &items[i]
		e := feed.Entry{Title: string(it.title), Updated: it.time, Author: it.user, Summary: it.summary}
		page := base + it.title.URL()
		switch {
		case it.kind == wiki.ChangeEdit && it.revID != 0 && it.parentID != 0:
			e.Link = page + "?diff=" + strconv.FormatInt(it.revID, 10) + "&oldid=" + strconv.FormatInt(it.parentID, 10)
			e.ID = e.Link
			e.Content = s.editContent(r, it, e.Link)
		case it.revID != 0 && (it.kind == wiki.ChangeNew || it.kind == wiki.ChangeEdit):
			e.Link = page + "?oldid=" + strconv.FormatInt(it.revID, 10)
			e.ID = e.Link
			e.Content = newPageContent(it, e.Link)
		default:
			e.Link, e.ID = page, base+"/wiki/Special:RecentChanges#change-"+strconv.FormatInt(it.changeID, 10)
			switch it.kind {
			case wiki.ChangeMove:
				e.Title = string(it.title) + " → " + string(it.newTitle)
				e.Link = base + it.newTitle.URL()
				e.Content = "<p>Moved <a href=\"" + feed.EscapeHTML(page) + "?redirect=no\">" + feed.EscapeHTML(string(it.title)) + "</a> to <a href=\"" +
					feed.EscapeHTML(e.Link) + "\">" + feed.EscapeHTML(string(it.newTitle)) + "</a>.</p>"
			case wiki.ChangeDelete:
				e.Title = string(it.title) + " (deleted)"
				e.Content = "<p>Deleted " + feed.EscapeHTML(string(it.title)) + ".</p>"
			case wiki.ChangeUndelete:
				e.Title = string(it.title) + " (restored)"
				e.Content = "<p>Restored <a href=\"" + feed.EscapeHTML(page) + "\">" + feed.EscapeHTML(string(it.title)) + "</a>.</p>"
			default:
				e.Content = "<p>" + feed.EscapeHTML(string(it.kind)) + " of " + feed.EscapeHTML(string(it.title)) + ".</p>"
			}
		}
		out = append(out, e)
	}
	return out
}

// sizeNote is the change in size, "(+12 bytes)".
func sizeNote(it *feedItem) string {
	d := it.size - it.oldSize
	sign := ""
	if d > 0 {
		sign = "+"
	}
	return "(" + sign + strconv.Itoa(d) + " bytes)"
}

// editContent is an edit's diff table, or a link to it when its texts
// were not loaded or the comparison failed.
func (s *Server) editContent(r *http.Request, it *feedItem, link string) string {
	head := "<p>" + feed.EscapeHTML(sizeNote(it))
	if it.minor {
		head += " (minor edit)"
	}
	head += "</p>"
	more := head + `<p><a href="` + feed.EscapeHTML(link) + `">Show the changes</a></p>`
	if it.newText == nil || it.oldText == nil {
		return more
	}
	if it.oldText.Text == it.newText.Text {
		return head + "<p>No difference in the text.</p>"
	}
	res, err := s.eng.Diff(r.Context(), *it.oldText, *it.newText)
	if err != nil {
		s.log.Warn("feed: diff", "old", it.oldText.ID, "new", it.newText.ID, "err", err)
		return more
	}
	var b strings.Builder
	b.WriteString(head)
	if res.Coarse || res.Truncated {
		b.WriteString(`<p>This comparison is approximate or shortened; <a href="` + feed.EscapeHTML(link) + `">see it on the wiki</a>.</p>`)
	}
	b.WriteString(`<table class="diff">`)
	b.WriteString(res.HTML())
	b.WriteString("</table>")
	return b.String()
}

// newPageContent is the start of a new page's text, or a link to it.
func newPageContent(it *feedItem, link string) string {
	head := "<p>New page " + feed.EscapeHTML(sizeNote(it)) + "</p>"
	if it.newText == nil {
		return head + `<p><a href="` + feed.EscapeHTML(link) + `">Show the page</a></p>`
	}
	text := it.newText.Text
	if len(text) > feedTextStart {
		cut := feedTextStart
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	return head + "<pre>" + feed.EscapeHTML(text) + "</pre>"
}

// changesFeed answers with the feed of RecentChanges or contributions.
func (s *Server) changesFeed(w http.ResponseWriter, r *http.Request, title, subtitle string, cs []wiki.Change) error {
	return s.writeChangesFeed(w, r, title, subtitle, cs, false)
}

// writeChangesFeed is changesFeed, private to its reader when private (a
// user's watchlist).
func (s *Server) writeChangesFeed(w http.ResponseWriter, r *http.Request, title, subtitle string, cs []wiki.Change, private bool) error {
	f, base, shared := s.newFeed(r, title, subtitle)
	shared = shared && !private
	items := changeItems(cs)
	if err := s.loadTexts(r, items); err != nil {
		return err
	}
	f.Entries = s.feedEntries(r, base, items)
	s.writeFeed(w, r, f, shared, cacheShort, true)
	return nil
}

// historyFeed answers with the feed of page t's history.
func (s *Server) historyFeed(w http.ResponseWriter, r *http.Request, t wiki.Title, revs []wiki.Revision) error {
	f, base, shared := s.newFeed(r, "Revision history of "+string(t), "Revision history for this page on the wiki")
	items := revisionItems(t, revs)
	if err := s.loadTexts(r, items); err != nil {
		return err
	}
	f.Entries = s.feedEntries(r, base, items)
	s.writeFeed(w, r, f, shared, cachePublic, true)
	return nil
}

// categoryFeedLimit is how many of a category's newest members its feed lists.
const categoryFeedLimit = 50

// categoryFeed answers with the newest members of category t, the most
// recently added first: one query. It is tagged and purged as the
// category's page is (a change of its members purges it). It has no
// Last-Modified: a member that leaves changes it without a newer time.
func (s *Server) categoryFeed(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	members, err := s.store.CategoryAdditions(r.Context(), t, categoryFeedLimit)
	if err != nil {
		return err
	}
	f, base, shared := s.newFeed(r, "New pages in "+string(t), "The pages most recently added to "+string(t))
	for _, m := range members {
		link := base + m.Title.URL()
		kind := "Page"
		if m.Title.IsSubcategory() {
			kind = "Subcategory"
		}
		f.Entries = append(f.Entries, feed.Entry{
			ID:      base + t.URL() + "#member-" + strconv.FormatInt(m.ID, 10) + "-" + strconv.FormatInt(m.Added.UnixMilli(), 10),
			Title:   string(m.Title),
			Link:    link,
			Updated: m.Added,
			Author:  s.cfg.SiteName,
			Content: "<p>" + kind + ` <a href="` + feed.EscapeHTML(link) + `">` + feed.EscapeHTML(string(m.Title)) + "</a> was added to " +
				feed.EscapeHTML(string(t)) + ".</p>",
		})
	}
	s.writeFeed(w, r, f, shared, cachePublic, false)
	return nil
}
