package web

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/wikid/wikid/internal/session"
	"github.com/wikid/wikid/internal/wiki"
)

// SetLoginClock gives s a fresh login throttle and account-creation
// throttle that read the time from now, for the HTTP tests that need time
// to pass. Call it before the first login.
func SetLoginClock(s *Server, now func() time.Time) {
	s.throttle = session.NewThrottle(session.DefaultPolicy(), now)
	s.signups = session.NewThrottle(session.RegistrationPolicy(), now)
}

// SetHashGate replaces s's password-hashing gate with g. Call it before
// the first login.
func SetHashGate(s *Server, g *session.Gate) { s.hashing = g }

// CountFileLookups makes s count in n the FindFileVersion calls of its
// handlers (the lookup of the file a media URL names). Call it before the
// first request.
func CountFileLookups(s *Server, n *atomic.Int64) { s.store = fileLookups{s.store, n} }

type fileLookups struct {
	wiki.Store
	n *atomic.Int64
}

func (f fileLookups) FindFileVersion(ctx context.Context, t wiki.Title, sha string) (wiki.FileVersion, bool, error) {
	f.n.Add(1)
	return f.Store.FindFileVersion(ctx, t, sha)
}
