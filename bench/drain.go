package main

// The drain mode: page views at a fixed rate while a job
// backlog drains, against the same load while the queue is idle.
//
// For each variant: (b) and (c) are each sent at -rate req/s, open loop and
// at the same time, for -drain-idle with an empty queue; then, with the same
// load still running, `wikid jobs bench-backlog N KINDS` enqueues the backlog
// against the serving wikid's data directory and /metrics is polled (every
// 500 ms) until no job is queued or running. When a drain is shorter than
// -drain-min, another backlog follows at once and the samples are pooled, so
// that the p99 rests on thousands of samples.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

var drainFlags struct {
	only     bool
	skip     bool
	jobs     int
	idle     time.Duration
	min      time.Duration
	rounds   int
	variants string
	config   string
	profile  string
}

func init() {
	flag.BoolVar(&drainFlags.only, "drain", false, "run only the drain part: view latency while a job backlog drains")
	flag.BoolVar(&drainFlags.skip, "no-drain", false, "leave the drain part out of a full run")
	flag.IntVar(&drainFlags.jobs, "drain-jobs", 10000, "jobs per backlog")
	flag.DurationVar(&drainFlags.idle, "drain-idle", 60*time.Second, "idle measurement before each variant")
	flag.DurationVar(&drainFlags.min, "drain-min", 30*time.Second, "repeat the backlog until the drains add up to this much")
	flag.IntVar(&drainFlags.rounds, "drain-max-rounds", 10, "at most this many backlogs per variant")
	flag.StringVar(&drainFlags.variants, "drain-kinds", "links,search;links,search,backlinks", "backlog variants: job kinds, variants separated by ';'")
	flag.StringVar(&drainFlags.config, "drain-config", "", "JSON config the measured wikid is restarted with for the drain part (e.g. {\"job_max_duty\":0.5})")
	flag.StringVar(&drainFlags.profile, "drain-profile", "", "directory for a CPU profile and a runtime trace of wikid taken during the first variant's drain")
}

// sample is one fixed-rate request.
type sample struct {
	due, sent, done time.Time
	ok, hit         bool
	cache           string // X-Cache: HIT, MISS, SPLICE (a logged-in view of cached bytes)
}

// sampler sends to its targets at rate each, concurrently, until stopped.
type sampler struct {
	client *http.Client
	mu     sync.Mutex
	got    map[string][]sample
}

func (s *sampler) start(ctx context.Context, targets []target, rate float64) (stop func()) {
	s.got = map[string][]sample{}
	done := make(chan struct{})
	var loops, reqs sync.WaitGroup
	interval := time.Duration(float64(time.Second) / rate)
	for k, t := range targets {
		loops.Go(func() {
			// Stagger the targets by half an interval so that their requests
			// do not always leave together.
			start := time.Now().Add(10*time.Millisecond + time.Duration(k)*interval/time.Duration(len(targets)))
			for i := 0; ; i++ {
				due := start.Add(time.Duration(i) * interval)
				sleepUntil(due)
				select {
				case <-done:
					return
				default:
				}
				if ctx.Err() != nil {
					return
				}
				tt := t
				if len(t.urls) > 0 {
					tt.url = t.urls[i%len(t.urls)]
				}
				reqs.Go(func() {
					sent := time.Now()
					ok, cache := s.fetchCache(ctx, tt)
					smp := sample{due: due, sent: sent, done: time.Now(), ok: ok, hit: cache == "HIT", cache: cache}
					s.mu.Lock()
					s.got[t.id] = append(s.got[t.id], smp)
					s.mu.Unlock()
				})
			}
		})
	}
	return func() {
		close(done)
		loops.Wait()
		reqs.Wait()
	}
}

func (s *sampler) fetch(ctx context.Context, t target) (ok, hit bool) {
	ok, cache := s.fetchCache(ctx, t)
	return ok, cache == "HIT"
}

