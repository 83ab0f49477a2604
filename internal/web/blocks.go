package web

import (
	"errors"
	"net/http"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

// errBlocked marks the refusal of a change by a blocked user: the REST API
// answers it with MediaWiki's errorKey "blocked".
var errBlocked = errors.New("the user is blocked")

// checkBlock refuses a change by a blocked user: 403 with who blocked them,
// why and until when. It reads the store on every call (a change is never
// served from a cache), so a block made anywhere applies on the very next
// request, and one that expired stops applying at its time.
func (s *Server) checkBlock(r *http.Request) error {
	v := viewerOf(r)
	if !v.LoggedIn {
		return nil
	}
	b, err := s.store.FindBlock(r.Context(), v.User.ID, s.now())
	if errors.Is(err, wiki.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return blockedError(b)
}

func blockedError(b wiki.Block) error {
	return &wiki.Error{Kind: wiki.KindForbidden, Err: errBlocked, Msg: blockMessage(b)}
}

// blockMessage tells a blocked user what happened and what they can do.
func blockMessage(b wiki.Block) string {
	until := "with no end date"
	if !b.Expires.IsZero() {
		until = "until " + b.Expires.UTC().Format("15:04, 2 January 2006") + " (UTC)"
	}
	reason := b.Reason
	if reason == "" {
		reason = "no reason was given"
	}
	return "Your account " + b.UserName + " was blocked from editing by " + b.By.Name + " " + until +
		". Reason: " + reason + ". You can still read pages; if you think the block is a mistake, contact " + b.By.Name +
		" or another administrator."
}

// blockedOrNil returns the viewer's block in force, or nil.
func (s *Server) blockedOrNil(r *http.Request) (*wiki.Block, error) {
	v := viewerOf(r)
	if !v.LoggedIn {
		return nil, nil
	}
	b, err := s.store.FindBlock(r.Context(), v.User.ID, s.now())
	if errors.Is(err, wiki.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &b, nil
}

// expiryChoices are the expiries the block form offers, as MediaWiki's.
var expiryChoices = []string{"1h", "1d", "3d", "1w", "2w", "30d", "90d", "180d", "1y", "infinite"}

// expiryText shows a block's or token's expiry to a user.
func expiryText(t time.Time) string {
	if t.IsZero() {
		return "never (infinite)"
	}
	return t.UTC().Format("15:04, 2 January 2006") + " (UTC)"
}
