package web

import (
	"context"
	"net/http"
	"strconv"
	"sync"

	"github.com/wikid/wikid/internal/auth"
)

// Password hashing on a request path. Every argon2id hash a request causes
// (login, account creation) runs through s.hashing, which bounds how many
// run at once: each takes 19 MiB and tens of milliseconds of a core, and
// without a bound a burst of logins takes as much memory as it has
// requests. A request that gets no slot in time is answered 503 (busyRetry).
// hashPassword, checkPassword and dummyHash, which runs inside
// checkPassword's slot, are the only callers of auth.HashPassword and
// auth.CheckPassword in this package (TestPasswordHashingOnlyThroughTheGate).

// busyRetry is the Retry-After of a request refused for want of a slot.
const busyRetry = 5

// busyMessage is what such a request is told.
const busyMessage = "The server is busy checking other logins. Try again in a few seconds."

// hashPassword hashes a new password holding a slot; session.ErrBusy when
// none came free in time.
func (s *Server) hashPassword(ctx context.Context, password string) (string, error) {
	var hash string
	var err error
	if gerr := s.hashing.Do(ctx, func() { hash, err = auth.HashPassword(password) }); gerr != nil {
		return "", gerr
	}
	return hash, err
}

// checkPassword checks password against hash holding a slot, or against a
// dummy hash when hash is "" (no such account: the answer takes as long as
// a wrong password, so timing tells no account names); session.ErrBusy
// when no slot came free in time.
func (s *Server) checkPassword(ctx context.Context, hash, password string) (bool, error) {
	var ok bool
	err := s.hashing.Do(ctx, func() {
		if hash == "" {
			auth.CheckPassword(dummyHash(), password)
			return
		}
		ok = auth.CheckPassword(hash, password)
	})
	return ok, err
}

// setBusy prepares w for a 503 that says the hashing slots are taken.
func setBusy(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(busyRetry))
}

// dummyHash is checked when the account does not exist. It is made on
// first use, inside the caller's slot.
var dummyHash = sync.OnceValue(func() string {
	h, err := auth.HashPassword(auth.NewSecret(16))
	if err != nil {
		return ""
	}
	return h
})
