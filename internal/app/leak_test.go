package app_test

// The cache-leak matrix, run against the whole app with the
// front server on a real port: every combination of
//
//	{anonymous, user A, user B, admin}
//	× {cookies: none, junk, forged session, expired session, two session cookies}
//	× {GET, HEAD, conditional GET, and a Range GET for files}
//	× {article, special page, edit form, preview, api.php, content model form, an uploaded image, its thumbnail}
//
// with the principals interleaved in every order (the files in four orders
// that cover every pair), each request on a new connection (the front hands
// a connection to net/http for good after its first non-fast request), plus
// one keep-alive connection shared by every principal (as a proxy in front
// shares its backend connections). Every response is checked for another
// principal's user bar, CSRF token, session token and private preview text,
// for its Cache-Control, X-Cache, Set-Cookie and security headers, and for
// inline script (CSP); a file's answers are checked to be exactly its bytes,
// public and tagged for anonymous readers, private and never from the edge
// for sessions. After each sequence the anonymous edge entries are
// inspected directly.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/wikid/wikid/internal/app"
	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/edge"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/purge"
	"github.com/wikid/wikid/internal/race"
	"github.com/wikid/wikid/internal/wiki"
)

// principal is who sends a request. The zero principal is anonymous.
type principal struct {
	label   string // "anonymous", "A", "B", "admin"
	user    string // account name, "" for anonymous
	token   string // a valid session token
	csrf    string // that session's CSRF token
	expired string // a session token of this user that has expired
}

func (p *principal) loggedIn() bool { return p.user != "" }

// leakWorld is the state the matrix runs in.
type leakWorld struct {
	t         *testing.T
	a         *app.App
	base      string
	anon      *principal
	users     []*principal // A, B, admin
	all       []*principal // anon, A, B, admin
	anonCSRF  string       // a signed anonymous form token
	baserev   string
	previews  map[*principal][]string // private preview texts sent by each principal
	file      leakFile                // an image an administrator uploaded
	paths     [numTargets]string      // each target's path
	responses atomic.Int64
	htmlPages atomic.Int64
	xcache    map[string]int // X-Cache values seen
}

var csrfFieldRE = regexp.MustCompile(`name="csrf" value="([^"]*)"`)

