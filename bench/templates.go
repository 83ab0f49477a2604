package main

// The templates mode (go run ./bench -templates): one template used by
// many pages is edited while anonymous and logged-in readers view those
// pages at a fixed rate. It measures how long the edit takes to reach every
// page (the transclusions job, then a refresh and a links job per page),
// the queue's throughput meanwhile, the readers' latency against the same
// load before the edit, and the render of one page that transcludes a small
// template thousands of times.
//
// Each page shows Template:Stamp's version marker (STAMP-v1, then
// STAMP-v2) only through the template, so a page serves the new version
// exactly when its transclusion has been brought up to date.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

var templatesFlags struct {
	on      bool
	pages   int
	idle    time.Duration
	calls   int
	renders int
	conns   int
	timeout time.Duration
	config  string
}

func init() {
	flag.BoolVar(&templatesFlags.on, "templates", false, "run only the templates part: edit a template used by -templates-pages pages under reader load, and time a page of -templates-calls transclusions (output bench/out/templates.md unless -out)")
	flag.IntVar(&templatesFlags.pages, "templates-pages", 10000, "pages transcluding Template:Stamp (-smoke: 300)")
	flag.DurationVar(&templatesFlags.idle, "templates-idle", 30*time.Second, "reader load measured before the edit (-smoke: 2s)")
	flag.IntVar(&templatesFlags.calls, "templates-calls", 5000, "transclusions of Template:Small on the page whose render is timed")
	flag.IntVar(&templatesFlags.renders, "templates-renders", 5, "renders of that page, each after a purge")
	flag.IntVar(&templatesFlags.conns, "templates-conns", 8, "concurrent clients of the warm-up and of the check that every page serves the new version")
	flag.StringVar(&templatesFlags.config, "templates-config", "", "JSON config the measured wikid starts with (e.g. {\"job_max_duty\":0.3})")
	flag.DurationVar(&templatesFlags.timeout, "templates-timeout", 30*time.Minute, "bound on each wait: the import's jobs, the edit's jobs, every page serving the new version (-smoke: 1m)")
}

const (
	stampTitle = "Template:Stamp"
	smallTitle = "Template:Small"
	manyTitle  = "Small template transcluded many times"
	smallMark  = "tpl-small-" // Template:Small's output, before its argument

	templatesP99Ratio     = 1.5
	templatesRenderTarget = 200 * time.Millisecond
)

// stampText is Template:Stamp's text at version v; stampMark is what a page
// using it shows.
func stampText(v int) string { return "Stamp: " + stampMark(v) + " {{{1}}}" }
func stampMark(v int) string { return fmt.Sprintf("STAMP-v%d", v) }

// templatesCorpus is the scale part's generated wiki, each page ending
// with a call of Template:Stamp.
func templatesCorpus(n int) []scalePage {
	pages := newScaleCorpus(n, scaleSeed).pages
	for i := range pages {
		pages[i].source += fmt.Sprintf("\n\n{{Stamp|%d}}\n", i)
	}
	return pages
}

// manySource is calls transclusions of Template:Small, 50 to a line and
// ten lines to a paragraph, cycling through five arguments.
func manySource(calls int) string {
	var b strings.Builder
	b.WriteString("A page that transcludes one small template many times.\n\n")
	for i := range calls {
		fmt.Fprintf(&b, "{{Small|%c}}", 'a'+i%5)
		switch {
		case i%500 == 499:
			b.WriteString("\n\n")
		case i%50 == 49:
			b.WriteString("\n")
		default:
			b.WriteString(" ")
		}
	}
	return b.String()
}

var usedByRE = regexp.MustCompile(`(One page uses|(\d+) pages use) this page as a template`)

// usedBy reads from a page's edit form how many pages transclude it (0
// when the form says nothing about it).
func usedBy(form string) int {
	m := usedByRE.FindStringSubmatch(form)
	switch {
	case m == nil:
		return 0
	case m[2] == "":
		return 1
	}
	n, _ := strconv.Atoi(m[2])
	return n
}

