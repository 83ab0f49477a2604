package actionapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/wiki"
)

// Viewer is who makes a request, as the web server resolved it.
type Viewer struct {
	UserID   int64
	Name     string // the user's name; the client's address for anonymous viewers
	Group    wiki.Group
	LoggedIn bool
	// Bearer: authenticated by an API token in the Authorization header
	// (no cookie, so no ambient credential).
	Bearer     bool
	Registered time.Time
}

// Host is what the web server gives the API: who is asking, what they may
// do, their tokens, the login throttle and the rate limits. The API never
// reads cookies or sessions itself.
type Host interface {
	Viewer(r *http.Request) Viewer
	// RequireRead, RequireEdit and RequireAdmin return a wiki.Error
	// (KindUnauthorized or KindForbidden) when the viewer may not.
	RequireRead(r *http.Request) error
	RequireEdit(r *http.Request) error
	RequireAdmin(r *http.Request) error
	RequireUpload(r *http.Request) error
	// Block returns the viewer's block in force, if any.
	Block(r *http.Request) (*wiki.Block, error)
	// Editor is the viewer as the author of a change.
	Editor(r *http.Request) engine.Editor
	// CSRFToken is the viewer's token for changes: the session's secret,
	// or a signed, expiring token for anonymous viewers. ValidToken checks
	// one against the viewer's session.
	CSRFToken(r *http.Request) string
	ValidToken(r *http.Request, token string) bool
	// Login checks a user name and secret through the login throttle and,
	// on success, starts a session (the site's session cookie on w). With
	// apiToken the secret is one of the user's API tokens; else the
	// account's password.
	Login(w http.ResponseWriter, r *http.Request, name, secret string, apiToken bool) (wiki.User, error)
	// Logout ends the request's session and clears its cookie.
	Logout(w http.ResponseWriter, r *http.Request) error
	// Watch adds t (and its talk page) to the logged-in viewer's
	// watchlist, or removes it; AutoWatch does what the edit form does
	// after a save (the user's preference).
	Watch(r *http.Request, t wiki.Title, on bool) error
	AutoWatch(r *http.Request, t wiki.Title)
	// Allow counts one event of kind ("write", "upload", "parse") for the
	// viewer, or says how long to wait.
	Allow(r *http.Request, kind string) (time.Duration, bool)
}

// Site is what siteinfo tells about the wiki.
type Site struct {
	Name              string
	MainPage          wiki.Title
	AllowRegistration bool
	ReadGroup         wiki.Group
	EditGroup         wiki.Group
	MaxUploadBytes    int64
	Rules             wiki.TitleRules
}

// API serves /w/api.php requests other than opensearch.
type API struct {
	host  Host
	eng   *engine.Engine
	store wiki.Store
	site  Site
	now   func() time.Time
	host0 string // servedby
}

// New builds the API.
func New(host Host, eng *engine.Engine, site Site, now func() time.Time) *API {
	if now == nil {
		now = time.Now
	}
	name, _ := os.Hostname()
	if name == "" {
		name = "wikid"
	}
	return &API{host: host, eng: eng, store: eng.Store(), site: site, now: now, host0: name}
}

// Limits of what one request may cost.
const (
	maxLimit  = 500 // list limits: "max" and anything larger become this
	maxTitles = 50  // titles=, pageids=, revids= values per request

	maxParamBytes = 4 << 20 // a parameter's value (edit text is bounded again by the engine)
)

// contentBudget is how many bytes of page text one response may carry
// (MediaWiki's $wgAPIMaxResultSize): past it, prop=revisions continues.
var contentBudget = 8 << 20

// apiError is an error in MediaWiki's terms: a code and a message.
type apiError struct {
	code   string
	info   string
	status int
	retry  time.Duration
}

func (e *apiError) Error() string { return e.code + ": " + e.info }

func errf(code, format string, args ...any) *apiError {
	return &apiError{code: code, info: fmt.Sprintf(format, args...)}
}

// params are a request's parameters: the query and, for a POST, the body.
type params struct {
	vals  map[string]string
	order []string
	used  map[string]bool
	files map[string]*multipart.FileHeader
	form  *multipart.Form
	// query: the names the URL's query gave (tokens must not be there),
	// as the one parse read them.
	query map[string]bool
}

// inQuery reports whether name was in the URL's query.
func (p *params) inQuery(name string) bool { return p.query[name] }

func (p *params) has(name string) bool { _, ok := p.vals[name]; p.used[name] = true; return ok }

func (p *params) get(name string) string { p.used[name] = true; return p.vals[name] }

