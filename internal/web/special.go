package web

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/purge"
	"github.com/wikid/wikid/internal/session"
	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/view"
	"github.com/wikid/wikid/internal/wiki"
)

// specialRoute is one special page: its canonical name, its parameters,
// and its handler (arg is the part after "Special:Name/", normalized).
type specialRoute struct {
	name string
	spec *httpx.Spec
	post bool // takes POST (with a CSRF token)
	open bool // answers without read permission (login, account creation)
	// upload: the POST body is a file's multipart form, which the
	// handler reads (readUpload) and checks the CSRF token of itself.
	upload bool
	handle func(s *Server, w http.ResponseWriter, r *http.Request, arg string) error
}

var (
	limitParam = func(max int64, def string) httpx.Param {
		return httpx.Param{Name: "limit", Kind: httpx.Limit, Max: max, Default: def}
	}
	rcOffsetParam = httpx.Param{Name: "offset", Kind: httpx.ID, What: "a change number"}
	returnToParam = httpx.Param{Name: "returnto", Kind: httpx.Text, Max: 300}
)

func specialSpec(name string, params ...httpx.Param) *httpx.Spec {
	return &httpx.Spec{Name: "special:" + strings.ToLower(name), Params: params}
}

// specialRoutes are the special pages by lower-case name (and alias).
var specialRoutes = func() map[string]*specialRoute {
	rs := []*specialRoute{
		{name: "UserLogin", spec: specialSpec("UserLogin", returnToParam), post: true, open: true, handle: (*Server).loginPage},
		{name: "CreateAccount", spec: specialSpec("CreateAccount", returnToParam), post: true, open: true, handle: (*Server).createAccountPage},
		{name: "UserLogout", spec: specialSpec("UserLogout"), post: true, open: true, handle: (*Server).logoutPage},
		{name: "RecentChanges", spec: specialSpec("RecentChanges", append([]httpx.Param{feedParam, rcOffsetParam, limitParam(500, "50"), namespaceParam}, changeFilterParams("")...)...),
			handle: (*Server).recentChanges},
		// open: a feed reader has no session, only the watchlist's token;
		// watchlistPage checks the read permission, of the token's owner
		// for the feed.
		{name: "Watchlist", spec: specialSpec("Watchlist", append([]httpx.Param{feedParam, rcOffsetParam, limitParam(500, "50"), namespaceParam,
			{Name: "wlowner", Kind: httpx.Text, Max: 255}, {Name: "wltoken", Kind: httpx.Text, Max: 100}}, changeFilterParams("7")...)...),
			open: true, handle: (*Server).watchlistPage},
		{name: "Notifications", spec: specialSpec("Notifications", rcOffsetParam, limitParam(500, "50")), handle: (*Server).notificationsPage},
		{name: "EditWatchlist", spec: specialSpec("EditWatchlist", fromParam, limitParam(1000, "500")), post: true, handle: (*Server).editWatchlistPage},
		{name: "AllPages", spec: specialSpec("AllPages", httpx.Param{Name: "prefix", Kind: httpx.TitleKey}, fromParam, limitParam(1000, "200"), namespaceParam),
			handle: (*Server).allPages},
		{name: "Categories", spec: specialSpec("Categories", fromParam, limitParam(1000, "200")), handle: (*Server).categories},
		{name: "Search", spec: specialSpec("Search", httpx.Param{Name: "q", Alias: "search", Kind: httpx.Text, Max: 300},
			httpx.Param{Name: "go", Kind: httpx.Flag}, httpx.Param{Name: "offset", Kind: httpx.Offset, Max: 10000}, namespaceParam), handle: (*Server).search},
		{name: "Random", spec: specialSpec("Random"), handle: (*Server).random},
		{name: "WhatLinksHere", spec: specialSpec("WhatLinksHere", fromPageParam, limitParam(1000, "200")), handle: (*Server).whatLinksHere},
		{name: "Contributions", spec: specialSpec("Contributions", append([]httpx.Param{feedParam, rcOffsetParam, limitParam(500, "50"), namespaceParam}, changeFilterParams("")...)...),
			handle: (*Server).contributions},
		{name: "SpecialPages", spec: specialSpec("SpecialPages"), handle: (*Server).specialPages},
		{name: "Preferences", spec: specialSpec("Preferences"), post: true, handle: (*Server).preferencesPage},
		{name: "UserRights", spec: specialSpec("UserRights"), post: true, handle: (*Server).userRightsPage},
		{name: "Block", spec: specialSpec("Block"), post: true, handle: (*Server).blockPage},
		{name: "Unblock", spec: specialSpec("Unblock"), post: true, handle: (*Server).unblockPage},
		{name: "BlockList", spec: specialSpec("BlockList", rcOffsetParam, limitParam(500, "50")), handle: (*Server).blockListPage},
		// open: the link works on a wiki only logged-in users may read.
		{name: "PasswordReset", spec: specialSpec("PasswordReset", httpx.Param{Name: "token", Kind: httpx.Text, Max: 100}), post: true, open: true,
			handle: (*Server).passwordResetPage},
		{name: "Protect", spec: specialSpec("Protect"), handle: (*Server).protectSpecial},
		{name: "Upload", spec: specialSpec("Upload", destFileParam), post: true, upload: true, handle: (*Server).uploadPage},
		{name: "FilePath", spec: specialSpec("FilePath"), handle: (*Server).filePath},
		{name: "Export", spec: specialSpec("Export"), post: true, handle: (*Server).exportPage},
		// upload: the dump comes as a multipart form, read (and its CSRF
		// token checked) by the handler.
		{name: "Import", spec: specialSpec("Import"), post: true, upload: true, handle: (*Server).importPage},
		{name: "Log", spec: specialSpec("Log", rcOffsetParam, limitParam(500, "50"),
			httpx.Param{Name: "user", Kind: httpx.TitleKey}, httpx.Param{Name: "page", Kind: httpx.TitleKey}), handle: (*Server).logPage},
	}
	m := make(map[string]*specialRoute, len(rs)+2)
	for _, r := range rs {
		m[strings.ToLower(r.name)] = r
	}
	m["prefixindex"], m["randompage"] = m["allpages"], m["random"]
	m["ipblocklist"], m["blockip"] = m["blocklist"], m["block"]
	return m
}()

