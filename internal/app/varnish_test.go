//go:build unix

package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/app"
	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/purge"
	"github.com/wikid/wikid/internal/wiki"
)

// These tests put a real varnishd, running deploy/varnish/wikid.vcl, in
// front of a real wikid (front server included) on loopback, and check the
// contract between them: what Varnish stores, what it passes, what it
// refuses, and that Wikid's purges reach it. They skip when varnishd is not
// installed, unless WIKID_REQUIRE_VARNISH=1 (CI), where they fail.

// varnishStack is a wikid with a varnishd in front.
type varnishStack struct {
	app    *app.App
	wikid  string // wikid's base URL, for direct requests
	url    string // varnishd's base URL
	proxy  string // host:port of varnishd's PROXY-protocol listener
	client *http.Client
}

// newVarnishStack boots wikid (cdn_purge pointing at the varnishd, loopback
// a trusted proxy, as deploy/varnish/README.md says) and a varnishd in front
// of it; opts edit wikid's configuration.
func newVarnishStack(t *testing.T, opts ...func(*config.Config)) *varnishStack {
	t.Helper()
	bin := varnishdPath(t)
	addr, proxy := freeAddr(t), freeAddr(t)
	opts = append([]func(*config.Config){func(c *config.Config) {
		c.CDNPurge = []string{"http://" + addr}
		c.TrustedProxies = []string{"127.0.0.1"}
		c.OpsAddr = "127.0.0.1:0"
	}}, opts...)
	a, base := apptest.Serve(t, opts...)
	startVarnish(t, bin, addr, proxy, a.Addr())
	return &varnishStack{app: a, wikid: base, url: "http://" + addr, proxy: proxy, client: &http.Client{
		Transport:     &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       10 * time.Second,
	}}
}

func varnishdPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/sbin/varnishd", "/usr/local/sbin/varnishd"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("varnishd"); err == nil {
		return p
	}
	if os.Getenv("WIKID_REQUIRE_VARNISH") == "1" {
		t.Fatal("varnishd is not installed and WIKID_REQUIRE_VARNISH=1 (apt-get install varnish)")
	}
	t.Skip("varnishd is not installed (apt-get install varnish); set WIKID_REQUIRE_VARNISH=1 to fail instead")
	return ""
}

// freeAddr returns a loopback address that was free a moment ago, for
// varnishd to bind: wikid needs varnishd's address (cdn_purge) before
// varnishd, which needs wikid's, can start. The port is chosen below
// Linux's ephemeral range (32768–60999), so that the outgoing connections
// of tests running at the same time cannot take it between this check and
// varnishd's bind; another test's varnishd still could, which
// startVarnishWith reports.
func freeAddr(t *testing.T) string {
	t.Helper()
	for range 100 {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		ln.Close()
		return addr
	}
	t.Fatal("no free port between 20000 and 32000")
	return ""
}

// backendLine is the line of wikid.vcl an operator edits.
var backendLine = regexp.MustCompile(`(?m)^backend wikid \{ \.host = "[^"]*"; \.port = "[^"]*";`)

// startVarnish runs varnishd in the foreground, in its own process group
// (killed at cleanup, also when the test fails), with the shipped VCL whose
// backend line alone is rewritten to point at backend. It listens on addr,
// and on proxy for the PROXY protocol (so that a test can speak as another
// client address than loopback). -j none keeps it from switching to the
// varnish user: the work directory is the test's, whoever runs it.
func startVarnish(t *testing.T, bin, addr, proxy, backend string) {
	t.Helper()
	host, port, _ := net.SplitHostPort(backend)
	startVarnishWith(t, bin, addr, proxy, fmt.Sprintf(`backend wikid { .host = %q; .port = %q;`, host, port), t.TempDir())
}

// startVarnishWith runs varnishd as startVarnish does, with the shipped
// VCL's backend line replaced by line, in dir.
func startVarnishWith(t *testing.T, bin, addr, proxy, line, dir string) {
	t.Helper()
	vcl, err := os.ReadFile(filepath.Join("..", "..", "deploy", "varnish", "wikid.vcl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(backendLine.FindAll(vcl, -1)); n != 1 {
		t.Fatalf("wikid.vcl has %d backend lines, want exactly one for the operator to edit", n)
	}
	if !strings.HasPrefix(line, "backend wikid {") {
		// The whole line goes, probe and all.
		vcl = regexp.MustCompile(`(?m)^backend wikid \{.*$`).ReplaceAll(vcl, []byte(line))
	} else {
		vcl = backendLine.ReplaceAll(vcl, []byte(line))
	}
	vclPath := filepath.Join(dir, "wikid.vcl")
	if err := os.WriteFile(vclPath, vcl, 0o644); err != nil {
		t.Fatal(err)
	}
	out := &apptest.SyncBuffer{}
	cmd := exec.Command(bin, "-F", "-j", "none", "-n", filepath.Join(dir, "work"), "-T", "none",
		"-a", addr, "-a", proxy+",PROXY", "-f", vclPath, "-s", "malloc,32m",
		"-p", "thread_pools=1", "-p", "thread_pool_min=10", "-p", "vsl_space=1M")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start varnishd: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		pgid := cmd.Process.Pid // the group of varnishd and its worker child
		syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-pgid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			t.Logf("varnishd output:\n%s", out.String())
		}
	})
	// A 200 counts once this varnishd says its child runs, which it does
	// only after binding its addresses: until then the answer may be
	// another test's varnishd, which took the port after freeAddr, and
	// this one then exits (Could not get socket).
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get("http://" + addr + "/varnish-health")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK && strings.Contains(out.String(), "Child launched OK") {
				return
			}
		}
		select {
		case <-done:
			t.Fatalf("varnishd exited:\n%s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("varnishd did not answer /varnish-health with 200 and say \"Child launched OK\" within 20s (last: %v)\n%s", err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type answer struct {
	status int
	header http.Header
	body   string
}

// cache is Varnish's X-Varnish-Cache: HIT, STALE, MISS, PASS or SYNTH.
func (a answer) cache() string { return a.header.Get("X-Varnish-Cache") }

// do sends a request to base+path with headers given as "Name: value".
func (s *varnishStack) do(t *testing.T, c *http.Client, method, u string, body io.Reader, headers ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Add(k, v)
	}
	if c == nil {
		c = s.client
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, u, err)
	}
	return answer{res.StatusCode, res.Header, string(b)}
}

// viaVarnish and direct GET path through Varnish and from wikid itself.
func (s *varnishStack) viaVarnish(t *testing.T, path string, headers ...string) answer {
	t.Helper()
	return s.do(t, nil, "GET", s.url+path, nil, headers...)
}