// flag is a boolean parameter: present (with any value) is true, as
// MediaWiki reads them.
func (p *params) flag(name string) bool { return p.has(name) }

// list is a multi-value parameter, split on '|' (or on U+001F when the
// value starts with it, as MediaWiki allows for values containing '|').
func (p *params) list(name string) []string {
	v := p.get(name)
	if v == "" {
		return nil
	}
	if strings.HasPrefix(v, "\x1f") {
		return strings.Split(v[1:], "\x1f")
	}
	return strings.Split(v, "|")
}

// enum is a multi-value parameter whose values must be among allowed:
// unknown ones are dropped with a warning, as MediaWiki does.
func (c *call) enum(name string, allowed ...string) []string {
	var out []string
	for _, v := range c.p.list(name) {
		if slices.Contains(allowed, v) {
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
			continue
		}
		c.warn(c.module, fmt.Sprintf("Unrecognized value for parameter \"%s\": %s.", name, trunc(v, 60)))
	}
	return out
}

// one is a single-value parameter that must be one of allowed; "" when absent.
func (c *call) one(name string, allowed ...string) (string, error) {
	v := c.p.get(name)
	if v == "" || slices.Contains(allowed, v) {
		return v, nil
	}
	return "", errf("badvalue", "Unrecognized value for parameter \"%s\": %s. Use one of: %s.", name, trunc(v, 60), strings.Join(allowed, ", "))
}

// limit reads a list limit: a number or "max", default def, at most
// maxLimit (a larger one is lowered with a warning, as MediaWiki does).
func (c *call) limit(name string, def int) (int, error) {
	v := c.p.get(name)
	if v == "" {
		return def, nil
	}
	top := maxLimit
	if c.generator {
		// A generator's pages are each read again (info, protection,
		// categories): fewer of them per batch.
		top = maxTitles
	}
	if v == "max" {
		return top, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, errf("badinteger", "Invalid value \"%s\" for integer parameter \"%s\": give a number from 1 to %d, or max.", trunc(v, 40), name, top)
	}
	if n < 1 {
		return 0, errf("badvalue", "The value of \"%s\" must be at least 1.", name)
	}
	if n > top {
		c.warn(c.module, fmt.Sprintf("\"%s\" may not be over %d (set to %d) for users.", name, top, top))
		n = top
	}
	return n, nil
}

func (c *call) int64(name string) (int64, error) {
	v := c.p.get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, errf("badinteger", "Invalid value \"%s\" for integer parameter \"%s\".", trunc(v, 40), name)
	}
	return n, nil
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// call is one request being answered.
type call struct {
	a      *API
	w      http.ResponseWriter
	r      *http.Request
	ctx    context.Context
	p      *params
	v      Viewer
	v2     bool   // formatversion=2
	module string // for warnings
	out    map[string]any
	warns  map[string][]string
	// warned counts each module's warnings, those left out included:
	// a request may cause one per value it sends.
	warned   map[string]int
	warnSeen map[string]bool
	budget   int // bytes of page text still allowed in this response
	// generator: the list module being run is the query's generator.
	generator bool
}

// ServeHTTP answers one api.php request. The web server has resolved the
// viewer and bounded the body; the request is parsed here once.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := &call{a: a, w: w, r: r, ctx: r.Context(), out: map[string]any{}, warns: map[string][]string{}, budget: contentBudget, module: "main"}
	p, err := parseParams(r)
	if p != nil && p.form != nil {
		defer p.form.RemoveAll()
	}
	if err != nil {
		c.p = &params{vals: map[string]string{}, used: map[string]bool{}}
		c.fail(err)
		return
	}
	c.p = p
	c.v2 = p.get("formatversion") == "2" || p.get("formatversion") == "latest"
	c.v = a.host.Viewer(r)
	if f := p.get("format"); f != "" && f != "json" {
		c.fail(errf("badvalue", "Unrecognized value for parameter \"format\": %s. Wikid answers format=json only.", trunc(f, 40)))
		return
	}
	for _, name := range []string{"utf8", "ascii", "errorformat", "errorlang", "errorsuselocal", "uselang", "maxlag", "smaxage", "maxage",
		"requestid", "origin", "callback", "responselanginfo", "centralauthtoken", "variant", "crossorigin", "servedby", "curtimestamp", "assertuser"} {
		p.used[name] = true
	}
	if id := p.vals["requestid"]; id != "" {
		c.out["requestid"] = id
	}
	if p.has("servedby") {
		c.out["servedby"] = a.host0
	}
	if p.has("curtimestamp") {
		c.out["curtimestamp"] = mwTime(a.now())
	}
	if err := c.checkAssert(); err != nil {
		c.fail(err)
		return
	}
	action := p.get("action")
	h, ok := actions[action]
	if !ok {
		if action == "" {
			c.fail(errf("noaction", "The action parameter must be set: action=query for reads, action=edit to change a page; see /w/api.php?action=paraminfo&modules=main."))
		} else {
			c.fail(errf("badvalue", "Unrecognized value for parameter \"action\": %s. Known actions: %s.", trunc(action, 40), strings.Join(actionNames(), ", ")))
		}
		return
	}
	c.module = action
	if h.post && r.Method != http.MethodPost {
		c.fail(&apiError{code: "mustbeposted", info: fmt.Sprintf("The \"%s\" module requires a POST request.", action), status: http.StatusMethodNotAllowed})
		return
	}
	if h.read {
		if err := a.host.RequireRead(r); err != nil {
			c.fail(errf("readapidenied", "You need read permission to use this module: %s", wiki.Message(err)))
			return
		}
	}
	if h.token != "" {
		if err := c.checkToken(h.token); err != nil {
			c.fail(err)
			return
		}
	}
	if err := h.run(c); err != nil {
		c.fail(err)
		return
	}
	c.unknownParams()
	c.write(http.StatusOK)
}

