package web

import (
	"errors"
	"hash/maphash"
	"net/http"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/text/cases"

	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/wiki"
)

// special dispatches Special:Name[/Arg].
func (s *Server) special(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	name, arg, _ := strings.Cut(t.Name(), "/")
	name = strings.ToLower(strings.ReplaceAll(name, " ", ""))
	post := r.Method == http.MethodPost
	if !post && r.Method != http.MethodGet && r.Method != http.MethodHead {
		return methodNotAllowed(w, "GET, HEAD, POST")
	}
	takesPost := name == "userlogin" || name == "createaccount" || name == "userlogout"
	if post && !takesPost {
		return methodNotAllowed(w, "GET, HEAD")
	}
	if post {
		if err := r.ParseForm(); err != nil {
			return formError(err)
		}
		if err := s.checkCSRF(r); err != nil {
			return err
		}
	}
	switch name {
	case "userlogin":
		if post {
			return s.login(w, r)
		}
		return s.loginForm(w, r, loginData{ReturnTo: r.URL.Query().Get("returnto")}, http.StatusOK)
	case "createaccount":
		if post {
			return s.register(w, r)
		}
		return s.registerForm(w, r, loginData{Register: true, ReturnTo: r.URL.Query().Get("returnto")}, http.StatusOK)
	case "userlogout":
		if !post {
			return methodNotAllowed(w, "POST")
		}
		return s.logout(w, r)
	}
	if err := s.requireRead(r); err != nil {
		return err
	}
	switch name {
	case "recentchanges":
		return s.recentChanges(w, r)
	case "allpages", "prefixindex":
		return s.allPages(w, r, arg)
	case "categories":
		return s.allPagesIn(w, r, "Category:", "Categories")
	case "search":
		return s.search(w, r)
	case "random", "randompage":
		t, err := s.store.RandomPage(r.Context())
		if errors.Is(err, wiki.ErrNotFound) {
			t = s.mainPage
		} else if err != nil {
			return err
		}
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, t.URL(), http.StatusFound)
		return nil
	case "whatlinkshere":
		return s.whatLinksHere(w, r, arg)
	case "contributions":
		return s.contributions(w, r, arg)
	case "specialpages":
		return s.specialPages(w, r)
	}
	return wiki.Errorf(wiki.KindNotFound, "there is no special page %q; see Special:SpecialPages for the list", t.Name())
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
	s.writePage(w, r, status, "login", p, cacheNone)
	return nil
}

func (s *Server) registerForm(w http.ResponseWriter, r *http.Request, d loginData, status int) error {
	if !s.cfg.AllowRegistration {
		return wiki.Errorf(wiki.KindForbidden, "account creation is turned off on this wiki; ask an administrator for an account")
	}
	p := s.formPage(r, "Create account")
	p.Data = d
	s.writePage(w, r, status, "login", p, cacheNone)
	return nil
}

