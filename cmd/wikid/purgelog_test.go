package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wikid/wikid/internal/store/postgres/pgtest"
	"github.com/wikid/wikid/internal/wiki"
)

// `wikid jobs run` beside `wikid serve`, as the README suggests: what the
// jobs process changes reaches the server's caches through the purge log.
// A page created through the server turns the red links to it blue on the
// server's cached pages (the backlinks job runs in the jobs process); a
// page imported by another process replaces the server's cached copy.
func TestJobsProcessBesideServe(t *testing.T) {
	t.Parallel()
	f := newFolder(t)
	f.cli("purge-test-password\n", "user", "add", "Bot")
	token := f.cli("", "token", "create", "Bot")

	// The server runs no jobs: the jobs process runs them all.
	srv := f.serve()
	jobs := f.jobs()

	api := &apiClient{t: t, base: srv.url, token: token}
	api.put("Linking page", 0, "See [[Target page]].")
	api.put("Imported page", 0, "The first text, zqfirst.")
	for range 2 { // the second view is the edge's copy
		if body := srv.get(t, "/wiki/Linking_page"); !strings.Contains(body, redLinkTo("Target page")) {
			t.Fatal("the link to a missing page is not red")
		}
		srv.get(t, "/wiki/Imported_page")
	}

	api.put("Target page", 0, "It exists now.")
	d := within(t, "the red link turning blue on the server", func() bool {
		return !strings.Contains(srv.get(t, "/wiki/Linking_page"), redLinkTo("Target page"))
	}, srv, jobs)
	t.Logf("red link blue on the server %v after the page's creation", d.Round(time.Millisecond))

	f.cli(`{"title": "Imported page", "text": "The second text, zqsecond."}`+"\n", "import", "-")
	d = within(t, "an import by another process reaching the server's cached page", func() bool {
		return strings.Contains(srv.get(t, "/wiki/Imported_page"), "zqsecond")
	}, srv, jobs)
	t.Logf("imported text on the server %v after the import", d.Round(time.Millisecond))

	// A password set from the command line signs the account out of the
	// server at once, though the server holds its session in memory.
	browser := login(t, srv.url, "Bot", "purge-test-password")
	loggedIn := func() bool {
		res, err := browser.Get(srv.url + "/wiki/Linking_page")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return strings.Contains(string(b), "Log out")
	}
	if !loggedIn() || !loggedIn() { // the second view is from the server's session cache
		t.Fatal("not logged in after the login")
	}
	f.cli("another-password-1\n", "user", "reset-password", "Bot", "--stdin")
	d = within(t, "a password reset by the command line signing the account out of the server", func() bool { return !loggedIn() }, srv, jobs)
	t.Logf("signed out on the server %v after the password reset", d.Round(time.Millisecond))
	srv.stop(t)
	if err := jobs.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-jobs.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("wikid jobs run did not stop:\n%s", jobs.logs())
	}
	if s := jobs.logs() + srv.logs(); strings.Contains(s, "level=ERROR") {
		t.Fatalf("errors logged:\n%s", s)
	}
}