// checkAssert applies assert=user|bot|anon and assertuser=Name.
func (c *call) checkAssert() error {
	switch c.p.get("assert") {
	case "":
	case "user", "bot":
		if !c.v.LoggedIn {
			return errf("assertuserfailed", "You are no longer logged in, so the action could not be completed; log in again.")
		}
	case "anon":
		if c.v.LoggedIn {
			return errf("assertanonfailed", "You are logged in as %s; log out to do this as an anonymous user.", c.v.Name)
		}
	default:
		return errf("badvalue", "Unrecognized value for parameter \"assert\": %s. Use user, bot or anon.", trunc(c.p.get("assert"), 40))
	}
	if u := c.p.get("assertuser"); u != "" && (!c.v.LoggedIn || !strings.EqualFold(strings.ReplaceAll(u, "_", " "), c.v.Name)) {
		return errf("assertnameduserfailed", "You are not logged in as %s; log in as that user.", trunc(u, 60))
	}
	return nil
}

// checkToken requires the token parameter of a write: the viewer's CSRF
// token (or login token), never ambient cookies alone.
func (c *call) checkToken(kind string) error {
	name := "token"
	if kind == "login" {
		name = "lgtoken"
		if c.module == "clientlogin" {
			name = "logintoken"
		}
	}
	tok := c.p.get(name)
	if tok == "" {
		return errf("missingparam", "The \"%s\" parameter must be set: get it with action=query&meta=tokens&type=%s.", name, kind)
	}
	if c.p.inQuery(name) {
		return errf("mustposttoken", "The \"%s\" parameter was found in the query string, but must be in the POST body.", name)
	}
	if !c.a.host.ValidToken(c.r, strings.TrimSuffix(tok, tokenSuffix)) || !strings.HasSuffix(tok, tokenSuffix) {
		return errf("badtoken", "Invalid CSRF token: it belongs to another session or expired; get a new one with action=query&meta=tokens&type=%s.", kind)
	}
	return nil
}

// tokenSuffix ends every token, as MediaWiki's: a client or proxy that
// mangles "+" or "\" is caught by the check.
const tokenSuffix = "+\\"

// maxWarnings is how many warnings one module shows in an answer; the
// rest are counted in one last line.
const maxWarnings = 20

// warn adds a warning for module, once, in constant time: a request may
// cause one per value it sends (hundreds of thousands), so the answer
// shows the first maxWarnings and counts the rest.
func (c *call) warn(module, msg string) {
	if c.warnSeen == nil {
		c.warnSeen, c.warned = map[string]bool{}, map[string]int{}
	}
	key := module + "\x00" + msg
	if c.warnSeen[key] {
		return
	}
	if c.warned[module]++; c.warned[module] > maxWarnings {
		return
	}
	c.warnSeen[key] = true
	c.warns[module] = append(c.warns[module], msg)
}

// unknownParams warns of parameters no module read.
func (c *call) unknownParams() {
	var unknown []string
	more := 0
	for _, name := range c.p.order {
		if !c.p.used[name] && name != "action" && name != "format" && name != "formatversion" {
			if len(unknown) == maxWarnings {
				more++
				continue
			}
			unknown = append(unknown, trunc(name, 60))
		}
	}
	if len(unknown) > 0 {
		msg := "Unrecognized parameters: " + strings.Join(unknown, ", ")
		if more > 0 {
			msg += fmt.Sprintf(" and %d more", more)
		}
		c.warn("main", msg+".")
	}
}

