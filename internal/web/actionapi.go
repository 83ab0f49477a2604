package web

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/wikid/wikid/internal/actionapi"
	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/session"
	"github.com/wikid/wikid/internal/wiki"
)

// The Action API's modules live in internal/actionapi; this file mounts
// them and gives them the server's sessions, tokens, login throttle,
// rights and rate limits (actionapi.Host).

// Rate limits of the Action API, per user (or address when anonymous).
const (
	apiWritesPerMinute = 60 // edits, moves, deletions, protections
	parsesPerMinute    = 60 // action=parse of a text and web previews, in engine.ParseUnit (a page's parse is cached)
)

// specActionModules is the parse of an api.php request that is not
// opensearch: its parameters are read by actionapi (from the query and the
// body), and its answer is never stored, so its key is the bare path.
var specActionModules = &httpx.Spec{Name: "api:action"}

// actionModules serves every api.php module but opensearch.
func (s *Server) actionModules(w http.ResponseWriter, r *http.Request) {
	q, err := httpx.Parse(r, specActionModules, "/w/api.php", s.titles)
	if err != nil {
		httpx.SetRoute(r, specActionModules.Name)
		s.writeActionError(w, r, "badvalue", err.Error())
		return
	}
	// noEdge: an answer depends on the session, the time and the client's
	// address, none of which is in the key; actionapi answers no-store.
	s.serve(w, r, q, routeOpts{noRedirect: true, noEdge: true}, func(w http.ResponseWriter, r *http.Request) error {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodPost:
		default:
			return methodNotAllowed(w, "GET, HEAD, POST")
		}
		s.action.ServeHTTP(w, r)
		return nil
	})
}

// apiHost is the server as actionapi.Host.
type apiHost struct{ s *Server }

func (h apiHost) Viewer(r *http.Request) actionapi.Viewer {
	v := viewerOf(r)
	uid, name := h.s.editor(r)
	return actionapi.Viewer{UserID: uid, Name: name, Group: v.Group(), LoggedIn: v.LoggedIn, Bearer: v.Token, Registered: v.User.Created}
}

func (h apiHost) RequireRead(r *http.Request) error  { return h.s.requireRead(r) }
func (h apiHost) RequireEdit(r *http.Request) error  { return h.s.requireEdit(r) }
func (h apiHost) RequireAdmin(r *http.Request) error { return h.s.requireAdmin(r) }

func (h apiHost) RequireUpload(r *http.Request) error {
	v := viewerOf(r)
	if !v.Group().AtLeast(h.s.cfg.UploadGroup) {
		if !v.LoggedIn {
			return wiki.Errorf(wiki.KindUnauthorized, "log in to upload files")
		}
		return wiki.Errorf(wiki.KindForbidden, "your account may not upload files on this wiki (uploads are for %s and above); ask an administrator", h.s.cfg.UploadGroup)
	}
	return nil
}

func (h apiHost) Block(r *http.Request) (*wiki.Block, error) { return h.s.blockedOrNil(r) }
func (h apiHost) Editor(r *http.Request) engine.Editor       { return h.s.editorOf(r) }
func (h apiHost) CSRFToken(r *http.Request) string           { return h.s.csrfToken(r) }

// ValidToken checks tok as the forms' CSRF check does, Origin and
// Sec-Fetch-Site included: an anonymous token is not bound to a browser,
// so a login or anonymous edit posted by another site's page is refused
// by what the browser says of its origin. For such a token an opaque
// origin ("Origin: null": a sandboxed frame, a data: URL, a cross-site
// redirect) is another site too; this wiki's own pages send their origin
// (Referrer-Policy strict-origin-when-cross-origin). A session's token is
// bound to the session: there the token decides.
func (h apiHost) ValidToken(r *http.Request, tok string) bool {
	if v := viewerOf(r); !(v.LoggedIn && v.Session.ID != "") && r.Header.Get("Origin") == "null" {
		return false
	}
	return checkOrigin(r) == nil && h.s.validCSRF(r, tok)
}

func (h apiHost) Watch(r *http.Request, t wiki.Title, on bool) error {
	return h.s.setWatch(r, viewerOf(r), t, on, time.Time{})
}

func (h apiHost) AutoWatch(r *http.Request, t wiki.Title) { h.s.autoWatch(r, t) }

func (h apiHost) Allow(r *http.Request, kind string) (time.Duration, bool) {
	key := h.s.limitKey(r)
	switch kind {
	case "upload":
		return h.s.uploads.allow(key)
	case "parse":
		return h.s.parses.allow(key)
	}
	return h.s.apiWrites.allow(key)
}

