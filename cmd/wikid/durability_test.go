package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/store/postgres"
	"github.com/wikid/wikid/internal/store/postgres/pgtest"
	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/wiki"
)

// TestDurabilityUnderKills: 20 concurrent writers edit
// through the REST API while the wikid subprocess is SIGKILLed at random
// moments and restarted. Afterwards every edit acknowledged with a 2xx is
// present (history + revision source), each writer's latest text holds every
// marker it got acknowledged, PRAGMA integrity_check says ok, and the job
// queue drains with nothing dead.
//
// Short mode (go test -short, CI): 5 kills over ~15 s. Full mode:
// WIKID_DURABILITY_FULL=1 (5 kills over ~60 s by default). Knobs:
// WIKID_DURABILITY_SEED, WIKID_DURABILITY_KILLS, WIKID_DURABILITY_SPAN (a
// duration: the time over which the kills are spread).
//
// Writers 0..13 each own a page and always send the latest revision they
// know, so their page's latest text must contain every marker of theirs that
// was acknowledged. Writers 14..19 share two pages (3 each): their edits race,
// so 409 conflicts (counted, not errors) and three-way merges happen; their
// acknowledged markers must also survive in the latest text (edits only
// append, so a clean merge keeps them).
func TestDurabilityUnderKills(t *testing.T) {
	durability(t, "")
}

// Two nodes on PostgreSQL and a jobs process, as TestDurabilityUnderKills:
// the writers are spread over both nodes, each kill takes down one node at
// random (and every other one the jobs process too, mid-drain), and the
// queue drains afterwards with nothing lost or dead.
func TestDurabilityUnderKillsOnPostgres(t *testing.T) {
	durability(t, pgtest.DSN(t))
}

