package main

// The pathological mode (go run ./bench -pathological) renders every shape of
// internal/render/pathological at the page size limit and prints a table of
// render time and memory. Each shape renders in a child process of its own
// (this binary, run with -pathological-one), so that one shape's garbage or
// a runaway render cannot disturb the next, the peak RSS is the shape's own,
// and a render that does not finish in -pathological-timeout is killed and
// reported as such instead of hanging the harness.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/render/pathological"
	"github.com/wikid/wikid/internal/wiki"
)

var pathoFlags struct {
	on      bool
	size    int
	shapes  string
	timeout time.Duration
	json    string
	before  string
	one     string // internal: render this one shape and print its figures as JSON
	skip    bool
}

func init() {
	flag.BoolVar(&pathoFlags.on, "pathological", false, "only render the pathological inputs at the page size limit and print time and memory per shape (no servers)")
	flag.IntVar(&pathoFlags.size, "pathological-size", config.Default().MaxPageBytes, "bytes per pathological input (default: max_page_bytes' default; -smoke: 64 KiB)")
	flag.StringVar(&pathoFlags.shapes, "pathological-shapes", "", "regular expression: only the shapes whose names match")
	flag.DurationVar(&pathoFlags.timeout, "pathological-timeout", 120*time.Second, "a shape still rendering after this long is killed and reported as such")
	flag.StringVar(&pathoFlags.json, "pathological-json", "", "also write the figures as JSON to this file (for -pathological-before in a later run)")
	flag.StringVar(&pathoFlags.before, "pathological-before", "", "JSON figures of an earlier run (e.g. on the base commit): printed beside this run's")
	flag.StringVar(&pathoFlags.one, "pathological-one", "", "internal: render one shape in this process")
	flag.BoolVar(&pathoFlags.skip, "no-pathological", false, "leave the pathological inputs out of a full run")
}

// pathoResult is one shape's figures.
type pathoResult struct {
	Shape    string        `json:"shape"`
	Bytes    int           `json:"bytes"`
	OutBytes int           `json:"out_bytes"`
	Took     time.Duration `json:"took_ns"`
	CPU      time.Duration `json:"cpu_ns"`    // user and system time of the whole process during the render (GC included)
	PeakHeap uint64        `json:"peak_heap"` // heap objects above the level before the render, sampled every millisecond
	Alloc    uint64        `json:"alloc"`     // bytes allocated by the render
	MaxRSS   int64         `json:"max_rss"`   // the child process's peak resident set, bytes
	Killed   bool          `json:"killed"`    // still rendering at the timeout
	TimedOut bool          `json:"timed_out"` // the renderer gave up (its own time limit) and showed the page as text
	Error    string        `json:"error,omitempty"`
}

// pathoRun is what -pathological-json writes.
type pathoRun struct {
	Commit  string        `json:"commit"`
	Size    int           `json:"size"`
	Timeout time.Duration `json:"timeout_ns"`
	Results []pathoResult `json:"results"`
}

// runPathological is the -pathological mode: the shapes' table alone.
func runPathological(ctx context.Context, o options) error {
	run, err := pathoRunAll(ctx, o)
	if err != nil {
		return err
	}
	var before *pathoRun
	if pathoFlags.before != "" {
		b, err := os.ReadFile(pathoFlags.before)
		if err != nil {
			return fmt.Errorf("-pathological-before: %w", err)
		}
		before = new(pathoRun)
		if err := json.Unmarshal(b, before); err != nil {
			return fmt.Errorf("-pathological-before %s: %w", pathoFlags.before, err)
		}
	}
	fmt.Print(pathoTable(run, before))
	if pathoFlags.json != "" {
		b, _ := json.MarshalIndent(run, "", "  ")
		if err := os.WriteFile(pathoFlags.json, append(b, '\n'), 0o644); err != nil {
			return err
		}
		step("pathological: figures written to %s", pathoFlags.json)
	}
	return run.failed()
}