// Login checks name and secret as the login form does, through the same
// throttle (by address and account, or by device cookie), and starts a
// session with the site's cookie. With apiToken, secret must be one of the
// user's API tokens; else it is the password (checked within the hashing
// slots).
func (h apiHost) Login(w http.ResponseWriter, r *http.Request, name, secret string, apiToken bool) (wiki.User, error) {
	s := h.s
	norm, err := auth.LookupUserName(name)
	account := norm
	if err != nil {
		account = sanitizeLine(name)
	}
	client := s.client(r)
	device := s.deviceCookie(r, account)
	var attempt session.Attempt
	var wait time.Duration
	if device.Valid() {
		attempt, wait = s.throttle.BeginDevice(device)
	} else {
		attempt, wait = s.throttle.Begin(client.Addr, account)
	}
	if wait > 0 {
		s.log.Warn("api login throttled", "user", account, "addr", client.String(), "wait", wait)
		return wiki.User{}, &wiki.Error{Kind: wiki.KindTooMany, RetryAfter: wait,
			Msg: "Too many failed logins from your address. Wait " + waitText(wait) + " and try again."}
	}
	var u wiki.User
	if err == nil {
		u, err = s.store.FindUserByName(r.Context(), norm)
	}
	if err != nil && !errors.Is(err, wiki.ErrNotFound) && wiki.KindOf(err) == wiki.KindInternal {
		s.throttle.Cancel(attempt)
		return wiki.User{}, err
	}
	ok := false
	var tok wiki.Token // the session names it and ends with it (startSessionWith)
	if apiToken {
		if err == nil {
			t, terr := s.store.FindToken(r.Context(), auth.HashToken(strings.TrimSpace(secret)))
			ok = terr == nil && t.UserID == u.ID && t.Valid(s.now())
			tok = t
		}
	} else {
		hash := u.PasswordHash
		if err != nil {
			hash = ""
		}
		var herr error
		ok, herr = s.checkPassword(r.Context(), hash, secret)
		if herr != nil {
			s.throttle.Cancel(attempt)
			return wiki.User{}, &wiki.Error{Kind: wiki.KindUnavailable, RetryAfter: busyRetry * time.Second, Msg: busyMessage}
		}
	}
	if !ok || err != nil {
		what := "password"
		if apiToken {
			what = "API token (action=login takes a token from `wikid token create` or Special:Preferences as lgpassword; use action=clientlogin for the account's password)"
		}
		return wiki.User{}, wiki.Errorf(wiki.KindUnauthorized, "The user name or %s is wrong. Check both and try again.", what)
	}
	s.throttle.Succeeded(attempt)
	if err := s.startSessionWith(w, r, u, tok); err != nil {
		return wiki.User{}, err
	}
	s.setDeviceCookie(w, r, u.Name)
	s.log.Info("login", "user", u.Name, "via", "api")
	return u, nil
}

// Logout ends the request's session, as the logout form does.
func (h apiHost) Logout(w http.ResponseWriter, r *http.Request) error {
	s := h.s
	if c := sessionCookie(r); c != "" {
		s.sessions.delete(auth.HashToken(c))
		if err := s.store.DeleteSession(r.Context(), auth.HashToken(c)); err != nil {
			return err
		}
		if v := viewerOf(r); v.LoggedIn && auth.Equal(v.Session.ID, auth.HashToken(c)) {
			s.sessionEnded(r.Context(), auth.HashToken(c))
		}
	}
	s.clearSessionCookie(w, r)
	return nil
}

var _ actionapi.Host = apiHost{}

// newActionAPI builds the Action API over s. An api.php request has the
// ordinary body limit (its form is read whole, not streamed as the upload
// paths are), so its uploads are capped below it, and siteinfo tells
// clients that cap.
func newActionAPI(s *Server) *actionapi.API {
	maxUpload := min(s.cfg.MaxUploadBytes, s.cfg.BodyLimit()-64<<10)
	return actionapi.New(apiHost{s}, s.eng, actionapi.Site{Name: s.cfg.SiteName, MainPage: s.mainPage, AllowRegistration: s.cfg.AllowRegistration,
		ReadGroup: s.cfg.ReadGroup, EditGroup: s.cfg.EditGroup, MaxUploadBytes: maxUpload, Rules: s.titles}, s.now)
}
