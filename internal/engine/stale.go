package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/wikid/wikid/internal/wiki"
)

// An edit made against a revision of a page that was since deleted or
// moved is refused with 409 and the editor's own text, so that nothing is
// lost and nothing is silently recreated or forked. The errors carry only
// what the editor sent (Yours) and public facts (the log entry, the new
// title): never a deleted revision's text.

// DeletedError refuses an edit whose base revision belongs to a page that
// was deleted after the editor loaded it. Saving the text again without a
// base revision creates the page anew.
type DeletedError struct {
	Title wiki.Title
	Entry wiki.LogEntry // the deletion's log entry; zero when the log has none
	Yours string        // the text the editor sent
}

func (d *DeletedError) Error() string {
	msg := fmt.Sprintf("The page %q was deleted after you started editing it", d.Title)
	if d.Entry.ID != 0 {
		msg += fmt.Sprintf(" (by %s at %s", d.Entry.UserName, d.Entry.Time.UTC().Format("15:04, 2 January 2006"))
		if d.Entry.Comment != "" {
			msg += ", reason: " + d.Entry.Comment
		}
		msg += ")"
	}
	return msg + ". Your text was not saved and is returned to you; save it again to create the page anew, or ask an administrator to restore the old page."
}

// Unwrap makes a DeletedError a wiki.KindConflict error with its message.
func (d *DeletedError) Unwrap() error { return &wiki.Error{Kind: wiki.KindConflict, Msg: d.Error()} }

// MovedError refuses an edit whose base revision belongs to a page that
// now has another title: the edit belongs there (with the same base
// revision, which is that page's).
type MovedError struct {
	Title   wiki.Title // the title the edit was sent to
	To      wiki.Title // the page's title now
	BaseRev int64
	Yours   string // the text the editor sent
}

func (m *MovedError) Error() string {
	return fmt.Sprintf("The page %q was moved to %q after you started editing it. Your text was not saved and is returned to you; save it at %q instead.", m.Title, m.To, m.To)
}

// Unwrap makes a MovedError a wiki.KindConflict error with its message.
func (m *MovedError) Unwrap() error { return &wiki.Error{Kind: wiki.KindConflict, Msg: m.Error()} }

// staleBase explains why base, a revision the editor started from, is not
// a revision of the live page at t (cur, found when exists): the page was
// deleted (DeletedError), or moved (MovedError), or base is not a revision
// the editor could have loaded (KindInvalid). It returns nil when base is a
// revision of the live page at t.
func (e *Engine) staleBase(ctx context.Context, ed Edit, cur wiki.Page, exists bool) (wiki.Revision, error) {
	b, err := e.store.FindRevision(ctx, ed.BaseRevID)
	switch {
	case err == nil && exists && b.PageID == cur.ID:
		return b, nil
	case err == nil && b.Title != ed.Title:
		// A visible revision of a live page at another title: the page
		// was moved (with or without a redirect left at t).
		return wiki.Revision{}, &MovedError{Title: ed.Title, To: b.Title, BaseRev: b.ID, Yours: ed.Text}
	case err != nil && !errors.Is(err, wiki.ErrNotFound):
		return wiki.Revision{}, err
	}
	// The base revision is hidden (or never existed). If the page at t
	// was deleted, or deleted and created again since, say so.
	if del, ok, err := e.lastDeletion(ctx, ed.Title); err != nil {
		return wiki.Revision{}, err
	} else if ok || (cur.Deleted && cur.ID != 0) {
		return wiki.Revision{}, &DeletedError{Title: ed.Title, Entry: del, Yours: ed.Text}
	}
	return wiki.Revision{}, wiki.Errorf(wiki.KindInvalid, "the revision you started from (%d) is not a revision of %q; reload the page and edit again", ed.BaseRevID, ed.Title)
}

// lastDeletion returns the newest deletion log entry of t.
func (e *Engine) lastDeletion(ctx context.Context, t wiki.Title) (wiki.LogEntry, bool, error) {
	for before := int64(0); ; {
		es, err := e.store.Log(ctx, wiki.LogQuery{Type: wiki.LogDelete, Target: t, Before: before, Limit: 20})
		if err != nil || len(es) == 0 {
			return wiki.LogEntry{}, false, err
		}
		for _, en := range es {
			if en.Action == "delete" {
				return en, true, nil
			}
		}
		before = es[len(es)-1].ID
	}
}

// DeletionLog returns the newest deletion log entry of t, for the notice
// of an edit form or a missing page.
func (e *Engine) DeletionLog(ctx context.Context, t wiki.Title) (wiki.LogEntry, bool, error) {
	return e.lastDeletion(ctx, t)
}