// special parses and dispatches Special:Name[/Arg]. The canonical URL of a
// special page uses its canonical name; a user or page argument is written
// as a subpage (Special:Contributions/Name), a prefix as a parameter.
func (s *Server) special(w http.ResponseWriter, r *http.Request, t wiki.Title) {
	httpx.SetRoute(r, "special:other")
	name, arg, _ := strings.Cut(t.Name(), "/")
	rt := specialRoutes[strings.ToLower(strings.ReplaceAll(name, " ", ""))]
	if rt == nil {
		s.writeError(w, r, wiki.Errorf(wiki.KindNotFound, "there is no special page %q; see Special:SpecialPages for the list", t.Name()))
		return
	}
	raw, err := httpx.ParseQuery(r.URL.RawQuery)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	path := "/wiki/Special:" + rt.name
	switch rt.name {
	case "Contributions":
		if arg == "" {
			arg = raw.First("target")
		}
		if a, err := netip.ParseAddr(arg); err == nil {
			// An anonymous editor, named by address (IPv6 has colons,
			// which user names may not).
			arg, path = a.Unmap().String(), view.ContribsURL(a.Unmap().String())
		} else if arg != "" {
			norm, err := auth.LookupUserName(arg)
			if err != nil {
				s.writeError(w, r, wiki.Errorf(wiki.KindInvalid, "give a user name: Special:Contributions/NAME (%s)", wiki.Message(err)))
				return
			}
			arg, path = norm, view.ContribsURL(norm)
		}
	case "WhatLinksHere":
		if arg == "" {
			arg = raw.First("target")
		}
		if arg != "" {
			lt, err := s.titles.Parse(arg)
			if err != nil {
				s.writeError(w, r, wiki.Errorf(wiki.KindInvalid, "give a page: Special:WhatLinksHere/Title (%s)", wiki.Message(err)))
				return
			}
			arg, path = string(lt), view.WhatLinksHereURL(lt)
		}
	case "UserRights", "Block", "Unblock":
		// The account acted on is a subpage, as MediaWiki writes it.
		if arg == "" {
			arg = raw.First("target")
		}
		if arg != "" {
			norm, err := auth.LookupUserName(arg)
			if err != nil {
				s.writeError(w, r, wiki.Errorf(wiki.KindInvalid, "give a user name: Special:%s/NAME (%s)", rt.name, wiki.Message(err)))
				return
			}
			arg, path = norm, userPath(rt.name, norm)
		}
	case "Log":
		// The type is a subpage (Special:Log/delete), as in MediaWiki; a
		// type parameter (the filter form's) redirects there.
		if arg == "" {
			arg = raw.First("type")
		}
		arg = strings.ToLower(arg)
		if arg != "" {
			if !slices.Contains(wiki.LogTypes, wiki.LogType(arg)) {
				s.writeError(w, r, wiki.Errorf(wiki.KindInvalid, "there is no log %q; the logs are %s", sanitizeLine(arg), logTypeList()))
				return
			}
			path = "/wiki/Special:Log/" + arg
		}
	case "Protect":
		// Special:Protect/Title is the page's protect action.
		if arg != "" {
			pt, err := s.titles.Parse(arg)
			if err != nil || pt.IsSpecial() {
				s.writeError(w, r, wiki.Errorf(wiki.KindInvalid, "give the page to protect: Special:Protect/TITLE"))
				return
			}
			httpx.Redirect(w, r, pt.URL()+"?action=protect", http.StatusMovedPermanently, httpx.NoStore, 0)
			return
		}
	case "FilePath":
		// The file's name is the subpage, as MediaWiki writes it.
		if arg == "" {
			arg = raw.First("file")
		}
		if arg != "" {
			ft, err := s.titles.Parse("File:" + arg)
			if err != nil || ft.Namespace() != wiki.NSFile {
				s.writeError(w, r, wiki.Errorf(wiki.KindInvalid, "give a file name: Special:FilePath/Name.png"))
				return
			}
			arg, path = ft.Name(), "/wiki/Special:FilePath/"+wiki.EscapeKey(ft.Key()[len("File:"):])
		}
	case "Export":
		// Special:Export/Title is that page's current revision.
		if arg != "" {
			et, err := s.titles.Parse(arg)
			if err != nil || et.IsSpecial() {
				s.writeError(w, r, wiki.Errorf(wiki.KindInvalid, "give a page: Special:Export/Title"))
				return
			}
			arg, path = string(et), "/wiki/Special:Export/"+wiki.EscapeKey(et.Key())
		}
	case "AllPages":
		if arg != "" && raw.First("prefix") == "" {
			raw = append(raw, httpx.Pair{Name: "prefix", Value: arg})
		}
		arg = ""
	default:
		arg = ""
	}
	post := r.Method == http.MethodPost
	if !post && r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.writeError(w, r, methodNotAllowed(w, "GET, HEAD, POST"))
		return
	}
	if post && !rt.post {
		s.writeError(w, r, methodNotAllowed(w, "GET, HEAD"))
		return
	}
	q, err := httpx.ParseQueryFor(r, raw, rt.spec, path, s.titles)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// A watchlist feed read with its token is one user's: never shared.
	s.serve(w, withTags(r), q, routeOpts{noEdge: s.hostFeed(q) || q.Has("wltoken")}, func(w http.ResponseWriter, r *http.Request) error {
		if post && !rt.upload {
			if err := r.ParseForm(); err != nil {
				return formError(err)
			}
			if err := s.checkCSRF(r); err != nil {
				return err
			}
		}
		if !rt.open {
			if err := s.requireRead(r); err != nil {
				return err
			}
		}
		return rt.handle(s, w, r, arg)
	})
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request, _ string) error {
	if r.Method == http.MethodPost {
		return s.login(w, r)
	}
	return s.loginForm(w, r, loginData{ReturnTo: httpx.From(r).Get("returnto")}, http.StatusOK)
}

