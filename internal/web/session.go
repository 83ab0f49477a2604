package web

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/session"
	"github.com/wikid/wikid/internal/timing"
	"github.com/wikid/wikid/internal/wiki"
)

// SessionCookie holds the session token. It and DeviceCookie are the only
// cookies Wikid sets, and only in the answer to a login (or an account
// creation): no page a cache may keep ever sets a cookie.
const SessionCookie = "wikid_session"

// DeviceCookie says that this browser logged in to an account before
// (session.Devices): login attempts carrying it are throttled apart from
// the client's address. It outlives logouts; only login forms read it.
const DeviceCookie = "wikid_device"

// deviceCookieAge is how long a device cookie lasts: a year.
const deviceCookieAge = 365 * 24 * time.Hour

// Viewer is who is making the request.
type Viewer struct {
	User     wiki.User
	Session  wiki.Session // zero for anonymous and bearer-token requests
	LoggedIn bool
	Token    bool // authenticated by an API bearer token
	// State is the user's watchlist and notification count as read with
	// the account (nil for anonymous and bearer-token requests).
	State *userState
}

// Watching reports whether the viewer watches t at now.
func (v Viewer) Watching(t wiki.Title, now time.Time) bool { return v.State.Has(t, now) }

// Unread is the viewer's count of unread notifications (up to
// wiki.MaxUnread).
func (v Viewer) Unread() int {
	if v.State == nil {
		return 0
	}
	return v.State.unread
}

func (v Viewer) Name() string    { return v.User.Name }
func (v Viewer) IsAdmin() bool   { return v.LoggedIn && v.User.Group == wiki.GroupAdmin }
func (v Viewer) PageURL() string { return wiki.Title("User:" + v.User.Name).URL() }
func (v Viewer) Group() wiki.Group {
	if !v.LoggedIn {
		return wiki.GroupAnonymous
	}
	return v.User.Group
}

const viewerKey ctxKey = 2

func viewerOf(r *http.Request) Viewer {
	v, _ := r.Context().Value(viewerKey).(Viewer)
	return v
}

// withViewer resolves the session cookie (or bearer token) once per request.
// Only the wikid_session cookie is looked at: other cookies never matter.
// An unknown or expired session is treated as anonymous; the stale cookie
// is cleared only on pages that are never cached (forms and POSTs).
func (s *Server) withViewer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), reqIDKey, s.reqID.Add(1))
		ctx, _ = timing.With(ctx, time.Now())
		s.warnUnconfiguredProxy(r)
		var v Viewer
		if authz := r.Header.Get("Authorization"); authz != "" {
			vv, err := s.bearer(ctx, authz)
			if err != nil {
				s.writeAPIError(w, r, err)
				return
			}
			v = vv
		} else if c := sessionCookie(r); c != "" {
			// A change (anything but GET and HEAD) never trusts the cache:
			// a block, a demotion or a signed-out session made by another
			// process applies to it at once.
			fresh := r.Method != http.MethodGet && r.Method != http.MethodHead
			v, _ = s.sessionViewer(ctx, auth.HashToken(c), fresh)
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, viewerKey, v)))
	})
}

// sessionViewer returns the viewer of session id: from memory when it was
// seen lately (unless fresh), else from the store (then remembered).
func (s *Server) sessionViewer(ctx context.Context, id string, fresh bool) (Viewer, bool) {
	if !fresh {
		if v, ok := s.sessions.get(id); ok {
			return v, true
		}
	}
	// A sign-out or password change that deletes the session after it is
	// read bumps an epoch; if any bump came meanwhile the answer is used
	// for this request only, never cached.
	bumps := s.sessions.bumps.Load()
	sess, err := s.store.FindSession(ctx, id)
	if err != nil {
		if !errors.Is(err, wiki.ErrNotFound) {
			s.log.Error("session lookup", "err", err)
		}
		return Viewer{}, false
	}
	epoch := s.sessions.epoch(sess.UserID)
	u, err := s.store.FindUser(ctx, sess.UserID)
	if err != nil {
		return Viewer{}, false
	}
	v := Viewer{User: u, Session: sess, LoggedIn: true}
	ws, err := s.userStateOf(ctx, u.ID, epoch)
	if err != nil {
		// The page is served without the watch state; the next request
		// reads it again.
		s.log.Error("watchlist lookup", "err", err)
		return v, true
	}
	v.State = ws
	if s.sessions.bumps.Load() == bumps {
		s.sessions.put(v, epoch)
	}
	return v, true
}

