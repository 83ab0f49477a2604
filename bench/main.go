// Command bench measures wikid against nginx serving the same article bytes
// as a static file. See bench/README.md for the method; `make bench` runs it.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type options struct {
	smoke        bool
	out          string
	duration     time.Duration // per wrk run
	rounds       int           // alternating wrk rounds
	rate         float64       // fixed-rate requests per second
	rateDuration time.Duration // fixed-rate time per target
	straceN      int           // requests counted under strace
	pages        int           // pages in the wiki, the article included
	keep         bool
}

func main() {
	var o options
	flag.BoolVar(&o.smoke, "smoke", false, "seconds-long run that only checks that every part works (for CI)")
	flag.StringVar(&o.out, "out", "bench/out/results.md", "file the results table is written to")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "length of each wrk run")
	flag.IntVar(&o.rounds, "rounds", 3, "alternating wrk rounds (medians are reported)")
	flag.Float64Var(&o.rate, "rate", 40, "requests per second of the fixed-rate run")
	flag.DurationVar(&o.rateDuration, "rate-duration", 60*time.Second, "length of the fixed-rate run, per target")
	flag.IntVar(&o.straceN, "strace-requests", 3000, "cached hits counted under strace")
	flag.IntVar(&o.pages, "pages", 300, "pages in the wiki (link targets, filler and the article)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (logs, data, configs)")
	flag.Parse()
	if o.smoke {
		o.duration, o.rounds, o.rateDuration, o.straceN, o.pages = time.Second, 1, 2*time.Second, 300, 120
	}
	if pathoFlags.one != "" { // pathological.go: a child rendering one shape
		if err := pathoOne(pathoFlags.one, pathoFlags.size); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if diffFlags.only { // diff.go: no servers, no tools
		if err := diffOnly(o); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if scaleFlags.corpus != "" {
		// The scale part's generated wiki, for trying wikid import by hand.
		if err := writeJSONLines(scaleFlags.corpus, newScaleCorpus(scaleFlags.pages, scaleSeed).pages); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	runMode := run
	if pathoFlags.on {
		runMode = runPathological // pathological.go: no servers, no tools
	}
	if scaleFlags.on {
		runMode = runScale // scale.go: its own wikid, no tools
	}
	if nodesFlags.on {
		runMode = runNodes // nodes.go: PostgreSQL, two wikid nodes, wrk
	}
	if templatesFlags.on {
		runMode = runTemplates // templates.go: its own wikid, no tools
	}
	if mediaFlags.only {
		runMode = runMediaOnly // media.go: its own wikid and nginx
	}
	if err := runMode(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// env is everything a run sets up: the servers and what they serve.
type env struct {
	tmp            string
	bin            string
	wikid, nocache *proc
	nginx          *proc
	html, gz       []byte
	etag, gzEtag   string
	session        string
	corpus         corpus
	wikidURL       string // the article on the caching wikid
	nocacheURL     string // the article on the wikid with no_render_cache
	nginxURL       string
	notes          []string // what the checks noticed, for the report
}

func (e *env) close(keep bool) {
	for _, p := range []*proc{e.nginx, e.nocache, e.wikid} {
		if p != nil {
			p.stop()
		}
	}
	if keep {
		fmt.Fprintln(os.Stderr, "bench: kept", e.tmp)
	} else {
		os.RemoveAll(e.tmp)
	}
}

func run(ctx context.Context, o options) error {
	if err := ensureTools(); err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if !filepath.IsAbs(o.out) {
		o.out = filepath.Join(root, o.out)
	}
	e := &env{}
	defer func() { e.close(o.keep) }()
	if err := setUp(ctx, e, root, o); err != nil {
		return err
	}
	r := &report{opts: o, started: time.Now()}
	r.describe(e)
	if drainFlags.only { // drain.go
		return drainOnly(ctx, e, o, r)
	}
	if hitsFlags.on { // hits.go
		return hitsOnly(ctx, e, o)
	}

	step("wrk -t1 -c10 -d%s, %d alternating round(s), identity then gzip", wrkDuration(o.duration), o.rounds)
	for _, gz := range []bool{false, true} {
		res, err := wrkRounds(ctx, e, o, gz)
		if err != nil {
			return err
		}
		r.wrk = append(r.wrk, res)
	}

	step("render time: %d sequential cache misses", renderProbeN(o))
	if r.render, err = renderProbe(ctx, e, renderProbeN(o)); err != nil {
		return err
	}

	step("fixed rate: %.0f req/s for %s per target, alternating", o.rate, o.rateDuration)
	fixed := []target{nginxTarget(e, false), anonTarget(e, false), loggedInTarget(e, false)}
	loop, err := fixedRate(ctx, fixed, o.rate, o.rateDuration)
	if err != nil {
		return err
	}
	for _, t := range fixed {
		r.fixed = append(r.fixed, fixedRow{t, loop.stats(t.id)})
	}

	step("strace -c -f over %d requests per target", o.straceN)
	workers, err := nginxWorkers(e.nginx.pid())
	if err != nil {
		return err
	}
	for _, c := range []struct {
		t    target
		pids []int
	}{{nginxTarget(e, false), workers}, {anonTarget(e, false), []int{e.wikid.pid()}}, {loggedInTarget(e, false), []int{e.wikid.pid()}}} {
		n, err := countSyscalls(ctx, e.tmp, c.pids, c.t, o.straceN)
		if err != nil {
			return err
		}
		r.syscalls = append(r.syscalls, syscallRow{c.t, n})
	}

	text := r.markdown()
	if !diffFlags.skip { // diff.go: the worst-case comparison, in this process
		d, err := runDiff(o)
		if err != nil {
			return err
		}
		text += d.markdown(o.smoke)
	}
	if !pathoFlags.skip { // pathological.go: render time and memory of hostile pages
		run, err := pathoRunAll(ctx, o)
		if err != nil {
			return err
		}
		if err := run.failed(); err != nil {
			return err
		}
		text += pathoTable(run, nil)
	}
	if o.smoke && !scaleFlags.skip { // scale.go: 1,000 generated pages (a full run leaves it to -scale)
		t, err := scaleRun(ctx, o)
		if err != nil {
			return err
		}
		text += t
	}
	if !drainFlags.skip { // drain.go: page views while a job backlog drains
		d, err := runDrain(ctx, e, o)
		if err != nil {
			return err
		}
		text += d.markdown(o.smoke)
	}
	if !mediaFlags.skip { // media.go: thumbnails, files served against nginx, uploads
		dir := filepath.Join(e.tmp, "media")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		m, err := mediaRun(ctx, o, e.bin, dir)
		if err != nil {
			return err
		}
		text += "\n" + m.markdown(e.bin)
	}
	return printAndWrite(text, o.out)
}

func step(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

// ensureTools checks for nginx, wrk and strace, installing the Debian
// packages when running as root, and otherwise says how.
func ensureTools() error {
	need := map[string]string{}
	for _, t := range []struct{ bin, pkg string }{{"nginx", "nginx-light"}, {"wrk", "wrk"}, {"strace", "strace"}} {
		if _, err := exec.LookPath(t.bin); err != nil {
			if _, err := os.Stat("/usr/sbin/" + t.bin); err != nil {
				need[t.bin] = t.pkg
			}
		}
	}
	if len(need) == 0 {
		return nil
	}
	var pkgs []string
	for _, p := range need {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	if os.Geteuid() != 0 {
		return fmt.Errorf("missing tools; install them with: sudo apt-get install -y %s", strings.Join(pkgs, " "))
	}
	step("installing %s", strings.Join(pkgs, " "))
	for _, args := range [][]string{{"update", "-q"}, append([]string{"install", "-y", "-q", "--no-install-recommends"}, pkgs...)} {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// The bench's account, for the logged-in views.
const benchUser, benchPassword = "Bench", "bench-password-long-enough"

// setUp builds wikid, loads the corpus, starts the two wikids and nginx, and
// checks that each serves what the measurement assumes.
func setUp(ctx context.Context, e *env, root string, o options) error {
	var err error
	if e.tmp, err = os.MkdirTemp("", "wikid-bench-"); err != nil {
		return err
	}
	step("building wikid in %s", e.tmp)
	if e.bin, err = buildWikid(root, e.tmp); err != nil {
		return err
	}
	data := filepath.Join(e.tmp, "data")
	user, password := benchUser, benchPassword
	if _, err := wikidCLI(e.bin, data, password+"\n", "user", "add", user); err != nil {
		return err
	}
	token, err := wikidCLI(e.bin, data, "", "token", "create", user)
	if err != nil {
		return err
	}
	token = strings.TrimSpace(token[strings.LastIndexAny(token, " \n\t")+1:])

	e.corpus = buildCorpus(o.pages)
	if hitsFlags.on { // hits.go: a page of more than 100 KB too
		e.corpus.pages = append(e.corpus.pages, page{bigTitle, bigSource()})
	}
	step("loading %d pages through the REST API", len(e.corpus.pages))
	seeder, base, err := startWikid("wikid-seed", e.bin, data, e.tmp, nil)
	if err != nil {
		return err
	}
	c := keepAliveClient()
	for _, p := range e.corpus.pages {
		if err := createPage(ctx, c, base, token, p.title, p.source); err != nil {
			seeder.stop()
			return err
		}
	}
	seeder.stop()
	// The cache-miss wikid gets its own copy of the data: two processes never
	// share one SQLite file during the measurement.
	if err := copyData(data, filepath.Join(e.tmp, "data-nocache")); err != nil {
		return err
	}
	if hitsFlags.on { // hits.go: the wikid with "front": false
		if err := copyData(data, filepath.Join(e.tmp, "data-nofront")); err != nil {
			return err
		}
	}
	if e.wikid, base, err = startWikid("wikid", e.bin, data, e.tmp, nil); err != nil {
		return err
	}
	path := "/wiki/" + strings.ReplaceAll(articleTitle, " ", "_")
	e.wikidURL = base + path
	nocache, nbase, err := startWikid("wikid-nocache", e.bin, filepath.Join(e.tmp, "data-nocache"), e.tmp,
		map[string]any{"no_render_cache": true, "no_edge_cache": true})
	if err != nil {
		return err
	}
	e.nocache, e.nocacheURL = nocache, nbase+path
	if e.session, err = login(c, base, user, password); err != nil {
		return fmt.Errorf("log in: %w", err)
	}

	// The article's anonymous bytes, exactly as served on a hit.
	plain, err := fetchStable(c, e.wikidURL, nil)
	if err != nil {
		return err
	}
	e.html, e.etag = plain.body, plain.header.Get("ETag")
	gz, err := fetchStable(c, e.wikidURL, []string{"Accept-Encoding: gzip"})
	if err != nil {
		return err
	}
	if gz.header.Get("Content-Encoding") != "gzip" {
		return fmt.Errorf("wikid did not answer Accept-Encoding: gzip with a gzip body")
	}
	if un, err := gunzip(gz.body); err != nil || !bytes.Equal(un, e.html) {
		return fmt.Errorf("wikid's gzip variant does not decompress to its identity body (%v)", err)
	}
	e.gz, e.gzEtag = gz.body, gz.header.Get("ETag")
	if e.etag == "" || e.gzEtag == "" {
		return fmt.Errorf("wikid sent no ETag for the article")
	}

	step("starting nginx on the saved article (%d bytes, gzip %d)", len(e.html), len(e.gz))
	www := filepath.Join(e.tmp, "nginx")
	if err := os.MkdirAll(www, 0o755); err != nil {
		return err
	}
	if e.nginx, base, err = startNginx(www, path, e.html, e.gz); err != nil {
		return err
	}
	e.nginxURL = base + path
	return checkTargets(ctx, e, c)
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func get(c *http.Client, t target) (response, error) {
	res, err := c.Do(newRequest(context.Background(), t))
	if err != nil {
		return response{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, b}, err
}

// fetchStable requests url until two answers in a row are edge-cache hits
// with the same body (a page saved a moment ago may still be re-rendered once
// its links are resolved).
func fetchStable(c *http.Client, url string, headers []string) (response, error) {
	t := target{url: url, headers: headers}
	var prev response
	for range 50 {
		r, err := get(c, t)
		if err != nil {
			return r, err
		}
		if r.status != http.StatusOK {
			return r, fmt.Errorf("GET %s: status %d", url, r.status)
		}
		if r.header.Get("X-Cache") == "HIT" && bytes.Equal(r.body, prev.body) {
			return r, nil
		}
		prev = r
		time.Sleep(100 * time.Millisecond)
	}
	return prev, fmt.Errorf("GET %s: no stable cache hit after 50 tries", url)
}

func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// The measured cases. gz selects Accept-Encoding: gzip.

func encHeaders(gz bool, more ...string) []string {
	if gz {
		return append([]string{"Accept-Encoding: gzip"}, more...)
	}
	return more
}

func nginxTarget(e *env, gz bool) target {
	return target{id: "a", name: "nginx static", url: e.nginxURL, headers: encHeaders(gz)}
}

func anonTarget(e *env, gz bool) target {
	return target{id: "b", name: "wikid anonymous hit", url: e.wikidURL, headers: encHeaders(gz)}
}

func loggedInTarget(e *env, gz bool) target {
	return target{id: "c", name: "wikid logged-in view", url: e.wikidURL,
		headers: encHeaders(gz, "Cookie: wikid_session="+e.session)}
}

func notModifiedTarget(e *env, gz bool) target {
	etag := e.etag
	if gz {
		etag = e.gzEtag
	}
	return target{id: "d", name: "wikid conditional GET (304)", url: e.wikidURL,
		headers: encHeaders(gz, "If-None-Match: "+etag)}
}

func missTarget(e *env, gz bool) target {
	return target{id: "e", name: "wikid cache miss (render)", url: e.nocacheURL, headers: encHeaders(gz)}
}

func allTargets(e *env, gz bool) []target {
	return []target{nginxTarget(e, gz), anonTarget(e, gz), loggedInTarget(e, gz), notModifiedTarget(e, gz), missTarget(e, gz)}
}

// checkTargets makes sure every case is what its name says before anything
// is measured: same bytes from nginx, a hit, a logged-in page, a 304, a miss.
func checkTargets(ctx context.Context, e *env, c *http.Client) error {
	for _, gz := range []bool{false, true} {
		want := e.html
		if gz {
			want = e.gz
		}
		for _, t := range allTargets(e, gz) {
			r, err := get(c, t)
			if err != nil {
				return fmt.Errorf("check %s: %w", t.name, err)
			}
			var bad string
			switch t.id {
			case "a":
				if r.status != 200 || !bytes.Equal(r.body, want) {
					bad = fmt.Sprintf("status %d, %d bytes: not the saved article", r.status, len(r.body))
				} else if ct := r.header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
					bad = "Content-Type " + ct
				}
			case "b":
				if r.status != 200 || r.header.Get("X-Cache") != "HIT" || !bytes.Equal(r.body, want) {
					bad = fmt.Sprintf("status %d, X-Cache %q, %d bytes: not a hit on the article", r.status, r.header.Get("X-Cache"), len(r.body))
				}
			case "c":
				body := r.body
				if r.header.Get("Content-Encoding") == "gzip" {
					body, _ = gunzip(body)
				} else if gz {
					e.notes = append(e.notes, fmt.Sprintf("(c) with Accept-Encoding: gzip was answered uncompressed (%d bytes, Content-Encoding %q)",
						len(r.body), r.header.Get("Content-Encoding")))
				}
				if r.status != 200 || !bytes.Contains(body, []byte("Bench")) || bytes.Equal(r.body, want) {
					bad = fmt.Sprintf("status %d: not a logged-in view", r.status)
				}
			case "d":
				if r.status != http.StatusNotModified {
					bad = fmt.Sprintf("status %d, want 304", r.status)
				}
			case "e":
				if r.status != 200 || r.header.Get("X-Cache") == "HIT" {
					bad = fmt.Sprintf("status %d, X-Cache %q: not a miss", r.status, r.header.Get("X-Cache"))
				}
			}
			if bad != "" {
				return fmt.Errorf("check %s (gzip %v): %s", t.name, gz, bad)
			}
		}
	}
	return nil
}

// wrkRound holds one encoding's wrk results: every run, by target id.
type wrkRound struct {
	gz      bool
	targets []target
	runs    map[string][]wrkResult
}

// wrkRounds runs wrk over every target in turn, rounds times.
func wrkRounds(ctx context.Context, e *env, o options, gz bool) (wrkRound, error) {
	w := wrkRound{gz: gz, targets: allTargets(e, gz), runs: map[string][]wrkResult{}}
	for round := range o.rounds {
		for _, t := range w.targets {
			res, err := runWrk(ctx, t.url, t.headers, t.script, o.duration)
			if err != nil {
				return w, err
			}
			step("  gzip=%-5v round %d (%s) %-30s %9.0f req/s  p50 %-8s p99 %-8s %s", gz, round+1, t.id, t.name,
				res.rps, fmtDur(res.p50), fmtDur(res.p99), res.errors)
			w.runs[t.id] = append(w.runs[t.id], res)
		}
	}
	return w, nil
}

// median of the runs' values.
func median(rs []wrkResult, f func(wrkResult) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// renderResult is the render time of the article: from wikid's
// Server-Timing render;dur when it sends one, else the client-side latency of
// sequential cache misses (which adds HTTP and compression of the variants).
type renderResult struct {
	n           int
	median      time.Duration
	fromTiming  bool
	clientP50   time.Duration
	serverTimng string // an example Server-Timing header
}

func renderProbeN(o options) int {
	if o.smoke {
		return 20
	}
	return 200
}

var renderDurRE = regexp.MustCompile(`(?:^|,)\s*render;(?:[^,]*;)?\s*dur=([0-9.]+)`)

func renderProbe(ctx context.Context, e *env, n int) (renderResult, error) {
	c := keepAliveClient()
	t := missTarget(e, false)
	var client, server []time.Duration
	var example string
	for range n {
		if ctx.Err() != nil {
			return renderResult{}, ctx.Err()
		}
		tt := t
		start := time.Now()
		r, err := get(c, tt)
		took := time.Since(start)
		if err != nil || r.status != 200 {
			return renderResult{}, fmt.Errorf("render probe: %v (status %d)", err, r.status)
		}
		client = append(client, took)
		st := strings.Join(r.header.Values("Server-Timing"), ", ")
		example = st
		if m := renderDurRE.FindStringSubmatch(st); m != nil {
			ms, _ := strconv.ParseFloat(m[1], 64)
			server = append(server, time.Duration(ms*float64(time.Millisecond)))
		}
	}
	slices.Sort(client)
	slices.Sort(server)
	res := renderResult{n: n, clientP50: pct(client, 50), serverTimng: example}
	if len(server) == n {
		res.median, res.fromTiming = pct(server, 50), true
	} else {
		res.median = res.clientP50
	}
	return res, nil
}

// printAndWrite prints a run's table and writes it to out.
func printAndWrite(text, out string) error {
	fmt.Println()
	fmt.Print(text)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
		return err
	}
	fmt.Println("\nwritten to", out)
	return nil
}
