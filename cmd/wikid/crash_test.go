package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/store/postgres"
	"github.com/wikid/wikid/internal/store/postgres/pgtest"
	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/wiki"
)

// TestCrashDuringDrain builds wikid, queues thousands of jobs, SIGKILLs the
// server while its worker drains them, restarts it, and checks that every
// committed job took effect exactly once in effect: links, search index,
// recoloured renders, no job left queued, running or dead.
func TestCrashDuringDrain(t *testing.T) {
	crashDuringDrain(t, "")
}

// As TestCrashDuringDrain on PostgreSQL, with the jobs in a `wikid jobs
// run` process of their own: that process is SIGKILLed mid-drain.
func TestCrashDuringDrainOnPostgres(t *testing.T) {
	crashDuringDrain(t, pgtest.DSN(t))
}

// crashDuringDrain runs the test on SQLite (dsn "": the server's worker
// drains) or on the PostgreSQL database dsn (a jobs process drains).
func crashDuringDrain(t *testing.T, dsn string) {
	t.Parallel()
	pages, edits, backlog := 300, 60, 3000
	if testing.Short() {
		pages, edits, backlog = 40, 10, 300
	}
	ctx := context.Background()
	dir := t.TempDir()
	bin := buildWikid(t, dir)
	data := filepath.Join(dir, "data")
	cfgFile := filepath.Join(dir, "wikid.json")
	// A short lease: the jobs the killed server held become due again soon.
	cfg := `{"job_lease": "2s"}`
	if dsn != "" {
		cfg = fmt.Sprintf(`{"job_lease": "2s", "database": %q}`, dsn)
	}
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	// drainer starts what runs the jobs: a server with a worker, or a jobs
	// process beside a server without.
	drainer := func() *wikidProc {
		if dsn == "" {
			return startWikid(t, bin, data, cfgFile, 1)
		}
		return startJobs(t, bin, data, cfgFile)
	}
	cli := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--data", data, "--config", cfgFile)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("wikid %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	cli("crash-test-password\n", "user", "add", "Bot")
	token := cli("", "token", "create", "Bot")

	// Phase 1: a server without workers takes the edits; every job waits.
	srv := startWikid(t, bin, data, cfgFile, 0)
	api := &apiClient{t: t, base: srv.url, token: token}
	latest := map[int]int64{}
	for i := range pages {
		latest[i] = api.put(fmt.Sprintf("Page %d", i), 0, fmt.Sprintf("Word zqa%dx. See [[Crash target]].", i))
	}
	for i := range 20 {
		if body := srv.get(t, fmt.Sprintf("/wiki/Page_%d", i)); !strings.Contains(body, redLinkTo("Crash target")) {
			t.Fatalf("Page %d: the link to a missing page is not red", i)
		}
	}
	api.put("Crash target", 0, "Now it exists: zqtarget.")
	for i := range edits {
		latest[i] = api.put(fmt.Sprintf("Page %d", i), latest[i], fmt.Sprintf("Word zqb%dx, edited. See [[Crash target]].", i))
	}
	srv.kill(t)

	var db wiki.Store
	var err error
	if dsn == "" {
		db, err = sqlite.Open(ctx, filepath.Join(data, "wikid.db"))
	} else {
		db, err = postgres.Open(ctx, dsn)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cli("", "jobs", "bench-backlog", fmt.Sprint(backlog), "links,search,backlinks")
	st := jobStats(t, db)
	total := st.Counts[wiki.JobQueued]
	if total < backlog+pages {
		t.Fatalf("queued %d jobs, want at least %d", total, backlog+pages)
	}

	// Phase 2: a server with a worker (or a jobs process) starts
	// draining; SIGKILL it mid-way.
	srv = drainer()
	for {
		st = jobStats(t, db)
		if st.Counts[wiki.JobDone] >= total/5 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	srv.kill(t)
	st = jobStats(t, db)
	t.Logf("killed mid-drain: %v", st.Counts)
	if st.Counts[wiki.JobQueued] == 0 {
		t.Fatal("the queue drained before the kill; nothing was tested")
	}

	// Phase 3: restart; every committed job completes.
	doneAtKill := st.Counts[wiki.JobDone]
	t0 := time.Now()
	srv = drainer()
	deadline := time.Now().Add(90 * time.Second)
	for {
		st = jobStats(t, db)
		if st.Counts[wiki.JobQueued] == 0 && st.Counts[wiki.JobRunning] == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queue did not drain after the restart: %v\nlogs:\n%s", st.Counts, srv.logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("after restart: %d jobs ran in %v (including the wait for the 2s leases to expire)", st.Counts[wiki.JobDone]-doneAtKill, time.Since(t0).Round(time.Millisecond))
	if st.Counts[wiki.JobDead] != 0 {
		dead, _ := db.ListJobs(ctx, wiki.JobDead, 5)
		t.Fatalf("%d dead jobs: %+v", st.Counts[wiki.JobDead], dead)
	}

	t.Run("the link table is complete", func(t *testing.T) {
		bl, err := db.Backlinks(ctx, "Crash target", wiki.ListQuery{Limit: 5000})
		if err != nil || len(bl) != pages {
			t.Fatalf("%d pages link to the target (%v), want %d", len(bl), err, pages)
		}
	})
	t.Run("the search index finds every page once, by its latest text", func(t *testing.T) {
		for i := range pages {
			word, gone := fmt.Sprintf("zqa%dx", i), ""
			if i < edits {
				word, gone = fmt.Sprintf("zqb%dx", i), fmt.Sprintf("zqa%dx", i)
			}
			hits, err := db.Search(ctx, wiki.SearchQuery{Text: word, Limit: 10})
			if err != nil || len(hits) != 1 || hits[0].Title != wiki.Title(fmt.Sprintf("Page %d", i)) {
				t.Fatalf("search %q = %+v, %v", word, hits, err)
			}
			if gone != "" {
				if hits, _ := db.Search(ctx, wiki.SearchQuery{Text: gone, Limit: 10}); len(hits) != 0 {
					t.Fatalf("search %q finds the text replaced by an edit: %+v", gone, hits)
				}
			}
		}
		if hits, _ := db.Search(ctx, wiki.SearchQuery{Text: "zqtarget", Limit: 10}); len(hits) != 1 {
			t.Fatalf("the target is found %d times: %+v", len(hits), hits)
		}
	})
	if dsn != "" {
		srv = startWikid(t, bin, data, cfgFile, 0) // the pages are read from a server
	}
	t.Run("every linking page was re-rendered with a blue link", func(t *testing.T) {
		for i := range pages {
			if body := srv.get(t, fmt.Sprintf("/wiki/Page_%d", i)); strings.Contains(body, redLinkTo("Crash target")) {
				t.Fatalf("Page %d still has a red link", i)
			}
		}
	})
	t.Run("jobs wrote no recent change: every edit is listed once", func(t *testing.T) {
		rc, err := db.RecentChanges(ctx, wiki.ChangeQuery{Limit: 5000, UserName: "Bot"})
		if err != nil || len(rc) != pages+1+edits {
			t.Fatalf("%d changes by Bot (%v), want %d", len(rc), err, pages+1+edits)
		}
	})
	srv.stop(t)
}

func jobStats(t *testing.T, db wiki.JobStore) wiki.JobStats {
	t.Helper()
	st, err := db.JobStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// buildWikid builds the wikid binary into dir.
func buildWikid(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "wikid")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

type wikidProc struct {
	cmd  *exec.Cmd
	url  string
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func (p *wikidProc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *wikidProc) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// startWikid starts `wikid serve` on a free loopback port and waits until
// it answers.
func startWikid(t *testing.T, bin, data, cfgFile string, workers int) *wikidProc {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := &wikidProc{url: "http://" + addr, done: make(chan struct{})}
	p.cmd = exec.Command(bin, "serve", "--addr", addr, "--data", data, "--config", cfgFile, "--log-level", "warn")
	p.cmd.Env = append(os.Environ(), fmt.Sprintf("WIKID_JOB_WORKERS=%d", workers))
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.cmd.Process.Kill(); <-p.done })
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get(p.url + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-p.done:
			t.Fatalf("wikid serve exited: %s", p.logs())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("wikid serve did not answer: %v\n%s", err, p.logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *wikidProc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
}

func (p *wikidProc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("wikid did not stop on SIGTERM:\n%s", p.logs())
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("wikid exited with %d after SIGTERM:\n%s", code, p.logs())
	}
}

func (p *wikidProc) get(t *testing.T, path string) string {
	t.Helper()
	res, err := http.Get(p.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", path, res.StatusCode, b)
	}
	return string(b)
}

type apiClient struct {
	t     *testing.T
	base  string
	token string
}

// put saves text at title through the REST API (base 0 creates) and
// returns the new latest revision ID.
func (c *apiClient) put(title string, base int64, text string) int64 {
	c.t.Helper()
	body := map[string]any{"source": text, "comment": "crash test"}
	if base != 0 {
		body["latest"] = map[string]int64{"id": base}
	}
	b, _ := json.Marshal(body)
	r, _ := http.NewRequest(http.MethodPut, c.base+"/w/rest.php/v1/page/"+wiki.MustTitle(title).Key(), bytes.NewReader(b))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+c.token)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Latest struct {
			ID int64 `json:"id"`
		} `json:"latest"`
	}
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 || json.Unmarshal(raw, &out) != nil || out.Latest.ID == 0 {
		c.t.Fatalf("PUT %q: %d %s", title, res.StatusCode, raw)
	}
	return out.Latest.ID
}
