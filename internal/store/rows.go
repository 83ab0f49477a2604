package store

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

// JoinIDs and SplitIDs store a list of IDs as comma-separated numbers
// (the purge log's page and user lists, in every backend).
func JoinIDs(ids []int64) string {
	b := make([]byte, 0, 8*len(ids))
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(b)
}

// SplitIDs reads what JoinIDs wrote.
func SplitIDs(s string) ([]int64, error) {
	if s == "" {
		return nil, nil
	}
	var out []int64
	for p := range strings.SplitSeq(s, ",") {
		id, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("ID %q: %w", p, err)
		}
		out = append(out, id)
	}
	return out, nil
}

// LinkRows are the rows of the links table to write, of one page or of a
// whole import batch.
type LinkRows struct {
	Rows  []LinkRow
	Pages map[int64]bool // pages with rows here
	// At is when the rows are written: a category row new to its page
	// records the page as added to the category then (the current time
	// when zero; Store.CategoryAdditions).
	At time.Time
}

// LinkRow is one row of the links table. A category row also holds the
// page's sort key in the category and whether the page is a category
// itself (listed among the subcategories): the category listing's index
// is ordered by them.
type LinkRow struct {
	From        int64
	Kind, Title string // Kind: link, category, redirect, template or file
	SortKey     string
	Subcat      bool
}

// Add adds the rows of page pageID, whose title is page, in place of any
// it had here already.
func (rs *LinkRows) Add(pageID int64, page wiki.Title, ls wiki.LinkSet) {
	if rs.Pages[pageID] {
		rs.Rows = slices.DeleteFunc(rs.Rows, func(r LinkRow) bool { return r.From == pageID })
	}
	if rs.Pages == nil {
		rs.Pages = map[int64]bool{}
	}
	rs.Pages[pageID] = true
	for _, t := range ls.Links {
		rs.Rows = append(rs.Rows, LinkRow{From: pageID, Kind: "link", Title: string(t)})
	}
	for _, t := range ls.Categories {
		rs.Rows = append(rs.Rows, LinkRow{From: pageID, Kind: "category", Title: string(t),
			SortKey: wiki.StoredSortKey(ls.CategorySortKey(page, t), page), Subcat: page.IsSubcategory()})
	}
	if ls.Redirect != "" {
		rs.Rows = append(rs.Rows, LinkRow{From: pageID, Kind: "redirect", Title: string(ls.Redirect)})
	}
	for _, t := range ls.Templates {
		rs.Rows = append(rs.Rows, LinkRow{From: pageID, Kind: "template", Title: string(t)})
	}
	for _, t := range ls.Files {
		rs.Rows = append(rs.Rows, LinkRow{From: pageID, Kind: "file", Title: string(t)})
	}
}

// Additions returns the category rows of rs as parallel slices of
// category titles and page IDs, for the rows that record when each page
// was added to each category.
func (rs *LinkRows) Additions() (cats []string, pages []int64) {
	for _, r := range rs.Rows {
		if r.Kind == "category" && r.Title != "" {
			cats, pages = append(cats, r.Title), append(pages, r.From)
		}
	}
	return cats, pages
}