func (s *varnishStack) direct(t *testing.T, path string, headers ...string) answer {
	t.Helper()
	return s.do(t, nil, "GET", s.wikid+path, nil, headers...)
}

// editor creates a user with an API token and returns the token.
func (s *varnishStack) editor(t *testing.T, name string) string {
	t.Helper()
	ctx := context.Background()
	hash, err := auth.HashPassword("pw-" + strings.ToLower(name) + "-secret")
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.app.Store.CreateUser(ctx, wiki.User{Name: name, PasswordHash: hash, Group: wiki.GroupUser, Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	token := "wkd_" + auth.NewSecret(32)
	if err := s.app.Store.CreateToken(ctx, wiki.Token{ID: auth.HashToken(token), UserID: u.ID, Name: "test", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return token
}

// put saves text as title through the REST API, directly to wikid (base 0
// creates the page), and returns the new latest revision.
func (s *varnishStack) put(t *testing.T, token, title string, base int64, text string) int64 {
	t.Helper()
	body := map[string]any{"source": text, "comment": "varnish test"}
	if base != 0 {
		body["latest"] = map[string]int64{"id": base}
	}
	b, _ := json.Marshal(body)
	res := s.do(t, nil, "PUT", s.wikid+"/w/rest.php/v1/page/"+wiki.MustTitle(title).Key(), strings.NewReader(string(b)),
		"Authorization: Bearer "+token, "Content-Type: application/json")
	if res.status != http.StatusOK && res.status != http.StatusCreated {
		t.Fatalf("PUT %s: %d %s", title, res.status, res.body)
	}
	var out struct {
		Latest struct {
			ID int64 `json:"id"`
		} `json:"latest"`
	}
	if err := json.Unmarshal([]byte(res.body), &out); err != nil || out.Latest.ID == 0 {
		t.Fatalf("PUT %s: no latest revision in %s (%v)", title, res.body, err)
	}
	return out.Latest.ID
}

// create makes a page through the REST API, directly to wikid, and waits
// until the jobs it queued (its purge at Varnish included) have run, so
// that a later read through Varnish is not purged by them.
func (s *varnishStack) create(t *testing.T, token, title, text string) int64 {
	t.Helper()
	rev := s.put(t, token, title, 0, text)
	s.settle(t)
	return rev
}

// settle waits until no job is running and none is due. (A purge that
// failed because Varnish was not up yet, such as the seed pages', waits for
// its retry; it purges only the seed pages and the listings, which these
// tests do not read through Varnish.)
func (s *varnishStack) settle(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for {
		// One query, so that no job slips between two reads on its way
		// from queued to running.
		jobs, err := s.app.Store.ListJobs(ctx, "", 1000)
		if err != nil {
			t.Fatal(err)
		}
		var due []string
		for _, j := range jobs {
			if j.State == wiki.JobRunning || (j.State == wiki.JobQueued && !j.RunAt.After(time.Now())) {
				due = append(due, j.Kind+" "+string(j.State))
			}
		}
		if len(due) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs still due after 10s: %v", due)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// pollVarnish reads path through Varnish until ok accepts the answer, and
// returns how long that took; it fails the test after limit.
func (s *varnishStack) pollVarnish(t *testing.T, path string, limit time.Duration, ok func(answer) bool) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		a := s.viaVarnish(t, path)
		if ok(a) {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Fatalf("%s through Varnish: not updated after %v (X-Varnish-Cache %s, status %d)", path, limit, a.cache(), a.status)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestBehindVarnish(t *testing.T) {
	s := newVarnishStack(t)
	token := s.editor(t, "Varnish Editor")
	const page = "/wiki/Cached_Page"
	s.create(t, token, "Cached Page", "A page for Varnish to keep.")

	t.Run("a page is a Varnish hit on the second read", func(t *testing.T) {
		first := s.viaVarnish(t, page)
		second := s.viaVarnish(t, page)
		if first.status != 200 || first.cache() != "MISS" || second.cache() != "HIT" {
			t.Fatalf("two reads: %d %s, then %d %s; want MISS then HIT", first.status, first.cache(), second.status, second.cache())
		}
		if second.body != first.body {
			t.Error("the hit's body differs from the miss's")
		}
		if cc := second.header.Get("Cache-Control"); cc != "public, max-age=0, s-maxage=300" {
			t.Errorf("Cache-Control %q", cc)
		}
		if k := second.header.Get("Surrogate-Key"); k != "" {
			t.Errorf("Surrogate-Key %q reached the client", k)
		}
	})

	t.Run("gzip and identity clients share one object, with distinct validators", func(t *testing.T) {
		gz := s.viaVarnish(t, page, "Accept-Encoding: gzip")
		plain := s.viaVarnish(t, page)
		direct := s.direct(t, page, "Accept-Encoding: gzip")
		if gz.cache() != "HIT" || plain.cache() != "HIT" {
			t.Errorf("X-Varnish-Cache gzip %s, identity %s; want both HIT (one stored gzip object)", gz.cache(), plain.cache())
		}
		if gz.header.Get("Content-Encoding") != "gzip" || plain.header.Get("Content-Encoding") != "" {
			t.Errorf("Content-Encoding gzip client %q, identity client %q", gz.header.Get("Content-Encoding"), plain.header.Get("Content-Encoding"))
		}
		if plain.body != s.direct(t, page).body {
			t.Error("Varnish's gunzipped body differs from wikid's identity body")
		}
		etag := direct.header.Get("ETag")
		if gz.header.Get("ETag") != etag || plain.header.Get("ETag") != "W/"+etag {
			t.Errorf("ETag: wikid %s, Varnish gzip %s, Varnish identity %s; want the same, then weak", etag, gz.header.Get("ETag"), plain.header.Get("ETag"))
		}
		if v := gz.header.Get("Vary"); !strings.Contains(v, "Accept-Encoding") || !strings.Contains(v, "Cookie") {
			t.Errorf("Vary %q lost Accept-Encoding or Cookie", v)
		}
		for _, ae := range []string{"gzip", ""} {
			nm := s.viaVarnish(t, page, "If-None-Match: "+etag, "Accept-Encoding: "+ae)
			if nm.status != http.StatusNotModified || nm.body != "" {
				t.Errorf("If-None-Match (Accept-Encoding %q) through Varnish: %d, %d bytes; want 304", ae, nm.status, len(nm.body))
			}
		}
	})

	t.Run("an edit reaches Varnish within a second", func(t *testing.T) {
		const title, path, edits = "Purge Latency", "/wiki/Purge_Latency", 100
		rev := s.create(t, token, title, "Version 0.")
		var lat []time.Duration
		for i := 1; i <= edits; i++ {
			// The page is in Varnish (a hit) before the edit: it is the
			// purge, not an expiry, that brings the new text. The previous
			// edit's rebound purge may come between two reads: a few
			// reads make it a hit again.
			a := s.viaVarnish(t, path)
			for try := 0; a.cache() != "HIT" && try < 4; try++ {
				a = s.viaVarnish(t, path)
			}
			if a.cache() != "HIT" {
				t.Fatalf("before edit %d: X-Varnish-Cache %s, want HIT", i, a.cache())
			}
			marker := fmt.Sprintf("Version %d.", i)
			rev = s.put(t, token, title, rev, marker)
			lat = append(lat, s.pollVarnish(t, path, 5*time.Second, func(a answer) bool {
				return a.status == 200 && strings.Contains(a.body, marker)
			}))
		}
		slices.Sort(lat)
		p50, p99, max := lat[len(lat)/2], lat[len(lat)*99/100-1], lat[len(lat)-1]
		t.Logf("edit response → new text served by Varnish, over %d edits: p50 %v, p99 %v, max %v", edits, p50, p99, max)
		if p99 > time.Second {
			t.Errorf("p99 %v: an edit took over a second to reach Varnish", p99)
		}
	})

	t.Run("a red link turns blue through Varnish when its target is created", func(t *testing.T) {
		s.create(t, token, "Link Source", "A link to [[Link Target]].")
		const red, blue = `href="/wiki/Link_Target?action=edit&amp;redlink=1"`, `href="/wiki/Link_Target"`
		s.viaVarnish(t, "/wiki/Link_Source")
		if a := s.viaVarnish(t, "/wiki/Link_Source"); a.cache() != "HIT" || !strings.Contains(a.body, red) {
			t.Fatalf("before: X-Varnish-Cache %s, red link shown %v", a.cache(), strings.Contains(a.body, red))
		}
		s.put(t, token, "Link Target", 0, "Here now.")
		d := s.pollVarnish(t, "/wiki/Link_Source", 5*time.Second, func(a answer) bool {
			return strings.Contains(a.body, blue) && !strings.Contains(a.body, red)
		})
		t.Logf("creation → blue link served by Varnish: %v", d)
	})

	t.Run("a template's edit reaches the pages using it through Varnish, with new validators", func(t *testing.T) {
		tpl := s.create(t, token, "Template:Notice", "NOTICE-v1 {{{1}}}")
		s.create(t, token, "Notice User One", "{{Notice|one}}")
		s.create(t, token, "Notice User Two", "Before {{Notice|two}} after.")
		etags := map[string]string{}
		for _, path := range []string{"/wiki/Notice_User_One", "/wiki/Notice_User_Two"} {
			s.viaVarnish(t, path)
			a := s.viaVarnish(t, path)
			if a.cache() != "HIT" || !strings.Contains(a.body, "NOTICE-v1") {
				t.Fatalf("%s before: X-Varnish-Cache %s, template text shown %v", path, a.cache(), strings.Contains(a.body, "NOTICE-v1"))
			}
			etags[path] = a.header.Get("ETag")
		}
		s.put(t, token, "Template:Notice", tpl, "NOTICE-v2 {{{1}}}")
		for path, old := range etags {
			d := s.pollVarnish(t, path, 10*time.Second, func(a answer) bool {
				return a.status == 200 && strings.Contains(a.body, "NOTICE-v2") && !strings.Contains(a.body, "NOTICE-v1")
			})
			if a := s.viaVarnish(t, path); a.header.Get("ETag") == old {
				t.Errorf("%s: the ETag through Varnish did not change with the template", path)
			}
			t.Logf("template edit → %s served new by Varnish: %v", path, d)
		}
	})

	t.Run("a logged-in view never comes from Varnish", func(t *testing.T) {
		pw := "pw-varnish-reader-secret"
		hash, _ := auth.HashPassword(pw)
		if _, err := s.app.Store.CreateUser(context.Background(), wiki.User{Name: "Varnish Reader", PasswordHash: hash, Group: wiki.GroupUser, Created: time.Now()}); err != nil {
			t.Fatal(err)
		}
		jar, _ := cookiejar.New(nil)
		browser := &http.Client{Jar: jar, Transport: &http.Transport{DisableCompression: true},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		u, _ := url.Parse(s.url)
		jar.SetCookies(u, []*http.Cookie{{Name: "_ga", Value: "GA1.2.3", Path: "/"}})
		form := s.do(t, browser, "GET", s.url+"/wiki/Special:UserLogin", nil)
		m := regexp.MustCompile(`name="csrf" value="([^"]*)"`).FindStringSubmatch(form.body)
		if m == nil {
			t.Fatalf("no csrf in the login form through Varnish (%d %s)", form.status, form.cache())
		}
		login := s.do(t, browser, "POST", s.url+"/wiki/Special:UserLogin",
			strings.NewReader(url.Values{"csrf": {m[1]}, "username": {"Varnish Reader"}, "password": {pw}}.Encode()),
			"Content-Type: application/x-www-form-urlencoded")
		if login.status != http.StatusSeeOther || login.cache() != "PASS" {
			t.Fatalf("login through Varnish: %d %s, want 303 PASS\n%s", login.status, login.cache(), login.body)
		}
		s.viaVarnish(t, page) // the anonymous page is in Varnish
		for i := range 3 {
			a := s.do(t, browser, "GET", s.url+page, nil)
			if a.status != 200 || a.cache() != "PASS" || !strings.Contains(a.body, "Varnish Reader") || a.header.Get("Cache-Control") != "private, no-cache" {
				t.Fatalf("logged-in view %d: %d X-Varnish-Cache %s Cache-Control %q, shows the user %v",
					i+1, a.status, a.cache(), a.header.Get("Cache-Control"), strings.Contains(a.body, "Varnish Reader"))
			}
		}
		// The assets are the same for everyone: cached, session or not.
		asset := regexp.MustCompile(`/static/[^"]+`).FindString(s.viaVarnish(t, page).body)
		if asset == "" {
			t.Fatal("no /static/ asset in the page")
		}
		s.do(t, browser, "GET", s.url+asset, nil)
		if a := s.do(t, browser, "GET", s.url+asset, nil); a.status != 200 || a.cache() != "HIT" {
			t.Errorf("%s with a session: %d %s, want a HIT", asset, a.status, a.cache())
		}
		if a := s.viaVarnish(t, page, "Cookie: _ga=GA1.2.3; _pk_id=9"); a.cache() != "HIT" || strings.Contains(a.body, "Varnish Reader") {
			t.Errorf("anonymous reader with analytics cookies: %s, shows the user %v", a.cache(), strings.Contains(a.body, "Varnish Reader"))
		}
		if a := s.viaVarnish(t, page, "Authorization: Bearer "+token); a.cache() != "PASS" {
			t.Errorf("a bearer token's view: X-Varnish-Cache %s, want PASS", a.cache())
		}
	})

	t.Run("a non-canonical URL changes nothing for later readers", func(t *testing.T) {
		rev := s.create(t, token, "Diff Victim", "First version.")
		s.put(t, token, "Diff Victim", rev, "Second version.")
		s.settle(t)
		s.viaVarnish(t, "/wiki/Diff_Victim?diff")
		for _, a := range []struct {
			via string
			a   answer
		}{{"through Varnish", s.viaVarnish(t, "/wiki/Diff_Victim")}, {"from wikid", s.direct(t, "/wiki/Diff_Victim")}} {
			if a.a.status != 200 || strings.Contains(a.a.body, "Difference between revisions") || !strings.Contains(a.a.body, "Second version.") {
				t.Errorf("/wiki/Diff_Victim %s after a read of ?diff: %d, shows a diff %v (a non-canonical URL filled the page's cache entry)",
					a.via, a.a.status, strings.Contains(a.a.body, "Difference between revisions"))
			}
		}
	})

	t.Run("operator endpoints are refused and never cached", func(t *testing.T) {
		for _, p := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/goroutine?debug=1", "/%6Detrics", "//metrics", "/debug/%70prof/"} {
			for i := range 2 {
				a := s.viaVarnish(t, p)
				if a.status != http.StatusNotFound || a.cache() != "SYNTH" || a.header.Get("Cache-Control") != "no-store" ||
					strings.Contains(a.body, "go_goroutines") || strings.Contains(a.body, "goroutine") {
					t.Errorf("%s through Varnish (request %d): %d %s %q", p, i+1, a.status, a.cache(), a.header.Get("Cache-Control"))
				}
			}
		}
		// Wikid itself refuses them on its main listener too (Varnish
		// connects from loopback, a trusted proxy): they are served on the
		// operator's listener.
		if a := s.direct(t, "/metrics"); a.status != http.StatusForbidden || a.header.Get("Cache-Control") != "no-store" {
			t.Errorf("wikid's /metrics from loopback on the main listener: %d %q, want 403 no-store", a.status, a.header.Get("Cache-Control"))
		}
		if a := s.do(t, nil, "GET", "http://"+s.app.OpsAddr()+"/metrics", nil); a.status != 200 || !strings.Contains(a.body, `wikid_cdn_purge_requests_total{result="ok"}`) {
			t.Errorf("wikid's /metrics on ops_addr: %d, CDN purge metrics present %v", a.status, strings.Contains(a.body, "wikid_cdn_purge_requests_total"))
		}
	})

	t.Run("PURGE is refused from outside the ACL and from forwarded clients", func(t *testing.T) {
		key := purge.SurrogateKey(purge.TitleTag(wiki.MustTitle("Cached Page")))
		s.viaVarnish(t, page)
		stillHit := func(after string) {
			t.Helper()
			if a := s.viaVarnish(t, page); a.cache() != "HIT" {
				t.Errorf("after %s: X-Varnish-Cache %s, want HIT (nothing purged)", after, a.cache())
			}
		}
		for _, h := range []string{"X-Forwarded-For: 203.0.113.7", "Forwarded: for=203.0.113.7", "X-Real-IP: 203.0.113.7"} {
			if a := s.do(t, nil, "PURGE", s.url+"/", nil, "X-Purge-Keys: "+key, h); a.status != http.StatusForbidden {
				t.Errorf("PURGE with %s: %d, want 403", h, a.status)
			}
			stillHit("a forwarded PURGE")
		}
		if st := s.proxyPurge(t, "203.0.113.5", key); st != http.StatusForbidden {
			t.Errorf("PURGE from 203.0.113.5 (PROXY protocol): %d, want 403", st)
		}
		stillHit("a PURGE from outside the ACL")
		if a := s.do(t, nil, "PURGE", s.url+"/", nil, "X-Purge-Keys: "+key+" NOT-A-KEY"); a.status != http.StatusBadRequest {
			t.Errorf("PURGE with a malformed key: %d, want 400", a.status)
		}
		stillHit("a malformed PURGE")
		// The same PURGE from a private address bans the page.
		if st := s.proxyPurge(t, "10.1.2.3", key); st != http.StatusOK {
			t.Errorf("PURGE from 10.1.2.3 (PROXY protocol): %d, want 200", st)
		}
		if a := s.viaVarnish(t, page); a.cache() != "MISS" {
			t.Errorf("after a PURGE of its key: X-Varnish-Cache %s, want MISS", a.cache())
		}
		// Without X-Purge-Keys, the URL itself is purged.
		if a := s.do(t, nil, "PURGE", s.url+page, nil); a.status != http.StatusOK {
			t.Errorf("PURGE /wiki/Cached_Page: %d, want 200", a.status)
		}
		if a := s.viaVarnish(t, page); a.cache() != "MISS" {
			t.Errorf("after a PURGE of its URL: X-Varnish-Cache %s, want MISS", a.cache())
		}
	})
}

// proxyPurge sends PURGE / for key to Varnish's PROXY listener as a client
// at ip, and returns the status.
func (s *varnishStack) proxyPurge(t *testing.T, ip, key string) int {
	t.Helper()
	conn, err := net.DialTimeout("tcp", s.proxy, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	_, port, _ := net.SplitHostPort(s.proxy)
	fmt.Fprintf(conn, "PROXY TCP4 %s 127.0.0.1 40000 %s\r\nPURGE / HTTP/1.1\r\nHost: %s\r\nX-Purge-Keys: %s\r\nConnection: close\r\n\r\n",
		ip, port, s.proxy, key)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// Varnish computes freshness as s-maxage minus Age: a page that has sat in
// wikid's own cache longer than s_maxage must still be cacheable by Varnish.
func TestVarnishCachesPagesOlderThanSMaxAgeInWikid(t *testing.T) {
	s := newVarnishStack(t, func(c *config.Config) { c.SMaxAge = 2 })
	s.create(t, s.editor(t, "Aging Editor"), "Aging Page", "A page older than s-maxage.")
	if d := s.direct(t, "/wiki/Aging_Page"); d.status != 200 { // fills wikid's cache
		t.Fatalf("direct read: %d", d.status)
	}
	time.Sleep(3 * time.Second)
	first := s.viaVarnish(t, "/wiki/Aging_Page")
	second := s.viaVarnish(t, "/wiki/Aging_Page")
	if second.cache() != "HIT" {
		t.Errorf("second read through Varnish: %s, want HIT; the first (%s) came with Cache-Control %q and Age %s: "+
			"wikid's Age counts its own cache's time, and Varnish took the page for expired",
			second.cache(), first.cache(), first.header.Get("Cache-Control"), first.header.Get("Age"))
	}
}

// proxyClient is a browser at ip: it reaches Varnish through its PROXY
// listener, which then takes ip for client.ip. Cookies are the test's to
// send; redirects are not followed.
func (s *varnishStack) proxyClient(ip string) *http.Client {
	return proxyClient(s.proxy, ip)
}

func proxyClient(proxy, ip string) *http.Client {
	_, port, _ := net.SplitHostPort(proxy)
	return &http.Client{
		Transport: &http.Transport{DisableCompression: true, DisableKeepAlives: true,
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				conn, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, proxy)
				if err != nil {
					return nil, err
				}
				if _, err := fmt.Fprintf(conn, "PROXY TCP4 %s 127.0.0.1 40000 %s\r\n", ip, port); err != nil {
					conn.Close()
					return nil, err
				}
				return conn, nil
			}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       10 * time.Second,
	}
}

var (
	csrfField    = regexp.MustCompile(`name="csrf" value="([^"]*)"`)
	baserevField = regexp.MustCompile(`name="baserev" value="(\d+)"`)
)

// form GETs path through c and returns its csrf and baserev fields ("" when absent).
func (s *varnishStack) form(t *testing.T, c *http.Client, path string) (csrf, baserev string) {
	t.Helper()
	a := s.do(t, c, "GET", s.url+path, nil)
	m := csrfField.FindStringSubmatch(a.body)
	if m == nil {
		t.Fatalf("GET %s through Varnish: %d %s, no csrf field", path, a.status, a.cache())
	}
	if b := baserevField.FindStringSubmatch(a.body); b != nil {
		baserev = b[1]
	}
	return m[1], baserev
}

// postForm POSTs form values to path through c with extra header lines.
func (s *varnishStack) postForm(t *testing.T, c *http.Client, path string, v url.Values, headers ...string) answer {
	t.Helper()
	return s.do(t, c, "POST", s.url+path, strings.NewReader(v.Encode()), append(headers, "Content-Type: application/x-www-form-urlencoded")...)
}

// TestVarnishRequestHeaders: what the shipped VCL lets through to the
// backend, seen by a backend that records it. A GET or HEAD keeps
// wikid_session alone (without it, no Cookie at all); other methods keep
// wikid_session and wikid_device; Forwarded and X-Real-IP never come from
// the client; X-Forwarded-For ends with the client's address.
func TestVarnishRequestHeaders(t *testing.T) {
	bin := varnishdPath(t)
	var mu sync.Mutex
	seen := map[string]http.Header{}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = r.Header.Clone() // by path: Varnish fetches a HEAD it may store with GET
		mu.Unlock()
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, "ok\n")
	}))
	defer backend.Close()
	addr, proxy := freeAddr(t), freeAddr(t)
	startVarnish(t, bin, addr, proxy, backend.Listener.Addr().String())
	client := proxyClient(proxy, "198.51.100.23")
	vs := &varnishStack{url: "http://" + addr, client: client} // for its request helpers; no wikid behind it

	const sess, dev = "wikid_session=S3ssion", "wikid_device=D3vice"
	all := "_ga=GA1.2.3; " + sess + "; xwikid_device=no; " + dev + "; wikid_session_old=no; prefs=dark"
	forged := []string{"Forwarded: for=203.0.113.66;proto=https", "X-Real-IP: 203.0.113.67", "X-Forwarded-For: 203.0.113.68"}
	for _, tc := range []struct {
		method, path, cookie, want string
	}{
		{"GET", "/wiki/A", all, sess},
		{"HEAD", "/wiki/B", all, sess},
		{"GET", "/wiki/C", "_ga=GA1.2.3; " + dev + "; prefs=dark", ""},
		{"HEAD", "/wiki/D", dev, ""},
		{"GET", "/static/e.css", all, ""},
		{"POST", "/wiki/Special:UserLogin", all, sess + "; " + dev},
		{"POST", "/wiki/Special:UserLogout", "_ga=1; " + dev, dev},
		{"PUT", "/w/rest.php/v1/page/F", dev + "; " + sess, dev + "; " + sess},
		{"DELETE", "/w/rest.php/v1/page/G", "prefs=dark", ""},
	} {
		headers := append([]string{"Cookie: " + tc.cookie}, forged...)
		var body io.Reader
		if tc.method == "POST" || tc.method == "PUT" {
			body = strings.NewReader("x=1")
		}
		a := vs.do(t, nil, tc.method, vs.url+tc.path, body, headers...)
		if a.status != 200 {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, a.status, a.cache())
			continue
		}
		mu.Lock()
		h, ok := seen[tc.path]
		mu.Unlock()
		if !ok {
			t.Errorf("%s %s did not reach the backend", tc.method, tc.path)
			continue
		}
		cookies := h.Values("Cookie")
		if got := strings.Join(cookies, " | "); got != tc.want || (tc.want == "" && len(cookies) > 0) {
			t.Errorf("%s %s with Cookie %q: the backend got Cookie %q, want %q", tc.method, tc.path, tc.cookie, got, tc.want)
		}
		if f, x := h.Values("Forwarded"), h.Values("X-Real-IP"); len(f) > 0 || len(x) > 0 {
			t.Errorf("%s %s: the client's Forwarded %q or X-Real-IP %q reached the backend", tc.method, tc.path, f, x)
		}
		if xff := h.Values("X-Forwarded-For"); len(xff) == 0 || !strings.HasSuffix(xff[len(xff)-1], ", 198.51.100.23") {
			t.Errorf("%s %s: X-Forwarded-For %q, want Varnish's client.ip appended", tc.method, tc.path, xff)
		}
	}
}

// TestVarnishClientAddress: behind the shipped VCL a client cannot choose
// the address Wikid sees, with either client_ip_header.
func TestVarnishClientAddress(t *testing.T) {
	forged := []string{"Forwarded: for=203.0.113.66", "X-Real-IP: 203.0.113.67", "X-Forwarded-For: 203.0.113.68"}
	lastEditor := func(t *testing.T, s *varnishStack) string {
		t.Helper()
		cs, err := s.app.Store.RecentChanges(context.Background(), wiki.ChangeQuery{Limit: 1})
		if err != nil || len(cs) != 1 {
			t.Fatalf("recent changes: %v %v", cs, err)
		}
		return cs[0].UserName
	}
	anonEdit := func(t *testing.T, s *varnishStack, c *http.Client, title string) {
		t.Helper()
		path := "/wiki/" + wiki.MustTitle(title).Key()
		csrf, base := s.form(t, c, path+"?action=edit")
		a := s.postForm(t, c, path+"?action=submit", url.Values{"csrf": {csrf}, "baserev": {base}, "text": {"Anonymous text."}, "summary": {"via Varnish"}}, forged...)
		if a.status != http.StatusSeeOther {
			t.Fatalf("anonymous edit through Varnish: %d %s\n%s", a.status, a.cache(), a.body)
		}
	}
	anon := func(c *config.Config) { c.EditGroup = wiki.GroupAnonymous }

	t.Run("with X-Forwarded-For, the address Varnish appends", func(t *testing.T) {
		s := newVarnishStack(t, anon)
		anonEdit(t, s, s.proxyClient("198.51.100.23"), "Edited via XFF")
		if got := lastEditor(t, s); got != "198.51.100.23" {
			t.Errorf("anonymous editor %q, want 198.51.100.23 (the client Varnish saw)", got)
		}
	})
	t.Run("with Forwarded, never the client's own Forwarded", func(t *testing.T) {
		s := newVarnishStack(t, anon, func(c *config.Config) { c.ClientIPHeader = "Forwarded" })
		anonEdit(t, s, s.proxyClient("198.51.100.24"), "Edited via Forwarded")
		// Varnish writes no Forwarded: the client is Varnish itself (which
		// is why the README says to keep X-Forwarded-For).
		if got := lastEditor(t, s); got != "127.0.0.1" {
			t.Errorf("anonymous editor %q, want 127.0.0.1 (Varnish): the client chose its address", got)
		}
	})
}

// TestVarnishDeviceCookie: through Varnish, the device cookie reaches the
// login form, so an owner who logged in before is not locked out by an
// attacker at the same address; and it never splits or bypasses the cache.
func TestVarnishDeviceCookie(t *testing.T) {
	s := newVarnishStack(t)
	const pw = "pw-varnish-owner-secret"
	hash, _ := auth.HashPassword(pw)
	if _, err := s.app.Store.CreateUser(context.Background(), wiki.User{Name: "Varnish Owner", PasswordHash: hash, Group: wiki.GroupUser, Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	c := s.proxyClient("203.0.113.50") // the owner's address, and the attacker's
	csrf, _ := s.form(t, c, "/wiki/Special:UserLogin")
	login := func(name, password string, headers ...string) answer {
		t.Helper()
		return s.postForm(t, c, "/wiki/Special:UserLogin", url.Values{"csrf": {csrf}, "username": {name}, "password": {password}}, headers...)
	}
	first := login("Varnish Owner", pw)
	if first.status != http.StatusSeeOther || first.cache() != "PASS" {
		t.Fatalf("login through Varnish: %d %s", first.status, first.cache())
	}
	var device string
	for _, sc := range first.header.Values("Set-Cookie") {
		if v, ok := strings.CutPrefix(sc, "wikid_device="); ok {
			device, _, _ = strings.Cut(v, ";")
		}
	}
	if device == "" {
		t.Fatalf("no device cookie through Varnish: %q", first.header.Values("Set-Cookie"))
	}
	for i := range 25 {
		login(fmt.Sprint("Somebody ", i), "guess")
	}
	if a := login("Varnish Owner", pw); a.status != http.StatusTooManyRequests {
		t.Errorf("the owner without the device cookie: %d, want 429 (the address is throttled)", a.status)
	}
	if a := login("Varnish Owner", pw, "Cookie: _ga=GA1.2.3; wikid_device="+device); a.status != http.StatusSeeOther {
		t.Errorf("the owner with the device cookie through Varnish: %d, want 303", a.status)
	}

	// A reader with the device cookie (logged out) is an anonymous reader.
	s.create(t, s.editor(t, "Device Editor"), "Device Page", "Cached for everyone.")
	s.viaVarnish(t, "/wiki/Device_Page")
	for _, ck := range []string{"wikid_device=" + device, "_ga=1; wikid_device=" + device + "; prefs=dark"} {
		if a := s.viaVarnish(t, "/wiki/Device_Page", "Cookie: "+ck); a.cache() != "HIT" || len(a.header.Values("Set-Cookie")) > 0 {
			t.Errorf("GET with Cookie %q: X-Varnish-Cache %s, Set-Cookie %q; want a HIT without cookies", ck, a.cache(), a.header.Values("Set-Cookie"))
		}
	}
}

// TestVarnishSeveralNodes: the shipped VCL with deploy/scale-out's
// wikid-nodes.vcl included in place of its backend line, as that folder's
// README says, spreads requests over the nodes, and sends them all to the
// node left when the other stops answering its health probe.
func TestVarnishSeveralNodes(t *testing.T) {
	bin := varnishdPath(t)
	var hits [2]atomic.Int64
	var down atomic.Bool
	var nodes [2]*httptest.Server
	for i := range nodes {
		nodes[i] = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/healthz" {
				if i == 1 && down.Load() {
					http.Error(w, "stopping", http.StatusServiceUnavailable)
				}
				return
			}
			hits[i].Add(1)
			w.Header().Set("Cache-Control", "private, no-cache") // as a logged-in view: never stored
			io.WriteString(w, "ok\n")
		}))
		defer nodes[i].Close()
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "deploy", "scale-out", "wikid-nodes.vcl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := regexp.MustCompile(`(?m)^backend (node_[ab]) \{ \.host = "[^"]*"; \.port = "[^"]*";`)
	if n := len(lines.FindAll(src, -1)); n != 2 {
		t.Fatalf("wikid-nodes.vcl has %d node lines, want 2", n)
	}
	k := 0
	src = lines.ReplaceAllFunc(src, func(m []byte) []byte {
		host, port, _ := net.SplitHostPort(nodes[k].Listener.Addr().String())
		k++
		return []byte(fmt.Sprintf(`backend %s { .host = %q; .port = %q;`, lines.FindSubmatch(m)[1], host, port))
	})
	dir := t.TempDir()
	included := filepath.Join(dir, "wikid-nodes.vcl")
	if err := os.WriteFile(included, src, 0o644); err != nil {
		t.Fatal(err)
	}
	addr, proxy := freeAddr(t), freeAddr(t)
	startVarnishWith(t, bin, addr, proxy, fmt.Sprintf(`include %q;`, included), dir)

	get := func() {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/wiki/Page", nil)
		req.Header.Set("Cookie", "wikid_session=S3ssion")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET through Varnish: %s", res.Status)
		}
	}
	for range 20 {
		get()
	}
	if a, b := hits[0].Load(), hits[1].Load(); a != 10 || b != 10 {
		t.Fatalf("20 requests reached the nodes %d and %d times, want 10 and 10 (round robin)", a, b)
	}
	down.Store(true) // node B fails its probes (3 of 5 make it sick; one every 2 s)
	deadline := time.Now().Add(30 * time.Second)
	for {
		before := hits[1].Load()
		hits[0].Store(0)
		for range 10 {
			get()
		}
		if hits[1].Load() == before && hits[0].Load() == 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Varnish still sends requests to the node whose health probe fails, 30 s after it began to fail")
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// account creates a user in group with an API token and a session made
// in the store (no login form), and returns the token, the session
// cookie's value and that session's CSRF token.
func (s *varnishStack) account(t *testing.T, name string, group wiki.Group) (token, session, csrf string) {
	t.Helper()
	ctx := context.Background()
	u, err := s.app.Store.CreateUser(ctx, wiki.User{Name: name, Group: group, Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	token, session, csrf = "wkd_"+auth.NewSecret(32), auth.NewSecret(32), auth.NewSecret(24)
	if err := s.app.Store.CreateToken(ctx, wiki.Token{ID: auth.HashToken(token), UserID: u.ID, Name: "test", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.app.Store.CreateSession(ctx, wiki.Session{ID: auth.HashToken(session), UserID: u.ID, CSRF: csrf,
		Created: time.Now(), Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	return token, session, csrf
}

// upload stores data as File:name through the REST API, directly to
// wikid, waits for the upload's jobs (its purges at Varnish included),
// and returns the original's URL.
func (s *varnishStack) upload(t *testing.T, token, name string, data []byte) string {
	t.Helper()
	var body strings.Builder
	mw := multipart.NewWriter(&body)
	mw.WriteField("comment", "through the REST API")
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(data)
	mw.Close()
	res := s.do(t, nil, "POST", s.wikid+"/w/rest.php/v1/file/"+url.PathEscape("File:"+name), strings.NewReader(body.String()),
		"Authorization: Bearer "+token, "Content-Type: "+mw.FormDataContentType())
	var out struct {
		Original struct {
			URL string `json:"url"`
		} `json:"original"`
	}
	if res.status != http.StatusCreated || json.Unmarshal([]byte(res.body), &out) != nil || out.Original.URL == "" {
		t.Fatalf("upload %s: %d\n%s", name, res.status, res.body)
	}
	s.settle(t)
	// The upload's purge at Varnish is sent again CDNRebound after it
	// ran: wait for that one too, or it bans what the test fetches next.
	time.Sleep(engine.CDNRebound + 100*time.Millisecond)
	s.settle(t)
	return out.Original.URL
}

// thumbOf is the URL of original's thumbnail width pixels wide.
func thumbOf(original string, width int) string {
	dir, name := path.Split(original)
	return dir + fmt.Sprint(width) + "px-" + name
}

// TestVarnishFiles: behind the shipped VCL a file's original and
// thumbnails are kept by Varnish for anonymous readers and served in
// ranges from its copy; logged-in readers always reach Wikid (private
// answers, never stored); deleting the File: page bans every copy
// through the media tag, and anonymous readers get 404 from then on.
func TestVarnishFiles(t *testing.T) {
	s := newVarnishStack(t)
	token := s.editor(t, "File Uploader")
	_, admin, adminCSRF := s.account(t, "File Admin", wiki.GroupAdmin)
	_, reader, _ := s.account(t, "File Reader", wiki.GroupUser)
	data := gradientPNG(t, 300, 200)
	original := s.upload(t, token, "Varnish image.png", data)
	thumb := thumbOf(original, thumbWidth)
	filePath := "/wiki/Special:FilePath/Varnish_image.png"
	direct := s.direct(t, thumb)
	if direct.status != http.StatusOK || direct.header.Get("Content-Type") != "image/png" {
		t.Fatalf("GET %s from wikid: %d %s", thumb, direct.status, direct.header.Get("Content-Type"))
	}
	want := map[string]string{original: string(data), thumb: direct.body}

	t.Run("an anonymous original and thumbnail are Varnish hits, ranges served from the copy", func(t *testing.T) {
		for _, p := range []string{original, thumb} {
			first, second := s.viaVarnish(t, p), s.viaVarnish(t, p)
			if first.cache() != "MISS" || second.cache() != "HIT" {
				t.Errorf("%s: X-Varnish-Cache %s then %s, want MISS then HIT", p, first.cache(), second.cache())
			}
			for _, a := range []answer{first, second} {
				if a.status != http.StatusOK || a.body != want[p] || a.header.Get("Content-Type") != "image/png" ||
					a.header.Get("Cache-Control") != "public, max-age=31536000, immutable" || a.header.Get("X-Content-Type-Options") != "nosniff" {
					t.Errorf("%s through Varnish: %d, %d bytes (want %d), %q, %q", p, a.status, len(a.body), len(want[p]),
						a.header.Get("Content-Type"), a.header.Get("Cache-Control"))
				}
				if k := a.header.Get("Surrogate-Key"); k != "" {
					t.Errorf("%s: Surrogate-Key %q reached the client", p, k)
				}
				if sc := a.header.Values("Set-Cookie"); len(sc) > 0 {
					t.Errorf("%s: Set-Cookie %q", p, sc)
				}
			}
			etag := second.header.Get("ETag")
			if nm := s.viaVarnish(t, p, "If-None-Match: "+etag); nm.status != http.StatusNotModified || nm.cache() != "HIT" || nm.body != "" {
				t.Errorf("%s with If-None-Match %s through Varnish: %d %s, want a 304 HIT", p, etag, nm.status, nm.cache())
			}
			rng := s.viaVarnish(t, p, "Range: bytes=8-15")
			if rng.status != http.StatusPartialContent || rng.body != want[p][8:16] || rng.cache() != "HIT" ||
				rng.header.Get("Content-Range") != fmt.Sprintf("bytes 8-15/%d", len(want[p])) {
				t.Errorf("%s with Range through Varnish: %d %s %q, %q; want 206 HIT with bytes 8-15", p, rng.status, rng.cache(),
					rng.header.Get("Content-Range"), rng.body)
			}
		}
		// A range of a URL Varnish does not hold yet: it fetches the
		// whole thumbnail (it drops Range on a miss) and answers the range.
		other := thumbOf(original, 180)
		rng := s.viaVarnish(t, other, "Range: bytes=0-7")
		if rng.status != http.StatusPartialContent || rng.body != "\x89PNG\r\n\x1a\n" || rng.cache() != "MISS" {
			t.Errorf("%s with Range, first request: %d %s %q, want a 206 MISS with the PNG signature", other, rng.status, rng.cache(), rng.body)
		}
		if a := s.viaVarnish(t, other); a.status != http.StatusOK || a.cache() != "HIT" || !strings.HasPrefix(a.body, "\x89PNG") {
			t.Errorf("%s after a range: %d %s, want the whole thumbnail, a HIT", other, a.status, a.cache())
		}
		// Special:FilePath redirects to the original, and is kept too.
		s.viaVarnish(t, filePath)
		if a := s.viaVarnish(t, filePath); a.status != http.StatusFound || a.header.Get("Location") != original || a.cache() != "HIT" {
			t.Errorf("%s through Varnish: %d to %q, %s; want a 302 HIT", filePath, a.status, a.header.Get("Location"), a.cache())
		}
		// Analytics cookies make no one logged in.
		if a := s.viaVarnish(t, original, "Cookie: _ga=GA1.2.3; wikid_session_old=x"); a.cache() != "HIT" {
			t.Errorf("%s with analytics cookies: %s, want a HIT", original, a.cache())
		}
	})

	t.Run("a logged-in reader's request is passed, never a hit, and not stored", func(t *testing.T) {
		for _, p := range []string{original, thumb} {
			for i, extra := range []string{"", "Range: bytes=8-15", "If-None-Match: " + s.viaVarnish(t, p).header.Get("ETag")} {
				hdr := []string{"Cookie: _ga=GA1.2.3; wikid_session=" + reader}
				if extra != "" {
					hdr = append(hdr, extra)
				}
				a := s.viaVarnish(t, p, hdr...)
				status, body := http.StatusOK, want[p]
				switch i {
				case 1:
					status, body = http.StatusPartialContent, want[p][8:16]
				case 2:
					status, body = http.StatusNotModified, ""
				}
				if a.status != status || a.body != body || a.cache() != "PASS" || a.header.Get("Cache-Control") != "private, max-age=31536000, immutable" {
					t.Errorf("%s for a logged-in reader (%q): %d %s %q, %d bytes; want %d, PASS, private", p, extra, a.status, a.cache(),
						a.header.Get("Cache-Control"), len(a.body), status)
				}
			}
		}
	})

	t.Run("deleting the file bans its copies: anonymous readers get 404", func(t *testing.T) {
		paths := []string{original, thumb, thumbOf(original, 180), filePath}
		for _, p := range paths {
			if a := s.viaVarnish(t, p); a.cache() != "HIT" {
				t.Fatalf("before the deletion, %s: X-Varnish-Cache %s, want HIT", p, a.cache())
			}
		}
		res := s.do(t, nil, "POST", s.wikid+"/wiki/File:Varnish_image.png?action=delete",
			strings.NewReader(url.Values{"csrf": {adminCSRF}, "reason": {"varnish test"}}.Encode()),
			"Cookie: wikid_session="+admin, "Content-Type: application/x-www-form-urlencoded")
		if res.status != http.StatusSeeOther {
			t.Fatalf("delete File:Varnish_image.png: %d\n%s", res.status, res.body)
		}
		s.settle(t) // the CDN purge job has run
		for _, p := range paths {
			for i := range 2 {
				a := s.viaVarnish(t, p)
				if a.status != http.StatusNotFound || a.cache() == "HIT" || strings.Contains(a.body, "\x89PNG") {
					t.Errorf("after the deletion, %s through Varnish (request %d): %d %s, want 404 from Wikid", p, i+1, a.status, a.cache())
				}
			}
			if a := s.viaVarnish(t, p, "Range: bytes=0-7"); a.status != http.StatusNotFound {
				t.Errorf("after the deletion, a range of %s through Varnish: %d %s, want 404", p, a.status, a.cache())
			}
		}
		// An administrator still sees the bytes, privately: never stored.
		a := s.viaVarnish(t, original, "Cookie: wikid_session="+admin)
		if a.status != http.StatusOK || a.body != string(data) || a.cache() != "PASS" || a.header.Get("Cache-Control") != "no-store" {
			t.Errorf("an administrator's look at the deleted file: %d %s %q", a.status, a.cache(), a.header.Get("Cache-Control"))
		}
		if a := s.viaVarnish(t, original); a.status != http.StatusNotFound {
			t.Errorf("after an administrator's look, anonymous: %d %s, want 404", a.status, a.cache())
		}
	})
}

// TestVarnishPrivateFiles: on a wiki only users may read, behind the
// shipped VCL, anonymous requests for a file's URLs get 401, whatever
// their cookies, even right after a member fetched the same URL through
// Varnish: the member's private answer is passed, never stored.
func TestVarnishPrivateFiles(t *testing.T) {
	s := newVarnishStack(t, func(c *config.Config) { c.ReadGroup = wiki.GroupUser })
	token, session, _ := s.account(t, "Private Member", wiki.GroupUser)
	data := gradientPNG(t, 300, 200)
	original := s.upload(t, token, "Private image.png", data)
	paths := []string{original, thumbOf(original, thumbWidth), "/wiki/Special:FilePath/Private_image.png"}
	anonymous := []string{"", "Cookie: _ga=GA1.2.3", "Cookie: wikid_session=" + strings.Repeat("A", 43), "Range: bytes=0-7"}
	refused := func(when, p string) {
		t.Helper()
		for _, h := range anonymous {
			var hdr []string
			if h != "" {
				hdr = append(hdr, h)
			}
			a := s.viaVarnish(t, p, hdr...)
			if a.status != http.StatusUnauthorized || a.cache() == "HIT" || strings.Contains(a.body, "\x89PNG") ||
				strings.Contains(a.header.Get("Location"), "/media/") || strings.Contains(a.header.Get("Cache-Control"), "public") {
				t.Errorf("%s, anonymous %s (%q) through Varnish: %d %s %q, want 401", when, p, h, a.status, a.cache(), a.header.Get("Cache-Control"))
			}
		}
	}
	for _, p := range paths {
		refused("before a member's read", p)
		for range 2 {
			a := s.viaVarnish(t, p, "Cookie: wikid_session="+session)
			if a.cache() != "PASS" || strings.Contains(a.header.Get("Cache-Control"), "public") || a.header.Get("Surrogate-Key") != "" {
				t.Errorf("a member's %s through Varnish: %d %s %q, want passed and private", p, a.status, a.cache(), a.header.Get("Cache-Control"))
			}
			if p == original && (a.status != http.StatusOK || a.body != string(data)) {
				t.Errorf("a member's %s through Varnish: %d, %d bytes", p, a.status, len(a.body))
			}
		}
		refused("after a member's read", p)
	}
}