// login logs in through the server's login form and returns the browser.
func login(t *testing.T, base, name, password string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.PostForm(base+"/wiki/Special:UserLogin", url.Values{"csrf": {formToken(t, c, base+"/wiki/Special:UserLogin")}, "username": {name}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %s, want 303", res.Status)
	}
	return c
}

// Two servers on one data folder, with the jobs in a process of their own:
// what one server changes, the other serves fresh. Logs the delay from an
// edit's response on one server to the other serving it.
func TestTwoServersOneDataFolder(t *testing.T) {
	t.Parallel()
	twoServers(t, newFolder(t))
}

// Two nodes on one PostgreSQL database, with the jobs in a process of
// their own, as TestTwoServersOneDataFolder; then the database ends every
// connection of the nodes (a restart, a failover): they connect again,
// listen again, and what one changes meanwhile the other serves fresh.
func TestNodesOnPostgres(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	f := newFolder(t, fmt.Sprintf(`{"database": %q}`, dsn))
	a, b, jobs, api := twoServers(t, f)

	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	b.get(t, "/wiki/Shared_page")
	b.get(t, "/wiki/Shared_page")
	var ended int
	if err := pool.QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = 'wikid' AND datname = current_database() AND pid <> pg_backend_pid()`).Scan(&ended); err != nil {
		t.Fatal(err)
	}
	if ended == 0 {
		t.Fatal("no connection of the nodes to end")
	}
	want := "zqafter"
	within(t, "an edit on A after the database ended its connections", func() bool {
		return api.tryPut("Shared page", "Version "+want+".") == nil
	}, a, b, jobs)
	d := within(t, "B serving an edit made after the database ended its connections", func() bool {
		return strings.Contains(b.get(t, "/wiki/Shared_page"), want)
	}, a, b, jobs)
	t.Logf("after every connection was ended, an edit on A reached B in %v (ended %d connections)", d.Round(time.Millisecond), ended)
}

// tryPut replaces the text of an existing page through the REST API, on
// top of its latest revision, and returns what went wrong, if anything.
func (c *apiClient) tryPut(title, text string) error {
	page := c.base + "/w/rest.php/v1/page/" + wiki.MustTitle(title).Key()
	res, err := http.Get(page)
	if err != nil {
		return err
	}
	var cur struct {
		Latest struct {
			ID int64 `json:"id"`
		} `json:"latest"`
	}
	err = json.NewDecoder(res.Body).Decode(&cur)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s %v", page, res.Status, err)
	}
	b, _ := json.Marshal(map[string]any{"source": text, "comment": "test", "latest": map[string]int64{"id": cur.Latest.ID}})
	r, _ := http.NewRequest(http.MethodPut, page, bytes.NewReader(b))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+c.token)
	res, err = http.DefaultClient.Do(r)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("PUT %s: %s", page, res.Status)
	}
	return nil
}

// twoServers runs two servers and a jobs process on f and checks that
// edits, red links and sign-outs on one reach the other, logging the
// delays. It returns the processes and an API client of A.
func twoServers(t *testing.T, f *folder) (a, b, jobs *wikidProc, api *apiClient) {
	f.cli("two-nodes-password\n", "user", "add", "Bot")
	token := f.cli("", "token", "create", "Bot")
	a, b, jobs = f.serve(), f.serve(), f.jobs()

	// Edits on A, read on B: B's cached copy goes within the poll.
	api = &apiClient{t: t, base: a.url, token: token}
	rev := api.put("Shared page", 0, "Version zq0.")
	var delays []time.Duration
	for i := 1; i <= 20; i++ {
		b.get(t, "/wiki/Shared_page")
		b.get(t, "/wiki/Shared_page") // cached on B now
		// Out of step with B's reads of the log, as real edits are.
		time.Sleep(time.Duration(rand.IntN(60)) * time.Millisecond)
		rev = api.put("Shared page", rev, fmt.Sprintf("Version zq%d.", i))
		want := fmt.Sprintf("zq%d.", i)
		delays = append(delays, within(t, "an edit on A served by B", func() bool {
			return strings.Contains(b.get(t, "/wiki/Shared_page"), want)
		}, a, b, jobs))
	}
	slices.Sort(delays)
	t.Logf("edit on A to B serving it, 20 edits: p50 %v, p99 (max) %v", delays[len(delays)/2].Round(time.Millisecond), delays[len(delays)-1].Round(time.Millisecond))

	// A page created on A turns B's red links blue.
	api.put("Linking page", 0, "See [[Target page]].")
	for range 2 {
		if !strings.Contains(b.get(t, "/wiki/Linking_page"), redLinkTo("Target page")) {
			t.Fatal("the link to a missing page is not red on B")
		}
	}
	api.put("Target page", 0, "It exists now.")
	d := within(t, "a red link on B turning blue", func() bool {
		return !strings.Contains(b.get(t, "/wiki/Linking_page"), redLinkTo("Target page"))
	}, a, b, jobs)
	t.Logf("red link blue on B %v after the creation on A", d.Round(time.Millisecond))

	// A session made on A is valid on B; signing out on A ends it on B.
	browser := login(t, a.url, "Bot", "two-nodes-password")
	loggedIn := func(base string) bool {
		res, err := browser.Get(base + "/wiki/Linking_page")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return strings.Contains(string(body), "Log out")
	}
	if !loggedIn(b.url) || !loggedIn(b.url) {
		t.Fatal("a session made on A is not valid on B")
	}
	csrf := formToken(t, browser, a.url+"/wiki/Special:UserLogout")
	// The jar's cookie, sent by hand to B after A clears it.
	u, _ := url.Parse(a.url)
	cookies := browser.Jar.Cookies(u)
	res, err := browser.PostForm(a.url+"/wiki/Special:UserLogout", url.Values{"csrf": {csrf}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out on A: %s", res.Status)
	}
	old := func() bool {
		r, _ := http.NewRequest(http.MethodGet, b.url+"/wiki/Linking_page", nil)
		for _, c := range cookies {
			r.AddCookie(c)
		}
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return strings.Contains(string(body), "Log out")
	}
	d = within(t, "a sign-out on A ending the session on B", func() bool { return !old() }, a, b, jobs)
	t.Logf("signed out on B %v after the sign-out on A", d.Round(time.Millisecond))
	return a, b, jobs, api
}

// folder is a data folder for processes of a built wikid, with a command
// line to run on it.
type folder struct {
	t                  *testing.T
	bin, data, cfgFile string
}

// newFolder makes a data folder with a configuration file holding config
// (default {}).
func newFolder(t *testing.T, config ...string) *folder {
	dir := t.TempDir()
	f := &folder{t: t, bin: buildWikid(t, dir), data: filepath.Join(dir, "data"), cfgFile: filepath.Join(dir, "wikid.json")}
	if err := os.WriteFile(f.cfgFile, []byte(append(config, `{}`)[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// cli runs a wikid command on the folder and returns its output.
func (f *folder) cli(stdin string, args ...string) string {
	f.t.Helper()
	cmd := exec.Command(f.bin, append(args, "--data", f.data, "--config", f.cfgFile)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("wikid %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// serve starts `wikid serve` without job workers.
func (f *folder) serve() *wikidProc { return startWikid(f.t, f.bin, f.data, f.cfgFile, 0) }

// jobs starts `wikid jobs run`.
func (f *folder) jobs() *wikidProc { return startJobs(f.t, f.bin, f.data, f.cfgFile) }

// startJobs starts `wikid jobs run`.
func startJobs(t *testing.T, bin, data, cfgFile string) *wikidProc {
	p := &wikidProc{done: make(chan struct{})}
	p.cmd = exec.Command(bin, "jobs", "run", "--data", data, "--config", cfgFile, "--log-level", "warn")
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.cmd.Process.Kill(); <-p.done })
	return p
}

// within polls until ok, failing the test with the processes' logs after
// 15 s, and returns how long it took.
func within(t *testing.T, what string, ok func() bool, procs ...*wikidProc) time.Duration {
	t.Helper()
	start := time.Now()
	for !ok() {
		if time.Since(start) > 15*time.Second {
			var logs strings.Builder
			for i, p := range procs {
				fmt.Fprintf(&logs, "process %d:\n%s\n", i+1, p.logs())
			}
			t.Fatalf("%s: not within 15 s\n%s", what, logs.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
	return time.Since(start)
}

// formToken returns the CSRF token of the form at page, as c sees it.
func formToken(t *testing.T, c *http.Client, page string) string {
	t.Helper()
	res, err := c.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no CSRF token on %s:\n%s", page, b)
	}
	return string(m[1])
}

// redLinkTo is the start of a red link to title in a page's HTML (the
// page's tabs may hold others, to its talk page).
func redLinkTo(title string) string {
	return `href="` + wiki.MustTitle(title).URL() + `?action=edit&amp;redlink=1" class="new"`
}