func (s *Server) afterLogin(w http.ResponseWriter, r *http.Request) {
	to := s.mainPage.URL()
	rt := r.PostFormValue("returnto")
	base, action, _ := strings.Cut(rt, "?action=")
	if t, ok := returnTo(base); ok {
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
	norm, err := auth.NormalizeUserName(name)
	account := norm
	if err != nil {
		account = sanitizeLine(name) // still one counter per (invalid) name
	}
	// Throttle before anything costly: the store, and above all argon2.
	ip := clientIP(r, s.cfg.TrustProxy)
	attempt, wait := s.throttle.begin(account, ip)
	if wait > 0 {
		s.log.Warn("login throttled", "user", account, "addr", ip, "wait", wait.Round(time.Second))
		w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
		d.Error = "Too many failed logins for this account or from your address. Wait " + waitText(wait) +
			" and try again; if you forgot your password, ask an administrator to reset it."
		return s.loginForm(w, r, d, http.StatusTooManyRequests)
	}
	var u wiki.User
	if err == nil {
		u, err = s.store.FindUserByName(r.Context(), norm)
	}
	if err != nil && !errors.Is(err, wiki.ErrNotFound) && wiki.KindOf(err) == wiki.KindInternal {
		return err
	}
	hash := u.PasswordHash
	if err != nil {
		hash = dummyHash() // as slow as a real check: no enumeration by timing
	}
	if !auth.CheckPassword(hash, password) || err != nil {
		d.Error = "The user name or password is wrong. Check both and try again."
		return s.loginForm(w, r, d, http.StatusUnauthorized)
	}
	s.throttle.succeeded(account, ip, attempt)
	if err := s.startSession(w, r, u); err != nil {
		return err
	}
	s.log.Info("login", "user", u.Name)
	s.afterLogin(w, r)
	return nil
}

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
	norm, err := auth.NormalizeUserName(name)
	if err != nil {
		return fail(err)
	}
	if err := auth.ValidatePassword(r.PostFormValue("password"), r.PostFormValue("retype")); err != nil {
		return fail(err)
	}
	hash, err := auth.HashPassword(r.PostFormValue("password"))
	if err != nil {
		return err
	}
	u, err := s.store.CreateUser(r.Context(), wiki.User{Name: norm, PasswordHash: hash, Group: wiki.GroupUser, Created: s.now()})
	if errors.Is(err, wiki.ErrExists) {
		return fail(wiki.Errorf(wiki.KindConflict, "the user name %q is already taken; choose another", norm))
	}
	if err != nil {
		return err
	}
	if err := s.startSession(w, r, u); err != nil {
		return err
	}
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
	}
	s.clearSessionCookie(w, r)
	redirect(w, r, s.mainPage.URL(), http.StatusSeeOther)
	return nil
}

type changesData struct {
	Heading string
	Intro   string
	Changes []wiki.Change
	Days    []changeDay
	Next    string
}

type changeDay struct {
	Day     string
	Changes []wiki.Change
}

func groupByDay(cs []wiki.Change) []changeDay {
	var days []changeDay
	for _, c := range cs {
		d := c.Time.UTC().Format("2 January 2006")
		if len(days) == 0 || days[len(days)-1].Day != d {
			days = append(days, changeDay{Day: d})
		}
		days[len(days)-1].Changes = append(days[len(days)-1].Changes, c)
	}
	return days
}

func (s *Server) changesPage(w http.ResponseWriter, r *http.Request, d changesData, q wiki.ChangeQuery, base string) error {
	q.Before, _ = strconv.ParseInt(r.URL.Query().Get("offset"), 10, 64)
	q.Limit = clampLimit(r.URL.Query().Get("limit"), 50, 500)
	limit := q.Limit
	q.Limit++
	cs, err := s.store.RecentChanges(r.Context(), q)
	if err != nil {
		return err
	}
	if len(cs) > limit {
		d.Next = base + "?offset=" + strconv.FormatInt(cs[limit-1].ID, 10) + "&limit=" + strconv.Itoa(limit)
		cs = cs[:limit]
	}
	d.Changes, d.Days = cs, groupByDay(cs)
	p := s.page(r, d.Heading)
	p.NoIndex = true
	p.Data = d
	s.writeBodyPage(w, r, p, "changes", cacheShort, time.Time{})
	return nil
}

func (s *Server) recentChanges(w http.ResponseWriter, r *http.Request) error {
	return s.changesPage(w, r, changesData{Heading: "Recent changes", Intro: "The latest changes to the wiki, newest first."},
		wiki.ChangeQuery{}, "/wiki/Special:RecentChanges")
}

func (s *Server) contributions(w http.ResponseWriter, r *http.Request, name string) error {
	if name == "" {
		name = r.URL.Query().Get("target")
	}
	norm, err := auth.NormalizeUserName(name)
	if err != nil {
		return wiki.Errorf(wiki.KindInvalid, "give a user name: Special:Contributions/NAME")
	}
	return s.changesPage(w, r, changesData{Heading: "Contributions of " + norm},
		wiki.ChangeQuery{UserName: norm}, "/wiki/Special:Contributions/"+wiki.EscapeKey(strings.ReplaceAll(norm, " ", "_")))
}

