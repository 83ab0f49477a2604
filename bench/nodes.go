package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wikid/wikid/internal/store/postgres/pgtest"
)

// The nodes part: wikid nodes on one PostgreSQL database (a throw-away
// cluster this run starts), measured against one node alone.
var nodesFlags struct {
	on    bool
	edits int
	conns int
}

func init() {
	flag.BoolVar(&nodesFlags.on, "nodes", false, "run only the nodes part: two wikid nodes on one PostgreSQL (a throw-away cluster), edit-to-other-node delays and logged-in throughput of 2 nodes against 1 (output bench/out/nodes.md unless -out)")
	flag.IntVar(&nodesFlags.edits, "nodes-edits", 200, "edits on node A whose delay until node B serves them is measured (-smoke: 20)")
	flag.IntVar(&nodesFlags.conns, "nodes-conns", 16, "wrk connections per node of the logged-in throughput runs")
}

// runNodes starts PostgreSQL and two nodes, measures how long an edit on
// A takes to be served by B, then the logged-in views per second of A
// alone and of A and B together, each node loaded by its own wrk.
func runNodes(ctx context.Context, o options) error {
	if o.out == "bench/out/results.md" {
		o.out = "bench/out/nodes.md"
	}
	edits, dur := nodesFlags.edits, o.duration
	if o.smoke {
		edits, dur = 20, 2*time.Second
	}
	if err := ensureTools(); err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "wikid-bench-nodes-")
	if err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(tmp)
	}
	step("start PostgreSQL (a throw-away cluster)")
	cluster, err := pgtest.StartCluster(ctx)
	if err != nil {
		return err
	}
	defer cluster.Stop()
	dsn, err := cluster.CreateDatabase(ctx, "wikid_bench")
	if err != nil {
		return err
	}
	step("build wikid")
	bin, err := buildWikid(root, tmp)
	if err != nil {
		return err
	}
	data := filepath.Join(tmp, "data") // the nodes share its secret.key
	config := map[string]any{"database": dsn, "job_workers": 1, "access_log": false}
	cfgPath := filepath.Join(tmp, "cli.json")
	if b, _ := json.Marshal(config); os.WriteFile(cfgPath, b, 0o600) != nil {
		return fmt.Errorf("write %s", cfgPath)
	}
	if _, err := wikidCLI(bin, data, "nodes-bench-password\n", "user", "add", "Bench", "--config", cfgPath); err != nil {
		return err
	}
	token, err := wikidCLI(bin, data, "", "token", "create", "Bench", "--config", cfgPath)
	if err != nil {
		return err
	}
	step("start node A and node B")
	a, aURL, err := startWikid("node-a", bin, data, tmp, config)
	if err != nil {
		return err
	}
	defer a.stop()
	b, bURL, err := startWikid("node-b", bin, data, tmp, config)
	if err != nil {
		return err
	}
	defer b.stop()
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: noRedirect}
	article, err := os.ReadFile(filepath.Join(root, "bench", "article.md"))
	if err != nil {
		return err
	}
	if err := createPage(ctx, c, aURL, token, "Shared page", string(article)+"\n\nVersion zq0.\n"); err != nil {
		return err
	}
	session, err := login(c, aURL, "Bench", "nodes-bench-password")
	if err != nil {
		return err
	}

	step("%d edits on A, each read on B until B serves it", edits)
	// delays: from the edit's response until B serves the new text (B
	// renders the page again first); drops: until B no longer answers from
	// its cached copy (the purge's propagation alone), counted to the
	// sending of the first request B did not answer from it.
	var delays, drops []time.Duration
	for i := 1; i <= edits; i++ {
		for range 2 { // B holds the page in its cache
			if _, err := getBody(c, bURL+"/wiki/Shared_page"); err != nil {
				return err
			}
		}
		want := fmt.Sprintf("Version zq%d.", i)
		if err := replacePage(ctx, c, aURL, token, "Shared page", string(article)+"\n\n"+want+"\n"); err != nil {
			return err
		}
		start := time.Now()
		var dropped time.Duration
		for {
			sent := time.Since(start)
			res, err := c.Get(bURL + "/wiki/Shared_page")
			if err != nil {
				return err
			}
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				return err
			}
			if res.StatusCode != http.StatusOK {
				return fmt.Errorf("GET %s on B: %s", "/wiki/Shared_page", res.Status)
			}
			fresh := strings.Contains(string(body), want)
			if dropped == 0 && (fresh || res.Header.Get("X-Cache") != "HIT") {
				dropped = max(sent, time.Microsecond) // the copy was gone when this request was sent
			}
			if fresh {
				break
			}
			if time.Since(start) > 10*time.Second {
				return fmt.Errorf("edit %d on A not served by B within 10 s", i)
			}
			time.Sleep(200 * time.Microsecond)
		}
		delays = append(delays, time.Since(start))
		drops = append(drops, dropped)
	}
	slices.Sort(delays)
	slices.Sort(drops)
	// A copy gone before the first read after the response shows as
	// under 0.1 ms (that read's own time is not the purge's).
	pct := func(d []time.Duration, p float64) string {
		v := d[min(len(d)-1, int(p*float64(len(d))))]
		if v < 100*time.Microsecond {
			return "<0.1ms"
		}
		return v.Round(100 * time.Microsecond).String()
	}

	step("logged-in throughput: A alone, then A and B together (%d connections each, %v per run, 3 rounds)", nodesFlags.conns, dur)
	hdr := []string{"Cookie: wikid_session=" + session, "Accept-Encoding: gzip"}
	var one, two []float64
	for range 3 {
		r, err := runWrkConns(ctx, nodesFlags.conns, aURL+"/wiki/Shared_page", hdr, "", dur)
		if err != nil {
			return err
		}
		if r.errors != "" {
			return fmt.Errorf("A alone: %s", r.errors)
		}
		one = append(one, r.rps)
		var wg sync.WaitGroup
		res := make([]wrkResult, 2)
		errs := make([]error, 2)
		for i, u := range []string{aURL, bURL} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[i], errs[i] = runWrkConns(ctx, nodesFlags.conns, u+"/wiki/Shared_page", hdr, "", dur)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		if res[0].errors != "" || res[1].errors != "" {
			return fmt.Errorf("A and B: %s %s", res[0].errors, res[1].errors)
		}
		two = append(two, res[0].rps+res[1].rps)
	}
	med := func(v []float64) float64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }

	var out strings.Builder
	fmt.Fprintf(&out, "# Two wikid nodes on one PostgreSQL\n\n")
	fmt.Fprintf(&out, "| measure | value |\n|---|---|\n")
	fmt.Fprintf(&out, "| edit on A until B serves it, rendered again (%d edits of a %d KB article) | p50 %v, p99 %v, max %v (target p99 ≤ 100 ms) |\n",
		len(delays), len(article)>>10, pct(delays, 0.5), pct(delays, 0.99), pct(delays, 1))
	fmt.Fprintf(&out, "| edit on A until B stops serving its cached copy | p50 %v, p99 %v, max %v |\n", pct(drops, 0.5), pct(drops, 0.99), pct(drops, 1))
	fmt.Fprintf(&out, "| logged-in views/s, A alone (median of 3) | %.0f |\n", med(one))
	fmt.Fprintf(&out, "| logged-in views/s, A and B together (median of 3) | %.0f |\n", med(two))
	fmt.Fprintf(&out, "| 2 nodes against 1 | %.2f× (target ≥ 1.8× with a core per node and per load generator) |\n", med(two)/med(one))
	fmt.Fprintf(&out, "\nThe nodes, PostgreSQL and the wrk processes share this machine's %d CPUs: a second node adds no cores, so the ratio measures what a node costs the other, not scaling.\n", runtime.NumCPU())
	fmt.Print("\n" + out.String())
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(o.out, []byte(out.String()), 0o644)
}

// getBody GETs url and returns its body; an error for a status other than 200.
func getBody(c *http.Client, url string) (string, error) {
	res, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return "", err
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, res.Status)
	}
	return string(b), nil
}

// replacePage saves source as title's new text through the REST API, on
// top of its latest revision.
func replacePage(ctx context.Context, c *http.Client, base, token, title, source string) error {
	page := base + "/w/rest.php/v1/page/" + strings.ReplaceAll(title, " ", "_")
	body, err := getBody(c, page)
	if err != nil {
		return err
	}
	var cur struct {
		Latest struct {
			ID int64 `json:"id"`
		} `json:"latest"`
	}
	if err := json.Unmarshal([]byte(body), &cur); err != nil {
		return fmt.Errorf("GET %s: %w", page, err)
	}
	b, _ := json.Marshal(map[string]any{"source": source, "comment": "bench edit", "latest": map[string]int64{"id": cur.Latest.ID}})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, page, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	msg, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("PUT %s: %s: %s", page, res.Status, msg)
	}
	return nil
}