func (s *Server) createAccountPage(w http.ResponseWriter, r *http.Request, _ string) error {
	if r.Method == http.MethodPost {
		return s.register(w, r)
	}
	return s.registerForm(w, r, loginData{Register: true, ReturnTo: httpx.From(r).Get("returnto")}, http.StatusOK)
}

func (s *Server) logoutPage(w http.ResponseWriter, r *http.Request, _ string) error {
	if r.Method != http.MethodPost {
		return methodNotAllowed(w, "POST")
	}
	return s.logout(w, r)
}

func (s *Server) random(w http.ResponseWriter, r *http.Request, _ string) error {
	t, err := s.store.RandomPage(r.Context())
	if errors.Is(err, wiki.ErrNotFound) {
		t = s.mainPage
	} else if err != nil {
		return err
	}
	redirect(w, r, t.URL(), http.StatusFound)
	return nil
}

type loginData struct {
	Register bool
	Username string
	ReturnTo string
	Error    string
	Info     string
}

func (s *Server) loginForm(w http.ResponseWriter, r *http.Request, d loginData, status int) error {
	p := s.formPage(r, "Log in")
	if viewerOf(r).LoggedIn && d.Error == "" {
		d.Info = "You are logged in as " + viewerOf(r).Name() + ". Logging in again replaces that session."
	}
	p.Data = d
	s.writePage(w, r, status, "login", p)
	return nil
}

func (s *Server) registerForm(w http.ResponseWriter, r *http.Request, d loginData, status int) error {
	if !s.cfg.AllowRegistration {
		return wiki.Errorf(wiki.KindForbidden, "account creation is turned off on this wiki; ask an administrator for an account")
	}
	p := s.formPage(r, "Create account")
	p.Data = d
	s.writePage(w, r, status, "login", p)
	return nil
}

