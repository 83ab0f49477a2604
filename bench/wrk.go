package main

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// wrkResult is what one wrk run measured.
type wrkResult struct {
	rps      float64
	p50, p99 time.Duration
	requests int
	errors   string // socket errors or non-2xx/3xx responses, "" when none
}

var (
	wrkRPSRE      = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkPctRE      = regexp.MustCompile(`(?m)^\s+(50|99)%\s+([0-9.]+)(us|ms|s)\s*$`)
	wrkReqsRE     = regexp.MustCompile(`(\d+) requests in`)
	wrkSocketRE   = regexp.MustCompile(`Socket errors: (.*)`)
	wrkNon2xx3xRE = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
)

// runWrk runs `wrk -t1 -c10 -d<dur> --latency` against url with the given
// headers and optional Lua script.
func runWrk(ctx context.Context, url string, headers []string, script string, dur time.Duration) (wrkResult, error) {
	return runWrkConns(ctx, 10, url, headers, script, dur)
}

// runWrkConns is runWrk with conns connections.
func runWrkConns(ctx context.Context, conns int, url string, headers []string, script string, dur time.Duration) (wrkResult, error) {
	args := []string{"-t1", "-c" + strconv.Itoa(conns), "-d" + wrkDuration(dur), "--latency", "--timeout", "5s"}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	if script != "" {
		args = append(args, "-s", script)
	}
	args = append(args, url)
	ctx, cancel := context.WithTimeout(ctx, dur+30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "wrk", args...).CombinedOutput()
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return parseWrk(string(out))
}

func wrkDuration(d time.Duration) string {
	if d < time.Second {
		d = time.Second
	}
	return strconv.Itoa(int(d.Round(time.Second)/time.Second)) + "s"
}

func parseWrk(out string) (wrkResult, error) {
	var r wrkResult
	m := wrkRPSRE.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("no Requests/sec in wrk output:\n%s", out)
	}
	r.rps, _ = strconv.ParseFloat(m[1], 64)
	for _, m := range wrkPctRE.FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}[m[3]]
		d := time.Duration(v * float64(unit))
		if m[1] == "50" {
			r.p50 = d
		} else {
			r.p99 = d
		}
	}
	if r.p50 == 0 || r.p99 == 0 {
		return r, fmt.Errorf("no latency distribution in wrk output:\n%s", out)
	}
	if m := wrkReqsRE.FindStringSubmatch(out); m != nil {
		r.requests, _ = strconv.Atoi(m[1])
	}
	var errs []string
	if m := wrkSocketRE.FindStringSubmatch(out); m != nil {
		errs = append(errs, "socket errors: "+m[1])
	}
	if m := wrkNon2xx3xRE.FindStringSubmatch(out); m != nil {
		errs = append(errs, m[1]+" non-2xx/3xx responses")
	}
	r.errors = strings.Join(errs, "; ")
	return r, nil
}
