package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestParseWrk(t *testing.T) {
	const out = `Running 10s test @ http://127.0.0.1:8080/wiki/X
  1 threads and 10 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   120.50us   80.10us   4.00ms   95.00%
    Req/Sec    80.12k     2.01k   85.00k    70.00%
  Latency Distribution
     50%  105.00us
     75%  130.00us
     90%  160.00us
     99%    1.25ms
  801234 requests in 10.00s, 41.00GB read
  Non-2xx or 3xx responses: 3
Requests/sec:  80123.40
Transfer/sec:      4.10GB
`
	r, err := parseWrk(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.rps != 80123.40 || r.p50 != 105*time.Microsecond || r.p99 != 1250*time.Microsecond || r.requests != 801234 {
		t.Errorf("parsed %+v", r)
	}
	if r.errors != "3 non-2xx/3xx responses" {
		t.Errorf("errors = %q", r.errors)
	}
	if _, err := parseWrk("unable to connect to 127.0.0.1:1 Connection refused\n"); err == nil {
		t.Error("a failed run parsed without error")
	}
}

func TestParseStraceSummary(t *testing.T) {
	const out = `% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 40.00    0.004000           1      3000           writev
 30.00    0.003000           1      3100      3000 read
  1.00    0.000100          10        10           openat
------ ----------- ----------- --------- --------- ----------------
100.00    0.007100           1      6110      3000 total
`
	path := filepath.Join(t.TempDir(), "s.txt")
	os.WriteFile(path, []byte(out), 0o644)
	got, err := parseStraceSummary(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"writev": 3000, "read": 3100, "openat": 10}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
	c := syscallCount{requests: 1000, load: got, idle: map[string]int{"read": 100, "openat": 10}}
	if c.perHit("read") != 3 || c.perHit("openat") != 0 {
		t.Errorf("per hit: read %v, openat %v", c.perHit("read"), c.perHit("openat"))
	}
}

func TestPercentile(t *testing.T) {
	var v []time.Duration
	for i := 1; i <= 100; i++ {
		v = append(v, time.Duration(i))
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 50}, {90, 90}, {99, 99}, {100, 100}, {0.1, 1}} {
		if got := pct(v, c.p); got != c.want {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
}

func TestCorpus(t *testing.T) {
	c := buildCorpus(300)
	if len(c.pages) != 300 || c.pages[len(c.pages)-1].title != articleTitle {
		t.Fatalf("%d pages, last %q", len(c.pages), c.pages[len(c.pages)-1].title)
	}
	if c.links < 90 || c.missing < 15 || len(articleSource) < 25<<10 {
		t.Errorf("article: %d bytes, %d links, %d missing targets", len(articleSource), c.links, c.missing)
	}
}