func (s *Server) afterLogin(w http.ResponseWriter, r *http.Request) {
	to := s.mainPage.URL()
	rt := r.PostFormValue("returnto")
	base, action, _ := strings.Cut(rt, "?action=")
	if t, ok := s.returnTo(base); ok {
		to = t.URL()
		if action == "edit" {
			to += "?action=edit"
		}
	}
	redirect(w, r, to, http.StatusSeeOther)
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) error {
	name := strings.TrimSpace(r.PostFormValue("username"))
	password := r.PostFormValue("password")
	d := loginData{Username: name, ReturnTo: r.PostFormValue("returnto")}
	norm, err := auth.LookupUserName(name)
	account := norm
	if err != nil {
		account = sanitizeLine(name) // still one counter per (invalid) name
	}
	// Throttle before anything costly: the store, and above all argon2.
	// The key is the client's address (from a trusted proxy if any) with the
	// account, and the address alone: never the account alone, so failures
	// from elsewhere never lock an account's owner out (internal/session).
	// A browser with a device cookie for the account is counted under that
	// cookie alone, so failures by others at its address never lock it out.
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
		secs := int((wait + time.Second - 1) / time.Second)
		s.log.Warn("login throttled", "user", account, "addr", client.String(), "device", device.Valid(), "wait", time.Duration(secs)*time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		from := "your address"
		if device.Valid() {
			from = "this browser"
		}
		d.Error = "Too many failed logins from " + from + ". Wait " + waitText(wait) +
			" and try again; if you forgot your password, ask an administrator to reset it."
		return s.loginForm(w, r, d, http.StatusTooManyRequests)
	}
	var u wiki.User
	if err == nil {
		u, err = s.store.FindUserByName(r.Context(), norm)
	}
	if err != nil && !errors.Is(err, wiki.ErrNotFound) && wiki.KindOf(err) == wiki.KindInternal {
		s.throttle.Cancel(attempt)
		return err
	}
	hash := u.PasswordHash
	if err != nil {
		hash = "" // a dummy hash: as slow as a real check, no enumeration by timing
	}
	ok, herr := s.checkPassword(r.Context(), hash, password)
	if herr != nil {
		// Nothing was checked: the attempt does not count.
		s.throttle.Cancel(attempt)
		s.log.Warn("login refused: password hashing busy", "user", account, "addr", client.String())
		setBusy(w)
		d.Error = busyMessage
		return s.loginForm(w, r, d, http.StatusServiceUnavailable)
	}
	if !ok || err != nil {
		d.Error = "The user name or password is wrong. Check both and try again."
		return s.loginForm(w, r, d, http.StatusUnauthorized)
	}
	s.throttle.Succeeded(attempt)
	if err := s.startSession(w, r, u); err != nil {
		return err
	}
	s.setDeviceCookie(w, r, u.Name)
	s.log.Info("login", "user", u.Name)
	s.afterLogin(w, r)
	return nil
}

