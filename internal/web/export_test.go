package web

import (
	"time"

	"github.com/wikid/wikid/internal/session"
)

// SetLoginClock gives s a fresh login throttle that reads the time from now,
// for the HTTP tests that need time to pass. Call it before the first login.
func SetLoginClock(s *Server, now func() time.Time) {
	s.throttle = session.NewThrottle(session.DefaultPolicy(), now)
}
