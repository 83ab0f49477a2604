// Command load is Wikid's bounded load script: closed-loop
// workers at the machine's capacity, loopback only, mixing 90% anonymous
// page views, 8% logged-in page views and 2% edits through the REST API, for
// a fixed time. It reports throughput and latency per class, errors, 5xx and
// the wikid process's RSS at the start, every 15 s and at the end, and exits
// non-zero on any error or 5xx.
//
//	go run ./bench/load                       # 2 minutes, 32 connections
//	go run ./bench/load -smoke                # a few seconds (CI)
//	go run ./bench/load -duration 30s -conns 64
//
// It builds wikid from the tree, starts it on a free loopback port with a
// fresh data directory and access_log off, and seeds pages, users, sessions
// and an API token. Edit conflicts (409) are expected outcomes under
// concurrent edits: they are retried with the new latest revision and
// counted apart, not as errors.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type options struct {
	duration, every time.Duration
	conns, pages    int
	users           int
	seed            uint64
	smoke, keep     bool
	heapProfile     string
}

func main() {
	var o options
	flag.DurationVar(&o.duration, "duration", 2*time.Minute, "length of the load run")
	flag.IntVar(&o.conns, "conns", 32, "closed-loop workers, one keep-alive connection each")
	flag.IntVar(&o.pages, "pages", 300, "pages the reads and edits are spread over (Zipf)")
	flag.IntVar(&o.users, "users", 8, "logged-in users (one session each)")
	flag.DurationVar(&o.every, "every", 15*time.Second, "how often RSS and progress are printed")
	flag.Uint64Var(&o.seed, "seed", 0, "random seed (0: from the clock)")
	flag.BoolVar(&o.smoke, "smoke", false, "a few seconds with few pages: checks that every part works (CI)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (data, logs)")
	flag.StringVar(&o.heapProfile, "heap-profile", "", "save wikid's heap profile (/debug/pprof/heap) here at the end")
	flag.Parse()
	if o.smoke {
		o.duration, o.every, o.pages, o.conns, o.users = 4*time.Second, 2*time.Second, 40, min(o.conns, 8), 2
	}
	if o.seed == 0 {
		o.seed = uint64(time.Now().UnixNano())
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.MkdirTemp("", "wikid-load-")
	if err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(dir)
	} else {
		fmt.Println("keeping", dir)
	}
	w, err := startWiki(ctx, dir, o)
	if err != nil {
		return err
	}
	defer w.stop()
	fmt.Printf("wikid pid %d on %s; seed %d; %d pages, %d users, %d workers, %v\n", w.cmd.Process.Pid, w.base, o.seed, o.pages, o.users, o.conns, o.duration)

	titles := make([]string, o.pages)
	for i := range titles {
		titles[i] = fmt.Sprintf("Load page %d", i)
	}
	if err := w.seed(titles); err != nil {
		return err
	}
	sessions, err := w.sessions(o.users)
	if err != nil {
		return err
	}
	// Warm: one anonymous and one logged-in view of every page, as a reader
	// population would have done before the measurement starts.
	warm := newClient()
	for _, t := range titles {
		for _, cookie := range []string{"", sessions[0]} {
			st, _, err := get(ctx, warm, w.base+"/wiki/"+key(t), cookie)
			if err != nil || st != 200 {
				return fmt.Errorf("warm-up %s: %d %v", t, st, err)
			}
		}
	}
	rssStart := rss(w.cmd.Process.Pid)
	fmt.Printf("RSS at start: %s (%s); %s\n", mb(rssStart), rssParts(w.cmd.Process.Pid), w.memMetrics())

	res := load(ctx, w, o, titles, sessions)

	rssEnd := rss(w.cmd.Process.Pid)
	fmt.Printf("RSS at end: %s (%s); %s\n", mb(rssEnd), rssParts(w.cmd.Process.Pid), w.memMetrics())
	if o.heapProfile != "" {
		if res, err := http.Get(w.ops + "/debug/pprof/heap"); err == nil {
			f, _ := os.Create(o.heapProfile)
			io.Copy(f, res.Body)
			f.Close()
			res.Body.Close()
		}
	}
	// Memory after a settle: does it come back when the load stops?
	time.Sleep(5 * time.Second)
	fmt.Printf("RSS 5 s after the load: %s; %s\n\n", mb(rss(w.cmd.Process.Pid)), w.memMetrics())
	res.print(o.duration)
	fmt.Printf("\nRSS: start %s, end %s (%+.1f%%); samples %s\n", mb(rssStart), mb(rssEnd), 100*float64(rssEnd-rssStart)/float64(max(rssStart, 1)), res.rssTrail)
	if w.exited() {
		return fmt.Errorf("wikid exited during the run:\n%s", w.out.tail())
	}
	if res.errors() > 0 || res.fivexx() > 0 {
		return fmt.Errorf("%d errors, %d 5xx; first: %v", res.errors(), res.fivexx(), res.firstErrs)
	}
	return nil
}