// sessionCookie returns the session token; with two wikid_session cookies
// (a forged one beside a real one) it returns none, so neither is trusted.
func sessionCookie(r *http.Request) string {
	var val string
	n := 0
	for _, c := range r.CookiesNamed(SessionCookie) {
		val = c.Value
		n++
	}
	if n != 1 || len(val) < 20 || len(val) > 100 {
		return ""
	}
	return val
}

func (s *Server) bearer(ctx context.Context, authz string) (Viewer, error) {
	tok, ok := strings.CutPrefix(authz, "Bearer ")
	if !ok || tok == "" {
		return Viewer{}, wiki.Errorf(wiki.KindUnauthorized, "the Authorization header must be \"Bearer TOKEN\" with a token from `wikid token create NAME`")
	}
	t, err := s.store.FindToken(ctx, auth.HashToken(strings.TrimSpace(tok)))
	if err != nil {
		if errors.Is(err, wiki.ErrNotFound) {
			return Viewer{}, wiki.Errorf(wiki.KindUnauthorized, "the API token is not valid; create one with `wikid token create NAME`")
		}
		return Viewer{}, err
	}
	now := s.now()
	if !t.Valid(now) {
		return Viewer{}, wiki.Errorf(wiki.KindUnauthorized, "the API token %q expired at %s; create a new one on Special:Preferences",
			t.Name, t.Expires.UTC().Format(time.RFC3339))
	}
	u, err := s.store.FindUser(ctx, t.UserID)
	if err != nil {
		return Viewer{}, wiki.Errorf(wiki.KindUnauthorized, "the API token's user no longer exists")
	}
	// The last use is written at most once a minute per token, not once
	// per request: the row is read anyway, so the check costs nothing.
	if now.Sub(t.LastUsed) >= tokenTouchEvery {
		if err := s.store.TouchToken(ctx, t.ID, now); err != nil {
			s.log.Warn("record token use", "user", u.Name, "token", t.Name, "err", err)
		}
	}
	return Viewer{User: u, LoggedIn: true, Token: true}, nil
}

// tokenTouchEvery is how stale a token's recorded last use may get.
const tokenTouchEvery = time.Minute

// startSession creates a fresh session (a new ID at every login: no
// fixation) and sets its cookie.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, u wiki.User) error {
	return s.startSessionWith(w, r, u, wiki.Token{})
}

// startSessionWith is startSession for a login with the API token tok (its
// ID empty for a password login): the session names the token, so that
// revoking it ends the session, and ends when the token expires if that
// comes before the session lifetime.
func (s *Server) startSessionWith(w http.ResponseWriter, r *http.Request, u wiki.User, tok wiki.Token) error {
	if old := sessionCookie(r); old != "" {
		_ = s.store.DeleteSession(r.Context(), auth.HashToken(old))
		s.sessionEnded(r.Context(), auth.HashToken(old))
	}
	token := auth.NewSecret(32)
	now := s.now()
	expires := now.Add(time.Duration(s.cfg.SessionTTL))
	if !tok.Expires.IsZero() && tok.Expires.Before(expires) {
		expires = tok.Expires
	}
	sess := wiki.Session{ID: auth.HashToken(token), UserID: u.ID, CSRF: auth.NewSecret(24), Created: now, Expires: expires, TokenID: tok.ID}
	if err := s.store.CreateSession(r.Context(), sess); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secureCookie(r), Expires: expires, MaxAge: max(int(expires.Sub(now)/time.Second), 1)})
	return nil
}

// setDeviceCookie gives the browser a new device cookie for account, after
// a successful login. Logging out leaves it in place.
func (s *Server) setDeviceCookie(w http.ResponseWriter, r *http.Request, account string) {
	http.SetCookie(w, &http.Cookie{Name: DeviceCookie, Value: s.devices.Issue(account), Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secureCookie(r), Expires: s.now().Add(deviceCookieAge),
		MaxAge: int(deviceCookieAge.Seconds())})
}

// deviceCookie returns the device r carries for account: the first of its
// device cookies (a browser may hold a few, by path or domain) that this
// server issued for account, or the zero Device.
func (s *Server) deviceCookie(r *http.Request, account string) session.Device {
	for i, c := range r.CookiesNamed(DeviceCookie) {
		if i == 4 {
			break
		}
		if d := s.devices.Check(c.Value, account); d.Valid() {
			return d
		}
	}
	return session.Device{}
}