// pathoRunAll renders each shape in a child process of its own, at the
// page limit (64 KiB in smoke mode).
func pathoRunAll(ctx context.Context, o options) (pathoRun, error) {
	size := pathoFlags.size
	if o.smoke && !flagSet("pathological-size") {
		size = 64 << 10
	}
	run := pathoRun{Commit: gitCommit(), Size: size, Timeout: pathoFlags.timeout}
	var match *regexp.Regexp
	if pathoFlags.shapes != "" {
		var err error
		if match, err = regexp.Compile(pathoFlags.shapes); err != nil {
			return run, fmt.Errorf("-pathological-shapes: %w", err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return run, err
	}
	step("pathological inputs: every shape at %s, each in a process of its own", fmtBytes(uint64(size)))
	for _, s := range pathological.Shapes() {
		if match != nil && !match.MatchString(s.Name) {
			continue
		}
		res := pathoChild(ctx, self, s.Name, size, pathoFlags.timeout)
		step("pathological: %-32s %s", s.Name, res.summary())
		run.Results = append(run.Results, res)
		if ctx.Err() != nil {
			return run, ctx.Err()
		}
	}
	return run, nil
}

// failed is an error naming the shapes that could not be measured (a
// killed render is a finding, not a failure).
func (run pathoRun) failed() error {
	for _, r := range run.Results {
		if r.Error != "" {
			return fmt.Errorf("pathological shape %s: %s", r.Shape, r.Error)
		}
	}
	return nil
}

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// pathoChild renders one shape in a child process and adds its peak RSS.
func pathoChild(ctx context.Context, self, name string, size int, timeout time.Duration) pathoResult {
	res := pathoResult{Shape: name}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, self, "-pathological-one", name, "-pathological-size", fmt.Sprint(size))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			res.MaxRSS = ru.Maxrss << 10 // KiB on Linux
		}
	}
	if cctx.Err() == context.DeadlineExceeded {
		res.Killed, res.Took = true, time.Since(start)
		res.Bytes = size
		return res
	}
	if err != nil {
		res.Error = fmt.Sprintf("%v: %s", err, lastLine(errOut.String()))
		return res
	}
	rss := res.MaxRSS
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		res.Error = fmt.Sprintf("child output %q: %v", lastLine(out.String()), err)
	}
	res.MaxRSS = rss
	return res
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// pathoOne is the child: it renders the shape once and prints its figures.
func pathoOne(name string, size int) error {
	s, ok := pathological.Find(name)
	if !ok {
		return fmt.Errorf("no pathological shape %q", name)
	}
	res, err := measureShape(s, size)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// measureShape renders s at size with a fresh renderer, after a warm-up
// render (one-time set-up is not the shape's cost), and measures it.
func measureShape(s pathological.Shape, size int) (pathoResult, error) {
	src := s.Gen(size)
	r := render.New()
	ctx := context.Background()
	missing := func(context.Context, []wiki.Title) (map[wiki.Title]bool, error) { return nil, nil }
	if _, err := r.Render(ctx, "# a\n\n[[b]] *c* <b>d</b> [e](/f) www.g.org\n\n|h|\n|-|\n|i|\n", missing); err != nil {
		return pathoResult{}, err
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		s := []metrics.Sample{{Name: sample[0].Name}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak {
				peak = v
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	cpu0 := cpuTime()
	start := time.Now()
	out, err := r.Render(ctx, src, missing)
	took := time.Since(start)
	cpu := cpuTime() - cpu0
	close(stop)
	wg.Wait()
	runtime.ReadMemStats(&after)
	if err != nil {
		return pathoResult{}, err
	}
	res := pathoResult{Shape: s.Name, Bytes: len(src), OutBytes: len(out.HTML), Took: took, CPU: cpu, Alloc: after.TotalAlloc - before.TotalAlloc,
		TimedOut: out.TimedOut}
	if peak > base {
		res.PeakHeap = peak - base
	}
	return res, nil
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (r pathoResult) summary() string {
	switch {
	case r.Error != "":
		return "error: " + r.Error
	case r.Killed:
		return fmt.Sprintf("killed after %s", fmtSeconds(r.Took))
	}
	return fmt.Sprintf("%s (CPU %s), peak heap %s, allocated %s, peak RSS %s", fmtSeconds(r.Took), fmtSeconds(r.CPU), fmtBytes(r.PeakHeap), fmtBytes(r.Alloc), fmtBytes(uint64(r.MaxRSS)))
}

// pathoTable is the Markdown table of a run, beside an earlier one if given.
func pathoTable(run pathoRun, before *pathoRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Pathological inputs at %s (commit %s)\n\n", fmtBytes(uint64(run.Size)), run.Commit)
	b.WriteString("Each shape (internal/render/pathological) rendered once by a fresh renderer with the default settings, " +
		"in a process of its own. Time: wall clock; CPU: the process's user and system time during the render (garbage " +
		"collection on other threads included), the figure to read on a busy machine. Peak heap: heap objects above the " +
		"level before the render, sampled every millisecond; allocated: everything the render allocated; RSS: the " +
		"process's peak resident set (the Go runtime and binary included, about 20 MB). \"killed\": still rendering " +
		"when the harness gave up; \"timed out\": the renderer's own time limit showed the page as plain text.\n\n")
	prev := map[string]pathoResult{}
	if before != nil {
		for _, r := range before.Results {
			prev[r.Shape] = r
		}
		fmt.Fprintf(&b, "Before: commit %s, %s per shape, killed after %s.\n\n", before.Commit, fmtBytes(uint64(before.Size)), fmtSeconds(before.Timeout))
		b.WriteString("| shape | time before | time | CPU before | CPU | peak heap before | peak heap | allocated before | allocated | RSS before | RSS |\n")
		b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	} else {
		b.WriteString("| shape | bytes | time | CPU | peak heap | allocated | peak RSS | output |\n")
		b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|\n")
	}
	for _, r := range run.Results {
		if before == nil {
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", r.Shape, r.Bytes, r.timeCell(), r.cpuCell(),
				r.memCell(r.PeakHeap), r.memCell(r.Alloc), r.rssCell(), r.memCell(uint64(r.OutBytes)))
			continue
		}
		p, ok := prev[r.Shape]
		if !ok {
			p = pathoResult{Error: "not measured"}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Shape, p.timeCell(), r.timeCell(),
			p.cpuCell(), r.cpuCell(), p.memCell(p.PeakHeap), r.memCell(r.PeakHeap), p.memCell(p.Alloc), r.memCell(r.Alloc),
			p.rssCell(), r.rssCell())
	}
	return b.String()
}

func (r pathoResult) timeCell() string {
	switch {
	case r.Error != "":
		return "error"
	case r.Killed:
		return "> " + fmtSeconds(r.Took) + " (killed)"
	case r.TimedOut:
		return fmtSeconds(r.Took) + " (timed out)"
	}
	return fmtSeconds(r.Took)
}

func (r pathoResult) cpuCell() string {
	if r.Error != "" || r.Killed {
		return "–"
	}
	return fmtSeconds(r.CPU)
}

func (r pathoResult) memCell(v uint64) string {
	if r.Error != "" || r.Killed {
		return "–"
	}
	return fmtBytes(v)
}

func (r pathoResult) rssCell() string {
	if r.Error != "" {
		return "–"
	}
	s := fmtBytes(uint64(r.MaxRSS))
	if r.Killed {
		s = "≥ " + s
	}
	return s
}

func fmtSeconds(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return fmt.Sprintf("%.0f s", d.Seconds())
	case d >= time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d >= 10*time.Millisecond:
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

func fmtBytes(v uint64) string {
	switch {
	case v >= 10<<20:
		return fmt.Sprintf("%.0f MB", float64(v)/(1<<20))
	case v >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(v)/(1<<20))
	case v >= 10<<10:
		return fmt.Sprintf("%.0f KB", float64(v)/(1<<10))
	}
	return fmt.Sprintf("%.1f KB", float64(v)/(1<<10))
}

// gitCommit is the short commit of the working tree, "+" when it has
// uncommitted changes, or "unknown" outside a git checkout.
func gitCommit() string {
	root, err := moduleRoot()
	if err != nil {
		return "unknown"
	}
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += "+"
	}
	return c
}