// ---- the wiki under test ----

type wiki struct {
	cmd   *exec.Cmd
	base  string
	ops   string // base URL of /metrics and /debug/pprof/ (wikid's ops_addr)
	token string
	bin   string
	data  string
	cfg   string
	out   *tail
	done  chan struct{}
}

func startWiki(ctx context.Context, dir string, o options) (*wiki, error) {
	root, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(root)) == "" {
		return nil, fmt.Errorf("run from inside the wikid module: %v", err)
	}
	w := &wiki{bin: filepath.Join(dir, "wikid"), data: filepath.Join(dir, "data"), cfg: filepath.Join(dir, "wikid.json"), out: &tail{}, done: make(chan struct{})}
	build := exec.Command("go", "build", "-o", w.bin, "./cmd/wikid")
	build.Dir = filepath.Dir(strings.TrimSpace(string(root)))
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build: %v\n%s", err, out)
	}
	opsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	w.ops = "http://" + opsAddr
	if err := os.WriteFile(w.cfg, []byte(`{"access_log": false, "ops_addr": "`+opsAddr+`"}`), 0o600); err != nil {
		return nil, err
	}
	if _, err := w.cli("load-admin-password\n", "user", "add", "LoadAdmin", "--admin"); err != nil {
		return nil, err
	}
	for i := range o.users {
		if _, err := w.cli("load-user-password\n", "user", "add", fmt.Sprintf("Reader%d", i)); err != nil {
			return nil, err
		}
	}
	if w.token, err = w.cli("", "token", "create", "LoadAdmin"); err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	w.base = "http://" + addr
	w.cmd = exec.Command(w.bin, "serve", "--addr", addr, "--data", w.data, "--config", w.cfg, "--log-level", "warn")
	w.cmd.Stdout, w.cmd.Stderr = w.out, w.out
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := w.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { w.cmd.Wait(); close(w.done) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if st, _, err := get(ctx, newClient(), w.base+"/healthz", ""); err == nil && st == 200 {
			return w, nil
		}
		if w.exited() || time.Now().After(deadline) {
			w.stop()
			return nil, fmt.Errorf("wikid did not start:\n%s", w.out.tail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freeAddr returns a loopback address with a port free at the time of asking.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func (w *wiki) cli(stdin string, args ...string) (string, error) {
	cmd := exec.Command(w.bin, append(args, "--data", w.data, "--config", w.cfg)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("wikid %v: %v", args, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func (w *wiki) exited() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// stop ends the server it started (SIGTERM, then SIGKILL after 15 s).
func (w *wiki) stop() {
	if w.exited() {
		return
	}
	w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(15 * time.Second):
		w.cmd.Process.Kill()
		<-w.done
	}
}

// seed creates the pages: a few KB of Markdown each, linking to others.
func (w *wiki) seed(titles []string) error {
	c := newClient()
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for i, t := range titles {
		b.Reset()
		fmt.Fprintf(&b, "# %s\n\n", t)
		for p := range 12 {
			fmt.Fprintf(&b, "Paragraph %d of page %d: the quick brown fox jumps over the lazy dog; see [[%s]] and [[%s]]. ", p, i, titles[rng.IntN(len(titles))], titles[rng.IntN(len(titles))])
			b.WriteString(strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 4))
			b.WriteString("\n\n")
			if p%4 == 3 {
				fmt.Fprintf(&b, "## Section %d\n\n- item one\n- item **two**\n- item `three`\n\n", p)
			}
		}
		st, raw, _, err := w.put(c, t, 0, b.String())
		if err != nil || st/100 != 2 {
			return fmt.Errorf("seed %s: %d %v %s", t, st, err, raw)
		}
	}
	return nil
}

// sessions logs n users in and returns their session cookies.
func (w *wiki) sessions(n int) ([]string, error) {
	csrfRe := regexp.MustCompile(`name="csrf" value="([^"]*)"`)
	var out []string
	for i := range n {
		jar := &cookieJar{}
		c := &http.Client{Timeout: 10 * time.Second, Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := c.Get(w.base + "/wiki/Special:UserLogin")
		if err != nil {
			return nil, err
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		m := csrfRe.FindSubmatch(body)
		if m == nil {
			return nil, errors.New("no CSRF token on the login form")
		}
		form := url.Values{"csrf": {string(m[1])}, "username": {fmt.Sprintf("Reader%d", i)}, "password": {"load-user-password"}}
		res, err = c.PostForm(w.base+"/wiki/Special:UserLogin", form)
		if err != nil {
			return nil, err
		}
		res.Body.Close()
		var session string
		for _, ck := range res.Cookies() {
			if ck.Name == "wikid_session" {
				session = ck.Value
			}
		}
		if session == "" {
			return nil, fmt.Errorf("login of Reader%d: %d without a session cookie", i, res.StatusCode)
		}
		out = append(out, "wikid_session="+session)
	}
	return out, nil
}

// cookieJar keeps the pre-login cookies (the CSRF cookie, if any).
type cookieJar struct {
	mu sync.Mutex
	cs []*http.Cookie
}

func (j *cookieJar) SetCookies(_ *url.URL, cs []*http.Cookie) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.cs = append(j.cs, cs...)
}

func (j *cookieJar) Cookies(*url.URL) []*http.Cookie {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.cs)
}

func (w *wiki) put(c *http.Client, title string, latest int64, text string) (int, []byte, int64, error) {
	body := map[string]any{"source": text, "comment": "load"}
	if latest != 0 {
		body["latest"] = map[string]int64{"id": latest}
	}
	b, _ := json.Marshal(body)
	r, _ := http.NewRequest(http.MethodPut, w.base+"/w/rest.php/v1/page/"+key(title), bytes.NewReader(b))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+w.token)
	res, err := c.Do(r)
	if err != nil {
		return 0, nil, 0, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, nil, 0, err
	}
	var out struct {
		Latest struct {
			ID int64 `json:"id"`
		} `json:"latest"`
	}
	if res.StatusCode/100 == 2 {
		json.Unmarshal(raw, &out)
	}
	return res.StatusCode, raw, out.Latest.ID, nil
}

func (w *wiki) latest(ctx context.Context, c *http.Client, title string) (int64, string, int, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, w.base+"/w/rest.php/v1/page/"+key(title), nil)
	res, err := c.Do(req)
	if err != nil {
		return 0, "", 0, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		return 0, "", res.StatusCode, err
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

// memMetrics summarizes the Go heap and cache sizes from /metrics.
func (w *wiki) memMetrics() string {
	res, err := http.Get(w.ops + "/metrics")
	if err != nil {
		return err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var parts []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		for _, name := range []string{"go_memstats_heap_inuse_bytes", "go_memstats_heap_sys_bytes", "go_goroutines", "wikid_edge_bytes", "wikid_edge_entries", "wikid_render_cache"} {
			if strings.HasPrefix(line, name) {
				f := strings.Fields(line)
				v, _ := strconv.ParseFloat(f[len(f)-1], 64)
				if strings.HasSuffix(f[0], "bytes") {
					parts = append(parts, fmt.Sprintf("%s=%.1fMB", f[0], v/(1<<20)))
				} else {
					parts = append(parts, fmt.Sprintf("%s=%.0f", f[0], v))
				}
			}
		}
	}
	return strings.Join(parts, " ")
}

// ---- the load ----

const (
	anon = iota
	logged
	edit
	classes
)

var className = [classes]string{"anonymous read", "logged-in read", "edit (REST)"}

type worker struct {
	lat       [classes][]time.Duration
	ok        [classes]int64
	errs      [classes]int64
	fivexx    [classes]int64
	conflicts int64
	firstErr  []string
}

type results struct {
	ws        []*worker
	rssTrail  string
	firstErrs []string
}

func load(ctx context.Context, w *wiki, o options, titles []string, sessions []string) *results {
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	res := &results{}
	var done atomic.Int64
	var wg sync.WaitGroup
	for i := range o.conns {
		wk := &worker{}
		res.ws = append(res.ws, wk)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(o.seed, uint64(i)))
			zipf := rand.NewZipf(rand.New(rand.NewPCG(o.seed, uint64(i)+1<<32)), 1.1, 4, uint64(len(titles)-1))
			c := newClient()
			cookie := sessions[i%len(sessions)]
			for ctx.Err() == nil {
				title := titles[zipf.Uint64()]
				p := rng.Float64()
				cls := anon
				switch {
				case p >= 0.98:
					cls = edit
				case p >= 0.90:
					cls = logged
				}
				t0 := time.Now()
				var st int
				var err error
				switch cls {
				case anon:
					st, _, err = get(ctx, c, w.base+"/wiki/"+key(title), "")
				case logged:
					st, _, err = get(ctx, c, w.base+"/wiki/"+key(title), cookie)
				case edit:
					st, err = w.editOnce(ctx, c, title, i, wk)
				}
				el := time.Since(t0)
				if ctx.Err() != nil && err != nil {
					break // cut off by the end of the run
				}
				switch {
				case err != nil:
					wk.errs[cls]++
					if len(wk.firstErr) < 3 {
						wk.firstErr = append(wk.firstErr, fmt.Sprintf("%s %s: %v", className[cls], title, err))
					}
				case st >= 500:
					wk.fivexx[cls]++
					if len(wk.firstErr) < 3 {
						wk.firstErr = append(wk.firstErr, fmt.Sprintf("%s %s: %d", className[cls], title, st))
					}
				case st/100 != 2:
					wk.errs[cls]++
					if len(wk.firstErr) < 3 {
						wk.firstErr = append(wk.firstErr, fmt.Sprintf("%s %s: %d", className[cls], title, st))
					}
				default:
					wk.ok[cls]++
					wk.lat[cls] = append(wk.lat[cls], el)
				}
				done.Add(1)
			}
		}()
	}
	// Progress and RSS every o.every.
	start := time.Now()
	tick := time.NewTicker(o.every)
	defer tick.Stop()
	var trail []string
	last := int64(0)
	fin := make(chan struct{})
	go func() { wg.Wait(); close(fin) }()
	for {
		select {
		case <-tick.C:
			n := done.Load()
			r := rss(w.cmd.Process.Pid)
			trail = append(trail, mb(r))
			fmt.Printf("%6.0fs  %8.0f req/s  RSS %s (%s) %s\n", time.Since(start).Seconds(), float64(n-last)/o.every.Seconds(), mb(r), rssParts(w.cmd.Process.Pid), w.memMetrics())
			last = n
		case <-fin:
			res.rssTrail = strings.Join(trail, " → ")
			for _, wk := range res.ws {
				res.firstErrs = append(res.firstErrs, wk.firstErr...)
			}
			return res
		}
	}
}

// editOnce appends a line to title through the REST API with the latest
// revision ID, retrying 409 conflicts (counted apart) with a fresh latest.
func (w *wiki) editOnce(ctx context.Context, c *http.Client, title string, worker int, wk *worker) (int, error) {
	for attempt := 0; ; attempt++ {
		id, src, st, err := w.latest(ctx, c, title)
		if err != nil || st != 200 {
			return st, err
		}
		// Keep pages from growing without bound: drop old load lines.
		if n := strings.Count(src, "\nLoad edit "); n > 20 {
			if i := strings.Index(src, "\nLoad edit "); i >= 0 {
				src = src[:i]
			}
		}
		text := src + fmt.Sprintf("\nLoad edit by worker %d at %d.\n", worker, time.Now().UnixNano())
		st, _, _, err = w.put(c, title, id, text)
		if err != nil || st != http.StatusConflict || attempt >= 10 {
			return st, err
		}
		wk.conflicts++
		// As an editor's client would: a while before trying again,
		// random and longer each time, so that the workers editing the
		// same page do not read its latest together again (on a slow
		// machine one of them lost eleven times in a row).
		time.Sleep(time.Duration(rand.Int64N(int64(attempt+1) * int64(5*time.Millisecond))))
	}
}

func get(ctx context.Context, c *http.Client, u, cookie string) (int, int64, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	req.Header.Set("Accept-Encoding", "gzip, br")
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, 0, err
	}
	n, err := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, n, err
}

func newClient() *http.Client {
	return &http.Client{
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{
			DisableCompression:  true, // ask for gzip/br ourselves, never decode
			MaxIdleConnsPerHost: 4,
			Proxy:               nil, // loopback only
		},
	}
}

func key(title string) string { return url.PathEscape(strings.ReplaceAll(title, " ", "_")) }

// ---- report ----

func (r *results) errors() (n int64) {
	for _, w := range r.ws {
		for c := range classes {
			n += w.errs[c]
		}
	}
	return n
}

func (r *results) fivexx() (n int64) {
	for _, w := range r.ws {
		for c := range classes {
			n += w.fivexx[c]
		}
	}
	return n
}

func (r *results) print(d time.Duration) {
	fmt.Printf("%-16s %10s %10s %9s %9s %9s %7s %5s\n", "class", "requests", "req/s", "p50", "p99", "p99.9", "errors", "5xx")
	var all []time.Duration
	var tot, errs, five, conflicts int64
	for c := range classes {
		var lat []time.Duration
		var ok, e, f int64
		for _, w := range r.ws {
			lat = append(lat, w.lat[c]...)
			ok += w.ok[c]
			e += w.errs[c]
			f += w.fivexx[c]
		}
		all = append(all, lat...)
		tot, errs, five = tot+ok, errs+e, five+f
		printRow(className[c], lat, ok, e, f, d)
	}
	for _, w := range r.ws {
		conflicts += w.conflicts
	}
	printRow("all", all, tot, errs, five, d)
	fmt.Printf("edit conflicts (409, retried, not errors): %d\n", conflicts)
}

func printRow(name string, lat []time.Duration, ok, errs, five int64, d time.Duration) {
	slices.Sort(lat)
	q := func(p float64) string {
		if len(lat) == 0 {
			return "-"
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))].Round(time.Microsecond).String()
	}
	fmt.Printf("%-16s %10d %10.0f %9s %9s %9s %7d %5d\n", name, ok, float64(ok)/d.Seconds(), q(0.50), q(0.99), q(0.999), errs, five)
}

// rssParts reads RssAnon/RssFile/RssShmem of pid: SQLite's page caches
// (modernc's allocator) are anonymous memory outside the Go heap.
func rssParts(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ""
	}
	var parts []string
	for _, line := range strings.Split(string(b), "\n") {
		for _, k := range []string{"RssAnon", "RssFile", "RssShmem"} {
			if v, ok := strings.CutPrefix(line, k+":"); ok {
				f := strings.Fields(v)
				if len(f) > 0 {
					n, _ := strconv.ParseInt(f[0], 10, 64)
					parts = append(parts, k+" "+mb(n<<10))
				}
			}
		}
	}
	return strings.Join(parts, ", ")
}

// rss reads VmRSS (bytes) of pid from /proc.
func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n << 10
			}
		}
	}
	return 0
}

func mb(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/(1<<20)) }

// tail keeps the last 64 KB of the server's output.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 64<<10 {
		t.buf = t.buf[len(t.buf)-64<<10:]
	}
	return len(p), nil
}

func (t *tail) tail() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