// fail answers err in MediaWiki's error shape.
func (c *call) fail(err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = c.mapError(err)
	}
	body := map[string]any{"code": ae.code, "info": ae.info}
	if c.v2 {
		body["docref"] = "See /w/api.php?action=paraminfo for the modules and their parameters."
	} else {
		body["*"] = "See /w/api.php?action=paraminfo for the modules and their parameters."
	}
	c.out = map[string]any{"error": body}
	if c.p != nil {
		if id := c.p.vals["requestid"]; id != "" {
			c.out["requestid"] = id
		}
	}
	c.out["servedby"] = c.a.host0 // as MediaWiki, on every error
	c.w.Header().Set("MediaWiki-API-Error", ae.code)
	if ae.retry > 0 {
		c.w.Header().Set("Retry-After", strconv.Itoa(int((ae.retry+time.Second-1)/time.Second)))
	}
	status := ae.status
	if status == 0 {
		status = http.StatusOK // MediaWiki answers API errors with 200
	}
	c.write(status)
}

// write sends c.out through the one response builder, never stored.
func (c *call) write(status int) {
	if len(c.warns) > 0 {
		w := map[string]any{}
		for m, msgs := range c.warns {
			if n := c.warned[m] - len(msgs); n > 0 {
				msgs = append(msgs[:len(msgs):len(msgs)], fmt.Sprintf("%d more warnings were left out.", n))
			}
			text := strings.Join(msgs, "\n")
			if c.v2 {
				w[m] = map[string]any{"warnings": text}
			} else {
				w[m] = map[string]any{"*": text}
			}
		}
		c.out["warnings"] = w
	}
	b, err := json.Marshal(c.out)
	if err != nil {
		b = []byte(`{"error":{"code":"internal_api_error","info":"the answer could not be encoded"}}`)
	}
	httpx.Write(c.w, c.r, &httpx.Response{Status: status, Type: "application/json; charset=utf-8", Body: append(b, '\n'), Cache: httpx.NoStore})
}

// mapError turns an engine or store error into MediaWiki's code.
func (c *call) mapError(err error) *apiError {
	msg := wiki.Message(err)
	var (
		protected *engine.ProtectedError
		conflict  *engine.ConflictError
		deleted   *engine.DeletedError
		moved     *engine.MovedError
		mbe       *http.MaxBytesError
		we        *wiki.Error
	)
	switch {
	case errors.As(err, &mbe):
		return errf("toobig", "The request body is larger than the limit of %d bytes; send less text.", mbe.Limit)
	case errors.As(err, &protected):
		if protected.Creating {
			return errf("protectedtitle", "%s", msg)
		}
		return errf("protectedpage", "%s", msg)
	case errors.As(err, &conflict):
		return errf("editconflict", "Edit conflict: the page changed since your base revision (now r%d); read it again, merge and resend.", conflict.CurrentRev)
	case errors.As(err, &deleted):
		return errf("pagedeleted", "%s", msg)
	case errors.As(err, &moved):
		return errf("articleexists", "%s", msg)
	case errors.Is(err, context.Canceled):
		return errf("internal_api_error_Canceled", "the request was canceled")
	}
	ae := &apiError{info: msg}
	if errors.As(err, &we) && we.RetryAfter > 0 {
		ae.retry = we.RetryAfter
	}
	switch wiki.KindOf(err) {
	case wiki.KindInvalid:
		ae.code = "badvalue"
	case wiki.KindUnauthorized, wiki.KindForbidden:
		ae.code = "permissiondenied"
	case wiki.KindNotFound:
		ae.code = "missingtitle"
	case wiki.KindConflict:
		ae.code = "editconflict"
	case wiki.KindTooLarge:
		ae.code = "contenttoobig"
	case wiki.KindTooMany:
		ae.code = "ratelimited"
	case wiki.KindUnavailable:
		ae.code, ae.status = "maxlag", http.StatusServiceUnavailable
		if ae.retry == 0 {
			ae.retry = 5 * time.Second
		}
	default:
		ae.code, ae.info, ae.status = "internal_api_error_Error", "An internal error happened; it was logged. Try again in a moment.", http.StatusInternalServerError
	}
	return ae
}

