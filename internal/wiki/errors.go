package wiki

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies an error so that the web layer can choose a status
// and the store layer can report conditions without HTTP knowledge.
type Kind int

const (
	KindInternal     Kind = iota // a bug or an outage: 500, message not shown
	KindInvalid                  // bad input: 400
	KindUnauthorized             // not logged in, bad token: 401
	KindForbidden                // logged in but not allowed: 403
	KindNotFound                 // 404
	KindConflict                 // edit conflict or name taken: 409
	KindTooLarge                 // body over the limit: 413
	KindTooMany                  // throttled: 429
	KindUnavailable              // the server is at capacity for this work: 503
	KindUnsupported              // an upload of a type the wiki does not take: 415
)

// Error carries a message safe to show to the user and, optionally, the
// internal error behind it (logged, never shown).
type Error struct {
	Kind Kind
	Msg  string // safe for users: says what was wrong and what to do
	Err  error  // internal cause; may be nil
	// RetryAfter, when set, is how long the client should wait before
	// trying again (the Retry-After header of a 429 or 503).
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error of the given kind with a formatted user message.
func Errorf(kind Kind, format string, args ...any) error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// Sentinel errors that stores return (wrapped or bare).
var (
	ErrNotFound = &Error{Kind: KindNotFound, Msg: "not found"}
	ErrConflict = &Error{Kind: KindConflict, Msg: "the page was changed by someone else in the meantime"}
	ErrExists   = &Error{Kind: KindConflict, Msg: "that name is already taken"}
	// ErrProtected: the title's protection (checked in the change's own
	// transaction) does not let the editor's group through.
	ErrProtected = &Error{Kind: KindForbidden, Msg: "the title is protected"}
	// ErrWatchlistFull: the watchlist would hold more than MaxWatchlist
	// titles.
	ErrWatchlistFull = &Error{Kind: KindInvalid, Msg: fmt.Sprintf("a watchlist holds at most %d titles; remove some on Special:EditWatchlist first", MaxWatchlist)}
)

// KindOf returns the kind of the first *Error in err's chain, or KindInternal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// Message returns the user-safe message of err, or a generic one for internal errors.
func Message(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Kind != KindInternal {
		return e.Msg
	}
	return "Something went wrong on the server. The error was logged; try again in a moment."
}
