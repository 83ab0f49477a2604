package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// target is one thing the harness measures: a URL and the request headers
// that make it the case it is.
type target struct {
	id, name string
	url      string
	headers  []string // "Name: value"
	script   string   // wrk Lua script, "" for none
	urls     []string // the sampler's rotation: request i goes to urls[i%len(urls)] when set
}

func newRequest(ctx context.Context, t target) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, t.url, nil)
	for _, h := range t.headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	return req
}

// keepAliveClient is a client that reuses connections and never asks for or
// decodes compression on its own.
func keepAliveClient() *http.Client {
	return &http.Client{
		Timeout:       5 * time.Second,
		CheckRedirect: noRedirect,
		Transport: &http.Transport{
			DisableCompression:  true,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     5 * time.Minute,
		},
	}
}

// openLoop is an open-loop, constant-rate load generator. Request i is due at
// start + i/rate whether or not earlier requests have finished, and its
// latency is measured from that due time, not from when it was actually sent:
// a stall in the server (or in the generator) shows up as latency for every
// request that should have been sent during it, instead of silently delaying
// them (the coordinated-omission error of closed-loop tools).
type openLoop struct {
	client *http.Client

	mu      sync.Mutex
	latency map[string][]time.Duration // by target id
	lag     map[string][]time.Duration // actual send time minus due time
	service map[string][]time.Duration // last byte minus actual send time
	errors  map[string]int
}

func newOpenLoop() *openLoop {
	return &openLoop{client: keepAliveClient(), latency: map[string][]time.Duration{},
		lag: map[string][]time.Duration{}, service: map[string][]time.Duration{}, errors: map[string]int{}}
}

// run sends requests to t at rate per second for dur and waits for them.
func (o *openLoop) run(ctx context.Context, t target, rate float64, dur time.Duration) {
	n := int(rate * dur.Seconds())
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now().Add(10 * time.Millisecond)
	var wg sync.WaitGroup
	for i := range n {
		due := start.Add(time.Duration(i) * interval)
		sleepUntil(due)
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sent := time.Now()
			ok := o.fetch(ctx, t)
			done := time.Now()
			o.mu.Lock()
			defer o.mu.Unlock()
			if !ok {
				o.errors[t.id]++
				return
			}
			o.latency[t.id] = append(o.latency[t.id], done.Sub(due))
			o.lag[t.id] = append(o.lag[t.id], sent.Sub(due))
			o.service[t.id] = append(o.service[t.id], done.Sub(sent))
		}()
	}
	wg.Wait()
}

func (o *openLoop) fetch(ctx context.Context, t target) bool {
	res, err := o.client.Do(newRequest(ctx, t))
	if err != nil {
		return false
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return err == nil && res.StatusCode == http.StatusOK
}

// sleepUntil sleeps until t: the timer for all but the last half
// millisecond, then a short spin, so that requests leave on time even when
// the runtime's timers wake late.
func sleepUntil(t time.Time) {
	if d := time.Until(t) - 500*time.Microsecond; d > 0 {
		time.Sleep(d)
	}
	for time.Now().Before(t) {
	}
}

// rateStats are the percentiles of one target's fixed-rate latencies.
type rateStats struct {
	n                       int
	errors                  int
	p50, p90, p95, p99, max time.Duration
	lagP99, lagMax          time.Duration
	serviceP99              time.Duration // p99 from the actual send, for a late generator
}

func (o *openLoop) stats(id string) rateStats {
	o.mu.Lock()
	defer o.mu.Unlock()
	lat, lag, svc := slices.Clone(o.latency[id]), slices.Clone(o.lag[id]), slices.Clone(o.service[id])
	slices.Sort(lat)
	slices.Sort(lag)
	slices.Sort(svc)
	return rateStats{n: len(lat), errors: o.errors[id],
		p50: pct(lat, 50), p90: pct(lat, 90), p95: pct(lat, 95), p99: pct(lat, 99), max: pct(lat, 100),
		lagP99: pct(lag, 99), lagMax: pct(lag, 100), serviceP99: pct(svc, 99)}
}

// pct is the nearest-rank percentile of sorted values.
func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// fixedRate runs every target at rate for dur each, in alternating slices of
// at most 10 s so that a noisy minute on the shared machine hits all of them.
func fixedRate(ctx context.Context, targets []target, rate float64, dur time.Duration) (*openLoop, error) {
	o := newOpenLoop()
	for _, t := range targets {
		if !o.fetch(ctx, t) { // open the keep-alive connection
			return nil, fmt.Errorf("fixed rate: %s (%s) does not answer 200", t.id, t.url)
		}
	}
	slice := min(dur, 10*time.Second)
	for left := dur; left > 0; left -= slice {
		for _, t := range targets {
			o.run(ctx, t, rate, min(slice, left))
		}
	}
	return o, ctx.Err()
}