// parseParams reads the query and, for a POST, the form or multipart
// body, through httpx's one decoder. A name given twice with different
// values is refused, as httpx refuses it elsewhere.
func parseParams(r *http.Request) (*params, error) {
	p := &params{vals: map[string]string{}, used: map[string]bool{}}
	add := func(q httpx.Query) error {
		for _, kv := range q {
			if len(kv.Value) > maxParamBytes {
				return errf("toobig", "The parameter \"%s\" is longer than %d bytes.", trunc(kv.Name, 40), maxParamBytes)
			}
			if old, ok := p.vals[kv.Name]; ok {
				if old != kv.Value {
					return errf("badvalue", "The parameter \"%s\" is given twice with different values; give it once.", trunc(kv.Name, 40))
				}
				continue
			}
			p.vals[kv.Name] = kv.Value
			p.order = append(p.order, kv.Name)
		}
		return nil
	}
	q, err := httpx.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, errf("badvalue", "%s", wiki.Message(err))
	}
	p.query = map[string]bool{}
	for _, kv := range q {
		p.query[kv.Name] = true
	}
	if err := add(q); err != nil {
		return nil, err
	}
	if r.Method != http.MethodPost {
		return p, nil
	}
	ct, mp, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/x-www-form-urlencoded", "":
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, bodyError(err)
		}
		q, err := httpx.ParseQuery(string(body))
		if err != nil {
			return nil, errf("badvalue", "%s", wiki.Message(err))
		}
		return p, add(q)
	case "multipart/form-data":
		if mp["boundary"] == "" {
			return nil, errf("badvalue", "The multipart body has no boundary; send it as multipart/form-data with a boundary.")
		}
		// The body is bounded (the server's body limit), so the form
		// stays in memory.
		form, err := multipart.NewReader(r.Body, mp["boundary"]).ReadForm(64 << 20)
		if err != nil {
			return nil, bodyError(err)
		}
		p.form = form
		var fq httpx.Query
		for name, vs := range form.Value {
			for _, v := range vs {
				if !utf8.ValidString(v) {
					return nil, errf("badvalue", "The parameter \"%s\" is not valid UTF-8.", trunc(name, 40))
				}
				fq = append(fq, httpx.Pair{Name: name, Value: v})
			}
		}
		slices.SortStableFunc(fq, func(a, b httpx.Pair) int { return strings.Compare(a.Name, b.Name) })
		if err := add(fq); err != nil {
			return nil, err
		}
		p.files = map[string]*multipart.FileHeader{}
		for name, fs := range form.File {
			if len(fs) > 0 {
				p.files[name] = fs[0]
				p.order = append(p.order, name)
			}
		}
		return p, nil
	}
	return nil, errf("badvalue", "Send the parameters as application/x-www-form-urlencoded or multipart/form-data, not %s.", trunc(ct, 60))
}

func bodyError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &apiError{code: "toobig", info: fmt.Sprintf("The request body is larger than the limit of %d bytes.", mbe.Limit), status: http.StatusRequestEntityTooLarge}
	}
	return errf("badvalue", "The request body could not be read: %v", err)
}

// mwTime formats t as MediaWiki's API does.
func mwTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// flagVal is a boolean in the answer: "" present in formatversion 1,
// true in 2 (absent when false, in both).
func (c *call) setFlag(m map[string]any, key string, on bool) {
	if !on {
		return
	}
	if c.v2 {
		m[key] = true
	} else {
		m[key] = ""
	}
}

// handler is one action module.
type handler struct {
	run   func(*call) error
	post  bool   // must be POSTed
	token string // the token it requires ("csrf", "login"), if any
	read  bool   // needs read permission
}

var actions map[string]handler

func init() {
	actions = map[string]handler{
		"query":       {run: (*call).query},
		"parse":       {run: (*call).parse, read: true},
		"login":       {run: (*call).login, post: true},
		"clientlogin": {run: (*call).clientLogin, post: true},
		"logout":      {run: (*call).logout, post: true, token: "csrf"},
		"edit":        {run: (*call).edit, post: true, token: "csrf", read: true},
		"move":        {run: (*call).move, post: true, token: "csrf", read: true},
		"delete":      {run: (*call).delete, post: true, token: "csrf", read: true},
		"protect":     {run: (*call).protect, post: true, token: "csrf", read: true},
		"upload":      {run: (*call).upload, post: true, token: "csrf", read: true},
		"paraminfo":   {run: (*call).paraminfo},
		"watch":       {run: (*call).watch, post: true, token: "watch", read: true},
	}
}

func actionNames() []string {
	names := []string{"opensearch"}
	for n := range actions {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