type titlesData struct {
	Heading    string
	Intro      string
	PrefixForm bool
	Prefix     string
	Pages      []wiki.Page
	Empty      string
	Next       string
}

func (s *Server) listTitles(w http.ResponseWriter, r *http.Request, d titlesData, list func(wiki.ListQuery) ([]wiki.Page, error), q wiki.ListQuery, base url.URL) error {
	limit := clampLimit(r.URL.Query().Get("limit"), 200, 1000)
	if from := r.URL.Query().Get("from"); from != "" {
		t, err := wiki.ParseTitle(from)
		if err != nil {
			return err
		}
		q.From = t
	}
	q.Limit = limit + 1
	pages, err := list(q)
	if err != nil {
		return err
	}
	if len(pages) > limit {
		v := base.Query()
		v.Set("from", pages[limit].Title.Key())
		base.RawQuery = v.Encode()
		d.Next = base.String()
		pages = pages[:limit]
	}
	d.Pages = pages
	p := s.page(r, d.Heading)
	p.Data = d
	s.writeBodyPage(w, r, p, "titles", cacheShort, time.Time{})
	return nil
}

func (s *Server) allPages(w http.ResponseWriter, r *http.Request, arg string) error {
	prefix := r.URL.Query().Get("prefix")
	if prefix == "" {
		prefix = arg
	}
	prefix = strings.TrimSpace(strings.ReplaceAll(prefix, "_", " "))
	if prefix != "" {
		t, err := wiki.ParseTitle(prefix)
		if err != nil {
			return err
		}
		prefix = string(t)
	}
	d := titlesData{Heading: "All pages", PrefixForm: true, Prefix: prefix, Empty: "No pages found."}
	if prefix != "" {
		d.Heading = "Pages starting with “" + prefix + "”"
	}
	base := url.URL{Path: "/wiki/Special:AllPages"}
	if prefix != "" {
		base.RawQuery = url.Values{"prefix": {prefix}}.Encode()
	}
	return s.listTitles(w, r, d, func(q wiki.ListQuery) ([]wiki.Page, error) { return s.store.AllPages(r.Context(), q) },
		wiki.ListQuery{Prefix: prefix}, base)
}

func (s *Server) allPagesIn(w http.ResponseWriter, r *http.Request, prefix, heading string) error {
	d := titlesData{Heading: heading, Empty: "No category pages yet. Add [[Category:Name]] to a page, then create the category's page."}
	return s.listTitles(w, r, d, func(q wiki.ListQuery) ([]wiki.Page, error) { return s.store.AllPages(r.Context(), q) },
		wiki.ListQuery{Prefix: prefix}, url.URL{Path: "/wiki/Special:Categories"})
}

func (s *Server) whatLinksHere(w http.ResponseWriter, r *http.Request, arg string) error {
	if arg == "" {
		arg = r.URL.Query().Get("target")
	}
	t, err := wiki.ParseTitle(arg)
	if err != nil {
		return wiki.Errorf(wiki.KindInvalid, "give a page: Special:WhatLinksHere/Title (%s)", wiki.Message(err))
	}
	d := titlesData{Heading: "Pages that link to “" + string(t) + "”", Empty: "No pages link to " + string(t) + "."}
	return s.listTitles(w, r, d, func(q wiki.ListQuery) ([]wiki.Page, error) { return s.store.Backlinks(r.Context(), t, q) },
		wiki.ListQuery{}, url.URL{Path: "/wiki/Special:WhatLinksHere/" + t.Key()})
}