// durability runs the test on SQLite (dsn "": one server with a job
// worker) or on the PostgreSQL database dsn (two nodes without workers
// and a `wikid jobs run` beside them).
func durability(t *testing.T, dsn string) {
	kills, span := 5, 15*time.Second
	if os.Getenv("WIKID_DURABILITY_FULL") != "" {
		span = 60 * time.Second
	}
	if v := os.Getenv("WIKID_DURABILITY_KILLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("WIKID_DURABILITY_KILLS=%q", v)
		}
		kills = n
	}
	if v := os.Getenv("WIKID_DURABILITY_SPAN"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("WIKID_DURABILITY_SPAN=%q: %v", v, err)
		}
		span = d
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("WIKID_DURABILITY_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("WIKID_DURABILITY_SEED=%q", v)
		}
		seed = s
	}
	t.Logf("seed %d (rerun with WIKID_DURABILITY_SEED=%d), %d kills over %v", seed, seed, kills, span)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))

	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	bin := filepath.Join(dir, "wikid")
	if out, err := runCmd("go", "build", "-o", bin, "."); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data := filepath.Join(dir, "data")
	cfgFile := filepath.Join(dir, "wikid.json")
	// A short lease so that jobs leased by a killed server are due again soon.
	cfg := `{"job_lease": "2s", "access_log": false}`
	if dsn != "" {
		cfg = fmt.Sprintf(`{"job_lease": "2s", "access_log": false, "database": %q}`, dsn)
	}
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cli := func(stdin string, args ...string) string {
		t.Helper()
		out, err := execIn(stdin, bin, append(args, "--data", data, "--config", cfgFile)...)
		if err != nil {
			t.Fatalf("wikid %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(out)
	}
	cli("durability-test-password\n", "user", "add", "Writer")
	token := cli("", "token", "create", "Writer")

	// The nodes, each with the URL its writers use; on PostgreSQL the jobs
	// run in a process of their own.
	var nodes []*wikidProc
	var jobs *wikidProc
	workers := 1
	if dsn == "" {
		nodes = []*wikidProc{startWikid(t, bin, data, cfgFile, workers)}
	} else {
		workers = 0
		nodes = []*wikidProc{startWikid(t, bin, data, cfgFile, workers), startWikid(t, bin, data, cfgFile, workers)}
		jobs = startJobs(t, bin, data, cfgFile)
	}
	bases := make([]atomic.Pointer[string], len(nodes))
	for i, n := range nodes {
		bases[i].Store(&n.url)
	}

	const writers, owners = 20, 14
	type ack struct {
		writer int
		title  string
		rev    int64
		marker string
		text   string // what the writer sent (owners: must equal the stored text)
	}
	var (
		mu        sync.Mutex
		acks      []ack
		conflicts atomic.Int64
		unknown   atomic.Int64 // requests without an answer (the server died)
		bad       []string     // unexpected answers (non-2xx, non-409)
	)
	titleOf := func(w int) string {
		if w < owners {
			return fmt.Sprintf("Durable %d", w)
		}
		return fmt.Sprintf("Shared %d", (w-owners)%2)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			title := titleOf(w)
			var latest int64
			var text string
			known := false // latest/text reflect the server
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				url := *bases[w%len(bases)].Load()
				if !known {
					id, src, status, err := apiGetPage(c, url, title)
					if err != nil {
						time.Sleep(20 * time.Millisecond)
						continue
					}
					switch {
					case status == http.StatusNotFound:
						latest, text = 0, ""
					case status/100 == 2:
						latest, text = id, src
					default:
						mu.Lock()
						bad = append(bad, fmt.Sprintf("GET %s: %d", title, status))
						mu.Unlock()
						time.Sleep(50 * time.Millisecond)
						continue
					}
					known = true
				}
				marker := fmt.Sprintf("mark-w%d-n%d-z", w, n)
				next := text + "\n\n" + marker
				if text == "" {
					next = "Durability page of writer " + strconv.Itoa(w) + ".\n\n" + marker
				}
				id, stored, status, raw, err := apiPut(c, url, token, title, latest, next)
				switch {
				case err != nil:
					// No answer: the edit may or may not have been saved.
					unknown.Add(1)
					known = false
					time.Sleep(20 * time.Millisecond)
				case status/100 == 2:
					mu.Lock()
					acks = append(acks, ack{writer: w, title: title, rev: id, marker: marker, text: next})
					mu.Unlock()
					latest, text = id, stored
				case status == http.StatusConflict:
					conflicts.Add(1)
					known = false
				default:
					mu.Lock()
					bad = append(bad, fmt.Sprintf("PUT %s: %d %s", title, status, raw))
					mu.Unlock()
					known = false
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
	}

	// Kill at random moments spread over span; restart at once.
	survived := 0
	for k := range kills {
		wait := time.Duration(float64(span/time.Duration(kills)) * (0.4 + 1.2*rng.Float64()))
		time.Sleep(wait)
		mu.Lock()
		n := len(acks)
		mu.Unlock()
		i := rng.IntN(len(nodes))
		nodes[i].kill(t)
		killedJobs := jobs != nil && k%2 == 0
		if killedJobs {
			jobs.kill(t)
		}
		t.Logf("kill %d of node %d (and the jobs process: %v) after %v (%d edits acknowledged so far)", k+1, i+1, killedJobs, wait.Round(time.Millisecond), n)
		nodes[i] = startWikid(t, bin, data, cfgFile, workers)
		bases[i].Store(&nodes[i].url)
		if killedJobs {
			jobs = startJobs(t, bin, data, cfgFile)
		}
		survived++
	}
	time.Sleep(time.Second) // some edits against the last servers
	close(stop)
	wg.Wait()
	srv := nodes[0]
	url := srv.url

	if len(bad) > 0 {
		t.Errorf("%d unexpected answers, first: %v", len(bad), bad[:min(5, len(bad))])
	}
	if len(acks) < 50 {
		t.Fatalf("only %d edits were acknowledged: the test proves little", len(acks))
	}

	// Every acknowledged revision exists with its text, and is in its page's history.
	c := &http.Client{Timeout: 15 * time.Second}
	lost := 0
	byTitle := map[string][]ack{}
	for _, a := range acks {
		byTitle[a.title] = append(byTitle[a.title], a)
		rev, err := apiGetRevision(c, url, a.rev)
		switch {
		case err != nil:
			lost++
			t.Errorf("revision %d (writer %d, %s): %v", a.rev, a.writer, a.marker, err)
		case rev.Page.Title != a.title || !strings.Contains(rev.Source, a.marker):
			lost++
			t.Errorf("revision %d is on %q and lacks %s", a.rev, rev.Page.Title, a.marker)
		case a.writer < owners && strings.TrimRight(rev.Source, "\n") != strings.TrimRight(a.text, "\n"):
			lost++
			t.Errorf("revision %d of an owned page differs from what was acknowledged: stored %q, sent %q", a.rev, tail(rev.Source), tail(a.text))
		}
	}
	for title, as := range byTitle {
		hist, err := apiHistory(c, url, title)
		if err != nil {
			t.Fatalf("history of %s: %v", title, err)
		}
		_, latestText, status, err := apiGetPage(c, url, title)
		if err != nil || status != http.StatusOK {
			t.Fatalf("GET %s: %d %v", title, status, err)
		}
		for _, a := range as {
			if !hist[a.rev] {
				lost++
				t.Errorf("%s: acknowledged revision %d is not in the history", title, a.rev)
			}
			if !strings.Contains(latestText, a.marker+"\n") && !strings.HasSuffix(latestText, a.marker) {
				lost++
				t.Errorf("%s: the latest text lacks the acknowledged marker %s", title, a.marker)
			}
		}
	}

	// The job queue drains, with nothing dead.
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
	deadline := time.Now().Add(60 * time.Second)
	var st wiki.JobStats
	for {
		st = jobStats(t, db)
		if st.Counts[wiki.JobQueued] == 0 && st.Counts[wiki.JobRunning] == 0 {
			break
		}
		if time.Now().After(deadline) {
			if jobs != nil {
				t.Logf("jobs process:\n%s", jobs.logs())
			}
			t.Fatalf("the job queue did not drain: %v\n%s", st.Counts, srv.logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st.Counts[wiki.JobDead] != 0 {
		dead, _ := db.ListJobs(ctx, wiki.JobDead, 5)
		t.Errorf("%d dead jobs: %+v", st.Counts[wiki.JobDead], dead)
	}
	db.Close()
	for _, n := range nodes {
		n.stop(t)
	}
	integrity := "not run (PostgreSQL)"
	if dsn == "" {
		// PRAGMA integrity_check on the stopped server's database.
		db, err := sqlite.Open(ctx, filepath.Join(data, "wikid.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		integrity = "ok"
		if err := db.IntegrityCheck(ctx); err != nil {
			integrity = err.Error()
			t.Errorf("integrity check: %v", err)
		}
	}
	t.Logf("kills survived: %d; acknowledged edits checked: %d; lost: %d; 409 conflicts: %d; unanswered requests: %d; jobs: %v; integrity_check: %s",
		survived, len(acks), lost, conflicts.Load(), unknown.Load(), st.Counts, integrity)
	if lost != 0 {
		t.Fatalf("%d acknowledged edits lost", lost)
	}
}

func runCmd(name string, args ...string) (string, error) { return execIn("", name, args...) }

func execIn(stdin, name string, args ...string) (string, error) {
	cmd := osexec.Command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.String(), err
}

func apiGetPage(c *http.Client, base, title string) (id int64, source string, status int, err error) {
	res, err := c.Get(base + "/w/rest.php/v1/page/" + wiki.MustTitle(title).Key())
	if err != nil {
		return 0, "", 0, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, "", 0, err
	}
	if res.StatusCode != http.StatusOK {
		return 0, "", res.StatusCode, nil
	}
	var out struct {
		Latest struct {
			ID int64 `json:"id"`
		} `json:"latest"`
		Source string `json:"source"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return 0, "", res.StatusCode, err
	}
	return out.Latest.ID, out.Source, res.StatusCode, nil
}

// apiPut edits title (base 0 creates); on a 2xx it returns the new revision
// and the stored source.
func apiPut(c *http.Client, base, token, title string, latest int64, text string) (id int64, stored string, status int, raw []byte, err error) {
	body := map[string]any{"source": text, "comment": "durability"}
	if latest != 0 {
		body["latest"] = map[string]int64{"id": latest}
	}
	b, _ := json.Marshal(body)
	r, _ := http.NewRequest(http.MethodPut, base+"/w/rest.php/v1/page/"+wiki.MustTitle(title).Key(), bytes.NewReader(b))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+token)
	res, err := c.Do(r)
	if err != nil {
		return 0, "", 0, nil, err
	}
	defer res.Body.Close()
	raw, err = io.ReadAll(res.Body)
	if err != nil {
		// The head came but not the whole body: count it as no answer.
		return 0, "", 0, nil, err
	}
	if res.StatusCode/100 != 2 {
		return 0, "", res.StatusCode, raw, nil
	}
	var out struct {
		Latest struct {
			ID int64 `json:"id"`
		} `json:"latest"`
		Source string `json:"source"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Latest.ID == 0 {
		return 0, "", res.StatusCode, raw, fmt.Errorf("a %d without a revision: %s", res.StatusCode, raw)
	}
	return out.Latest.ID, out.Source, res.StatusCode, raw, nil
}

type apiRev struct {
	ID   int64 `json:"id"`
	Page struct {
		Title string `json:"title"`
	} `json:"page"`
	Source string `json:"source"`
}

func apiGetRevision(c *http.Client, base string, id int64) (apiRev, error) {
	var rev apiRev
	res, err := c.Get(fmt.Sprintf("%s/w/rest.php/v1/revision/%d", base, id))
	if err != nil {
		return rev, err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return rev, fmt.Errorf("GET revision/%d: %d %s", id, res.StatusCode, raw)
	}
	err = json.Unmarshal(raw, &rev)
	return rev, err
}

// apiHistory returns every revision ID in title's history, following "older".
func apiHistory(c *http.Client, base, title string) (map[int64]bool, error) {
	ids := map[int64]bool{}
	path := "/w/rest.php/v1/page/" + wiki.MustTitle(title).Key() + "/history"
	for path != "" {
		res, err := c.Get(base + path)
		if err != nil {
			return nil, err
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %d %s", path, res.StatusCode, raw)
		}
		var out struct {
			Revisions []struct {
				ID int64 `json:"id"`
			} `json:"revisions"`
			Older string `json:"older"`
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, err
		}
		if len(out.Revisions) == 0 && out.Older != "" {
			return nil, errors.New("history: an empty page with an older link")
		}
		for _, r := range out.Revisions {
			ids[r.ID] = true
		}
		path = out.Older
	}
	return ids, nil
}

func tail(s string) string {
	if len(s) > 80 {
		return "…" + s[len(s)-80:]
	}
	return s
}
