package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wikid/wikid/internal/diff"
	"github.com/wikid/wikid/internal/wiki"
)

// errChangedMeanwhile refuses a save with ExactBase whose base revision is
// no longer the page's latest.
var errChangedMeanwhile = wiki.Errorf(wiki.KindConflict, "the page was edited meanwhile; look at its history and try again")

// Undo is an edit that reverts revisions, prepared for the edit form: the
// text to save on top of Latest, and its default summary.
type Undo struct {
	Page   wiki.Page
	Undone wiki.Revision // the newest revision undone (undo=), with text
	After  wiki.Revision // the revision whose text the undone range leaves (undoafter=); zero for none
	Latest wiki.Revision // the page's latest revision, with text: the edit's base
	Text   string        // Latest's text without the changes undone
	// Summary is MediaWiki's: "Undo revision R by [[Special:Contributions/Name|Name]]".
	Summary string
}

// undoWalk bounds the revisions read to name the editors of an undone range.
const undoWalk = 100

// PrepareUndo reverts revision undoID of page t, or the revisions after
// afterID up to undoID (afterID 0: undoID alone), on top of the page's
// latest text by a three-way merge: base the undone revision's text, ours
// the latest text, theirs the text before the range. Later edits that
// changed the same lines make it a wiki.KindConflict error; ids that are
// not revisions of t, or a range the wrong way round, wiki.KindInvalid or
// wiki.KindNotFound errors that say what to fix.
func (e *Engine) PrepareUndo(ctx context.Context, t wiki.Title, undoID, afterID int64) (Undo, error) {
	var u Undo
	p, err := e.store.FindPage(ctx, t)
	if errors.Is(err, wiki.ErrNotFound) || err == nil && p.Deleted {
		return u, wiki.Errorf(wiki.KindNotFound, "the page %q does not exist, so there is nothing to undo", t)
	}
	if err != nil {
		return u, err
	}
	u.Page = p
	rev := func(id int64, what string) (wiki.Revision, error) {
		r, err := e.store.FindRevision(ctx, id)
		if errors.Is(err, wiki.ErrNotFound) || err == nil && r.PageID != p.ID {
			return r, wiki.Errorf(wiki.KindNotFound, "revision %d (%s) is not a revision of %q; take the undo link from the page's history", id, what, t)
		}
		return r, err
	}
	if u.Undone, err = rev(undoID, "undo"); err != nil {
		return u, err
	}
	if afterID == 0 {
		afterID = u.Undone.ParentID
	} else if afterID >= undoID {
		return u, wiki.Errorf(wiki.KindInvalid, "undoafter (%d) must be an older revision than undo (%d): the revisions after undoafter up to undo are undone", afterID, undoID)
	}
	if afterID == 0 {
		return u, wiki.Errorf(wiki.KindInvalid, "revision %d created the page %q, so undoing it would leave nothing; edit the page instead, or ask an administrator to delete it", undoID, t)
	}
	if u.After, err = rev(afterID, "undoafter"); err != nil {
		return u, err
	}
	if u.Latest, err = e.store.FindRevision(ctx, p.LatestID); err != nil {
		return u, err
	}
	merged, conflict, err := e.merge(ctx, u.Undone.Text, u.Latest.Text, u.After.Text)
	if err != nil {
		return u, err
	}
	if conflict {
		return u, wiki.Errorf(wiki.KindConflict, "The edit could not be undone because later edits changed the same lines. Compare the revisions in the page's history and edit the page by hand.")
	}
	if merged == u.Latest.Text {
		return u, wiki.Errorf(wiki.KindConflict, "there is nothing to undo: the current text of %q no longer has the changes of revision %d (undone already?)", t, undoID)
	}
	if err := e.checkSize(merged); err != nil {
		return u, err
	}
	u.Text = merged
	u.Summary, err = e.undoSummary(ctx, u)
	return u, err
}

