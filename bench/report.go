package main

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

// report collects every figure of a run and prints them as one table.
type report struct {
	opts     options
	started  time.Time
	machine  []string // header lines
	notes    []string
	wrk      []wrkRound
	render   renderResult
	fixed    []fixedRow
	syscalls []syscallRow
}

type fixedRow struct {
	t target
	s rateStats
}

type syscallRow struct {
	t target
	c syscallCount
}

func (r *report) describe(e *env) {
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	load, _ := os.ReadFile("/proc/loadavg")
	nginxV, _ := exec.Command(nginxBin(), "-v").CombinedOutput()
	wrkV, _ := exec.Command("wrk", "-v").CombinedOutput()
	wikidV, _ := exec.Command(e.bin, "version").CombinedOutput()
	first := func(b []byte) string { return strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]) }
	r.notes = e.notes
	logging := "wikid logs every request (no --log-level flag in this build); nginx has access_log off"
	if quietFlag(e.bin) {
		logging = "wikid runs with --log-level warn and nginx with access_log off (no access logs)"
	}
	r.machine = []string{
		fmt.Sprintf("date: %s", r.started.Format(time.RFC3339)),
		fmt.Sprintf("machine: %d CPUs (%s), kernel %s, load average at start %s", runtime.NumCPU(), cpuModel(),
			strings.TrimSpace(string(kernel)), firstWords(string(load), 3)),
		fmt.Sprintf("software: %s, %s, %s, %s, %s", first(wikidV), runtime.Version(), strings.TrimPrefix(first(nginxV), "nginx version: "),
			firstWords(first(wrkV), 2), straceVersion()),
		fmt.Sprintf("article: %s, %d bytes of Markdown, %d wiki links (%d distinct targets left red); HTML %d bytes, gzip %d bytes; %d pages in the wiki",
			e.wikidURL[strings.Index(e.wikidURL, "/wiki/"):], len(articleSource), e.corpus.links, e.corpus.missing, len(e.html), len(e.gz), len(e.corpus.pages)+2),
		fmt.Sprintf("method: wrk -t1 -c10 -d%s --latency, %d alternating round(s) per encoding, medians; fixed rate %.0f req/s for %s per target (open loop, latency from the scheduled send time); strace -c -f over %d sequential keep-alive requests, idle window subtracted",
			wrkDuration(r.opts.duration), r.opts.rounds, r.opts.rate, r.opts.rateDuration, r.opts.straceN),
		logging,
	}
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func straceVersion() string {
	b, _ := exec.Command("strace", "-V").Output()
	return strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
}

