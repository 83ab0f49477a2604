package web

import (
	"time"

	"github.com/wikid/wikid/internal/session"
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
