package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// fsCalls are the file-system system calls a cached hit must not make.
var fsCalls = []string{"open", "openat", "stat", "fstat", "newfstatat", "access", "readlink"}

// syscallCount is what strace -c counted over some requests, with the counts
// of an idle window of the same length subtracted (timers, background work).
type syscallCount struct {
	requests   int
	load, idle map[string]int
}

// perHit returns the calls of name per request beyond what the process made
// while idle.
func (s syscallCount) perHit(name string) float64 {
	return float64(max(0, s.load[name]-s.idle[name])) / float64(s.requests)
}

func (s syscallCount) totalPerHit() float64 {
	load, idle := 0, 0
	for _, n := range s.load {
		load += n
	}
	for _, n := range s.idle {
		idle += n
	}
	return float64(max(0, load-idle)) / float64(s.requests)
}

func (s syscallCount) fsPerHit() (float64, string) {
	var sum float64
	var parts []string
	for _, name := range fsCalls {
		if v := s.perHit(name); v > 0 {
			sum += v
			parts = append(parts, fmt.Sprintf("%s %.3g", name, v))
		}
	}
	return sum, strings.Join(parts, ", ")
}

// countSyscalls attaches strace -c -f to pids, sends n sequential requests to
// t over one keep-alive connection, and then traces an idle window as long as
// the loaded one.
func countSyscalls(ctx context.Context, dir string, pids []int, t target, n int) (syscallCount, error) {
	c := syscallCount{requests: n}
	o := newOpenLoop()
	if !o.fetch(ctx, t) {
		return c, fmt.Errorf("strace: %s does not answer 200", t.url)
	}
	var took time.Duration
	var err error
	c.load, err = straceWhile(ctx, filepath.Join(dir, "strace-"+t.id+".txt"), pids, func() error {
		start := time.Now()
		for range n {
			if !o.fetch(ctx, t) {
				return fmt.Errorf("strace: a request to %s failed", t.url)
			}
		}
		took = time.Since(start)
		return nil
	})
	if err != nil {
		return c, err
	}
	c.idle, err = straceWhile(ctx, filepath.Join(dir, "strace-"+t.id+"-idle.txt"), pids, func() error {
		time.Sleep(took)
		return nil
	})
	return c, err
}

// straceWhile runs strace -c -f on pids for as long as work runs.
func straceWhile(ctx context.Context, out string, pids []int, work func() error) (map[string]int, error) {
	args := []string{"-c", "-f", "-o", out}
	for _, p := range pids {
		args = append(args, "-p", strconv.Itoa(p))
	}
	cmd := exec.CommandContext(ctx, "strace", args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("strace: %w", err)
	}
	// strace reports each attached process on stderr; start the work only
	// once all are traced.
	attached := make(chan error, 1)
	var log strings.Builder
	go func() {
		sc, seen := bufio.NewScanner(stderr), 0
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "attached") {
				if seen++; seen == len(pids) {
					attached <- nil
				}
			}
		}
		attached <- fmt.Errorf("strace exited before attaching:\n%s", log.String())
	}()
	select {
	case err = <-attached:
	case <-time.After(10 * time.Second):
		err = fmt.Errorf("strace did not attach within 10 s")
	}
	if err == nil {
		time.Sleep(200 * time.Millisecond)
		err = work()
	}
	cmd.Process.Signal(syscall.SIGINT)
	if werr := cmd.Wait(); err == nil && werr != nil && !isSignalExit(werr) {
		err = fmt.Errorf("strace: %v", werr)
	}
	if err != nil {
		return nil, err
	}
	return parseStraceSummary(out)
}

func isSignalExit(err error) bool {
	ee, ok := err.(*exec.ExitError)
	return ok && !ee.Exited()
}

// straceRowRE matches a row of strace -c's table:
// "% time     seconds  usecs/call     calls    errors syscall".
var straceRowRE = regexp.MustCompile(`^\s*[0-9.]+\s+[0-9.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?([a-z_0-9]+)\s*$`)

func parseStraceSummary(path string) (map[string]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("strace summary: %w", err)
	}
	counts := map[string]int{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := straceRowRE.FindStringSubmatch(line); m != nil && m[2] != "total" {
			counts[m[2]], _ = strconv.Atoi(m[1])
		}
	}
	return counts, nil
}