func (s *Server) clearSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secureCookie(r), MaxAge: -1})
}

func (s *Server) secureCookie(r *http.Request) bool {
	switch s.cfg.SecureCookies {
	case "always":
		return true
	case "never":
		return false
	}
	return s.client(r).Scheme == "https"
}

// csrfToken returns the token a form must carry. Logged-in users get their
// session's secret; anonymous forms (login, account creation, anonymous
// edits) get a signed timestamp, so that viewing a form sets no cookie.
func (s *Server) csrfToken(r *http.Request) string {
	v := viewerOf(r)
	if v.LoggedIn && v.Session.ID != "" {
		return v.Session.CSRF
	}
	ts := strconv.FormatInt(s.now().Unix(), 36)
	return ts + "." + s.sign("anon|"+ts)
}

func (s *Server) sign(msg string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

const anonCSRFMaxAge = 24 * time.Hour

// checkCSRF verifies a state-changing request: the form token (or the
// X-CSRF-Token header) and, when the browser sends one, the Origin.
// Bearer-token requests carry no ambient credentials and need no token.
func (s *Server) checkCSRF(r *http.Request) error {
	v := viewerOf(r)
	if v.Token {
		return nil
	}
	if err := checkOrigin(r); err != nil {
		return err
	}
	tok := r.Header.Get("X-CSRF-Token")
	if tok == "" {
		tok = r.PostFormValue("csrf")
	}
	if !s.validCSRF(r, tok) {
		return wiki.Errorf(wiki.KindForbidden, "the form's security token is missing or wrong (it may have expired, or you logged in or out in another tab); reload the page and submit again")
	}
	return nil
}

// checkOrigin refuses a request a browser says another site started.
func checkOrigin(r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return wiki.Errorf(wiki.KindForbidden, "the request came from another site (%s); submit the form from this wiki", sanitizeLine(o))
		}
	}
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return wiki.Errorf(wiki.KindForbidden, "the request came from another site; submit the form from this wiki")
	}
	return nil
}

// validCSRF reports whether tok is the token csrfToken gives r's viewer:
// the session's secret when logged in by session, else a signed anonymous
// token less than anonCSRFMaxAge old.
func (s *Server) validCSRF(r *http.Request, tok string) bool {
	if tok == "" {
		return false
	}
	v := viewerOf(r)
	if v.LoggedIn && v.Session.ID != "" {
		return auth.Equal(tok, v.Session.CSRF)
	}
	ts, sig, ok := strings.Cut(tok, ".")
	if !ok || !auth.Equal(sig, s.sign("anon|"+ts)) {
		return false
	}
	sec, err := strconv.ParseInt(ts, 36, 64)
	return err == nil && s.now().Sub(time.Unix(sec, 0)) <= anonCSRFMaxAge
}

// canRead and canEdit apply the configured groups.
func (s *Server) canRead(v Viewer) bool { return v.Group().AtLeast(s.cfg.ReadGroup) }
func (s *Server) canEdit(v Viewer) bool { return v.Group().AtLeast(s.cfg.EditGroup) }

func (s *Server) requireRead(r *http.Request) error {
	v := viewerOf(r)
	if s.canRead(v) {
		return nil
	}
	if !v.LoggedIn {
		return wiki.Errorf(wiki.KindUnauthorized, "this wiki is readable by logged-in users only; log in to read it")
	}
	return wiki.Errorf(wiki.KindForbidden, "your account may not read this wiki; ask an administrator for access")
}

func (s *Server) requireEdit(r *http.Request) error {
	v := viewerOf(r)
	if s.canEdit(v) {
		return nil
	}
	if !v.LoggedIn {
		return wiki.Errorf(wiki.KindUnauthorized, "you need to log in to edit pages on this wiki")
	}
	return wiki.Errorf(wiki.KindForbidden, "your account may not edit pages on this wiki; ask an administrator")
}

// requireAdmin lets administrators through. The group is read from the
// store, not from the session cache: a demotion made anywhere (the command
// line, another node) applies on the very next request. Administrators'
// pages are few and rare, so the query costs nothing that matters.
func (s *Server) requireAdmin(r *http.Request) error {
	v := viewerOf(r)
	if v.LoggedIn {
		u, err := s.store.FindUser(r.Context(), v.User.ID)
		if err != nil && !errors.Is(err, wiki.ErrNotFound) {
			return err
		}
		if err == nil && u.Group == wiki.GroupAdmin {
			return nil
		}
		if v.IsAdmin() {
			s.sessions.bumpUser(v.User.ID) // demoted elsewhere: drop the stale entries
		}
	}
	if !v.LoggedIn {
		return wiki.Errorf(wiki.KindUnauthorized, "this action is for administrators; log in with an administrator account")
	}
	return wiki.Errorf(wiki.KindForbidden, "this action is for administrators only")
}