// row is one line of the table.
type row struct {
	part, cas, figure, value, ratio, target, verdict string
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

func fmtDur(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < time.Millisecond:
		return fmt.Sprintf("%d µs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func fmtRPS(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func ratio(v, ref float64) string {
	if ref == 0 {
		return "—"
	}
	if x := v / ref; x < 0.1 {
		return fmt.Sprintf("%.2g×", x)
	}
	return fmt.Sprintf("%.2f×", v/ref)
}

func (r *report) rows() []row {
	var rows []row
	for _, w := range r.wrk {
		part := "wrk, identity"
		if w.gz {
			part = "wrk, gzip"
		}
		med := func(id string, f func(wrkResult) float64) float64 { return median(w.runs[id], f) }
		rps := func(x wrkResult) float64 { return x.rps }
		p50 := func(x wrkResult) float64 { return float64(x.p50) }
		p99 := func(x wrkResult) float64 { return float64(x.p99) }
		for _, t := range w.targets {
			id := t.id
			value := fmtRPS(med(id, rps))
			if runs := w.runs[id]; len(runs) > 1 {
				lo := slices.MinFunc(runs, func(a, b wrkResult) int { return cmp.Compare(a.rps, b.rps) }).rps
				hi := slices.MaxFunc(runs, func(a, b wrkResult) int { return cmp.Compare(a.rps, b.rps) }).rps
				value += fmt.Sprintf(" (%s–%s)", fmtRPS(lo), fmtRPS(hi))
			}
			rr := row{part: part, cas: "(" + id + ") " + t.name, figure: "req/s", value: value, ratio: ratio(med(id, rps), med("a", rps))}
			switch id {
			case "b":
				x := med("b", rps) / med("a", rps)
				rr.target, rr.verdict = "≥ 0.9× (a)", verdict(x >= 0.9)
			case "c":
				x := med("c", rps) / med("b", rps)
				rr.target, rr.verdict = fmt.Sprintf("≥ 0.5× (b): %.2f×", x), verdict(x >= 0.5)
			}
			rows = append(rows, rr,
				row{part: part, cas: "(" + id + ")", figure: "p50", value: fmtDur(time.Duration(med(id, p50))), ratio: ratio(med(id, p50), med("a", p50))},
				row{part: part, cas: "(" + id + ")", figure: "p99", value: fmtDur(time.Duration(med(id, p99))), ratio: ratio(med(id, p99), med("a", p99))})
		}
	}

	src := fmt.Sprintf("client p50 of %d sequential misses (no render;dur in Server-Timing)", r.render.n)
	if r.render.fromTiming {
		src = fmt.Sprintf("Server-Timing render;dur, median of %d", r.render.n)
	}
	rows = append(rows, row{part: "render", cas: "(e) article render", figure: "median", value: fmtDur(r.render.median),
		ratio: "—", target: "≤ 2 ms", verdict: verdict(r.render.median <= 2*time.Millisecond) + " (" + src + ")"})

	part := fmt.Sprintf("%.0f req/s fixed", r.opts.rate)
	var ref rateStats
	for _, f := range r.fixed {
		if f.t.id == "a" {
			ref = f.s
		}
	}
	for _, f := range r.fixed {
		figs := []struct {
			name   string
			v, ref time.Duration
		}{{"p50", f.s.p50, ref.p50}, {"p90", f.s.p90, ref.p90}, {"p95", f.s.p95, ref.p95}, {"p99", f.s.p99, ref.p99}, {"max", f.s.max, ref.max}}
		for i, g := range figs {
			rr := row{part: part, cas: "(" + f.t.id + ")", figure: g.name, value: fmtDur(g.v), ratio: ratio(float64(g.v), float64(g.ref))}
			if i == 0 {
				rr.cas = fmt.Sprintf("(%s) %s, %d requests, %d errors", f.t.id, f.t.name, f.s.n, f.s.errors)
			}
			if g.name == "p99" {
				switch f.t.id {
				case "b":
					rr.target, rr.verdict = "≤ 1 ms", verdict(g.v <= time.Millisecond && f.s.errors == 0)
				case "c":
					rr.target, rr.verdict = "≤ 2 ms", verdict(g.v <= 2*time.Millisecond && f.s.errors == 0)
				}
			}
			rows = append(rows, rr)
		}
	}

	var refTotal float64
	for _, s := range r.syscalls {
		if s.t.id == "a" {
			refTotal = s.c.totalPerHit()
		}
	}
	for _, s := range r.syscalls {
		total := s.c.totalPerHit()
		rows = append(rows, row{part: "syscalls per hit", cas: "(" + s.t.id + ") " + s.t.name, figure: "all",
			value: fmt.Sprintf("%.2f", total), ratio: ratio(total, refTotal)})
		fs, detail := s.c.fsPerHit()
		rr := row{part: "syscalls per hit", cas: "(" + s.t.id + ")", figure: strings.Join(fsCalls, "/"),
			value: fmt.Sprintf("%.3g", fs), ratio: "—"}
		if detail != "" {
			rr.value += " (" + detail + ")"
		}
		if s.t.id == "b" {
			rr.target, rr.verdict = "0", verdict(fs == 0)
		}
		rows = append(rows, rr)
	}
	return rows
}

// markdown renders the header, the table and the notes.
func (r *report) markdown() string {
	var b strings.Builder
	title := "Wikid benchmark"
	if r.opts.smoke {
		title += " (smoke mode: checks that the harness works; the figures mean nothing)"
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	for _, l := range r.machine {
		fmt.Fprintf(&b, "- %s\n", l)
	}
	b.WriteString("\n| part | case | figure | value | × nginx (a) | target | verdict |\n|---|---|---|---|---|---|---|\n")
	for _, x := range r.rows() {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", x.part, x.cas, x.figure, x.value, x.ratio, x.target, x.verdict)
	}
	notes := slices.Clone(r.notes)
	for _, w := range r.wrk {
		for _, t := range w.targets {
			for i, run := range w.runs[t.id] {
				if run.errors != "" {
					notes = append(notes, fmt.Sprintf("wrk gzip=%v round %d (%s): %s", w.gz, i+1, t.id, run.errors))
				}
			}
		}
	}
	for _, f := range r.fixed {
		notes = append(notes, fmt.Sprintf("fixed rate (%s): generator send lag p99 %s, max %s (how late requests left; latency includes it); p99 from the actual send %s",
			f.t.id, fmtDur(f.s.lagP99), fmtDur(f.s.lagMax), fmtDur(f.s.serviceP99)))
	}
	if r.render.serverTimng != "" {
		notes = append(notes, "Server-Timing on a cache miss: `"+r.render.serverTimng+"`")
	}
	notes = append(notes, fmt.Sprintf("(e) client p50 of sequential misses: %s", fmtDur(r.render.clientP50)))
	for _, s := range r.syscalls {
		notes = append(notes, fmt.Sprintf("strace (%s): %s", s.t.id, topCalls(s.c)))
	}
	if len(notes) > 0 {
		b.WriteString("\nNotes:\n\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}

// topCalls lists the most frequent calls per hit.
func topCalls(c syscallCount) string {
	names := make([]string, 0, len(c.load))
	for n := range c.load {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := c.load[b] - c.load[a]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, n := range names[:min(8, len(names))] {
		parts = append(parts, fmt.Sprintf("%s %.2f", n, c.perHit(n)))
	}
	return fmt.Sprintf("%d requests; per hit: %s", c.requests, strings.Join(parts, ", "))
}