// PageIDs returns the pages with rows here, in ID order.
func (rs *LinkRows) PageIDs() []int64 {
	ids := make([]int64, 0, len(rs.Pages))
	for id := range rs.Pages {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// UseKinds are the kinds of link rows that make a page use a title as use
// says (Store.Dependents).
func UseKinds(use wiki.Use) []string {
	switch use {
	case wiki.TemplateUse:
		return []string{"template"}
	case wiki.FileUse:
		return []string{"file"}
	}
	return []string{"link", "redirect"}
}

// MergeDependents merges the pages read per kind of row (each in ID
// order): the first limit distinct pages by ID.
func MergeDependents(perKind [][]wiki.Page, limit int) []wiki.Page {
	var out []wiki.Page
	for _, ps := range perKind {
		out = append(out, ps...)
	}
	if len(perKind) > 1 {
		slices.SortFunc(out, func(a, b wiki.Page) int { return cmp.Compare(a.ID, b.ID) })
		out = slices.CompactFunc(out, func(a, b wiki.Page) bool { return a.ID == b.ID })
	}
	return out[:min(len(out), limit)]
}

// Same reports whether stored, the rows the links table holds for page
// pageID, are the rows rs holds for it (duplicates and rows without a
// target count once, as the writers drop them): a links job whose parse
// found what the table has need not write.
func (rs *LinkRows) Same(pageID int64, stored []LinkRow) bool {
	norm := func(rows []LinkRow) []LinkRow {
		out := make([]LinkRow, 0, len(rows))
		for _, r := range rows {
			if r.From == pageID && r.Title != "" {
				out = append(out, r)
			}
		}
		slices.SortStableFunc(out, func(a, b LinkRow) int {
			return cmp.Or(strings.Compare(a.Title, b.Title), strings.Compare(a.Kind, b.Kind))
		})
		// The table's key is (from, kind, title): a later duplicate is dropped.
		return slices.CompactFunc(out, func(a, b LinkRow) bool { return a.Title == b.Title && a.Kind == b.Kind })
	}
	return slices.Equal(norm(rs.Rows), norm(stored))
}

// Sort orders the rows as the links table's target index (title, kind,
// page): a batch's rows then reach each page of that index once, in
// order, where rows in page order would reach them at random (the index
// is far larger than a cache). The titles decide most comparisons: the
// others are made only when they are equal (cmp.Or makes all three, which
// sorted an import batch's 50,000 rows a fifth slower).
func (rs *LinkRows) Sort() {
	slices.SortFunc(rs.Rows, func(a, b LinkRow) int {
		if c := strings.Compare(a.Title, b.Title); c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(a.Kind, b.Kind), cmp.Compare(a.From, b.From))
	})
}

// PurgeColumns are a purge log event's lists as both backends store them:
// titles one per line, page and user IDs and session IDs comma-separated.
type PurgeColumns struct {
	Titles, Pages, Users, Sessions string
}

// EncodePurge returns ev's lists as stored.
func EncodePurge(ev wiki.PurgeEvent) PurgeColumns {
	titles := make([]string, len(ev.Titles))
	for i, t := range ev.Titles {
		titles[i] = string(t)
	}
	return PurgeColumns{Titles: strings.Join(titles, "\n"), Pages: JoinIDs(ev.PageIDs),
		Users: JoinIDs(ev.Users), Sessions: strings.Join(ev.Sessions, ",")}
}

// Decode fills ev's lists from c.
func (c PurgeColumns) Decode(ev *wiki.PurgeEvent) error {
	if c.Titles != "" {
		for t := range strings.SplitSeq(c.Titles, "\n") {
			ev.Titles = append(ev.Titles, wiki.Title(t))
		}
	}
	var err error
	if ev.PageIDs, err = SplitIDs(c.Pages); err != nil {
		return fmt.Errorf("purge %d: %w", ev.ID, err)
	}
	if ev.Users, err = SplitIDs(c.Users); err != nil {
		return fmt.Errorf("purge %d: %w", ev.ID, err)
	}
	if c.Sessions != "" {
		ev.Sessions = strings.Split(c.Sessions, ",")
	}
	return nil
}

// TransclusionsTitle returns the title of a transclusions job (its key
// names it). Both engines enqueue such a job only when some page
// transcludes the title, in the same statement: every change of a page
// comes with one, and most pages are no template.
func TransclusionsTitle(j wiki.JobSpec) (string, bool) {
	t, ok := wiki.KeyTitle(j, wiki.JobTransclusions)
	return string(t), ok
}

// JobColumns are a job spec's values as both backends store them: the
// payload ("{}" for none), the attempts allowed (wiki.DefaultJobAttempts
// for 0) and when it is due (at for a zero RunAt), in unix ms.
func JobColumns(j wiki.JobSpec, at time.Time) (payload string, maxAttempts int, runAt int64, err error) {
	if j.Kind == "" {
		return "", 0, 0, errors.New("enqueue: a job without a kind")
	}
	payload = string(j.Payload)
	if payload == "" {
		payload = "{}"
	}
	maxAttempts = j.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = wiki.DefaultJobAttempts
	}
	if !j.RunAt.IsZero() {
		at = j.RunAt
	}
	return payload, maxAttempts, at.UnixMilli(), nil
}
