package main

// The hits part: cache hits on wikid's two paths (the front server's fast
// path, and net/http's handlers with "front": false) against nginx serving
// the very same bytes, at several concurrencies, on the bench article and
// on a page of more than 100 KB, with the servers' CPU time per request.

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

var hitsFlags struct {
	on       bool
	conns    string
	duration time.Duration
	rounds   int
}

func init() {
	flag.BoolVar(&hitsFlags.on, "hits", false, "run only the hits part: anonymous (identity, gzip) and logged-in hits at -hits-conns connections on the article and a 100+ KB page, wikid's fast path and \"front\": false against nginx serving the same bytes, with CPU per request (output bench/out/hits.md unless -out)")
	flag.StringVar(&hitsFlags.conns, "hits-conns", "10,50", "wrk connections of the hits part, comma-separated")
	flag.DurationVar(&hitsFlags.duration, "hits-duration", 4*time.Second, "length of each wrk run of the hits part")
	flag.IntVar(&hitsFlags.rounds, "hits-rounds", 3, "alternating rounds of the hits part (medians are reported)")
}

// bigTitle is the page of more than 100 KB: the article three times.
const bigTitle = "Narrow-gauge railways tripled"

func bigSource() string {
	return strings.Repeat(articleSource+"\n\n", 3)
}

// hitPage is one page as the hits part serves it: its bytes on each path.
type hitPage struct {
	name             string
	path             string // /wiki/…
	html, gz         []byte // anonymous
	liHTML, liGz     []byte // logged-in (the bench user's view)
	nginxPath, liNgx string // nginx's copies of the anonymous and logged-in bytes
}

// hitCase is one measured target and where its CPU time is read.
type hitCase struct {
	target
	pids func() []int
}

type hitRow struct {
	page, enc string
	conns     int
	view      string // "anonymous" or "logged-in"
	nginx     []hitRun
	front     []hitRun
	noFront   []hitRun
}

type hitRun struct {
	rps   float64
	cpuUS float64 // server CPU µs per request
}