// renderDur is the render;dur entry of a Server-Timing value.
func renderDur(serverTiming string) (time.Duration, bool) {
	m := renderDurRE.FindStringSubmatch(serverTiming)
	if m == nil {
		return 0, false
	}
	ms, err := strconv.ParseFloat(m[1], 64)
	return time.Duration(ms * float64(time.Millisecond)), err == nil
}

// inWindow returns the samples due in [from, to).
func inWindow(ss []sample, from, to time.Time) []sample {
	var out []sample
	for _, s := range ss {
		if !s.due.Before(from) && s.due.Before(to) {
			out = append(out, s)
		}
	}
	return out
}

// cacheMisses counts the answered samples served neither from the edge
// (HIT) nor spliced from its bytes for a logged-in reader (SPLICE).
func cacheMisses(ss []sample) int {
	n := 0
	for _, s := range ss {
		if s.ok && s.cache != "HIT" && s.cache != "SPLICE" {
			n++
		}
	}
	return n
}

// forEach calls f(i) for every i in [0, n) from conns goroutines and
// returns the first error, after which no new call starts.
func forEach(ctx context.Context, n, conns int, f func(i int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range max(1, conns) {
		wg.Go(func() {
			for !failed.Load() && ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = err })
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// jobCountsRetry is jobCounts, asking again for up to 10 s while wikid
// cannot read its queue's stats (as happens under load).
func jobCountsRetry(ctx context.Context, c *http.Client, ops string) (map[string]int, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, err := jobCounts(c, ops)
		if err != errNoJobStats || time.Now().After(deadline) {
			return m, err
		}
		sleepCtx(ctx, 250*time.Millisecond)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// waitQueueEmpty polls /metrics every 250 ms until no job is queued or
// running, for at most limit, and returns the counts then.
func waitQueueEmpty(ctx context.Context, c *http.Client, ops string, limit time.Duration) (map[string]int, error) {
	deadline := time.Now().Add(limit)
	for {
		m, err := jobCountsRetry(ctx, c, ops)
		if err != nil {
			return nil, err
		}
		if m["queued"] == 0 && m["running"] == 0 {
			return m, nil
		}
		if time.Now().After(deadline) {
			return m, fmt.Errorf("still %d jobs queued and %d running after %v", m["queued"], m["running"], limit)
		}
		sleepCtx(ctx, 250*time.Millisecond)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// getAs GETs url with a session cookie ("" for an anonymous request).
func getAs(c *http.Client, url, session string) (response, error) {
	t := target{url: url}
	if session != "" {
		t.headers = []string{"Cookie: wikid_session=" + session}
	}
	return get(c, t)
}

// purgeAs purges the page at path as the logged-in session would from
// the confirmation form (action=purge, a POST with its csrf field).
func purgeAs(c *http.Client, base, path, session string) error {
	form, err := getAs(c, base+path+"?action=purge", session)
	if err != nil {
		return err
	}
	m := csrfRE.FindSubmatch(form.body)
	if m == nil {
		return fmt.Errorf("purge form of %s (status %d) has no csrf field", path, form.status)
	}
	req, _ := http.NewRequest(http.MethodPost, base+path+"?action=purge", strings.NewReader(url.Values{"csrf": {string(m[1])}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	req.Header.Set("Cookie", "wikid_session="+session)
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		return fmt.Errorf("purge %s: status %d", path, res.StatusCode)
	}
	return nil
}

// templatesRender is one timed render of the many-transclusions page.
type templatesRender struct {
	server    time.Duration // Server-Timing render;dur
	hasServer bool
	wall      time.Duration // the GET, client side
	shown     int           // Template:Small's outputs in the body
}

type templatesResult struct {
	pages, corpusBytes int
	importTook         time.Duration
	importDrain        time.Duration // server start to the import's jobs drained
	usedBy             int           // per Template:Stamp's edit form
	v1Pages            int           // pages that showed STAMP-v1 on the warm-up
	expansion          bool
	warm               time.Duration
	warmChecked        int
	warmHits           int

	rate         float64
	targets      []target
	idle, during map[string]latStats
	misses, errs map[string]int // during the cascade
	putTook      time.Duration
	queueEmpty   time.Duration // from the edit saved
	allNew       time.Duration // from the edit saved; 0: not measured
	notNew       int           // pages not serving STAMP-v2 when the queue emptied
	passes       int
	jobsDone     int
	jobsDead     int

	calls     int
	manyBytes int
	renders   []templatesRender
	notes     []string
	took      time.Duration
}

// runTemplates is the -templates mode.
func runTemplates(ctx context.Context, o options) error {
	start := time.Now()
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	o.out = modeOut(o.out, root, "templates.md")
	n, idle, timeout := templatesFlags.pages, templatesFlags.idle, templatesFlags.timeout
	if o.smoke {
		if !flagSet("templates-pages") {
			n = 300
		}
		if !flagSet("templates-idle") {
			idle = 2 * time.Second
		}
		if !flagSet("templates-timeout") {
			timeout = time.Minute
		}
	}
	conns := max(1, templatesFlags.conns)
	tmp, err := os.MkdirTemp("", "wikid-templates-")
	if err != nil {
		return err
	}
	var w *proc
	defer func() {
		if w != nil {
			w.stop()
		}
		if o.keep {
			step("templates: kept %s", tmp)
		} else {
			os.RemoveAll(tmp)
		}
	}()
	res := &templatesResult{pages: n, rate: o.rate, calls: templatesFlags.calls}

	step("templates: building wikid in %s", tmp)
	bin, err := buildWikid(root, tmp)
	if err != nil {
		return err
	}
	data := filepath.Join(tmp, "data")
	if _, err := wikidCLI(bin, data, benchPassword+"\n", "user", "add", benchUser); err != nil {
		return err
	}
	token, err := wikidCLI(bin, data, "", "token", "create", benchUser)
	if err != nil {
		return err
	}
	token = strings.TrimSpace(token[strings.LastIndexAny(token, " \n\t")+1:])

	// The templates first, in an import of their own, so that the pages'
	// expansion finds them saved.
	pages := templatesCorpus(n)
	for _, p := range pages {
		res.corpusBytes += len(p.source)
	}
	tplFile, pagesFile := filepath.Join(tmp, "templates.jsonl"), filepath.Join(tmp, "pages.jsonl")
	if err := writeJSONLines(tplFile, []scalePage{{title: stampTitle, source: stampText(1)}, {title: smallTitle, source: smallMark + "{{{1}}}"}}); err != nil {
		return err
	}
	if err := writeJSONLines(pagesFile, pages); err != nil {
		return err
	}
	if _, err := wikidCLI(bin, data, "", "import", tplFile, "--summary", "templates"); err != nil {
		return err
	}
	step("templates: importing %d pages (%d MB of Markdown), each calling {{Stamp|i}}", n, res.corpusBytes>>20)
	t0 := time.Now()
	out, err := wikidCLI(bin, data, "", "import", pagesFile, "--summary", "templates bench")
	if err != nil {
		return err
	}
	res.importTook = time.Since(t0)
	step("templates: %s", out)

	t0 = time.Now()
	var cfg map[string]any
	if templatesFlags.config != "" {
		if err := json.Unmarshal([]byte(templatesFlags.config), &cfg); err != nil {
			return fmt.Errorf("-templates-config: %w", err)
		}
	}
	w, base, err := startWikid("wikid-templates", bin, data, tmp, cfg)
	if err != nil {
		return err
	}
	jc := &http.Client{Timeout: 30 * time.Second}
	if _, err := waitQueueEmpty(ctx, jc, w.ops, timeout); err != nil {
		return fmt.Errorf("the import's jobs: %w", err)
	}
	res.importDrain = time.Since(t0)
	step("templates: the import's jobs drained %s after the server started", res.importDrain.Round(time.Millisecond))
	c := keepAliveClient()
	session, err := login(c, base, benchUser, benchPassword)
	if err != nil {
		return fmt.Errorf("log in: %w", err)
	}
	urls := make([]string, n)
	for i, p := range pages {
		t, err := wiki.ParseTitle(p.title)
		if err != nil {
			return fmt.Errorf("title %q: %w", p.title, err)
		}
		urls[i] = base + t.URL()
	}
	stamp, _ := wiki.ParseTitle(stampTitle)
	form, err := getAs(c, base+stamp.URL()+"?action=edit", session)
	if err != nil || form.status != http.StatusOK {
		return fmt.Errorf("edit form of %s: %v (status %d)", stampTitle, err, form.status)
	}
	res.usedBy = usedBy(string(form.body))

	// Warm-up: every page once, anonymously, so that each is in the edge
	// cache; then a sample again, which should be hits.
	step("templates: warm-up, %d anonymous views, %d at a time", n, conns)
	var v1 atomic.Int64
	t0 = time.Now()
	err = forEach(ctx, n, conns, func(i int) error {
		r, err := getAs(c, urls[i], "")
		if err != nil {
			return err
		}
		if r.status != http.StatusOK {
			return fmt.Errorf("warm-up: GET %s: status %d", urls[i], r.status)
		}
		if bytes.Contains(r.body, []byte(stampMark(1))) {
			v1.Add(1)
		}
		return nil
	})
	if err != nil {
		return err
	}
	res.warm = time.Since(t0)
	res.v1Pages = int(v1.Load())
	for i := 0; i < n; i += max(1, n/100) {
		r, err := getAs(c, urls[i], "")
		if err != nil {
			return err
		}
		res.warmChecked++
		if r.header.Get("X-Cache") == "HIT" {
			res.warmHits++
		}
	}
	switch {
	case res.v1Pages == 0 && res.usedBy == 0:
		res.notes = append(res.notes, fmt.Sprintf("template expansion not available: no page showed %s and Template:Stamp's edit form counts no page using it; "+
			"the edit reaches no page, so the serve-new-version, cascade latency and render rows are not the benchmark's figures", stampMark(1)))
		step("templates: TEMPLATE EXPANSION NOT AVAILABLE (no page shows %s; no transclusion recorded): measuring the plumbing only", stampMark(1))
	case res.v1Pages != n:
		return fmt.Errorf("templates: %d of %d pages show %s after the warm-up (the edit form counts %d pages using %s)", res.v1Pages, n, stampMark(1), res.usedBy, stampTitle)
	default:
		res.expansion = true
		if res.usedBy != n {
			res.notes = append(res.notes, fmt.Sprintf("Template:Stamp's edit form counts %d pages using it, for %d pages that show it", res.usedBy, n))
		}
	}
	step("templates: warm-up %s; %d/%d pages show %s; %d/%d sampled views are hits", res.warm.Round(time.Millisecond), res.v1Pages, n, stampMark(1), res.warmHits, res.warmChecked)

	// Readers: each target goes through the pages in its own shuffled order.
	rotation := func(seed uint64) []string {
		u := slices.Clone(urls)
		rand.New(rand.NewPCG(seed, 1)).Shuffle(len(u), func(i, j int) { u[i], u[j] = u[j], u[i] })
		return u
	}
	res.targets = []target{
		{id: "b", name: "anonymous views", urls: rotation(1)},
		{id: "c", name: "logged-in views", urls: rotation(2), headers: []string{"Cookie: wikid_session=" + session}},
	}
	s := &sampler{client: keepAliveClient()}
	for _, t := range res.targets { // open the keep-alive connections
		tt := t
		tt.url = t.urls[0]
		if ok, _ := s.fetch(ctx, tt); !ok {
			return fmt.Errorf("templates: %s do not answer 200", t.name)
		}
	}
	step("templates: idle, %.0f req/s to each of (b) and (c) for %s", o.rate, idle)
	stop := s.start(ctx, res.targets, o.rate)
	sleepCtx(ctx, idle)
	stop()
	res.idle = map[string]latStats{}
	for _, t := range res.targets {
		res.idle[t.id] = summarize(s.got[t.id])
	}

	before, err := jobCountsRetry(ctx, jc, w.ops)
	if err != nil {
		return err
	}
	stop = s.start(ctx, res.targets, o.rate)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	sleepCtx(ctx, min(idle, time.Second)) // the load at its rate before the edit
	step("templates: editing %s to %s with the same load running", stampTitle, stampMark(2))
	putAt := time.Now()
	if err := replacePage(ctx, keepAliveClient(), base, token, stampTitle, stampText(2)); err != nil {
		return err
	}
	editAt := time.Now()
	res.putTook = editAt.Sub(putAt)
	after, err := waitQueueEmpty(ctx, jc, w.ops, timeout)
	if err != nil {
		return fmt.Errorf("the edit's jobs: %w", err)
	}
	emptyAt := time.Now()
	res.queueEmpty = emptyAt.Sub(editAt)
	res.jobsDone, res.jobsDead = after["done"]-before["done"], after["dead"]-before["dead"]
	if !res.expansion && res.jobsDone == 0 {
		// The store enqueues a transclusions job only for a title some
		// page transcludes.
		res.notes = append(res.notes, "the edit queued no job: no page transcludes Template:Stamp")
	}
	step("templates: queue empty %s after the edit (%d jobs done)", res.queueEmpty.Round(time.Millisecond), res.jobsDone)

	if res.expansion {
		// Every page once, then again the ones not serving the new
		// version yet, until none is left or the time is up.
		pending := make([]int, n)
		for i := range pending {
			pending[i] = i
		}
		deadline := time.Now().Add(timeout)
		for len(pending) > 0 {
			var mu sync.Mutex
			var still []int
			err := forEach(ctx, len(pending), conns, func(k int) error {
				i := pending[k]
				r, err := getAs(c, urls[i], "")
				if err != nil {
					return err
				}
				if r.status != http.StatusOK || !bytes.Contains(r.body, []byte(stampMark(2))) || bytes.Contains(r.body, []byte(stampMark(1))) {
					mu.Lock()
					still = append(still, i)
					mu.Unlock()
				}
				return nil
			})
			if err != nil {
				return err
			}
			if res.passes == 0 {
				res.notNew = len(still)
			}
			res.passes++
			pending = still
			if len(pending) > 0 {
				if time.Now().After(deadline) {
					return fmt.Errorf("templates: %d of %d pages still do not serve %s %v after the edit (e.g. %s)", len(pending), n, stampMark(2), time.Since(editAt).Round(time.Second), urls[pending[0]])
				}
				sleepCtx(ctx, 250*time.Millisecond)
			}
		}
		res.allNew = time.Since(editAt)
		step("templates: all %d pages serve %s %s after the edit (%d not yet when the queue emptied)", n, stampMark(2), res.allNew.Round(time.Millisecond), res.notNew)
	}
	stop()
	stopped = true
	res.during, res.misses, res.errs = map[string]latStats{}, map[string]int{}, map[string]int{}
	for _, t := range res.targets {
		win := inWindow(s.got[t.id], putAt, emptyAt)
		res.during[t.id] = summarize(win)
		res.misses[t.id] = cacheMisses(win)
		res.errs[t.id] = res.during[t.id].errors
	}

	if err := templatesRenderTime(ctx, res, base, token, session, timeout, jc, w.ops); err != nil {
		return err
	}
	res.took = time.Since(start)
	wikidV, _ := wikidCLI(bin, data, "", "version")
	text := res.markdown(o, wikidV)
	if err := printAndWrite(text, o.out); err != nil {
		return err
	}
	if !res.expansion && !o.smoke {
		return fmt.Errorf("templates: template expansion not available in this wikid: the edit reached no page (the table says what ran)")
	}
	return nil
}

// templatesRenderTime creates the page of res.calls transclusions of
// Template:Small through the REST API and times its render, each after a
// purge, from Server-Timing.
func templatesRenderTime(ctx context.Context, res *templatesResult, base, token, session string, timeout time.Duration, jc *http.Client, ops string) error {
	src := manySource(res.calls)
	res.manyBytes = len(src)
	c := keepAliveClient()
	c.Timeout = time.Minute
	step("templates: a page of %d transclusions of %s (%d bytes), %d renders", res.calls, smallTitle, len(src), templatesFlags.renders)
	if err := createPage(ctx, c, base, token, manyTitle, src); err != nil {
		return err
	}
	if _, err := waitQueueEmpty(ctx, jc, ops, timeout); err != nil {
		return fmt.Errorf("the page's jobs: %w", err)
	}
	t, _ := wiki.ParseTitle(manyTitle)
	for range max(1, templatesFlags.renders) {
		if err := purgeAs(c, base, t.URL(), session); err != nil {
			return err
		}
		t0 := time.Now()
		r, err := getAs(c, base+t.URL(), "")
		wall := time.Since(t0)
		if err != nil {
			return err
		}
		if r.status != http.StatusOK || r.header.Get("X-Cache") == "HIT" {
			return fmt.Errorf("templates: the view after a purge: status %d, X-Cache %q: not a render", r.status, r.header.Get("X-Cache"))
		}
		d, ok := renderDur(strings.Join(r.header.Values("Server-Timing"), ", "))
		res.renders = append(res.renders, templatesRender{server: d, hasServer: ok, wall: wall, shown: bytes.Count(r.body, []byte(smallMark))})
	}
	if res.expansion {
		for _, r := range res.renders {
			if r.shown != res.calls {
				res.notes = append(res.notes, fmt.Sprintf("the many-transclusions page showed %d of %d outputs of %s", r.shown, res.calls, smallTitle))
				break
			}
		}
	}
	return nil
}

func (r *templatesResult) markdown(o options, wikidV string) string {
	var b strings.Builder
	title := "Wikid benchmark: a template used by many pages"
	if o.smoke {
		title += " (smoke mode: checks that the harness works; the figures mean nothing)"
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&b, "- date: %s; %d CPUs (%s), load average at start %s; %s, %s\n", time.Now().Format(time.RFC3339), runtime.NumCPU(), cpuModel(),
		firstWords(string(load), 3), firstWords(wikidV, 3), runtime.Version())
	fmt.Fprintf(&b, "- method: %d generated pages (the scale corpus), each ending with `{{Stamp|i}}`; `%s` is `%s`, edited to `%s` through the REST API while (b) and (c) each view the pages at %.0f req/s (open loop, each in its own shuffled order); `/metrics` polled every 250 ms until no job is queued or running, then every page viewed anonymously (%d at a time) until each shows `%s`. One wikid with %s.\n",
		r.pages, stampTitle, stampText(1), stampText(2), r.rate, templatesFlags.conns, stampMark(2), cmp.Or(templatesFlags.config, "default settings"))
	if !r.expansion {
		b.WriteString("- **template expansion not available**: no page showed the template's text, and no transclusion was recorded. Only the plumbing ran; no verdict is given.\n")
	}
	b.WriteString("\n| figure | value | target | verdict |\n|---|---|---|---|\n")
	row := func(fig, val, target, v string) { fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", fig, val, target, v) }
	check := func(ok bool) string {
		if !r.expansion {
			return "— (no expansion)"
		}
		if ok {
			return "✔"
		}
		return "✘"
	}
	row("pages", fmt.Sprintf("%d (%d MB of Markdown); the template's edit form counts %d using it", r.pages, r.corpusBytes>>20, r.usedBy), "", "")
	row("import (`wikid import`)", fmt.Sprintf("%.0f pages/s (%s); its jobs drained %s after the server started", float64(r.pages)/r.importTook.Seconds(), fmtDur(r.importTook), fmtDur(r.importDrain)), "", "")
	row("warm-up", fmt.Sprintf("%s for %d anonymous views; %d show %s; %d/%d sampled views again are hits", fmtDur(r.warm), r.pages, r.v1Pages, stampMark(1), r.warmHits, r.warmChecked), "", "")
	row("edit → queue empty", fmt.Sprintf("%s (the PUT took %s)", fmtDur(r.queueEmpty), fmtDur(r.putTook)), "", "")
	if r.allNew > 0 {
		row("edit → all serve "+stampMark(2), fmt.Sprintf("%s (%d pages not yet when the queue emptied; %d pass(es))", fmtDur(r.allNew), r.notNew, r.passes), "", "")
	} else {
		row("edit → all serve "+stampMark(2), "not measured: template expansion not available", "", "")
	}
	row("jobs done", fmt.Sprintf("%d (dead %d)", r.jobsDone, r.jobsDead), "", "")
	row("jobs/s", fmt.Sprintf("%.0f", float64(r.jobsDone)/max(r.queueEmpty.Seconds(), 1e-9)), "", "")
	for _, t := range r.targets {
		idle, dur := r.idle[t.id], r.during[t.id]
		cas := fmt.Sprintf("(%s) %s", t.id, t.name)
		row(cas+" samples", fmt.Sprintf("idle %d, during %d (edit to queue empty)", idle.n+idle.errors, dur.n+dur.errors), "", "")
		during := func(idle, d time.Duration) string {
			if dur.n == 0 {
				return fmt.Sprintf("idle %s → during: no samples", fmtDur(idle))
			}
			return fmt.Sprintf("idle %s → during %s (%s)", fmtDur(idle), fmtDur(d), ratio(float64(d), float64(idle)))
		}
		row(cas+" p50", during(idle.p50, dur.p50), "", "")
		x := float64(dur.p99) / float64(idle.p99)
		row(cas+" p99", during(idle.p99, dur.p99),
			fmt.Sprintf("≤ %.1f× idle", templatesP99Ratio), check(dur.n > 0 && idle.p99 > 0 && x <= templatesP99Ratio))
		row(cas+" non-200 during", strconv.Itoa(r.errs[t.id]), "0", check(r.errs[t.id] == 0))
		row(cas+" misses during", fmt.Sprintf("%d (neither HIT nor SPLICE)", r.misses[t.id]), "", "")
	}
	var server, wall []time.Duration
	timed := true
	for _, x := range r.renders {
		server, wall = append(server, x.server), append(wall, x.wall)
		timed = timed && x.hasServer
	}
	slices.Sort(server)
	slices.Sort(wall)
	// A | would end the table's cell, even in a code span.
	fig := fmt.Sprintf("render, %d × `{{Small\\|…}}` (%d bytes)", r.calls, r.manyBytes)
	if timed && len(server) > 0 {
		med := server[len(server)/2]
		row(fig, fmt.Sprintf("median %s, max %s (Server-Timing render, %d renders after a purge); wall median %s, max %s",
			fmtDur(med), fmtDur(server[len(server)-1]), len(server), fmtDur(wall[len(wall)/2]), fmtDur(wall[len(wall)-1])),
			"≤ "+fmtDur(templatesRenderTarget), check(med <= templatesRenderTarget))
	} else if len(wall) > 0 {
		row(fig, fmt.Sprintf("no render;dur in Server-Timing; wall median %s, max %s (%d renders after a purge)", fmtDur(wall[len(wall)/2]), fmtDur(wall[len(wall)-1]), len(wall)),
			"≤ "+fmtDur(templatesRenderTarget), "—")
	}
	for _, n := range r.notes {
		fmt.Fprintf(&b, "\n- %s", n)
	}
	fmt.Fprintf(&b, "\n- the run took %s\n", fmtDur(r.took))
	return b.String()
}
