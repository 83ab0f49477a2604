package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/session"
	"github.com/wikid/wikid/internal/wiki"
)

// Special:Preferences: a logged-in user's password, sessions, API tokens,
// time zone, date format and editing defaults. Every answer is no-store
// (writePage): it shows one user's sessions and tokens. Each form posts a
// "do" field naming what it changes; special() has checked its CSRF token.

type sessionRow struct {
	wiki.Session
	Current bool
}

type prefsData struct {
	User     wiki.User
	Sessions []sessionRow
	Tokens   []wiki.Token
	NewToken string // the secret of a token just created: shown once
	// FeedURL is the watchlist feed's address with a token just made
	// (shown once); HasFeedToken says a token exists.
	FeedURL      string
	HasFeedToken bool
	DateFormats  []string
	Zone         string
	Info, Error  string
	Now          time.Time
	// Signature is the signature field's text: the one refused, shown
	// again to be fixed, else the saved one.
	Signature string
}

// maxTokens bounds a user's API tokens.
const maxTokens = 50

func (s *Server) preferencesPage(w http.ResponseWriter, r *http.Request, _ string) error {
	v := viewerOf(r)
	if !v.LoggedIn || v.Token {
		if !v.LoggedIn && r.Method != http.MethodPost {
			redirect(w, r, "/wiki/Special:UserLogin?returnto=Special%3APreferences", http.StatusFound)
			return nil
		}
		return wiki.Errorf(wiki.KindUnauthorized, "log in to change your preferences")
	}
	d := prefsData{}
	status := http.StatusOK
	if r.Method == http.MethodPost {
		var err error
		var secret string
		d.Info, secret, err = s.changePrefs(w, r)
		if r.PostFormValue("do") == "wltoken" {
			d.FeedURL = secret
		} else {
			d.NewToken = secret
		}
		if err != nil {
			if wiki.KindOf(err) == wiki.KindInternal {
				return err
			}
			d.Error, status = wiki.Message(err), statusOf(err)
			if r.PostFormValue("do") == "signature" {
				d.Signature = r.PostFormValue("signature")
			}
		}
	}
	ctx := r.Context()
	u, err := s.store.FindUser(ctx, v.User.ID)
	if err != nil {
		return err
	}
	ss, err := s.store.ListSessions(ctx, u.ID, s.now())
	if err != nil {
		return err
	}
	for _, x := range ss {
		d.Sessions = append(d.Sessions, sessionRow{Session: x, Current: x.ID == v.Session.ID})
	}
	if d.Tokens, err = s.store.ListTokens(ctx, u.ID); err != nil {
		return err
	}
	if h, err := s.store.WatchlistToken(ctx, u.ID); err != nil {
		return err
	} else {
		d.HasFeedToken = h != ""
	}
	d.User, d.Now = u, s.now()
	if d.Error == "" || r.PostFormValue("do") != "signature" {
		d.Signature = u.Prefs.Signature
	}
	for _, f := range wiki.DateFormats {
		d.DateFormats = append(d.DateFormats, f.Name)
	}
	p := s.formPage(r, "Preferences")
	p.Data = d
	s.writePage(w, r, status, "preferences", p)
	return nil
}