// fetchCache is fetch with the response's X-Cache.
func (s *sampler) fetchCache(ctx context.Context, t target) (ok bool, cache string) {
	res, err := s.client.Do(newRequest(ctx, t))
	if err != nil {
		return false, ""
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return err == nil && res.StatusCode == http.StatusOK, res.Header.Get("X-Cache")
}

// latStats summarizes samples: latency from the due time and from the send.
type latStats struct {
	n, errors, hits      int
	p50, p90, p99, max   time.Duration // from the due time
	sp50, sp90, sp99, sm time.Duration // from the actual send
}

func summarize(ss []sample) latStats {
	var due, sent []time.Duration
	st := latStats{}
	for _, s := range ss {
		if !s.ok {
			st.errors++
			continue
		}
		if s.hit {
			st.hits++
		}
		due = append(due, s.done.Sub(s.due))
		sent = append(sent, s.done.Sub(s.sent))
	}
	slices.Sort(due)
	slices.Sort(sent)
	st.n = len(due)
	st.p50, st.p90, st.p99, st.max = pct(due, 50), pct(due, 90), pct(due, 99), pct(due, 100)
	st.sp50, st.sp90, st.sp99, st.sm = pct(sent, 50), pct(sent, 90), pct(sent, 99), pct(sent, 100)
	return st
}

// drainVariant is one backlog kind mix: idle and drain figures per target.
type drainVariant struct {
	kinds        string
	backlogs     int           // backlogs enqueued and drained
	jobs         int           // jobs enqueued by the harness
	done         int           // jobs finished (wikid_jobs{state="done"} delta: includes follow-ups)
	dead         int           // jobs that went dead meanwhile
	drainTime    time.Duration // summed over the backlogs, from enqueue start to an empty queue
	enqueueTime  time.Duration
	idle, during map[string]latStats
	missDuring   map[string]latStats // the drain's requests answered without X-Cache: HIT (anonymous only)
	hitDuring    map[string]latStats
}

type drainResult struct {
	rate     float64
	targets  []target
	variants []drainVariant
	config   string
	notes    []string
}

// errNoJobStats: wikid could not read its queue's stats for this scrape
// (wikid_jobs_stats_error), as happens under load; ask again.
var errNoJobStats = errors.New(`/metrics has no wikid_jobs{state="queued"}`)

// jobCounts reads wikid_jobs{state=...} from /metrics on ops, the base
// URL of wikid's ops_addr.
func jobCounts(c *http.Client, ops string) (map[string]int, error) {
	res, err := c.Get(ops + "/metrics")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return nil, fmt.Errorf("GET /metrics: status %d", res.StatusCode)
	}
	out := map[string]int{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, `wikid_jobs{state="`) {
			continue
		}
		rest := strings.TrimPrefix(l, `wikid_jobs{state="`)
		st, val, ok := strings.Cut(rest, `"} `)
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			return nil, fmt.Errorf("/metrics: %q: %v", l, err)
		}
		out[st] = int(f)
	}
	if _, ok := out["queued"]; !ok {
		return nil, errNoJobStats
	}
	return out, sc.Err()
}