// editor names the viewer in a change: a user, or the client's address.
func (s *Server) editor(r *http.Request) (int64, string) {
	v := viewerOf(r)
	if v.LoggedIn {
		return v.User.ID, v.User.Name
	}
	if c := s.client(r); c.Addr.IsValid() {
		return 0, c.String()
	}
	return 0, sanitizeLine(r.RemoteAddr) // not an IP endpoint (a Unix socket): what the server knows
}

// editorOf is the viewer as the engine sees a change's author: named as
// editor names them, with the group that protections are checked against.
func (s *Server) editorOf(r *http.Request) engine.Editor {
	uid, name := s.editor(r)
	v := viewerOf(r)
	ed := engine.Editor{UserID: uid, UserName: name, Group: v.Group()}
	if v.LoggedIn {
		ed.Signature = v.User.Prefs.Signature
	}
	return ed
}

// client is who sent r: its TCP peer, or the client a trusted proxy names
// (httpx.Proxies). Nothing else in this package reads forwarding headers.
func (s *Server) client(r *http.Request) httpx.Client { return s.proxies.Client(r) }

// warnUnconfiguredProxy logs once that forwarding headers arrive from a
// loopback peer while no proxy is trusted: the usual sign of Varnish or
// nginx on this host that trusted_proxies does not name. Until it does,
// every client behind that proxy shares the proxy's address (one login
// throttle for all of them, one name for their anonymous edits).
func (s *Server) warnUnconfiguredProxy(r *http.Request) {
	if s.proxies.Any() || s.proxyWarned.Load() {
		return
	}
	if r.Header.Get("X-Forwarded-For") == "" && r.Header.Get("Forwarded") == "" {
		return
	}
	if !s.client(r).Addr.IsLoopback() || !s.proxyWarned.CompareAndSwap(false, true) {
		return
	}
	s.log.Warn("requests from this host carry X-Forwarded-For or Forwarded, but trusted_proxies is empty, so they are ignored "+
		"and every client behind the proxy shares its address; if a proxy on this host forwards to wikid, "+
		"set trusted_proxies to its address (e.g. [\"127.0.0.1\", \"::1\"])", "peer", r.RemoteAddr)
}

// AdminOnly lets through logged-in administrators (by session or API
// token) and answers everyone else 403. The client's address never counts:
// behind a proxy on the same host every client would look local. Every
// answer is no-store, so no cache keeps an operator endpoint's response.
//
// The session cookie is SameSite=Lax, so a browser sends it with a
// top-level navigation from another site: a link elsewhere could start a
// CPU profile or a trace in an administrator's name. A request the browser
// marks as started by another site (Sec-Fetch-Site cross-site, or
// same-site: a sibling subdomain) is refused when the session cookie is
// what authenticates it; a bearer token is never sent by a browser on its
// own.
func (s *Server) AdminOnly(next http.Handler) http.Handler {
	return s.withViewer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpx.SetRoute(r, "ops")
		v := viewerOf(r)
		if v.IsAdmin() && !v.Token {
			switch site := r.Header.Get("Sec-Fetch-Site"); site {
			case "cross-site", "same-site":
				s.writeError(w, r, wiki.Errorf(wiki.KindForbidden, "this endpoint does not answer requests started by another site "+
					"(Sec-Fetch-Site: %s); open its address directly in the browser, send an administrator's API token "+
					"(Authorization: Bearer TOKEN), or use the ops_addr listener", site))
				return
			}
		}
		// The group is read from the store, not the session cache: a
		// demotion applies on the next request, wherever it was made.
		if v.IsAdmin() && s.requireAdmin(r) == nil {
			w.Header().Set("Cache-Control", "no-store")
			next.ServeHTTP(w, r)
			return
		}
		s.writeError(w, r, wiki.Errorf(wiki.KindForbidden, "this endpoint is for administrators; log in as one, send an administrator's API token "+
			"(Authorization: Bearer TOKEN), or use the ops_addr listener"))
	}))
}