func hitsOnly(ctx context.Context, e *env, o options) error {
	if !flagSet("out") {
		o.out = filepath.Join(filepath.Dir(o.out), "hits.md")
	}
	var conns []int
	for _, f := range strings.Split(hitsFlags.conns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-hits-conns %q: want connection counts such as 10,50", hitsFlags.conns)
		}
		conns = append(conns, n)
	}
	dur, rounds := hitsFlags.duration, hitsFlags.rounds
	if o.smoke {
		dur, rounds = time.Second, 1
	}

	// The same wiki, served without the fast path, from its own copy of
	// the data (setUp made it after seeding).
	noFront, nfBase, err := startWikid("wikid-nofront", e.bin, filepath.Join(e.tmp, "data-nofront"), e.tmp, map[string]any{"front": false})
	if err != nil {
		return err
	}
	defer noFront.stop()
	c := keepAliveClient()
	// Its own session: the data was copied before the other's login.
	nfSession, err := login(c, nfBase, benchUser, benchPassword)
	if err != nil {
		return fmt.Errorf("log in to the \"front\": false wikid: %w", err)
	}
	frontBase := strings.TrimSuffix(e.wikidURL, "/wiki/"+strings.ReplaceAll(articleTitle, " ", "_"))
	ngxBase := strings.TrimSuffix(e.nginxURL, "/wiki/"+strings.ReplaceAll(articleTitle, " ", "_"))
	www := filepath.Join(e.tmp, "nginx", "www")

	var pages []hitPage
	for _, p := range []struct{ name, title string }{{"article", articleTitle}, {"100+ KB page", bigTitle}} {
		hp := hitPage{name: p.name, path: "/wiki/" + strings.ReplaceAll(p.title, " ", "_")}
		for _, v := range []struct {
			headers []string
			into    *[]byte
		}{
			{nil, &hp.html}, {[]string{"Accept-Encoding: gzip"}, &hp.gz},
			{[]string{"Cookie: wikid_session=" + e.session}, &hp.liHTML},
			{[]string{"Accept-Encoding: gzip", "Cookie: wikid_session=" + e.session}, &hp.liGz},
		} {
			r, err := get(c, target{url: frontBase + hp.path, headers: v.headers})
			if err == nil && v.headers == nil {
				r, err = fetchStable(c, frontBase+hp.path, nil)
			}
			if err != nil {
				return err
			}
			if r.status != http.StatusOK {
				return fmt.Errorf("GET %s %v: status %d", hp.path, v.headers, r.status)
			}
			*v.into = r.body
		}
		// The no-fast-path wikid must send the same bytes: the same wiki.
		for _, h := range [][]string{nil, {"Accept-Encoding: gzip"}} {
			r, err := fetchStable(c, nfBase+hp.path, h)
			if err != nil {
				return err
			}
			want := hp.html
			if h != nil {
				want = hp.gz
			}
			if string(r.body) != string(want) {
				return fmt.Errorf("%s: the \"front\": false wikid sends other bytes than the other (%d, %d)", hp.path, len(r.body), len(want))
			}
		}
		// nginx's copies: the anonymous bytes under the page's path, the
		// logged-in ones beside them (gzip_static serves the .gz).
		hp.nginxPath, hp.liNgx = hp.path, hp.path+"_logged_in"
		for _, f := range []struct {
			path string
			body []byte
		}{{hp.nginxPath, hp.html}, {hp.nginxPath + ".gz", hp.gz}, {hp.liNgx, hp.liHTML}, {hp.liNgx + ".gz", hp.liGz}} {
			if err := os.WriteFile(filepath.Join(www, filepath.FromSlash(strings.TrimPrefix(f.path, "/"))), f.body, 0o644); err != nil {
				return err
			}
		}
		for _, h := range [][]string{nil, {"Accept-Encoding: gzip"}} {
			for _, p := range []struct {
				path string
				want []byte
			}{{hp.nginxPath, hp.html}, {hp.liNgx, hp.liHTML}} {
				want := p.want
				if h != nil {
					want = map[string][]byte{hp.nginxPath: hp.gz, hp.liNgx: hp.liGz}[p.path]
				}
				r, err := get(c, target{url: ngxBase + p.path, headers: h})
				if err != nil || string(r.body) != string(want) {
					return fmt.Errorf("nginx does not serve the saved bytes of %s (%v)", p.path, err)
				}
			}
		}
		step("hits: %s: %d bytes (gzip %d), logged-in %d (gzip %d)", p.name, len(hp.html), len(hp.gz), len(hp.liHTML), len(hp.liGz))
		pages = append(pages, hp)
	}

	workers, err := nginxWorkers(e.nginx.pid())
	if err != nil {
		return err
	}
	ngxPids := func() []int { return workers }
	frontPids := func() []int { return []int{e.wikid.pid()} }
	nfPids := func() []int { return []int{noFront.pid()} }

	var rows []*hitRow
	for _, n := range conns {
		for _, hp := range pages {
			for _, gz := range []bool{false, true} {
				enc := "identity"
				var h []string
				if gz {
					enc, h = "gzip", []string{"Accept-Encoding: gzip"}
				}
				cookie := "Cookie: wikid_session=" + e.session
				anon := &hitRow{page: hp.name, enc: enc, conns: n, view: "anonymous"}
				li := &hitRow{page: hp.name, enc: enc, conns: n, view: "logged-in"}
				cases := []struct {
					c    hitCase
					into *[]hitRun
				}{
					{hitCase{target{id: "a", name: "nginx", url: ngxBase + hp.nginxPath, headers: h}, ngxPids}, &anon.nginx},
					{hitCase{target{id: "b", name: "wikid", url: frontBase + hp.path, headers: h}, frontPids}, &anon.front},
					{hitCase{target{id: "b'", name: "wikid front:false", url: nfBase + hp.path, headers: h}, nfPids}, &anon.noFront},
					{hitCase{target{id: "a", name: "nginx (logged-in bytes)", url: ngxBase + hp.liNgx, headers: h}, ngxPids}, &li.nginx},
					{hitCase{target{id: "c", name: "wikid logged-in", url: frontBase + hp.path, headers: append(h[:len(h):len(h)], cookie)}, frontPids}, &li.front},
					{hitCase{target{id: "c'", name: "wikid logged-in front:false", url: nfBase + hp.path, headers: append(h[:len(h):len(h)], "Cookie: wikid_session="+nfSession)}, nfPids}, &li.noFront},
				}
				for round := range rounds {
					for _, k := range cases {
						run, err := hitWrk(ctx, k.c, n, dur)
						if err != nil {
							return err
						}
						step("  %-12s %-8s c=%-3d round %d %-28s %9.0f req/s %7.1f µs CPU/req", hp.name, enc, n, round+1, k.c.name, run.rps, run.cpuUS)
						*k.into = append(*k.into, run)
					}
				}
				rows = append(rows, anon, li)
			}
		}
	}
	text := hitsMarkdown(e, o, rows, dur, rounds)
	return printAndWrite(text, o.out)
}