// waitDrained polls /metrics every 500 ms until nothing is queued or running.
func waitDrained(ctx context.Context, c *http.Client, ops string, limit time.Duration) (map[string]int, error) {
	deadline := time.Now().Add(limit)
	for {
		m, err := jobCounts(c, ops)
		if err != nil {
			return nil, err
		}
		if m["queued"] == 0 && m["running"] == 0 {
			return m, nil
		}
		if time.Now().After(deadline) {
			return m, fmt.Errorf("drain: still %d queued, %d running after %v", m["queued"], m["running"], limit)
		}
		select {
		case <-ctx.Done():
			return m, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func drainOpts(o options) (jobs int, idle, minDrain time.Duration, rounds int) {
	if o.smoke {
		return 500, 2 * time.Second, 0, 1
	}
	return drainFlags.jobs, drainFlags.idle, drainFlags.min, drainFlags.rounds
}

// runDrain measures every variant against the measured wikid.
func runDrain(ctx context.Context, e *env, o options) (*drainResult, error) {
	data := filepath.Join(e.tmp, "data")
	res := &drainResult{rate: o.rate, config: drainFlags.config}
	if drainFlags.config != "" {
		var cfg map[string]any
		if err := json.Unmarshal([]byte(drainFlags.config), &cfg); err != nil {
			return nil, fmt.Errorf("-drain-config: %w", err)
		}
		step("drain: restarting wikid with %s", drainFlags.config)
		e.wikid.stop()
		p, base, err := startWikid("wikid-drain", e.bin, data, e.tmp, cfg)
		if err != nil {
			return nil, err
		}
		e.wikid = p
		e.wikidURL = base + e.wikidURL[strings.Index(e.wikidURL, "/wiki/"):]
		if _, err := fetchStable(keepAliveClient(), e.wikidURL, nil); err != nil {
			return nil, err
		}
	}
	ops := e.wikid.ops // /metrics and pprof
	c := keepAliveClient()
	targets := []target{anonTarget(e, false), loggedInTarget(e, false)}
	res.targets = targets
	nJobs, idleDur, minDrain, maxRounds := drainOpts(o)

	for vi, kinds := range strings.Split(drainFlags.variants, ";") {
		v := drainVariant{kinds: kinds}
		// Warm: the previous variant may have purged the article.
		if _, err := fetchStable(c, e.wikidURL, nil); err != nil {
			return nil, err
		}
		if m, err := waitDrained(ctx, c, ops, 5*time.Minute); err != nil {
			return nil, err
		} else if m["queued"] != 0 {
			return nil, fmt.Errorf("drain: queue not empty before the idle measurement")
		}
		s := &sampler{client: keepAliveClient()}
		for _, t := range targets { // open the keep-alive connections
			if ok, _ := s.fetch(ctx, t); !ok {
				return nil, fmt.Errorf("drain: %s does not answer 200", t.name)
			}
		}
		step("drain [%s]: idle, %.0f req/s to each of (b) and (c) for %s", kinds, o.rate, idleDur)
		stop := s.start(ctx, targets, o.rate)
		sleepCtx(ctx, idleDur)
		stop()
		v.idle = map[string]latStats{}
		for _, t := range targets {
			v.idle[t.id] = summarize(s.got[t.id])
		}

		before, err := jobCounts(c, ops)
		if err != nil {
			return nil, err
		}
		var prof *profiler
		stop = s.start(ctx, targets, o.rate)
		for round := 0; round < maxRounds && (round == 0 || v.drainTime < minDrain); round++ {
			if ctx.Err() != nil {
				break
			}
			if vi == 0 && round == 0 && drainFlags.profile != "" {
				prof = startProfile(ops, drainFlags.profile)
			}
			t0 := time.Now()
			out, err := wikidCLI(e.bin, data, "", "jobs", "bench-backlog", strconv.Itoa(nJobs), kinds)
			if err != nil {
				stop()
				return nil, err
			}
			v.enqueueTime += time.Since(t0)
			if _, err := waitDrained(ctx, c, ops, 30*time.Minute); err != nil {
				stop()
				return nil, err
			}
			took := time.Since(t0)
			v.drainTime += took
			v.backlogs++
			v.jobs += nJobs
			step("drain [%s]: backlog %d drained in %s (%s)", kinds, round+1, took.Round(time.Millisecond), out)
		}
		stop()
		if prof != nil {
			prof.wait()
		}
		after, err := jobCounts(c, ops)
		if err != nil {
			return nil, err
		}
		v.done, v.dead = after["done"]-before["done"], after["dead"]-before["dead"]
		v.during, v.hitDuring, v.missDuring = map[string]latStats{}, map[string]latStats{}, map[string]latStats{}
		for _, t := range targets {
			all := s.got[t.id]
			v.during[t.id] = summarize(all)
			if t.id == "b" {
				var hits, misses []sample
				for _, x := range all {
					if x.hit {
						hits = append(hits, x)
					} else {
						misses = append(misses, x)
					}
				}
				v.hitDuring[t.id], v.missDuring[t.id] = summarize(hits), summarize(misses)
			}
		}
		res.variants = append(res.variants, v)
	}
	return res, ctx.Err()
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// profiler takes a CPU profile and a runtime trace from wikid's pprof
// endpoints (on ops, its ops_addr) at the same time while a drain runs.
type profiler struct{ wg sync.WaitGroup }

func startProfile(ops, dir string) *profiler {
	p := &profiler{}
	os.MkdirAll(dir, 0o755)
	c := &http.Client{Timeout: time.Minute}
	for _, x := range []struct{ path, file string }{
		{"/debug/pprof/profile?seconds=10", "drain-cpu.pprof"},
		{"/debug/pprof/trace?seconds=5", "drain.trace"},
	} {
		p.wg.Go(func() {
			time.Sleep(2 * time.Second) // let the workers start
			res, err := c.Get(ops + x.path)
			if err != nil {
				step("drain profile %s: %v", x.file, err)
				return
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			os.WriteFile(filepath.Join(dir, x.file), b, 0o644)
			step("drain profile: wrote %s (%d bytes)", filepath.Join(dir, x.file), len(b))
		})
	}
	return p
}

func (p *profiler) wait() { p.wg.Wait() }

// markdown renders the drain part in the results table's format; the ratio
// column is to the same figure measured idle just before.
func (d *drainResult) markdown(smoke bool) string {
	var b strings.Builder
	b.WriteString("\n## Page views while a job backlog drains\n\n")
	fmt.Fprintf(&b, "- method: (b) and (c) each at %.0f req/s, open loop, concurrently; idle window, then `wikid jobs bench-backlog N KINDS` against the serving wikid's data directory with the same load running, /metrics polled every 500 ms until no job is queued or running; drains shorter than %s are repeated and pooled\n",
		d.rate, drainMin(smoke))
	if d.config != "" {
		fmt.Fprintf(&b, "- measured wikid config: `%s`\n", d.config)
	}
	b.WriteString("\n| part | case | figure | value | × idle | target | verdict |\n|---|---|---|---|---|---|---|\n")
	for _, v := range d.variants {
		part := "drain " + v.kinds
		jps := float64(v.done) / v.drainTime.Seconds()
		fmt.Fprintf(&b, "| %s | queue | throughput | %.0f jobs/s (%d jobs done in %s; %d backlog(s) of %d; enqueue %s) | — | | |\n",
			part, jps, v.done, fmtDur(v.drainTime), v.backlogs, v.jobs/max(1, v.backlogs), fmtDur(v.enqueueTime))
		if v.dead > 0 {
			fmt.Fprintf(&b, "| %s | queue | dead jobs | %d | — | 0 | FAIL |\n", part, v.dead)
		}
		for _, t := range d.targets {
			idle, dur := v.idle[t.id], v.during[t.id]
			cas := fmt.Sprintf("(%s) %s", t.id, t.name)
			fmt.Fprintf(&b, "| %s | %s | samples | idle %d, drain %d (errors %d/%d; hits %d/%d) | — | | |\n",
				part, cas, idle.n, dur.n, idle.errors, dur.errors, idle.hits, dur.hits)
			for _, f := range []struct {
				name   string
				iv, dv time.Duration
			}{{"p50", idle.p50, dur.p50}, {"p90", idle.p90, dur.p90}, {"p99", idle.p99, dur.p99}, {"max", idle.max, dur.max},
				{"p99 from send", idle.sp99, dur.sp99}} {
				target, verdictS := "", ""
				if f.name == "p99" {
					x := float64(f.dv) / float64(f.iv)
					target, verdictS = "≤ 1.5× idle", verdict(x <= 1.5 && dur.errors == 0)
				}
				fmt.Fprintf(&b, "| %s | (%s) | %s | idle %s → drain %s | %s | %s | %s |\n",
					part, t.id, f.name, fmtDur(f.iv), fmtDur(f.dv), ratio(float64(f.dv), float64(f.iv)), target, verdictS)
			}
			if m, h := v.missDuring[t.id], v.hitDuring[t.id]; m.n > 0 {
				fmt.Fprintf(&b, "| %s | (%s) split | hits / misses during drain | %d hits: p50 %s p99 %s; %d misses: p50 %s p99 %s max %s | %s (hits' p99) | | |\n",
					part, t.id, h.n, fmtDur(h.p50), fmtDur(h.p99), m.n, fmtDur(m.p50), fmtDur(m.p99), fmtDur(m.max),
					ratio(float64(h.p99), float64(idle.p99)))
			}
		}
	}
	for _, n := range d.notes {
		fmt.Fprintf(&b, "\n- %s", n)
	}
	return b.String()
}

func drainMin(smoke bool) string {
	if smoke {
		return "0 s (smoke)"
	}
	return drainFlags.min.String()
}

// drainOnly is `-drain`: set-up, then only the drain part, written to -out
// (bench/out/drain.md unless -out is given).
func drainOnly(ctx context.Context, e *env, o options, r *report) error {
	d, err := runDrain(ctx, e, o)
	if err != nil {
		return err
	}
	out := o.out
	outSet := false
	flag.Visit(func(f *flag.Flag) { outSet = outSet || f.Name == "out" })
	if !outSet {
		out = filepath.Join(filepath.Dir(o.out), "drain.md")
	}
	var b strings.Builder
	title := "Wikid benchmark: drain mode"
	if o.smoke {
		title += " (smoke mode: checks that the harness works; the figures mean nothing)"
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	for _, l := range r.machine {
		if !strings.HasPrefix(l, "method:") {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	b.WriteString(d.markdown(o.smoke))
	b.WriteString("\n")
	fmt.Println()
	fmt.Print(b.String())
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		return err
	}
	fmt.Println("\nwritten to", out)
	return nil
}
