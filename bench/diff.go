package main

// The diff part: the worst case of comparing two revisions at the page size
// limit. It runs in the harness's own process, on the adversarial pairs of
// internal/diff/difftest (texts with nothing in common, every line edited,
// shuffled lines, one long line, a two-line alphabet, the most lines,
// Chinese with and without newlines), and times what a diff page costs on a
// cache miss: diff.Compare and the HTML table. No server is involved.

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wikid/wikid/internal/diff"
	"github.com/wikid/wikid/internal/diff/difftest"
)

var diffFlags struct {
	only bool
	skip bool
	runs int
	size int
}

func init() {
	flag.BoolVar(&diffFlags.only, "diff", false, "run only the diff part: worst-case comparison time and memory at the page size limit (no servers; seconds)")
	flag.BoolVar(&diffFlags.skip, "no-diff", false, "leave the diff part out of a full run")
	flag.IntVar(&diffFlags.runs, "diff-runs", 5, "runs per adversarial pair in the diff part (the median time is reported; 1 with -smoke)")
	flag.IntVar(&diffFlags.size, "diff-size", 2<<20, "bytes per revision of the diff part's adversarial pairs (the default page size limit)")
}

// diffTarget is the time a comparison of two revisions at the size limit
// may take on the reference machine (2 cores).
const diffTarget = 200 * time.Millisecond

type diffRow struct {
	name              string
	oldLen, newLen    int
	times             []time.Duration // CPU time of the comparing thread
	walls             []time.Duration
	peakRSS           int64 // bytes over the RSS before the run, the most of any run; -1 when unknown
	alloc             uint64
	coarse, truncated bool
	html              int
}

func medianDur(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

type diffResult struct {
	rows []diffRow
	runs int
}

// runDiff measures every adversarial pair: runs comparisons each, after a
// full GC with the memory returned to the system and the peak RSS mark
// reset, so each run's peak is its own. Time is the CPU time of the thread
// that compares (the work is single-threaded): on a busy, shared machine
// it is what an idle one would take, where wall time also counts waiting
// for a core. Wall time is reported beside it.
func runDiff(o options) (*diffResult, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	runs := diffFlags.runs
	if o.smoke {
		runs = 1
	}
	if runs < 1 {
		return nil, fmt.Errorf("-diff-runs is %d; give at least 1", runs)
	}
	step("diff: %d adversarial pairs of %d bytes a side, %d run(s) each", len(difftest.Shapes(64)), diffFlags.size, runs)
	res := &diffResult{runs: runs}
	for _, p := range difftest.Shapes(diffFlags.size) {
		row := diffRow{name: p.Name, oldLen: len(p.Old), newLen: len(p.New), peakRSS: -1}
		for range runs {
			var m0, m1 runtime.MemStats
			debug.FreeOSMemory()
			runtime.ReadMemStats(&m0)
			before, peakOK := resetPeakRSS()
			start, cpu := time.Now(), threadCPU()
			r := diff.Compare(p.Old, p.New, diff.Options{})
			html := r.HTML()
			row.times = append(row.times, threadCPU()-cpu)
			row.walls = append(row.walls, time.Since(start))
			if peakOK {
				if peak, ok := procStatus("VmHWM"); ok {
					row.peakRSS = max(row.peakRSS, peak-before)
				}
			}
			runtime.ReadMemStats(&m1)
			row.alloc = max(row.alloc, m1.TotalAlloc-m0.TotalAlloc)
			row.coarse, row.truncated, row.html = r.Coarse, r.Truncated, len(html)
		}
		res.rows = append(res.rows, row)
	}
	return res, nil
}

// threadCPU is the CPU time the calling thread has used.
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD (Linux)
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// resetPeakRSS sets the process's peak RSS mark (VmHWM) to its current RSS,
// which it returns; ok is false where /proc does not allow it.
func resetPeakRSS() (rss int64, ok bool) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return 0, false
	}
	return procStatus("VmRSS")
}

// procStatus reads a "kB" field of /proc/self/status, in bytes.
func procStatus(field string) (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != field {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		return n << 10, err == nil
	}
	return 0, false
}

func fmtMiB(n int64) string {
	if n < 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

func (d *diffResult) markdown(smoke bool) string {
	var b strings.Builder
	title := "## Diff: worst case at the page size limit"
	if smoke {
		title += " (smoke: one run each)"
	}
	fmt.Fprintf(&b, "\n%s\n\n", title)
	fmt.Fprintf(&b, "diff.Compare and its HTML table on a cache miss, in the harness process, %d run(s) per pair: "+
		"CPU time of the comparing thread, median (range), and wall time, median; "+
		"peak RSS over the RSS before the run (the inputs excluded); bytes allocated.\n\n", d.runs)
	b.WriteString("| pair | bytes (old / new) | CPU, median (range) | wall, median | target | verdict | peak RSS | allocated | coarse | truncated | table |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	worst, worstName, peak := time.Duration(0), "", int64(-1)
	for _, r := range d.rows {
		med := medianDur(r.times)
		if med > worst {
			worst, worstName = med, r.name
		}
		peak = max(peak, r.peakRSS)
		fmt.Fprintf(&b, "| %s | %d / %d | %s (%s–%s) | %s | ≤ %s | %s | %s | %s | %v | %v | %d B |\n",
			r.name, r.oldLen, r.newLen, fmtDur(med), fmtDur(slices.Min(r.times)), fmtDur(slices.Max(r.times)), fmtDur(medianDur(r.walls)),
			fmtDur(diffTarget), verdict(med <= diffTarget), fmtMiB(r.peakRSS), fmtMiB(int64(r.alloc)), r.coarse, r.truncated, r.html)
	}
	fmt.Fprintf(&b, "\nWorst: %s CPU (%s; target ≤ %s on 2 cores); largest peak RSS %s.\n", fmtDur(worst), worstName, fmtDur(diffTarget), fmtMiB(peak))
	return b.String()
}

// diffOnly is `-diff`: only the diff part, written to -out (bench/out/diff.md
// unless -out is given). It needs none of the servers or tools.
func diffOnly(o options) error {
	d, err := runDiff(o)
	if err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	out := o.out
	outSet := false
	flag.Visit(func(f *flag.Flag) { outSet = outSet || f.Name == "out" })
	if !outSet {
		out = filepath.Join(filepath.Dir(out), "diff.md")
	}
	if !filepath.IsAbs(out) {
		out = filepath.Join(root, out)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	text := fmt.Sprintf("# Wikid benchmark: diff mode\n\n- date: %s\n- machine: %d CPUs (%s), load average at start %s; %s\n%s",
		time.Now().Format(time.RFC3339), runtime.NumCPU(), cpuModel(), firstWords(string(load), 3), runtime.Version(), d.markdown(o.smoke))
	return printAndWrite(text, out)
}