// changePrefs does what the posted form asks and says what it did.
func (s *Server) changePrefs(w http.ResponseWriter, r *http.Request) (info, secret string, err error) {
	v := viewerOf(r)
	ctx := r.Context()
	switch r.PostFormValue("do") {
	case "password":
		return s.changePassword(w, r)
	case "wltoken":
		// A new token replaces the old one (whose links stop working);
		// "revoke" leaves none.
		if r.PostFormValue("revoke") != "" {
			if err := s.store.SetWatchlistToken(ctx, v.User.ID, ""); err != nil {
				return "", "", err
			}
			return "The watchlist feed token was revoked: feed readers using it get nothing now.", "", nil
		}
		token := auth.NewSecret(24)
		if err := s.store.SetWatchlistToken(ctx, v.User.ID, auth.HashToken(token)); err != nil {
			return "", "", err
		}
		base, _ := s.feedBase(r)
		feedURL := base + httpx.URL("/wiki/Special:Watchlist", httpx.Params{{Name: "feed", Value: "atom"}, {Name: "wlowner", Value: v.User.Name}, {Name: "wltoken", Value: token}})
		return "A new watchlist feed link was made; any earlier one stops working.", feedURL, nil
	case "signout":
		n, err := s.store.DeleteUserSessions(ctx, v.User.ID, v.Session.ID)
		if err != nil {
			return "", "", err
		}
		s.accountChanged(ctx, v.User.ID)
		s.log.Info("signed out other sessions", "user", v.User.Name, "sessions", n)
		return plural(n, "other session was", "other sessions were") + " signed out.", "", nil
	case "signature":
		sig, err := formValue(r, "signature")
		if err != nil {
			return "", "", err
		}
		sig = strings.TrimSpace(sig)
		if sig != "" {
			if err := s.eng.CheckSignature(sig, v.User.Name); err != nil {
				return "", "", err
			}
		}
		u, err := s.store.FindUser(ctx, v.User.ID)
		if err != nil {
			return "", "", err
		}
		p := u.Prefs
		p.Signature = sig
		if err := s.store.UpdatePrefs(ctx, v.User.ID, p); err != nil {
			return "", "", err
		}
		s.accountChanged(ctx, v.User.ID)
		if sig == "" {
			return "Your signature is the default one again.", "", nil
		}
		return "Your signature was saved.", "", nil
	case "prefs":
		u, err := s.store.FindUser(ctx, v.User.ID)
		if err != nil {
			return "", "", err
		}
		p := wiki.Prefs{TimeZone: strings.TrimSpace(r.PostFormValue("timezone")), DateFormat: r.PostFormValue("dateformat"),
			MinorDefault: r.PostFormValue("minordefault") != "", NoAutoWatch: r.PostFormValue("autowatch") == "", Signature: u.Prefs.Signature}
		if p.TimeZone == "UTC" {
			p.TimeZone = ""
		}
		if _, err := loadZone(p.TimeZone); err != nil {
			return "", "", wiki.Errorf(wiki.KindInvalid, "the time zone %.60q is unknown; write a name such as Europe/Paris, America/New_York or UTC", p.TimeZone)
		}
		if !validDateFormat(p.DateFormat) {
			return "", "", wiki.Errorf(wiki.KindInvalid, "choose one of the listed date formats")
		}
		if err := s.store.UpdatePrefs(ctx, v.User.ID, p); err != nil {
			return "", "", err
		}
		s.accountChanged(ctx, v.User.ID)
		return "Your preferences were saved.", "", nil
	case "token-create":
		name, err := formValue(r, "name")
		if err != nil {
			return "", "", err
		}
		name = strings.TrimSpace(name)
		if name == "" || len(name) > 100 || strings.IndexFunc(name, func(c rune) bool { return c < 0x20 || c == 0x7f }) >= 0 {
			return "", "", wiki.Errorf(wiki.KindInvalid, "give the token a name of 1 to 100 characters, such as the bot or script that will use it")
		}
		var expires time.Time
		if e := strings.TrimSpace(r.PostFormValue("expiry")); e != "" && e != "never" {
			d, err := wiki.ParseDuration(e)
			if err != nil {
				return "", "", err
			}
			expires = s.now().Add(d)
		}
		ts, err := s.store.ListTokens(ctx, v.User.ID)
		if err != nil {
			return "", "", err
		}
		if len(ts) >= maxTokens {
			return "", "", wiki.Errorf(wiki.KindInvalid, "you have %d tokens, the most allowed; revoke some first", len(ts))
		}
		secret := "wkd_" + auth.NewSecret(32)
		if err := s.store.CreateToken(ctx, wiki.Token{ID: auth.HashToken(secret), UserID: v.User.ID, Name: name, Created: s.now(), Expires: expires}); err != nil {
			return "", "", err
		}
		s.log.Info("token created", "user", v.User.Name, "token", name) // never the secret
		return "The token " + name + " was created. Copy it now: it is shown only this once.", secret, nil
	case "token-revoke":
		id := r.PostFormValue("id")
		ts, err := s.store.ListTokens(ctx, v.User.ID)
		if err != nil {
			return "", "", err
		}
		for _, t := range ts {
			if t.ID == id { // only the viewer's own tokens
				if err := s.store.DeleteToken(ctx, id); err != nil && !errors.Is(err, wiki.ErrNotFound) {
					return "", "", err
				}
				// The sessions an api.php login started with it went
				// with it: every process forgets them.
				s.accountChanged(ctx, v.User.ID)
				s.log.Info("token revoked", "user", v.User.Name, "token", t.Name)
				return "The token " + t.Name + " was revoked.", "", nil
			}
		}
		return "", "", wiki.Errorf(wiki.KindNotFound, "you have no such token; it may have been revoked already")
	}
	return "", "", wiki.Errorf(wiki.KindInvalid, "the form did not say what to change; reload the page and use one of its buttons")
}

func validDateFormat(name string) bool {
	if name == "" {
		return true
	}
	for _, f := range wiki.DateFormats {
		if f.Name == name {
			return true
		}
	}
	return false
}