// hitWrk runs wrk with conns connections on one thread and reads the
// server's CPU time around it.
func hitWrk(ctx context.Context, k hitCase, conns int, dur time.Duration) (hitRun, error) {
	before, err := cpuTicks(k.pids())
	if err != nil {
		return hitRun{}, err
	}
	res, err := runWrkConns(ctx, conns, k.url, k.headers, "", dur)
	if err != nil {
		return hitRun{}, err
	}
	after, err := cpuTicks(k.pids())
	if err != nil {
		return hitRun{}, err
	}
	if res.errors != "" {
		return hitRun{}, fmt.Errorf("wrk %s: %s", k.name, res.errors)
	}
	run := hitRun{rps: res.rps}
	if res.requests > 0 {
		run.cpuUS = float64(after-before) * 1e6 / clockTicks / float64(res.requests)
	}
	return run, nil
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times (100 on Linux).
const clockTicks = 100

// cpuTicks sums user and system time of the processes (all their threads).
func cpuTicks(pids []int) (int64, error) {
	var sum int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0, err
		}
		// Fields after the command name (which may hold spaces) in ")".
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
		}
		u, _ := strconv.ParseInt(f[11], 10, 64) // utime: field 14
		k, _ := strconv.ParseInt(f[12], 10, 64) // stime: field 15
		sum += u + k
	}
	return sum, nil
}

func hitsMarkdown(e *env, o options, rows []*hitRow, dur time.Duration, rounds int) string {
	var b strings.Builder
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&b, "## Hits: wikid's fast path and net/http against nginx\n\n")
	fmt.Fprintf(&b, "date %s; wikid %s; %d CPUs (%s), load average at the end %s\n\n",
		time.Now().Format(time.RFC3339), e.bin, runtime.NumCPU(), cpuModel(), firstWords(string(load), 3))
	if o.smoke {
		b.WriteString("Smoke run: the figures mean nothing.\n\n")
	}
	fmt.Fprintf(&b, "`wrk -t1 -cN -d%s`, %d alternating round(s) of the six targets per row; medians. nginx serves the bytes wikid sends for that row (anonymous or the bench user's logged-in view, identity or its gzip copy). CPU is the server's user+system time per request, from /proc (all nginx workers; the whole wikid process, its job worker included).\n\n", wrkDuration(dur), rounds)
	b.WriteString("| page | encoding | view | conns | nginx req/s (CPU µs/req) | wikid req/s (CPU µs/req) | × nginx | front:false req/s (CPU µs/req) | × nginx | target |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		med := func(rs []hitRun, f func(hitRun) float64) float64 {
			w := make([]wrkResult, len(rs))
			for i, x := range rs {
				w[i] = wrkResult{rps: f(x)}
			}
			return median(w, func(w wrkResult) float64 { return w.rps })
		}
		rps := func(h hitRun) float64 { return h.rps }
		cpu := func(h hitRun) float64 { return h.cpuUS }
		ngx, fr, nf := med(r.nginx, rps), med(r.front, rps), med(r.noFront, rps)
		target := "≥ 1.0×"
		if r.view == "logged-in" {
			target = "≥ 0.9×"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %.0f (%.1f) | %.0f (%.1f) | %.2f× | %.0f (%.1f) | %.2f× | %s |\n",
			r.page, r.enc, r.view, r.conns, ngx, med(r.nginx, cpu), fr, med(r.front, cpu), fr/ngx, nf, med(r.noFront, cpu), nf/ngx, target)
	}
	return b.String()
}