// undoSummary words the default summary of u: the revision and its editor
// for one revision, the first and last revision and up to three editors
// for a range (read back from the undone revision, undoWalk at most).
func (e *Engine) undoSummary(ctx context.Context, u Undo) (string, error) {
	if u.After.ID == u.Undone.ParentID {
		return fmt.Sprintf("Undo revision %d by %s", u.Undone.ID, contribsLink(u.Undone.UserName)), nil
	}
	revs, err := e.store.History(ctx, wiki.HistoryQuery{PageID: u.Page.ID, Before: u.Undone.ID + 1, Limit: undoWalk})
	if err != nil {
		return "", err
	}
	first, complete := u.Undone.ID, false
	var names []string
	for _, r := range revs {
		if r.ID <= u.After.ID {
			complete = true
			break
		}
		first = r.ID
		if !contains(names, r.UserName) {
			names = append(names, r.UserName)
		}
	}
	if !complete {
		return fmt.Sprintf("Undo revisions after %d up to %d", u.After.ID, u.Undone.ID), nil
	}
	links := make([]string, 0, 3)
	for _, n := range names[:min(len(names), 3)] {
		links = append(links, contribsLink(n))
	}
	by := strings.Join(links, ", ")
	if len(names) > 3 {
		by += fmt.Sprintf(" and %d others", len(names)-3)
	}
	return fmt.Sprintf("Undo revisions %d to %d by %s", first, u.Undone.ID, by), nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// contribsLink is a summary's link to an editor's contributions.
func contribsLink(name string) string {
	return "[[Special:Contributions/" + name + "|" + name + "]]"
}

// rollbackWalk bounds the edits one rollback reverts: a longer streak is
// for undo or an old revision's restore, which the editor checks first.
const rollbackWalk = 500

// RollbackStreak is what a rollback of a page would revert: the latest
// editor's consecutive edits.
type RollbackStreak struct {
	User  string // the page's latest editor
	Edits int    // their consecutive latest edits, up to the limit asked
	More  bool   // there are more than Edits
	// Alone: every revision read is theirs and there are no others: there
	// is no earlier version by another user to roll back to.
	Alone bool
}

// Streak reads the latest editor's consecutive edits of page p, up to
// limit (one history read of limit + 1 revisions).
func (e *Engine) Streak(ctx context.Context, p wiki.Page, limit int) (RollbackStreak, error) {
	revs, err := e.store.History(ctx, wiki.HistoryQuery{PageID: p.ID, Limit: limit + 1})
	if err != nil || len(revs) == 0 {
		return RollbackStreak{}, err
	}
	s := RollbackStreak{User: revs[0].UserName}
	for _, r := range revs {
		if r.UserName != s.User {
			return s, nil
		}
		if s.Edits == limit {
			s.More = true
			return s, nil
		}
		s.Edits++
	}
	s.Alone = true
	return s, nil
}

// Rollback reverts the consecutive latest edits of page t by the user
// named from to the last revision by someone else, in one new revision
// tagged rollback. It is refused when from is no longer the latest editor
// (someone edited meanwhile), when every revision is theirs, and to
// editors who may not roll back. The save goes through Save, so
// protection and blocks apply as to any edit, and it is made only on the
// revision checked here (ExactBase): an edit that lands meanwhile refuses
// it rather than being rolled back unseen.
func (e *Engine) Rollback(ctx context.Context, t wiki.Title, from string, ed Editor) (SaveOutcome, error) {
	if !ed.Group.CanRollback() {
		return SaveOutcome{}, wiki.Errorf(wiki.KindForbidden, "rollback is for rollbackers and administrators; undo the edits from the page's history instead")
	}
	p, err := e.store.FindPage(ctx, t)
	if errors.Is(err, wiki.ErrNotFound) || err == nil && p.Deleted {
		return SaveOutcome{}, wiki.Errorf(wiki.KindNotFound, "the page %q does not exist, so there is nothing to roll back", t)
	}
	if err != nil {
		return SaveOutcome{}, err
	}
	var target wiki.Revision
	latest := p.LatestID
	n := 0
	for before := int64(0); target.ID == 0; {
		revs, err := e.store.History(ctx, wiki.HistoryQuery{PageID: p.ID, Before: before, Limit: 100})
		if err != nil {
			return SaveOutcome{}, err
		}
		for _, r := range revs {
			if n == 0 && r.UserName != from {
				return SaveOutcome{}, wiki.Errorf(wiki.KindConflict, "the latest edit of %q is by %s, not %s: someone edited the page meanwhile. Look at its history before rolling back", t, r.UserName, from)
			}
			if r.UserName != from {
				target = r
				break
			}
			n++
			if n > rollbackWalk {
				return SaveOutcome{}, wiki.Errorf(wiki.KindInvalid, "%s made more than %d edits in a row to %q: too many to roll back at once; restore an older revision from the history instead", from, rollbackWalk, t)
			}
		}
		if target.ID != 0 {
			break
		}
		if len(revs) < 100 {
			if n == 0 {
				return SaveOutcome{}, wiki.Errorf(wiki.KindNotFound, "the page %q has no revisions to roll back", t)
			}
			return SaveOutcome{}, wiki.Errorf(wiki.KindConflict, "every revision of %q is by %s: there is no earlier version by another user to roll back to", t, from)
		}
		before = revs[len(revs)-1].ID
	}
	full, err := e.store.FindRevision(ctx, target.ID)
	if err != nil {
		return SaveOutcome{}, err
	}
	summary := fmt.Sprintf("Reverted edits by %s ([[User talk:%s|talk]]) to last revision by %s", contribsLink(from), from, target.UserName)
	out, err := e.Save(ctx, Edit{Title: t, Text: full.Text, Summary: summary, Minor: true, BaseRevID: latest,
		Editor: ed, Tags: []string{wiki.TagRollback}, ExactBase: true, Verbatim: true, Model: full.Model})
	if errors.Is(err, errChangedMeanwhile) {
		return out, wiki.Errorf(wiki.KindConflict, "%q was edited while the rollback was made; look at its history before rolling back", t)
	}
	if err == nil && out.NoChange {
		return out, wiki.Errorf(wiki.KindConflict, "the edits by %s to %q left its text as %s's last revision had it: there is nothing to roll back", from, t, target.UserName)
	}
	return out, err
}

// merge is diff.Merge in a slot of the render gate: a three-way merge of
// pages at the size limit costs what a render does (0.4 s of CPU for a
// million lines), and undo forms and edit conflicts are asked for at will.
func (e *Engine) merge(ctx context.Context, base, a, b string) (string, bool, error) {
	release, err := e.gate.acquire(ctx)
	if err != nil {
		return "", false, err
	}
	defer release()
	m, conflict := diff.Merge(base, a, b)
	return m, conflict, nil
}