// changePassword checks the current password (throttled like a login),
// stores the new one and signs out every other session of the user; the
// current one stays.
func (s *Server) changePassword(w http.ResponseWriter, r *http.Request) (string, string, error) {
	v := viewerOf(r)
	ctx := r.Context()
	if err := auth.ValidatePassword(r.PostFormValue("newpassword"), r.PostFormValue("retype")); err != nil {
		return "", "", err
	}
	client := s.client(r)
	attempt, wait := s.throttle.Begin(client.Addr, v.User.Name)
	if wait > 0 {
		return "", "", &wiki.Error{Kind: wiki.KindTooMany, RetryAfter: wait,
			Msg: "too many wrong passwords from your address; wait " + waitText(wait) + " and try again"}
	}
	u, err := s.store.FindUser(ctx, v.User.ID)
	if err != nil {
		s.throttle.Cancel(attempt)
		return "", "", err
	}
	ok, err := s.checkPassword(ctx, u.PasswordHash, r.PostFormValue("password"))
	if err != nil {
		s.throttle.Cancel(attempt)
		return "", "", &wiki.Error{Kind: wiki.KindUnavailable, Msg: busyMessage, Err: err, RetryAfter: time.Second}
	}
	if !ok {
		return "", "", wiki.Errorf(wiki.KindInvalid, "the current password is wrong; type the password you log in with now")
	}
	s.throttle.Succeeded(attempt)
	hash, err := s.hashPassword(ctx, r.PostFormValue("newpassword"))
	if errors.Is(err, session.ErrBusy) {
		return "", "", &wiki.Error{Kind: wiki.KindUnavailable, Msg: busyMessage, Err: err, RetryAfter: time.Second}
	}
	if err != nil {
		return "", "", err
	}
	if err := s.store.SetPassword(ctx, u.ID, hash, v.Session.ID); err != nil {
		return "", "", err
	}
	s.accountChanged(ctx, u.ID)
	s.log.Info("password changed", "user", u.Name)
	return "Your password was changed. Every other session of your account was signed out.", "", nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// zones caches loaded time zones: loading one reads the zone database, which
// must not happen on every request.
var zones sync.Map // name → *time.Location

// loadZone returns the location of an IANA zone name ("" is UTC).
func loadZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), nil
	}
	if len(name) > 64 {
		return nil, errors.New("zone name too long")
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	zones.Store(name, l)
	return l, nil
}

type resetData struct {
	Token   string
	User    string
	Error   string
	Expired bool
}

// passwordResetPage is where a reset link made by `wikid user
// reset-password` leads: a form for a new password. The link's secret is
// checked on GET (to say early that it is spent) and consumed by the POST,
// in the transaction that sets the password, so it works once.
func (s *Server) passwordResetPage(w http.ResponseWriter, r *http.Request, _ string) error {
	rq := httpx.From(r)
	token := rq.Get("token")
	if r.Method == http.MethodPost {
		token = r.PostFormValue("token")
	}
	d := resetData{Token: token}
	status := http.StatusOK
	bad := "This password reset link is not valid: it was used already, it expired, or it was copied incompletely. Ask an administrator for a new one."
	if token == "" {
		d.Error, d.Expired, status = bad, true, http.StatusNotFound
	} else if r.Method == http.MethodPost {
		if err := auth.ValidatePassword(r.PostFormValue("password"), r.PostFormValue("retype")); err != nil {
			d.Error, status = wiki.Message(err), http.StatusBadRequest
		} else if _, err := s.store.FindPasswordReset(r.Context(), auth.HashToken(token), s.now()); err != nil {
			if !errors.Is(err, wiki.ErrNotFound) {
				return err
			}
			d.Error, d.Expired, status = bad, true, http.StatusNotFound
		} else {
			hash, err := s.hashPassword(r.Context(), r.PostFormValue("password"))
			if err != nil {
				return err
			}
			u, err := s.store.ResetPassword(r.Context(), auth.HashToken(token), hash, s.now())
			if errors.Is(err, wiki.ErrNotFound) {
				d.Error, d.Expired, status = bad, true, http.StatusNotFound
			} else if err != nil {
				return err
			} else {
				s.accountChanged(r.Context(), u.ID)
				s.log.Info("password reset", "user", u.Name)
				redirect(w, r, "/wiki/Special:UserLogin", http.StatusSeeOther)
				return nil
			}
		}
	} else if pr, err := s.store.FindPasswordReset(r.Context(), auth.HashToken(token), s.now()); err != nil {
		if !errors.Is(err, wiki.ErrNotFound) {
			return err
		}
		d.Error, d.Expired, status = bad, true, http.StatusNotFound
	} else if u, err := s.store.FindUser(r.Context(), pr.UserID); err == nil {
		d.User = u.Name
	}
	p := s.formPage(r, "Reset password")
	// The link's secret is in this page's URL: no referrer may carry it.
	w.Header().Set("Referrer-Policy", "no-referrer")
	p.Data = d
	s.writePage(w, r, status, "reset", p)
	return nil
}