func newLeakWorld(t *testing.T, opts ...func(*config.Config)) *leakWorld {
	t.Helper()
	// ops_addr: /metrics, read at the end, answers only administrators on addr.
	a, base := apptest.Serve(t, append([]func(*config.Config){func(c *config.Config) { c.OpsAddr = "127.0.0.1:0" }}, opts...)...)
	w := &leakWorld{t: t, a: a, base: base, anon: &principal{label: "anonymous"}, previews: map[*principal][]string{}, xcache: map[string]int{}}
	ctx := context.Background()
	form := w.raw("GET", "/wiki/Special:UserLogin", "", nil)
	m := csrfFieldRE.FindStringSubmatch(form.body)
	if m == nil {
		t.Fatalf("no csrf in the login form (%d)", form.status)
	}
	w.anonCSRF = m[1]
	for _, u := range []struct {
		label, name string
		group       wiki.Group
	}{{"A", "Alicia", wiki.GroupUser}, {"B", "Bertram", wiki.GroupUser}, {"admin", "Rootadmin", wiki.GroupAdmin}} {
		pw := "pw-" + strings.ToLower(u.name) + "-secret"
		hash, err := auth.HashPassword(pw)
		if err != nil {
			t.Fatal(err)
		}
		acct, err := a.Store.CreateUser(ctx, wiki.User{Name: u.name, PasswordHash: hash, Group: u.group, Created: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		p := &principal{label: u.label, user: u.name}
		res := w.raw("POST", "/wiki/Special:UserLogin", "", url.Values{"csrf": {w.anonCSRF}, "username": {u.name}, "password": {pw}})
		if res.status != http.StatusSeeOther {
			t.Fatalf("login %s: %d\n%s", u.name, res.status, res.body)
		}
		for _, c := range (&http.Response{Header: res.header}).Cookies() {
			if c.Name == "wikid_session" {
				p.token = c.Value
			}
		}
		sess, err := a.Store.FindSession(ctx, auth.HashToken(p.token))
		if err != nil {
			t.Fatalf("session of %s: %v", u.name, err)
		}
		p.csrf = sess.CSRF
		p.expired = auth.NewSecret(32)
		now := time.Now()
		if err := a.Store.CreateSession(ctx, wiki.Session{ID: auth.HashToken(p.expired), UserID: acct.ID, CSRF: auth.NewSecret(24),
			Created: now.Add(-2 * time.Hour), Expires: now.Add(-time.Hour)}); err != nil {
			t.Fatal(err)
		}
		w.users = append(w.users, p)
	}
	w.all = append([]*principal{w.anon}, w.users...)
	page, err := a.Store.FindPage(ctx, wiki.MustTitle("Main Page"))
	if err != nil {
		t.Fatal(err)
	}
	// A's per-user parts: A watches the main page and has an unread
	// notification, so that A's views show a lit star and a count that
	// no one else's may.
	alicia, err := a.Store.FindUserByName(ctx, w.users[0].user)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Store.WatchTitles(ctx, alicia.ID, wiki.WatchPair("Main Page"), time.Time{}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := a.Store.AddNotifications(ctx, []wiki.Notification{{UserID: alicia.ID, Kind: wiki.NotifyTalk,
		Title: "User talk:Alicia", Agent: "Bertram", Time: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	a.Web.ForgetUsers(alicia.ID)
	w.baserev = fmt.Sprint(page.LatestID)
	// The image is uploaded by another administrator: Special:RecentChanges
	// shows the uploader's contributions link, which the checks take for a
	// principal's user bar.
	uploader, err := a.Store.CreateUser(ctx, wiki.User{Name: "Fileadmin", Group: wiki.GroupAdmin, Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	w.file = uploadLeakFile(t, a, uploader, "Leak image.png")
	w.paths = [numTargets]string{"/wiki/Main_Page", "/wiki/Special:RecentChanges", "/wiki/Main_Page?action=edit", "/wiki/Main_Page?action=submit",
		leakAPIPath, "/wiki/Main_Page?action=editmodel", w.file.original, w.file.thumbURL}
	return w
}

// leakFile is an uploaded image and its thumbnail, as the media URLs must
// serve them.
type leakFile struct {
	title              wiki.Title
	data, thumb        []byte // the original's bytes and the thumbnail's
	original, thumbURL string // their URLs
	etag, thumbETag    string
	surrogateKey       string // the key of the file's media tag
}

// thumbWidth is the thumbnail width the tests ask for: a standard one,
// made for anyone.
const thumbWidth = 120

// uploadLeakFile uploads a 300×200 PNG as File:name by u, makes its thumbnail thumbWidth wide, and waits for the upload's
// jobs, so that none of its purges lands in a test.
func uploadLeakFile(t *testing.T, a *app.App, u wiki.User, name string) leakFile {
	t.Helper()
	ctx := context.Background()
	data := gradientPNG(t, 300, 200)
	out, err := a.Engine.Upload(ctx, engine.Upload{Title: wiki.MustTitle("File:" + name), Data: data, Comment: "a file for the leak tests",
		Editor: engine.Editor{UserID: u.ID, UserName: u.Name, Group: u.Group}})
	if err != nil {
		t.Fatalf("upload %s: %v", name, err)
	}
	v := out.Version
	th, thumb, err := a.Engine.Thumbnail(ctx, v, thumbWidth, nil)
	if err != nil {
		t.Fatalf("thumbnail of %s: %v", name, err)
	}
	waitJobs(t, a)
	return leakFile{title: v.Title, data: data, thumb: thumb,
		original: wiki.OriginalURL(v.SHA256, v.Name()), thumbURL: wiki.ThumbURL(v.SHA256, v.Name(), thumbWidth),
		etag: `"` + v.SHA256[:32] + `"`, thumbETag: `"` + th.SHA256[:32] + `"`,
		surrogateKey: purge.SurrogateKey(purge.TitleTag(wiki.FileMediaTitle(v.Title)))}
}

// gradientPNG is a w×h PNG whose every pixel differs from its neighbours,
// so that its thumbnail is an image of its own.
func gradientPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), uint8(x ^ y), 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// waitJobs waits until a's job queue has nothing queued or running.
func waitJobs(t *testing.T, a *app.App) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := a.Store.JobStats(context.Background())
		if err == nil && st.Counts[wiki.JobQueued] == 0 && st.Counts[wiki.JobRunning] == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job queue did not settle: %+v, %v", st, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

type rawResponse struct {
	status int
	header http.Header
	body   string
}

// raw sends one request on a new connection. cookies holds Cookie header
// lines (each sent as its own line).
func (w *leakWorld) raw(method, path string, _ string, form url.Values, header ...string) rawResponse {
	w.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, w.base+path, body)
	if err != nil {
		w.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, h := range header {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Add(k, v)
	}
	tr := &http.Transport{DisableKeepAlives: true, DisableCompression: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		w.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return rawResponse{res.StatusCode, res.Header, string(b)}
}

// metrics reads /metrics from the ops listener.
func (w *leakWorld) metrics() rawResponse {
	w.t.Helper()
	res, err := http.Get("http://" + w.a.OpsAddr() + "/metrics")
	if err != nil {
		w.t.Fatalf("GET /metrics on ops_addr: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return rawResponse{res.StatusCode, res.Header, string(b)}
}

// Cookie variants.
const (
	ckNone = iota
	ckJunk
	ckForged
	ckExpired
	ckTwo
	numCookieVariants
)

var cookieVariantNames = [...]string{"none", "junk", "forged", "expired", "two-sessions"}

// cookieLines returns the Cookie header lines principal p sends in variant
// v, and who the wiki must take the request to be from. split puts two
// session cookies on two header lines instead of one.
func (w *leakWorld) cookieLines(p *principal, v int, split bool) ([]string, *principal) {
	other := w.users[0] // another principal's valid token, for the adversarial variants
	if p == w.users[0] {
		other = w.users[1]
	}
	admin := w.users[2]
	switch v {
	case ckNone:
		if !p.loggedIn() {
			return nil, w.anon
		}
		return []string{"wikid_session=" + p.token}, p
	case ckJunk:
		// Look-alike names carry another principal's valid token: only the
		// exact name wikid_session counts.
		junk := "_ga=GA1.2.3.4; WMF-Last-Access=05-Jan-2026; WIKID_SESSION=" + other.token + "; wikid_session_old=" + other.token + "; xwikid_session=" + admin.token
		if !p.loggedIn() {
			return []string{junk}, w.anon
		}
		return []string{"theme=dark; wikid_session=" + p.token + "; " + junk}, p
	case ckForged:
		if !p.loggedIn() {
			return []string{"wikid_session=" + strings.Repeat("A", 43)}, w.anon
		}
		t := []byte(p.token)
		if t[len(t)-1] == 'A' {
			t[len(t)-1] = 'B'
		} else {
			t[len(t)-1] = 'A'
		}
		return []string{"wikid_session=" + string(t)}, w.anon
	case ckExpired:
		if !p.loggedIn() {
			return []string{"wikid_session=" + admin.expired}, w.anon
		}
		return []string{"wikid_session=" + p.expired}, w.anon
	case ckTwo:
		first := "wikid_session=" + strings.Repeat("Z", 43)
		if p.loggedIn() {
			first = "wikid_session=" + p.token
		}
		second := "wikid_session=" + other.token
		if split {
			return []string{first, second}, w.anon
		}
		return []string{first + "; " + second}, w.anon
	}
	panic("unknown cookie variant")
}

// Targets.
const (
	tgArticle = iota
	tgSpecial
	tgEdit
	tgPreview
	tgAPI       // an Action API read of the viewer's name and tokens
	tgEditModel // the content model form (?action=editmodel)
	tgOriginal  // an uploaded image's bytes
	tgThumb     // its thumbnail
	numTargets
)

var targetNames = [...]string{"article", "special", "edit form", "preview", "api.php", "content model form", "original file", "thumbnail"}

// leakAPIPath reads who the viewer is and their CSRF token through the
// Action API: a per-session answer at a URL anyone may request.
const leakAPIPath = "/w/api.php?action=query&meta=userinfo%7Ctokens&uiprop=groups%7Crights&type=csrf%7Clogin&format=json"

func isMedia(target int) bool { return target == tgOriginal || target == tgThumb }

// Methods.
const (
	mGET = iota
	mHEAD
	mCond
	mRange // files only: a GET of bytes 8–15, answered 206 from the store
	numMethods
)

var methodNames = [...]string{"GET", "HEAD", "conditional GET", "Range GET"}

// reqKind says what rules a response follows.
type reqKind int

const (
	kindRead reqKind = iota // a page view: public for anonymous, private for a session
	kindForm                // a form: no-store
	kindPost                // a POST result (preview): no-store
	kindOdd                 // a non-canonical target: a 301, a 400 or an answer, never stored
)

// check applies the per-response rules. who is the principal the response
// must belong to.
func (w *leakWorld) check(cell string, method string, kind reqKind, who *principal, res rawResponse) {
	t := w.t
	t.Helper()
	w.responses.Add(1)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s: %s → %d: %s", cell, method, res.status, fmt.Sprintf(format, args...))
	}
	body := res.body
	// Nobody else's user bar, tokens or private text.
	for _, q := range w.users {
		if q == who {
			continue
		}
		for _, s := range []string{`class="me"><bdi>` + q.user + `<`, "Contributions/" + q.user, q.csrf, q.token, `"name":"` + q.user + `"`} {
			if strings.Contains(body, s) {
				fail("carries %s's private data %q", q.label, s)
			}
		}
		for _, s := range w.previews[q] {
			if strings.Contains(body, s) {
				fail("carries %s's preview text", q.label)
			}
		}
	}
	if !who.loggedIn() {
		if strings.Contains(body, `class="me"`) || strings.Contains(body, "Log out") {
			fail("an anonymous response shows a user bar")
		}
		if strings.Contains(body, `class="watch`) || strings.Contains(body, `class="notifications`) {
			fail("an anonymous response shows a watch star or notifications")
		}
	}
	// The per-user parts: only A watches the main page and has an unread
	// notification.
	if who != w.users[0] {
		if strings.Contains(body, `class="watch watched"`) || strings.Contains(body, `unread"`) {
			fail("shows A's watch star or notification count")
		}
	} else if res.status == http.StatusOK && method != "HEAD" && strings.Contains(body, `<nav class="user"`) {
		if !strings.Contains(body, `aria-label="1 unread"`) {
			fail("lacks A's notification count")
		}
		if kind == kindRead && strings.HasPrefix(res.header.Get("Content-Type"), "text/html") && strings.Contains(body, `<nav class="tabs"`) &&
			strings.Contains(body, `href="/wiki/Main_Page?action=history"`) && !strings.Contains(body, `class="watch watched"`) {
			fail("lacks A's lit watch star")
		}
	}
	isHTML := strings.HasPrefix(res.header.Get("Content-Type"), "text/html")
	if isHTML && res.status != http.StatusNotModified && method != "HEAD" && strings.Contains(body, "<html") {
		if who.loggedIn() && !strings.Contains(body, `class="me"><bdi>`+who.user+`</bdi></a>`) {
			fail("lacks %s's own user bar", who.label)
		}
		for _, m := range csrfFieldRE.FindAllStringSubmatch(body, -1) {
			if who.loggedIn() && m[1] != who.csrf {
				fail("a CSRF field %q that is not %s's session token", m[1], who.label)
			}
			if !who.loggedIn() && !strings.Contains(m[1], ".") {
				fail("an anonymous page with a session-style CSRF token %q", m[1])
			}
		}
		w.checkNoInlineScript(cell, body)
		w.htmlPages.Add(1)
	}
	// Cache-Control.
	cc := res.header.Get("Cache-Control")
	okRead := kind == kindRead && (res.status == http.StatusOK || res.status == http.StatusNotModified)
	// A non-canonical target never fills the edge (it may be answered from
	// the entry of its canonical key, with no-store, checked below).
	if kind == kindOdd && res.header.Get("X-Cache") == "MISS" {
		fail("a non-canonical target went through the edge cache's fill (X-Cache MISS)")
	}
	switch {
	case okRead && !who.loggedIn():
		if !strings.HasPrefix(cc, "public") {
			fail("an anonymous read has Cache-Control %q, want public", cc)
		}
	case okRead:
		if !strings.Contains(cc, "private") || strings.Contains(cc, "public") {
			fail("a logged-in read has Cache-Control %q, want private", cc)
		}
	default:
		if cc != "no-store" {
			fail("Cache-Control %q, want no-store (forms, POST results, errors)", cc)
		}
	}
	// X-Cache: only an anonymous public read may come from the anonymous entry.
	xc := res.header.Get("X-Cache")
	w.xcache[fmt.Sprintf("%s %d", xc, res.status)]++
	switch xc {
	case "HIT":
		if who.loggedIn() || !okRead {
			fail("X-Cache HIT for a response that may not come from the anonymous entry")
		}
	case "SPLICE":
		if !who.loggedIn() || kind != kindRead {
			fail("X-Cache SPLICE for %s", who.label)
		}
	}
	// Set-Cookie: only login sets one; none is in the matrix.
	if sc := res.header.Values("Set-Cookie"); len(sc) > 0 {
		fail("Set-Cookie %q", sc)
	}
	// Security headers, on everything but a 304 (which repeats the validators)
	// and a redirect (whose body no browser renders).
	if res.status < 300 || res.status >= 400 {
		csp := res.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			fail("Content-Security-Policy %q", csp)
		}
		if res.header.Get("X-Content-Type-Options") != "nosniff" || res.header.Get("Referrer-Policy") == "" {
			fail("security headers missing: %v", res.header)
		}
	}
}

// checkNoInlineScript fails on what the CSP forbids in a page the wiki
// serves: inline <script> bodies, on* event attributes, style attributes,
// <style> elements and javascript: URLs.
func (w *leakWorld) checkNoInlineScript(cell, body string) {
	w.t.Helper()
	for _, p := range inlineScriptProblems(body) {
		w.t.Errorf("%s: CSP: %s", cell, p)
	}
}

func inlineScriptProblems(body string) []string {
	var out []string
	z := html.NewTokenizer(strings.NewReader(body))
	inScript := false
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return out
		case html.TextToken:
			if inScript && strings.TrimSpace(string(z.Text())) != "" {
				out = append(out, "an inline <script> body")
			}
		case html.EndTagToken:
			inScript = false
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			inScript = tok.Data == "script" && tt == html.StartTagToken
			if tok.Data == "style" {
				out = append(out, "a <style> element")
			}
			hasSrc := false
			for _, a := range tok.Attr {
				k := strings.ToLower(a.Key)
				switch {
				case strings.HasPrefix(k, "on"):
					out = append(out, fmt.Sprintf("<%s %s=…> event attribute", tok.Data, a.Key))
				case k == "style":
					out = append(out, fmt.Sprintf("<%s style=…> attribute", tok.Data))
				case k == "href" || k == "src" || k == "action" || k == "formaction":
					if strings.HasPrefix(strings.ToLower(strings.TrimSpace(a.Val)), "javascript:") {
						out = append(out, fmt.Sprintf("<%s %s=javascript:…>", tok.Data, a.Key))
					}
				}
				if k == "src" {
					hasSrc = true
				}
			}
			if tok.Data == "script" && !hasSrc {
				out = append(out, "a <script> without src")
			}
		}
	}
}

// request runs one cell's request(s) for principal p and checks them.
func (w *leakWorld) request(cell string, p *principal, cv, target, method int, seq int) {
	w.t.Helper()
	cookies, who := w.cookieLines(p, cv, method != mGET)
	var hdr []string
	for _, c := range cookies {
		hdr = append(hdr, "Cookie: "+c)
	}
	if isMedia(target) {
		w.requestMedia(cell, hdr, who, target, method)
		return
	}
	path := w.paths[target]
	kind := kindRead
	if target == tgEdit || target == tgAPI || target == tgEditModel {
		kind = kindForm // never stored: no-store
	}
	if target == tgPreview {
		// The preview POST, with the token the principal's browser would hold.
		csrf := w.anonCSRF
		if p.loggedIn() {
			csrf = p.csrf
		}
		secret := fmt.Sprintf("PRIVATEPREVIEW%s%d", p.label, seq)
		w.previews[p] = append(w.previews[p], secret)
		res := w.raw("POST", path, "", url.Values{"csrf": {csrf}, "baserev": {w.baserev}, "preview": {"1"},
			"text": {"Draft of " + secret + " not to be seen by anyone else.\n\n[[Main Page]]"}}, hdr...)
		w.check(cell, "POST preview", kindPost, who, res)
		if who.loggedIn() {
			if res.status != http.StatusOK || !strings.Contains(res.body, secret) {
				w.t.Errorf("%s: preview by %s: %d, shows the preview: %v", cell, who.label, res.status, strings.Contains(res.body, secret))
			}
		} else if strings.Contains(res.body, secret) {
			w.t.Errorf("%s: an anonymous preview was rendered (edit_group=user)", cell)
		}
		kind = kindForm // the follow-up GET/HEAD of ?action=submit is the edit form
	}
	switch method {
	case mGET:
		res := w.raw("GET", path, "", nil, hdr...)
		w.check(cell, "GET", kind, who, res)
		if target == tgAPI && res.status == http.StatusOK {
			// The answer is the requester's own: their name and token.
			own := `"anon":""`
			if who.loggedIn() {
				own = `"name":"` + who.user + `"`
			}
			if !strings.Contains(res.body, own) || who.loggedIn() && !strings.Contains(res.body, who.csrf) {
				w.t.Errorf("%s: api.php did not answer as %s: %s", cell, who.label, res.body)
			}
		}
	case mHEAD:
		res := w.raw("HEAD", path, "", nil, hdr...)
		if res.body != "" {
			w.t.Errorf("%s: HEAD with a body", cell)
		}
		w.check(cell, "HEAD", kind, who, res)
	case mCond:
		first := w.raw("GET", path, "", nil, hdr...)
		w.check(cell, "GET", kind, who, first)
		h := hdr
		if et := first.header.Get("ETag"); et != "" {
			h = append(h[:len(h):len(h)], "If-None-Match: "+et)
		}
		if lm := first.header.Get("Last-Modified"); lm != "" {
			h = append(h[:len(h):len(h)], "If-Modified-Since: "+lm)
		}
		res := w.raw("GET", path, "", nil, h...)
		w.check(cell, "conditional GET", kind, who, res)
		if first.status == http.StatusOK && first.header.Get("ETag") != "" && res.status != http.StatusNotModified {
			w.t.Errorf("%s: a conditional GET with the ETag just sent got %d", cell, res.status)
		}
	}
}

// media returns the bytes and the ETag target (a file target) must be
// answered with.
func (w *leakWorld) media(target int) ([]byte, string) {
	if target == tgThumb {
		return w.file.thumb, w.file.thumbETag
	}
	return w.file.data, w.file.etag
}

// requestMedia runs one cell's request(s) of a file target for the
// principal who, with the header lines hdr, and checks them. Every request
// accepts gzip and brotli: an image is sent as it is stored all the same.
func (w *leakWorld) requestMedia(cell string, hdr []string, who *principal, target, method int) {
	w.t.Helper()
	path := w.paths[target]
	hdr = append(hdr[:len(hdr):len(hdr)], "Accept-Encoding: gzip, br")
	switch method {
	case mGET:
		w.checkMedia(cell, "GET", target, who, w.raw("GET", path, "", nil, hdr...))
	case mHEAD:
		w.checkMedia(cell, "HEAD", target, who, w.raw("HEAD", path, "", nil, hdr...))
	case mCond:
		first := w.raw("GET", path, "", nil, hdr...)
		w.checkMedia(cell, "GET", target, who, first)
		res := w.raw("GET", path, "", nil, append(hdr, "If-None-Match: "+first.header.Get("ETag"))...)
		w.checkMedia(cell, "conditional GET", target, who, res)
	case mRange:
		w.checkMedia(cell, "Range GET", target, who, w.raw("GET", path, "", nil, append(hdr, "Range: bytes=8-15")...))
	}
}

// checkMedia applies the rules of a file's answer: exactly its bytes (or
// the range asked for, or none for HEAD and 304), its sniffed type, its
// validator; for an anonymous reader public, immutable and tagged with
// the file's media tag (so that deleting the file purges it everywhere);
// for a session private, immutable, untagged and never from the edge;
// no cookie, and the security headers.
func (w *leakWorld) checkMedia(cell, method string, target int, who *principal, res rawResponse) {
	t := w.t
	t.Helper()
	w.responses.Add(1)
	w.xcache[fmt.Sprintf("%s %d", res.header.Get("X-Cache"), res.status)]++
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s: %s → %d: %s", cell, method, res.status, fmt.Sprintf(format, args...))
	}
	data, etag := w.media(target)
	wantStatus, wantBody := http.StatusOK, string(data)
	switch method {
	case "HEAD":
		wantBody = ""
		if cl := res.header.Get("Content-Length"); cl != fmt.Sprint(len(data)) {
			fail("Content-Length %q, want %d", cl, len(data))
		}
	case "conditional GET":
		wantStatus, wantBody = http.StatusNotModified, ""
	case "Range GET":
		wantStatus, wantBody = http.StatusPartialContent, string(data[8:16])
		if cr := res.header.Get("Content-Range"); cr != fmt.Sprintf("bytes 8-15/%d", len(data)) {
			fail("Content-Range %q", cr)
		}
	}
	if res.status != wantStatus {
		fail("want %d", wantStatus)
	}
	if res.body != wantBody {
		switch {
		case strings.Contains(res.body, "<html"):
			fail("an HTML body (%d bytes), want the file's bytes", len(res.body))
		default:
			fail("a body of %d bytes that is not the file's (%d bytes wanted)", len(res.body), len(wantBody))
		}
	}
	if ce := res.header.Get("Content-Encoding"); ce != "" {
		fail("Content-Encoding %q: an image is sent as stored", ce)
	}
	if res.status != http.StatusNotModified {
		if ct := res.header.Get("Content-Type"); ct != "image/png" {
			fail("Content-Type %q, want the sniffed image/png", ct)
		}
		if cd := res.header.Get("Content-Disposition"); !strings.HasPrefix(cd, "inline; filename*=UTF-8''") {
			fail("Content-Disposition %q", cd)
		}
		csp := res.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			fail("Content-Security-Policy %q", csp)
		}
		if res.header.Get("X-Content-Type-Options") != "nosniff" || res.header.Get("Referrer-Policy") == "" {
			fail("security headers missing: %v", res.header)
		}
	}
	if got := res.header.Get("ETag"); got != etag {
		fail("ETag %q, want %q", got, etag)
	}
	if v := res.header.Get("Vary"); strings.Contains(v, "Cookie") || v == "*" {
		fail("Vary %q: a file's bytes do not depend on who asks", v)
	}
	if sc := res.header.Values("Set-Cookie"); len(sc) > 0 {
		fail("Set-Cookie %q", sc)
	}
	cc, sk := res.header.Get("Cache-Control"), res.header.Get("Surrogate-Key")
	xc, st := res.header.Get("X-Cache"), res.header.Get("Server-Timing")
	fromEdge := xc != "" || strings.Contains(st, "desc=hit") || strings.Contains(st, "desc=miss") ||
		strings.Contains(st, "desc=coalesced") || strings.Contains(st, "desc=splice")
	if who.loggedIn() {
		if cc != "private, max-age=31536000, immutable" {
			fail("Cache-Control %q for %s, want private immutable", cc, who.label)
		}
		if sk != "" {
			fail("Surrogate-Key %q on %s's private answer", sk, who.label)
		}
		if fromEdge {
			fail("%s's answer went through the edge (X-Cache %q, Server-Timing %q)", who.label, xc, st)
		}
		return
	}
	if cc != "public, max-age=31536000, immutable" {
		fail("Cache-Control %q for an anonymous reader, want public immutable", cc)
	}
	if !slices.Contains(strings.Fields(sk), w.file.surrogateKey) {
		fail("Surrogate-Key %q lacks the file's media key %s", sk, w.file.surrogateKey)
	}
	if method == "Range GET" && fromEdge {
		fail("a range went through the edge (X-Cache %q, Server-Timing %q)", xc, st)
	}
	if xc == "SPLICE" {
		fail("X-Cache SPLICE for an anonymous reader")
	}
}

// sweep inspects the anonymous edge entries directly: only anonymous public
// reads may be stored, and they hold nobody's data.
func (w *leakWorld) sweep(when string) {
	w.t.Helper()
	for i, path := range w.paths {
		key := path // entries are stored under the canonical target as sent
		if isMedia(i) {
			w.sweepMedia(when, i)
			continue
		}
		for _, acc := range []edge.Accepted{0} {
			v, ok := w.a.Edge.Lookup(key, acc)
			if !ok {
				continue
			}
			if i == tgEdit || i == tgPreview || i == tgAPI || i == tgEditModel {
				w.t.Errorf("%s: %s is stored in the edge (status %d)", when, path, v.Status)
				continue
			}
			body := string(v.Body)
			if v.Status != http.StatusOK || strings.Contains(body, `class="me"`) || strings.Contains(body, "Log out") {
				w.t.Errorf("%s: the anonymous entry of %s is %d / shows a user bar", when, path, v.Status)
			}
			for _, q := range w.users {
				for _, s := range append([]string{q.csrf, q.token, "Contributions/" + q.user}, w.previews[q]...) {
					if strings.Contains(body, s) {
						w.t.Errorf("%s: the anonymous entry of %s carries %s's data %q", when, path, q.label, s)
					}
				}
			}
			for _, f := range v.Header {
				if f.Key == "Cache-Control" && !strings.HasPrefix(strings.Join(f.Value, ","), "public") {
					w.t.Errorf("%s: the anonymous entry of %s has Cache-Control %q", when, path, f.Value)
				}
				if f.Key == "Set-Cookie" {
					w.t.Errorf("%s: the anonymous entry of %s sets a cookie", when, path)
				}
			}
		}
	}
}

// sweepMedia inspects the edge entry of a file target, if any: the whole
// file, public, immutable and tagged, in identity coding whatever the
// client accepts.
func (w *leakWorld) sweepMedia(when string, target int) {
	w.t.Helper()
	path := w.paths[target]
	data, _ := w.media(target)
	for _, acc := range []edge.Accepted{0, edge.AcceptGzip | edge.AcceptBrotli} {
		v, ok := w.a.Edge.Lookup(path, acc)
		if !ok {
			continue
		}
		if v.Status != http.StatusOK || !bytes.Equal(v.Body, data) || v.Encoding != edge.Identity {
			w.t.Errorf("%s: the edge entry of %s is %d, %d bytes in encoding %d; want 200 with the file's %d bytes as stored",
				when, path, v.Status, len(v.Body), v.Encoding, len(data))
		}
		fields := map[string]string{}
		for _, f := range v.Header {
			fields[f.Key] = strings.Join(f.Value, ", ")
		}
		if cc := fields["Cache-Control"]; cc != "public, max-age=31536000, immutable" {
			w.t.Errorf("%s: the edge entry of %s has Cache-Control %q", when, path, cc)
		}
		if sk := fields["Surrogate-Key"]; !slices.Contains(strings.Fields(sk), w.file.surrogateKey) {
			w.t.Errorf("%s: the edge entry of %s has Surrogate-Key %q, without the file's media key", when, path, sk)
		}
		if _, ok := fields["Set-Cookie"]; ok {
			w.t.Errorf("%s: the edge entry of %s sets a cookie", when, path)
		}
	}
}

func permutations(n int) [][]int {
	if n == 1 {
		return [][]int{{0}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int{}, p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}

// coveringOrders picks, greedily, few of orders (each run as the order,
// then its first principal again) such that in one of them or another
// every principal comes first, and every principal directly follows
// every other.
func coveringOrders(orders [][]int) [][]int {
	items := func(o []int) map[[2]int]bool {
		m := map[[2]int]bool{{-1, o[0]}: true} // -1: the empty edge, before the first
		seq := append(o[:len(o):len(o)], o[0])
		for i := 1; i < len(seq); i++ {
			m[[2]int{seq[i-1], seq[i]}] = true
		}
		return m
	}
	need := map[[2]int]bool{}
	for _, o := range orders {
		for k := range items(o) {
			need[k] = true
		}
	}
	var out [][]int
	for len(need) > 0 {
		best, gain := -1, 0
		for i, o := range orders {
			n := 0
			for k := range items(o) {
				if need[k] {
					n++
				}
			}
			if n > gain {
				best, gain = i, n
			}
		}
		out = append(out, orders[best])
		for k := range items(orders[best]) {
			delete(need, k)
		}
	}
	return out
}

func TestCacheLeakMatrix(t *testing.T) {
	t.Parallel()
	w := newLeakWorld(t)
	orders := permutations(len(w.all)) // every order of the four principals
	// The files run in fewer orders: those in which every principal fills
	// the empty edge once and follows every other directly once (four
	// orders instead of 24). Their answers take the pages' path through
	// the edge; what differs is what is answered, checked in every cell.
	mediaOrders := map[string]bool{}
	for _, o := range coveringOrders(orders) {
		mediaOrders[fmt.Sprint(o)] = true
	}
	switch {
	case testing.Short():
		orders = orders[:4]
	case race.Enabled:
		// Under the race detector the pages run in the covering orders
		// too: every pair of a principal filling the edge and another
		// reading after it is there, which is what a leak takes. The
		// detector looks for races, not for orders; .ci/run runs every
		// order without it, on each front path.
		orders = coveringOrders(orders)
	}
	cells := map[string]bool{}
	seq := 0
	start := time.Now()
	for _, order := range orders {
		for target := range numTargets {
			if isMedia(target) && !mediaOrders[fmt.Sprint(order)] && !testing.Short() {
				continue
			}
			for method := range numMethods {
				if method == mRange && !isMedia(target) {
					continue // pages are sent whole
				}
				for cv := range numCookieVariants {
					// An empty cache, so that the first principal in the order fills it.
					w.a.Edge.PurgeAll()
					// The order, then its first principal again (A, anonymous, B, admin, A).
					for _, i := range append(order, order[0]) {
						p := w.all[i]
						cell := fmt.Sprintf("%s × %s × %s × %s", p.label, cookieVariantNames[cv], methodNames[method], targetNames[target])
						cells[cell] = true
						seq++
						w.request(cell, p, cv, target, method, seq)
					}
					if t.Failed() {
						t.FailNow()
					}
				}
			}
			w.sweep(fmt.Sprintf("after %s in order %v", targetNames[target], order))
		}
		// The anonymous pages and files, read last, still show nobody.
		for _, target := range []int{tgArticle, tgSpecial} {
			w.check("anonymous re-read "+w.paths[target], "GET", kindRead, w.anon, w.raw("GET", w.paths[target], "", nil))
		}
		for _, target := range []int{tgOriginal, tgThumb} {
			w.checkMedia("anonymous re-read "+w.paths[target], "GET", target, w.anon, w.raw("GET", w.paths[target], "", nil))
		}
		w.sweep(fmt.Sprintf("after order %v", order))
	}
	// Every method of the pages, and a range too of the files.
	want := len(w.all) * numCookieVariants * ((numMethods-1)*(numTargets-2) + numMethods*2)
	if len(cells) != want {
		t.Errorf("%d cells checked, want %d", len(cells), want)
	}
	t.Logf("cache-leak matrix: %d cells × %d orders (files × %d); %d responses checked (%d HTML pages parsed for inline script) in %v",
		len(cells), len(orders), len(mediaOrders), w.responses.Load(), w.htmlPages.Load(), time.Since(start).Round(time.Millisecond))
	t.Logf("X-Cache and status of the responses: %v", w.xcache)
	m := w.metrics()
	t.Logf("request counts per /metrics:\n%s", grepLines(m.body, `_count{cache="`))
}

// TestCacheLeakDeletedFile: once the File: page is deleted its bytes are
// refused (404) to everyone but administrators, at once, with every cookie
// variant and method, in every order of the principals: the anonymous
// copies in the edge are purged by the deletion, and an administrator's
// look (no-store) never fills the edge for the others.
func TestCacheLeakDeletedFile(t *testing.T) {
	t.Parallel()
	w := newLeakWorld(t)
	admin := w.users[2]
	for _, target := range []int{tgOriginal, tgThumb} {
		path := w.paths[target]
		w.checkMedia("before the deletion", "GET", target, w.anon, w.raw("GET", path, "", nil))
		if res := w.raw("GET", path, "", nil); res.header.Get("X-Cache") != "HIT" {
			t.Fatalf("before the deletion, %s is not in the edge: X-Cache %q", path, res.header.Get("X-Cache"))
		}
	}
	del := w.file.title.URL() + "?action=delete"
	if res := w.raw("POST", del, "", url.Values{"csrf": {admin.csrf}, "reason": {"leak test"}}, "Cookie: wikid_session="+admin.token); res.status != http.StatusSeeOther {
		t.Fatalf("delete %s: %d\n%s", w.file.title, res.status, res.body)
	}
	filePath := "/wiki/Special:FilePath/" + wiki.FileName(w.file.title)
	n := 0
	for _, order := range permutations(len(w.all))[:6] {
		for _, target := range []int{tgOriginal, tgThumb} {
			path := w.paths[target]
			data, _ := w.media(target)
			for _, m := range []struct{ name, method, extra string }{{"GET", "GET", ""}, {"HEAD", "HEAD", ""}, {"Range GET", "GET", "Range: bytes=8-15"}} {
				for cv := range numCookieVariants {
					for _, i := range append(order, order[0]) {
						p := w.all[i]
						cookies, who := w.cookieLines(p, cv, false)
						hdr := []string{"Accept-Encoding: gzip, br"}
						for _, c := range cookies {
							hdr = append(hdr, "Cookie: "+c)
						}
						if m.extra != "" {
							hdr = append(hdr, m.extra)
						}
						cell := fmt.Sprintf("deleted file: %s × %s × %s %s", p.label, cookieVariantNames[cv], m.name, path)
						res := w.raw(m.method, path, "", nil, hdr...)
						n++
						// An anonymous request asks the edge (X-Cache MISS), which
						// must hold nothing and store nothing.
						if xc := res.header.Get("X-Cache"); xc == "HIT" || (who.loggedIn() && xc != "") {
							t.Errorf("%s: %d, X-Cache %q", cell, res.status, xc)
						}
						if cc := res.header.Get("Cache-Control"); cc != "no-store" {
							t.Errorf("%s: %d with Cache-Control %q, want no-store", cell, res.status, cc)
						}
						if sk := res.header.Get("Surrogate-Key"); sk != "" {
							t.Errorf("%s: %d with Surrogate-Key %q", cell, res.status, sk)
						}
						if who != admin {
							if res.status != http.StatusNotFound || strings.Contains(res.body, "\x89PNG") {
								t.Errorf("%s: %d, shows the file %v; want 404", cell, res.status, strings.Contains(res.body, "\x89PNG"))
							}
							w.check(cell, m.name, kindRead, who, res)
							continue
						}
						want, status := string(data), http.StatusOK
						switch m.name {
						case "HEAD":
							want = ""
						case "Range GET":
							want, status = string(data[8:16]), http.StatusPartialContent
						}
						if res.status != status || res.body != want {
							t.Errorf("%s: an administrator's look at a deleted file: %d with %d bytes, want %d with %d", cell, res.status, len(res.body), status, len(want))
						}
						if len(res.header.Values("Set-Cookie")) > 0 {
							t.Errorf("%s: Set-Cookie %q", cell, res.header.Values("Set-Cookie"))
						}
					}
					if _, ok := w.a.Edge.Lookup(path, 0); ok {
						t.Fatalf("deleted file, after %s × %s in order %v: %s is in the edge", m.name, cookieVariantNames[cv], order, path)
					}
				}
			}
		}
		for _, p := range w.all {
			cookies, who := w.cookieLines(p, ckNone, false)
			var hdr []string
			for _, c := range cookies {
				hdr = append(hdr, "Cookie: "+c)
			}
			res := w.raw("GET", filePath, "", nil, hdr...)
			n++
			if res.status != http.StatusNotFound || strings.Contains(res.header.Get("Location"), "/media/") {
				t.Errorf("deleted file: %s's GET %s: %d to %q, want 404", p.label, filePath, res.status, res.header.Get("Location"))
			}
			w.check("deleted file: "+p.label+" GET "+filePath, "GET", kindRead, who, res)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("deleted file: %d responses checked", n)
}

// TestCacheLeakKeepAlive sends every principal's requests, interleaved, on
// one keep-alive connection, as a proxy in front of the wiki would: the fast
// path serves the first ones, net/http the rest after the hand-off.
func TestCacheLeakKeepAlive(t *testing.T) {
	t.Parallel()
	w := newLeakWorld(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(w.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	n := 0
	send := func(p *principal, cv int, method, path string, extra ...string) {
		t.Helper()
		cookies, who := w.cookieLines(p, cv, false)
		var b bytes.Buffer
		fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: wiki\r\n", method, path)
		for _, c := range cookies {
			fmt.Fprintf(&b, "Cookie: %s\r\n", c)
		}
		for _, e := range extra {
			fmt.Fprintf(&b, "%s\r\n", e)
		}
		b.WriteString("\r\n")
		if _, err := conn.Write(b.Bytes()); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			t.Fatalf("request %d: %v", n, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		kind := kindRead
		if strings.Contains(path, "action=edit") {
			kind = kindForm
		}
		n++
		w.check(fmt.Sprintf("keep-alive #%d %s × %s %s", n, p.label, cookieVariantNames[cv], path), method, kind, who, rawResponse{res.StatusCode, res.Header, string(body)})
	}
	// Warm the sessions and the page, then interleave: fast path first.
	for round := 0; round < 3; round++ {
		for _, order := range permutations(len(w.all))[:6] {
			for _, i := range order {
				for cv := range numCookieVariants {
					send(w.all[i], cv, "GET", "/wiki/Main_Page")
					send(w.all[i], cv, "HEAD", "/wiki/Main_Page")
				}
			}
		}
		if round == 1 {
			// A request the front does not answer: net/http has the connection from now on.
			send(w.users[0], ckNone, "GET", "/wiki/Main_Page?action=edit")
		}
	}
	w.sweep("after the keep-alive connection")
	t.Logf("keep-alive: %d interleaved responses on one connection", n)
}

// TestCacheLeakBehindProxy extends the matrix with a proxy in front and the
// non-canonical spellings of the article's URL: every principal × cookie
// variant × forwarding header (none, X-Forwarded-For, Forwarded, Via, a
// forged chain) × URL form × method, with loopback not trusted and trusted.
// Forwarding headers never change who a request is from or what is stored;
// a non-canonical target is redirected or refused with no-store, or (absolute
// form) answered with no-store, and never fills or reads the edge; after each
// batch the anonymous article still shows nobody and is byte-identical to
// its first read.
func TestCacheLeakBehindProxy(t *testing.T) {
	t.Parallel()
	forwarding := []string{"", "X-Forwarded-For: 203.0.113.9", "X-Forwarded-For: 127.0.0.1, 198.51.100.7",
		"Forwarded: for=203.0.113.9;proto=https", "Via: 1.1 varnish (Varnish/7.1)", "X-Forwarded-Proto: https"}
	forms := []string{
		"/wiki/Main_Page", "/wiki/Main_Page?diff", "/wiki/Main_Page?action=history&action=", "/wiki/Main_Page?oldid=1&oldid=2",
		"/wiki/main_page", "/wiki/Main_Page?utm_source=x", "/wiki/Main_Page?redirect=no&redirect=", "/wiki/Main%5FPage",
		"http://wiki/wiki/Main_Page",
	}
	for _, trusted := range []bool{false, true} {
		name := map[bool]string{false: "no trusted proxy", true: "loopback trusted"}[trusted]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newLeakWorld(t, func(c *config.Config) {
				if trusted {
					c.TrustedProxies = []string{"127.0.0.1", "::1"}
				}
			})
			baseline := w.raw("GET", "/wiki/Main_Page", "", nil)
			n := 0
			for _, order := range permutations(len(w.all))[:3] {
				for _, form := range forms {
					kind := kindOdd
					if form == "/wiki/Main_Page" {
						kind = kindRead
					}
					for _, fwd := range forwarding {
						w.a.Edge.PurgeAll()
						for _, i := range append(order, order[0]) {
							p := w.all[i]
							for _, cv := range []int{ckNone, ckJunk, ckForged} {
								cookies, who := w.cookieLines(p, cv, false)
								var hdr []string
								for _, c := range cookies {
									hdr = append(hdr, "Cookie: "+c)
								}
								if fwd != "" {
									hdr = append(hdr, fwd)
								}
								for _, m := range []string{"GET", "HEAD"} {
									cell := fmt.Sprintf("%s: %s × %s × %q × %s %s", name, p.label, cookieVariantNames[cv], fwd, m, form)
									// Sent as is (an absolute-form target included).
									f := rawGet(t, strings.TrimPrefix(w.base, "http://"), m, form, hdr...)
									res := rawResponse(f)
									n++
									w.check(cell, m, kind, who, res)
									if kind == kindOdd && res.header.Get("Cache-Control") != "no-store" {
										t.Errorf("%s: %d with Cache-Control %q, want no-store", cell, res.status, res.header.Get("Cache-Control"))
									}
								}
							}
						}
						if got := w.raw("GET", "/wiki/Main_Page", "", nil); got.status != 200 || got.body != baseline.body {
							t.Fatalf("%s: after %q with %q, the anonymous article changed (%d)", name, form, fwd, got.status)
						}
						w.sweep(fmt.Sprintf("%s after %q with %q", name, form, fwd))
						if t.Failed() {
							t.FailNow()
						}
					}
				}
			}
			t.Logf("%s: %d responses checked", name, n)
		})
	}
}

// TestRestrictedReading: with read_group=user nothing is public, nothing is
// cached for the public, and logged-in readers still get their own pages.
func TestRestrictedReading(t *testing.T) {
	t.Parallel()
	w := newLeakWorld(t, func(c *config.Config) { c.ReadGroup = wiki.GroupUser })
	checked := 0
	noPublic := func(cell string, res rawResponse) {
		t.Helper()
		checked++
		if cc := res.header.Get("Cache-Control"); strings.Contains(cc, "public") {
			t.Errorf("%s: %d with Cache-Control %q under read_group=user", cell, res.status, cc)
		}
		if res.header.Get("X-Cache") == "HIT" {
			t.Errorf("%s: X-Cache HIT under read_group=user", cell)
		}
	}
	paths := []string{"/wiki/Main_Page", "/wiki/Special:RecentChanges", "/wiki/Special:SpecialPages", "/wiki/Main_Page?action=history",
		"/wiki/Main_Page?action=raw", "/wiki/Help:Syntax", "/wiki/Main_Page?action=edit", "/wiki/Special:Search?q=wiki",
		"/wiki/Special:Watchlist"}
	for round := 0; round < 2; round++ {
		for _, p := range w.all {
			for cv := range numCookieVariants {
				for _, path := range paths {
					for _, m := range []string{"GET", "HEAD"} {
						cookies, who := w.cookieLines(p, cv, false)
						var hdr []string
						for _, c := range cookies {
							hdr = append(hdr, "Cookie: "+c)
						}
						cell := fmt.Sprintf("read_group=user %s × %s × %s %s", p.label, cookieVariantNames[cv], m, path)
						res := w.raw(m, path, "", nil, hdr...)
						noPublic(cell, res)
						if !who.loggedIn() {
							if res.status != http.StatusUnauthorized && res.status != http.StatusFound {
								t.Errorf("%s: anonymous got %d, want 401 or a redirect to the login", cell, res.status)
							}
							if res.status == http.StatusFound && !strings.HasPrefix(res.header.Get("Location"), "/wiki/Special:UserLogin") {
								t.Errorf("%s: redirect to %q", cell, res.header.Get("Location"))
							}
							if strings.Contains(res.body, "Syntax help") || strings.Contains(res.body, "Recent changes</h1>") {
								t.Errorf("%s: anonymous sees restricted content", cell)
							}
						} else if res.status != http.StatusOK {
							t.Errorf("%s: %s got %d", cell, who.label, res.status)
						}
						w.check(cell, m, map[bool]reqKind{true: kindForm, false: kindRead}[strings.Contains(path, "action=edit")], who, res)
					}
				}
			}
		}
	}
	filePaths := restrictedFiles(t, w, noPublic)
	for _, path := range append(paths, filePaths...) {
		key := path // entries are stored under the canonical target as sent
		if _, ok := w.a.Edge.Lookup(key, 0); ok {
			t.Errorf("read_group=user: %s is in the edge cache", path)
		}
	}
	if st := w.a.Edge.Stats(); st.Entries != 0 || st.Stores != 0 {
		t.Errorf("read_group=user: the edge stored %d responses (%d entries held)", st.Stores, st.Entries)
	}
	m := w.metrics()
	if !regexp.MustCompile(`(?m)^wikid_edge_entries 0$`).MatchString(m.body) {
		t.Errorf("/metrics does not report 0 edge entries:\n%s", grepLines(m.body, "wikid_edge_"))
	}
	t.Logf("read_group=user: %d responses checked, edge entries 0", checked)
}

// restrictedFiles checks the file's URLs on a read_group=user wiki: its
// original, its thumbnail and Special:FilePath to it. In each round the
// members read them first (private answers, which must not reach the
// edge), then anonymous readers with every cookie variant, by GET, HEAD,
// conditional GET with the file's validator and Range GET: always refused
// (401, or a redirect to the login form), never a byte of the file, never
// a 304 (which would confirm the file to who may not read it). It returns
// the paths, for the caller's look into the edge.
func restrictedFiles(t *testing.T, w *leakWorld, noPublic func(string, rawResponse)) []string {
	t.Helper()
	filePath := "/wiki/Special:FilePath/" + wiki.FileName(w.file.title)
	paths := []string{w.file.original, w.file.thumbURL, filePath}
	pngMagic := "\x89PNG"
	for round := range 2 {
		for _, p := range append(w.users[:len(w.users):len(w.users)], w.anon) {
			for cv := range numCookieVariants {
				cookies, who := w.cookieLines(p, cv, false)
				var hdr []string
				for _, c := range cookies {
					hdr = append(hdr, "Cookie: "+c)
				}
				for _, path := range paths {
					etag := w.file.etag
					if path == w.file.thumbURL {
						etag = w.file.thumbETag
					}
					for _, m := range []struct{ name, method, extra string }{
						{"GET", "GET", ""}, {"HEAD", "HEAD", ""}, {"conditional GET", "GET", "If-None-Match: " + etag}, {"Range GET", "GET", "Range: bytes=8-15"},
					} {
						h := hdr[:len(hdr):len(hdr)]
						if m.extra != "" {
							h = append(h, m.extra)
						}
						cell := fmt.Sprintf("read_group=user round %d: %s × %s × %s %s", round+1, p.label, cookieVariantNames[cv], m.name, path)
						res := w.raw(m.method, path, "", nil, h...)
						noPublic(cell, res)
						if sk := res.header.Get("Surrogate-Key"); sk != "" {
							t.Errorf("%s: %d with Surrogate-Key %q under read_group=user", cell, res.status, sk)
						}
						switch {
						case !who.loggedIn():
							if res.status != http.StatusUnauthorized && res.status != http.StatusFound {
								t.Errorf("%s: anonymous got %d, want 401 or a redirect to the login", cell, res.status)
							}
							if res.status == http.StatusFound && !strings.HasPrefix(res.header.Get("Location"), "/wiki/Special:UserLogin") {
								t.Errorf("%s: redirect to %q", cell, res.header.Get("Location"))
							}
							if strings.Contains(res.body, pngMagic) || strings.Contains(res.header.Get("Location"), "/media/") {
								t.Errorf("%s: an anonymous reader is shown the file or its address", cell)
							}
							w.check(cell, m.name, kindRead, who, res)
						case path == filePath:
							// A member is sent to the bytes, privately.
							if res.status != http.StatusFound || res.header.Get("Location") != w.file.original {
								t.Errorf("%s: %d to %q, want 302 to %s", cell, res.status, res.header.Get("Location"), w.file.original)
							}
							if cc := res.header.Get("Cache-Control"); !strings.HasPrefix(cc, "private") {
								t.Errorf("%s: Cache-Control %q, want private", cell, cc)
							}
							if xc := res.header.Get("X-Cache"); xc != "" {
								t.Errorf("%s: X-Cache %q for a member", cell, xc)
							}
						default:
							target := tgOriginal
							if path == w.file.thumbURL {
								target = tgThumb
							}
							w.checkMedia(cell, m.name, target, who, res)
						}
					}
				}
			}
		}
	}
	return paths
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestRestrictedReadingRedirects: under read_group=user, the redirects that
// run before the read check (the root, non-canonical titles) must not be
// marked public either: shared caches would answer them for everyone.
func TestRestrictedReadingRedirects(t *testing.T) {
	t.Parallel()
	w := newLeakWorld(t, func(c *config.Config) { c.ReadGroup = wiki.GroupUser })
	for _, path := range []string{"/", "/wiki/main_page", "/wiki/Main%20Page", "/w/index.php?title=Main_Page"} {
		res := w.raw("GET", path, "", nil)
		if cc := res.header.Get("Cache-Control"); strings.Contains(cc, "public") {
			t.Errorf("read_group=user: GET %s → %d %s with Cache-Control %q", path, res.status, res.header.Get("Location"), cc)
		}
	}
}