// register creates an account. Everything cheap comes first (the form, the
// name's availability); then the client's address is counted (account
// creations per address, s.signups), and only then is the password hashed,
// holding one of s.hashing's slots.
func (s *Server) register(w http.ResponseWriter, r *http.Request) error {
	if !s.cfg.AllowRegistration {
		return wiki.Errorf(wiki.KindForbidden, "account creation is turned off on this wiki; ask an administrator for an account")
	}
	name := strings.TrimSpace(r.PostFormValue("username"))
	d := loginData{Register: true, Username: name, ReturnTo: r.PostFormValue("returnto")}
	fail := func(err error) error {
		d.Error = wiki.Message(err)
		return s.registerForm(w, r, d, http.StatusBadRequest)
	}
	taken := func(norm string) error {
		return fail(wiki.Errorf(wiki.KindConflict, "the user name %q is already taken; choose another", norm))
	}
	norm, err := auth.NormalizeUserName(name)
	if err != nil {
		return fail(err)
	}
	if err := auth.ValidatePassword(r.PostFormValue("password"), r.PostFormValue("retype")); err != nil {
		return fail(err)
	}
	switch _, err := s.store.FindUserByName(r.Context(), norm); {
	case err == nil:
		return taken(norm)
	case !errors.Is(err, wiki.ErrNotFound):
		return err
	}
	client := s.client(r)
	attempt, wait := s.signups.BeginAddress(client.Addr)
	if wait > 0 {
		secs := int((wait + time.Second - 1) / time.Second)
		s.log.Warn("account creation throttled", "addr", client.String(), "wait", time.Duration(secs)*time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		d.Error = "Too many accounts were created from your address lately. Wait " + waitText(wait) +
			" and try again, or ask an administrator to create your account."
		return s.registerForm(w, r, d, http.StatusTooManyRequests)
	}
	hash, err := s.hashPassword(r.Context(), r.PostFormValue("password"))
	if errors.Is(err, session.ErrBusy) {
		s.signups.Cancel(attempt) // nothing was created
		s.log.Warn("account creation refused: password hashing busy", "addr", client.String())
		setBusy(w)
		d.Error = busyMessage
		return s.registerForm(w, r, d, http.StatusServiceUnavailable)
	}
	if err != nil {
		return err
	}
	u, err := s.store.CreateUser(r.Context(), wiki.User{Name: norm, PasswordHash: hash, Group: wiki.GroupUser, Created: s.now()})
	if errors.Is(err, wiki.ErrExists) {
		return taken(norm) // created by another request since the check above
	}
	if wiki.KindOf(err) == wiki.KindConflict {
		return fail(err) // a look-alike of an existing account (wiki.TooSimilarError)
	}
	if err != nil {
		return err
	}
	s.eng.Purge(r.Context(), purge.LogTitle) // the account's creation is in Special:Log
	if err := s.startSession(w, r, u); err != nil {
		return err
	}
	s.setDeviceCookie(w, r, u.Name)
	s.log.Info("account created", "user", u.Name)
	s.afterLogin(w, r)
	return nil
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) error {
	if c := sessionCookie(r); c != "" {
		s.sessions.delete(auth.HashToken(c))
		if err := s.store.DeleteSession(r.Context(), auth.HashToken(c)); err != nil {
			return err
		}
		if v := viewerOf(r); v.LoggedIn && auth.Equal(v.Session.ID, auth.HashToken(c)) {
			// Only a session that was signed in: made-up cookies must
			// not add to the purge log.
			s.sessionEnded(r.Context(), auth.HashToken(c))
		}
	}
	s.clearSessionCookie(w, r)
	redirect(w, r, s.mainPage.URL(), http.StatusSeeOther)
	return nil
}

type changesData struct {
	Heading     string
	HeadingName string // a user name after Heading, isolated with <bdi>
	Intro       string
	Changes     []wiki.Change
	Days        []changeDay
	Next        string
	// The namespace filter's form: its choices, its action, and the limit
	// it keeps (canonical, "" for the default).
	Namespaces []nsOption
	FormAction string
	Limit      string
	// The other filters' fields (changeFilters), shown when Filters is set.
	Filters                      bool
	DayChoices                   []formOption
	HideMinor, HideMine, NewOnly bool
	CanHideMine                  bool // "hide my edits" (logged-in viewers)
	// Watchlist marks the viewer's watchlist, with the count of titles on it.
	Watchlist bool
	Watched   int
	// Viewer is the logged-in viewer's user ID (0: none): the others'
	// edits get a "thank" link.
	Viewer int64
	// Top holds the latest revision of each live page listed, for a
	// user's contributions: their rows that are a page's current version
	// say so, with a rollback button for the viewers who may roll back.
	Top         map[int64]int64
	CanRollback bool
}

type changeDay struct {
	Day     string
	Changes []wiki.Change
}

func groupByDay(cs []wiki.Change, p *Page) []changeDay {
	var days []changeDay
	for _, c := range cs {
		d := p.Day(c.Time)
		if len(days) == 0 || days[len(days)-1].Day != d {
			days = append(days, changeDay{Day: d})
		}
		days[len(days)-1].Changes = append(days[len(days)-1].Changes, c)
	}
	return days
}

// changeDays are the periods, in days, the lists of changes offer.
var changeDays = []string{"1", "3", "7", "14", "30", "90"}

// changeFilterParams are the filters of the lists of changes, as
// MediaWiki names them; days is the period in days (def, "" for all).
func changeFilterParams(days string) []httpx.Param {
	return []httpx.Param{
		{Name: "days", Kind: httpx.Enum, Values: changeDays, Default: days},
		{Name: "hideminor", Kind: httpx.Flag},
		{Name: "hidemyself", Kind: httpx.Flag},
		{Name: "newonly", Kind: httpx.Flag},
	}
}

// changeFilters reads the filters of changeFilterParams into q and fills
// the form's fields. mine is the user whose edits "hide my edits" hides:
// the viewer's own name on a list of everyone's changes, "" where the
// filter means nothing (an anonymous reader, whose list is everyone's; a
// user's contributions).
func (s *Server) changeFilters(r *http.Request, q *wiki.ChangeQuery, d *changesData, defDays, mine string) {
	rq := httpx.From(r)
	d.Filters = true
	d.HideMinor, d.NewOnly = rq.Has("hideminor"), rq.Has("newonly")
	q.HideMinor, q.OnlyNew = d.HideMinor, d.NewOnly
	if mine != "" {
		d.CanHideMine, d.HideMine = true, rq.Has("hidemyself")
		if d.HideMine {
			q.HideUser = mine
		}
	}
	days := rq.Get("days")
	if days == "" {
		days = defDays
	}
	for _, n := range changeDays {
		d.DayChoices = append(d.DayChoices, formOption{Value: n, Label: n + " days", Selected: n == days})
	}
	if days == "1" {
		d.DayChoices[0].Label = "1 day"
	}
	if defDays == "" {
		d.DayChoices = append([]formOption{{Value: "", Label: "any time", Selected: days == ""}}, d.DayChoices...)
	}
	if n, err := strconv.Atoi(days); err == nil {
		q.Since = s.now().Add(-time.Duration(n) * 24 * time.Hour)
	}
}

// viewerName is the name "hide my edits" hides for v: its own, or "" for
// an anonymous reader or a token.
func viewerName(v Viewer) string {
	if !v.LoggedIn || v.Token {
		return ""
	}
	return v.User.Name
}

// changesCursor sets q's page from r: its cursor, limit and namespaces.
func changesCursor(r *http.Request, q *wiki.ChangeQuery) {
	rq := httpx.From(r)
	q.Before = rq.Int("offset", 0)
	q.Limit = int(rq.Int("limit", 50))
	q.Namespaces, _ = namespaceFilter(r)
}

// listChanges reads a page of changes.
type listChanges func(ctx context.Context, q wiki.ChangeQuery) ([]wiki.Change, error)

func (s *Server) changesPage(w http.ResponseWriter, r *http.Request, d changesData, q wiki.ChangeQuery, base string, list listChanges, mode cacheMode) error {
	rq := httpx.From(r)
	changesCursor(r, &q)
	limit := q.Limit
	q.Limit++
	cs, err := list(r.Context(), q)
	if err != nil {
		return err
	}
	if len(cs) > limit {
		// The next page keeps every parameter but the cursor.
		var link []string
		for _, p := range rq.Params {
			if p.Name != "offset" {
				link = append(link, p.Name, p.Value)
			}
		}
		d.Next = rq.Link(base, append(link, "offset", strconv.FormatInt(cs[limit-1].ID, 10))...)
		cs = cs[:limit]
	}
	heading := strings.TrimSpace(d.Heading + " " + d.HeadingName)
	if feedFormat(r) != "" {
		return s.changesFeed(w, r, heading, d.Intro, cs)
	}
	d.Namespaces, d.FormAction, d.Limit = namespaceOptions(r), base, rq.Get("limit")
	if v := viewerOf(r); v.LoggedIn && !v.Token {
		d.Viewer = v.User.ID
	}
	if q.UserName != "" && len(cs) > 0 {
		ids := make([]int64, 0, len(cs))
		for _, c := range cs {
			if c.RevID != 0 {
				ids = append(ids, c.PageID)
			}
		}
		if d.Top, err = s.store.LatestRevisions(r.Context(), ids); err != nil {
			return err
		}
		d.CanRollback = canRollback(viewerOf(r))
	}
	p := s.page(r, heading)
	if !d.Watchlist {
		p.Feeds = feedLinks(rq.Path, rq.Params, s.cfg.SiteName+" – "+heading)
	}
	d.Changes, d.Days = cs, groupByDay(cs, p)
	p.NoIndex = true
	p.Data = d
	s.writeBodyPage(w, r, p, "changes", mode, time.Time{})
	return nil
}

func (s *Server) recentChanges(w http.ResponseWriter, r *http.Request, _ string) error {
	d := changesData{Heading: "Recent changes", Intro: "The latest changes to the wiki, newest first."}
	var q wiki.ChangeQuery
	s.changeFilters(r, &q, &d, "", viewerName(viewerOf(r)))
	return s.changesPage(w, r, d, q, "/wiki/Special:RecentChanges", s.store.RecentChanges, cacheShort)
}

func (s *Server) contributions(w http.ResponseWriter, r *http.Request, norm string) error {
	if norm == "" {
		return wiki.Errorf(wiki.KindInvalid, "give a user name: Special:Contributions/NAME")
	}
	d := changesData{Heading: "Contributions of", HeadingName: norm}
	q := wiki.ChangeQuery{UserName: norm}
	s.changeFilters(r, &q, &d, "", "") // one user's list: nobody's edits to hide
	return s.changesPage(w, r, d, q, view.ContribsURL(norm), s.store.RecentChanges, cacheShort)
}

type titlesData struct {
	Heading     string
	HeadingName string // a title or prefix after Heading, quoted and isolated with <bdi>
	EmptyName   string // a title after Empty, isolated with <bdi>
	Intro       string
	PrefixForm  bool // the prefix and namespace form of AllPages
	Prefix      string
	Namespaces  []nsOption
	Limit       string // the limit the form keeps (canonical, "" for the default)
	Pages       []wiki.Page
	Empty       string
	Next        string
	// Transcluded marks the pages listed because they transclude the page
	// (WhatLinksHere).
	Transcluded map[wiki.Title]bool
}

func (s *Server) listTitles(w http.ResponseWriter, r *http.Request, d titlesData, list func(wiki.ListQuery) ([]wiki.Page, error), q wiki.ListQuery, path string, linkParams ...string) error {
	rq := httpx.From(r)
	limit := int(rq.Int("limit", 200))
	q.From = rq.Title("from")
	q.Limit = limit + 1
	pages, err := list(q)
	if err != nil {
		return err
	}
	if len(pages) > limit {
		d.Next = rq.Link(path, append(linkParams, "from", pages[limit].Title.Key(), "limit", strconv.Itoa(limit))...)
		pages = pages[:limit]
	}
	d.Pages = pages
	s.writeTitles(w, r, d)
	return nil
}

// writeTitles answers with the list page of d.
func (s *Server) writeTitles(w http.ResponseWriter, r *http.Request, d titlesData) {
	heading := d.Heading
	if d.HeadingName != "" {
		heading += " “" + d.HeadingName + "”"
	}
	p := s.page(r, heading)
	p.Data = d
	s.writeBodyPage(w, r, p, "titles", cacheShort, time.Time{})
}

func (s *Server) allPages(w http.ResponseWriter, r *http.Request, _ string) error {
	rq := httpx.From(r)
	var prefix string
	if t := rq.Title("prefix"); t != "" {
		prefix = string(t)
	}
	d := titlesData{Heading: "All pages", PrefixForm: true, Prefix: prefix, Empty: "No pages found.",
		Namespaces: namespaceOptions(r), Limit: rq.Get("limit")}
	var link []string
	if prefix != "" {
		link = []string{"prefix", prefix}
	}
	namespaces, ns := namespaceFilter(r)
	if ns != "" {
		link = append(link, "namespace", ns)
		// As MediaWiki: a prefix without a namespace is in the one chosen
		// (prefix=Foo&namespace=1 lists Talk:Foo…).
		if t := wiki.Title(prefix); prefix != "" && namespaces[0] != "" && t.Namespace() == "" {
			prefix = namespaces[0] + ":" + prefix
		}
	}
	if prefix != "" {
		d.Heading, d.HeadingName = "Pages starting with", prefix
	}
	return s.listTitles(w, r, d, func(q wiki.ListQuery) ([]wiki.Page, error) { return s.store.AllPages(r.Context(), q) },
		wiki.ListQuery{Prefix: prefix, Namespaces: namespaces}, "/wiki/Special:AllPages", link...)
}

func (s *Server) categories(w http.ResponseWriter, r *http.Request, _ string) error {
	d := titlesData{Heading: "Categories", Empty: "No category pages yet. Add [[Category:Name]] to a page, then create the category's page."}
	return s.listTitles(w, r, d, func(q wiki.ListQuery) ([]wiki.Page, error) { return s.store.AllPages(r.Context(), q) },
		wiki.ListQuery{Prefix: "Category:"}, "/wiki/Special:Categories")
}

func (s *Server) whatLinksHere(w http.ResponseWriter, r *http.Request, arg string) error {
	if arg == "" {
		return wiki.Errorf(wiki.KindInvalid, "give a page: Special:WhatLinksHere/Title")
	}
	t := wiki.Title(arg) // normalized by special
	d := titlesData{Heading: "Pages that link to", HeadingName: string(t), Empty: "No pages link to or transclude", EmptyName: string(t),
		Transcluded: map[wiki.Title]bool{}}
	// Links and transclusions, as one list in page ID order (as
	// MediaWiki's): each is read from the cursor as far as the page needs,
	// one index range (Store.Dependents), then merged. By title, every
	// page of the listing would read every row naming t.
	rq := httpx.From(r)
	limit := int(rq.Int("limit", 200))
	after := max(rq.Int("from", 0)-1, 0)
	links, err := s.store.Dependents(r.Context(), t, wiki.LinkUse, after, limit+1)
	if err != nil {
		return err
	}
	trans, err := s.store.Dependents(r.Context(), t, wiki.TemplateUse, after, limit+1)
	if err != nil {
		return err
	}
	pages := store.MergeDependents([][]wiki.Page{links, trans}, limit+1)
	if len(pages) > limit {
		d.Next = rq.Link(view.WhatLinksHereURL(t), "from", strconv.FormatInt(pages[limit].ID, 10), "limit", strconv.Itoa(limit))
		pages = pages[:limit]
	}
	for _, p := range trans {
		d.Transcluded[p.Title] = true
	}
	d.Pages = pages
	s.writeTitles(w, r, d)
	return nil
}

func (s *Server) specialPages(w http.ResponseWriter, r *http.Request, _ string) error {
	names := []string{"AllPages", "Categories", "CreateAccount", "Export", "Log", "RecentChanges", "Random", "Search", "Upload", "UserLogin", "WhatLinksHere"}
	if viewerOf(r).LoggedIn {
		names = append(names, "Preferences")
	}
	if s.canUpload(viewerOf(r)) {
		names = append(names, "Upload")
	}
	if viewerOf(r).IsAdmin() {
		names = append(names, "Block", "BlockList", "Import", "Unblock", "UserRights")
	}
	sort.Strings(names)
	pages := make([]wiki.Page, len(names))
	for i, n := range names {
		pages[i] = wiki.Page{Title: wiki.Title("Special:" + n)}
	}
	p := s.page(r, "Special pages")
	p.Data = titlesData{Heading: "Special pages", Pages: pages}
	s.writeBodyPage(w, r, p, "titles", cachePublic, time.Time{})
	return nil
}

type searchData struct {
	Query       string
	Namespaces  []nsOption
	Hits        []wiki.SearchHit
	Exact       wiki.Title
	CreateTitle wiki.Title
	CanCreate   bool
	Offset      int
	Next        string
}

func (s *Server) search(w http.ResponseWriter, r *http.Request, _ string) error {
	rq := httpx.From(r)
	q := rq.Get("q")
	namespaces, ns := namespaceFilter(r)
	d := searchData{Query: q, Namespaces: namespaceOptions(r)}
	if q != "" {
		ctx := r.Context()
		if t, err := s.titles.Parse(q); err == nil && !t.IsSpecial() {
			exact, err := s.titleMatch(ctx, t)
			if err != nil {
				return err
			}
			if exact != "" {
				if rq.Has("go") {
					// Never stored (redirect answers no-store): once the
					// page is deleted or moved, the next Go must not land
					// on it.
					redirect(w, r, exact.URL(), http.StatusFound)
					return nil
				}
				d.Exact = exact
			} else {
				d.CreateTitle, d.CanCreate = t, s.canEdit(viewerOf(r))
			}
		}
		d.Offset = int(rq.Int("offset", 0))
		const limit = 20
		hits, more, err := s.eng.Search(ctx, wiki.SearchQuery{Text: q, Offset: d.Offset, Limit: limit, Namespaces: namespaces})
		if err != nil {
			return err
		}
		if more {
			d.Next = rq.Link("/wiki/Special:Search", "q", q, "offset", strconv.Itoa(d.Offset+limit), "namespace", ns)
		}
		d.Hits = hits
	}
	p := s.page(r, "Search")
	if q != "" {
		p.HeadTitle = "Search results for “" + q + "”"
	}
	p.SearchQuery = q
	p.NoIndex = true
	p.Data = d
	s.writeBodyPage(w, r, p, "search", cacheShort, time.Time{})
	return nil
}

// titleMatch returns the existing page a search for t goes to, as
// MediaWiki's Go does: t itself, else a page whose title equals t but for
// case and accents (store.Fold), preferring one that differs in case only.
// It returns "" when there is none.
func (s *Server) titleMatch(ctx context.Context, t wiki.Title) (wiki.Title, error) {
	ex, err := s.store.ExistingTitles(ctx, []wiki.Title{t})
	if err != nil {
		return "", err
	}
	if ex[t] {
		return t, nil
	}
	// Titles folding to the same text come first in the folded order;
	// a few are enough to find them.
	pages, err := s.store.SearchTitles(ctx, string(t), 5)
	if err != nil {
		return "", err
	}
	want := store.Fold(string(t))
	var match wiki.Title
	for _, p := range pages {
		if store.Fold(string(p.Title)) != want {
			continue
		}
		if strings.EqualFold(string(p.Title), string(t)) {
			return p.Title, nil
		}
		if match == "" {
			match = p.Title
		}
	}
	return match, nil
}

// waitText says how long to wait, in words, rounded up: seconds under a
// minute, else minutes.
func waitText(d time.Duration) string {
	sec := int((d + time.Second - 1) / time.Second)
	switch {
	case sec <= 1:
		return "a second"
	case sec < 60:
		return strconv.Itoa(sec) + " seconds"
	}
	m := (sec + 59) / 60
	if m == 1 {
		return "a minute"
	}
	return strconv.Itoa(m) + " minutes"
}

func logTypeList() string {
	names := make([]string, len(wiki.LogTypes))
	for i, t := range wiki.LogTypes {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

type logData struct {
	Heading string
	Types   []wiki.LogType
	Type    wiki.LogType
	User    string // the performer filter, as typed back into the form
	Page    string // the target filter
	Entries []wiki.LogEntry
	Next    string
}

// logPage is Special:Log[/type]: the log, newest first, filtered by type,
// performer and target, paged by entry ID. Like RecentChanges it is a
// short-lived shared listing; it also carries the tag of purge.LogTitle,
// which every change that writes a log entry purges.
func (s *Server) logPage(w http.ResponseWriter, r *http.Request, typ string) error {
	rq := httpx.From(r)
	q := wiki.LogQuery{Type: wiki.LogType(typ), UserName: string(rq.Title("user")), Target: rq.Title("page"),
		Before: rq.Int("offset", 0)}
	limit := int(rq.Int("limit", 50))
	q.Limit = limit + 1
	es, err := s.store.Log(r.Context(), q)
	if err != nil {
		return err
	}
	d := logData{Heading: "Logs", Types: wiki.LogTypes, Type: q.Type, User: q.UserName, Page: string(q.Target)}
	switch typ {
	case "":
	case string(wiki.LogContentModel):
		d.Heading = "Content model change log" // MediaWiki's name
	default:
		d.Heading = strings.ToUpper(typ[:1]) + typ[1:] + " log"
	}
	base := "/wiki/Special:Log"
	if typ != "" {
		base += "/" + typ
	}
	if len(es) > limit {
		d.Next = rq.Link(base, "offset", strconv.FormatInt(es[limit-1].ID, 10), "limit", strconv.Itoa(limit),
			"user", wiki.Title(q.UserName).Key(), "page", q.Target.Key())
		es = es[:limit]
	}
	d.Entries = es
	addTag(r, purge.LogTitle)
	p := s.page(r, d.Heading)
	p.NoIndex = true
	p.Data = d
	s.writeBodyPage(w, r, p, "log", cacheShort, time.Time{})
	return nil
}

// protectSpecial is Special:Protect without a page: it says how to name one.
func (s *Server) protectSpecial(w http.ResponseWriter, r *http.Request, _ string) error {
	return wiki.Errorf(wiki.KindInvalid, "give the page to protect: Special:Protect/TITLE, or open the page's Protect tab")
}