func (s *Server) specialPages(w http.ResponseWriter, r *http.Request) error {
	names := []string{"AllPages", "Categories", "CreateAccount", "RecentChanges", "Random", "Search", "UserLogin", "WhatLinksHere"}
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
	Hits        []wiki.SearchHit
	Exact       wiki.Title
	CreateTitle wiki.Title
	CanCreate   bool
	Offset      int
	Next        string
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) error {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		q = strings.TrimSpace(r.URL.Query().Get("search"))
	}
	if len(q) > 300 {
		return wiki.Errorf(wiki.KindInvalid, "the search query is too long; use at most 300 bytes")
	}
	if !utfValid(q) {
		return wiki.Errorf(wiki.KindInvalid, "the search query is not valid UTF-8")
	}
	d := searchData{Query: q}
	if q != "" {
		ctx := r.Context()
		if t, err := wiki.ParseTitle(q); err == nil && !t.IsSpecial() {
			ex, err := s.store.ExistingTitles(ctx, []wiki.Title{t})
			if err != nil {
				return err
			}
			if ex[t] {
				if r.URL.Query().Get("go") != "" {
					redirect(w, r, t.URL(), http.StatusFound)
					return nil
				}
				d.Exact = t
			} else {
				d.CreateTitle, d.CanCreate = t, s.canEdit(viewerOf(r))
			}
		}
		d.Offset, _ = strconv.Atoi(r.URL.Query().Get("offset"))
		if d.Offset < 0 || d.Offset > 10000 {
			d.Offset = 0
		}
		const limit = 20
		hits, err := s.store.Search(ctx, q, d.Offset, limit+1)
		if err != nil {
			return err
		}
		if len(hits) > limit {
			d.Next = "/wiki/Special:Search?" + url.Values{"q": {q}, "offset": {strconv.Itoa(d.Offset + limit)}}.Encode()
			hits = hits[:limit]
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

// Login throttling (issue 5, item 3). Failed logins are counted per account
// and per client address in a sliding window, in memory; over either limit a
// login answers 429 before the password is hashed, so that guessing costs the
// server no argon2 time either. An attempt is counted when it starts (so that
// a burst of parallel guesses cannot all slip under the limit) and taken back
// when it succeeds; a success also clears its account's failures. Other
// accounts at the same address keep working until the address itself is over
// its (higher) limit.
const (
	loginWindow          = 15 * time.Minute
	loginFailsPerAccount = 5
	loginFailsPerAddress = 20
	throttleShards       = 32
	throttleShardKeys    = 4096 // bound on keys per shard (memory)
)

type loginThrottle struct {
	seed   maphash.Seed
	now    func() time.Time
	shards [throttleShards]throttleShard
}

type throttleShard struct {
	mu sync.Mutex
	m  map[string][]int64 // key → attempt times (unix nanoseconds), oldest first, at most the key's limit
}

func newLoginThrottle(now func() time.Time) *loginThrottle {
	t := &loginThrottle{seed: maphash.MakeSeed(), now: now}
	for i := range t.shards {
		t.shards[i].m = map[string][]int64{}
	}
	return t
}

func (t *loginThrottle) shardIndex(key string) int {
	return int(maphash.String(t.seed, key) % throttleShards)
}

// accountKey and addressKey name the two counters of an attempt. Account
// names are case-folded as the store compares them; IPv6 addresses count
// per /64, the block one client usually holds.
func accountKey(name string) string { return "u\x00" + cases.Fold().String(name) }

func addressKey(ip string) string {
	if a, err := netip.ParseAddr(ip); err == nil && a.Is6() && !a.Is4In6() {
		p, _ := a.Prefix(64)
		return "a\x00" + p.String()
	}
	return "a\x00" + ip
}

// wait returns how long key is still over limit at now (0: not over), after
// dropping the attempts that left the window.
func (sh *throttleShard) wait(key string, limit int, now int64) time.Duration {
	ts := sh.m[key]
	cut := now - int64(loginWindow)
	i := 0
	for i < len(ts) && ts[i] <= cut {
		i++
	}
	if i > 0 {
		ts = ts[i:]
		if len(ts) == 0 {
			delete(sh.m, key)
		} else {
			sh.m[key] = ts
		}
	}
	if len(ts) < limit {
		return 0
	}
	return time.Duration(ts[len(ts)-limit] + int64(loginWindow) - now)
}

func (sh *throttleShard) record(key string, limit int, now int64) {
	ts := sh.m[key]
	if ts == nil && len(sh.m) >= throttleShardKeys {
		sh.evict(now)
	}
	ts = append(ts, now)
	if len(ts) > limit {
		ts = append(ts[:0], ts[len(ts)-limit:]...)
	}
	sh.m[key] = ts
}

// evict makes room: it drops the expired keys and, if the shard is still
// more than three quarters full, arbitrary ones down to that (so that a flood
// of new keys costs one scan per quarter of the shard, not one per key).
func (sh *throttleShard) evict(now int64) {
	cut := now - int64(loginWindow)
	for k, ts := range sh.m {
		if ts[len(ts)-1] <= cut {
			delete(sh.m, k)
		}
	}
	for k := range sh.m {
		if len(sh.m) <= throttleShardKeys*3/4 {
			break
		}
		delete(sh.m, k)
	}
}

// begin counts a login attempt for account and address, or returns how long
// to wait when either is over its limit (then nothing is counted). The
// returned time identifies the attempt for succeeded.
func (t *loginThrottle) begin(account, address string) (int64, time.Duration) {
	now := t.now().UnixNano()
	ak, ik := accountKey(account), addressKey(address)
	sa, si := t.lockPair(ak, ik)
	defer unlockPair(sa, si)
	wait := max(sa.wait(ak, loginFailsPerAccount, now), si.wait(ik, loginFailsPerAddress, now))
	if wait > 0 {
		return 0, wait
	}
	sa.record(ak, loginFailsPerAccount, now)
	si.record(ik, loginFailsPerAddress, now)
	return now, 0
}

// succeeded takes back the attempt begun at at and clears the account's
// failures.
func (t *loginThrottle) succeeded(account, address string, at int64) {
	ak, ik := accountKey(account), addressKey(address)
	sa, si := t.lockPair(ak, ik)
	defer unlockPair(sa, si)
	delete(sa.m, ak)
	if ts := si.m[ik]; len(ts) > 0 {
		for i := len(ts) - 1; i >= 0; i-- {
			if ts[i] == at {
				ts = append(ts[:i], ts[i+1:]...)
				break
			}
		}
		if len(ts) == 0 {
			delete(si.m, ik)
		} else {
			si.m[ik] = ts
		}
	}
}

// lockPair locks the shards of two keys in index order (they may be the
// same shard) and returns them.
func (t *loginThrottle) lockPair(k1, k2 string) (*throttleShard, *throttleShard) {
	i, j := t.shardIndex(k1), t.shardIndex(k2)
	a, b := &t.shards[i], &t.shards[j]
	switch {
	case i == j:
		a.mu.Lock()
	case i < j:
		a.mu.Lock()
		b.mu.Lock()
	default:
		b.mu.Lock()
		a.mu.Lock()
	}
	return a, b
}

func unlockPair(a, b *throttleShard) {
	a.mu.Unlock()
	if a != b {
		b.mu.Unlock()
	}
}

// waitText says how long to wait, in words, rounded up to the minute.
func waitText(d time.Duration) string {
	m := int((d + time.Minute - 1) / time.Minute)
	if m <= 1 {
		return "a minute"
	}
	return strconv.Itoa(m) + " minutes"
}

// dummyHash is checked when the account does not exist, so that a wrong
// name takes as long as a wrong password (no account enumeration by timing).
var dummyHash = sync.OnceValue(func() string {
	h, err := auth.HashPassword(auth.NewSecret(16))
	if err != nil {
		return ""
	}
	return h
})
