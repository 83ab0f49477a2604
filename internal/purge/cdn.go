package purge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wikid/wikid/internal/wiki"
)

// MaxKeysPerRequest bounds the surrogate keys in one purge request: 100
// keys of 16 hex digits and their separators make a 1.7 KB header, well
// under Varnish's 8 KB limit on a request header (http_req_hdr_len).
const MaxKeysPerRequest = 100

// PurgeKeysHeader carries the surrogate keys of a purge request,
// space-separated.
const PurgeKeysHeader = "X-Purge-Keys"

// CDN purges the caches in front of Wikid (Varnish, a CDN) by surrogate
// key: for every base URL B it sends "PURGE B/" with X-Purge-Keys naming
// the keys, at most MaxKeysPerRequest per request. A 2xx answer means the
// cache dropped every response carrying one of them. It runs in jobs: an
// error makes the job retry the whole purge, which is idempotent.
type CDN struct {
	targets []string // base + "/"
	client  *http.Client
	log     *slog.Logger

	requests *prometheus.CounterVec
	duration prometheus.Histogram
	keys     prometheus.Counter
}

// NewCDN builds the purger of the caches at bases (cdn_purge: base URLs as
// config.Validate accepts them). client nil means a client with short
// timeouts; its metrics are registered on reg unless reg is nil.
func NewCDN(bases []string, client *http.Client, reg prometheus.Registerer, log *slog.Logger) *CDN {
	if client == nil {
		client = defaultClient()
	}
	if log == nil {
		log = slog.Default()
	}
	c := &CDN{
		client: client,
		log:    log,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wikid_cdn_purge_requests_total",
			Help: "Purge requests sent to caches in front (cdn_purge), by result (ok: a 2xx answer).",
		}, []string{"result"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "wikid_cdn_purge_duration_seconds",
			Help:    "Time for a cache in front to answer a purge request (failures included).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
		keys: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "wikid_cdn_purged_keys_total",
			Help: "Surrogate keys purged at caches in front, counted once per cache that confirmed them.",
		}),
	}
	for _, b := range bases {
		c.targets = append(c.targets, strings.TrimRight(b, "/")+"/")
	}
	c.requests.WithLabelValues("ok")
	c.requests.WithLabelValues("error")
	if reg != nil {
		reg.MustRegister(c.requests, c.duration, c.keys)
	}
	return c
}

// defaultClient gives up on a cache that does not answer within seconds:
// the job retries later, and a worker is not held by a dead cache.
func defaultClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 3 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.ResponseHeaderTimeout = 5 * time.Second
	t.MaxIdleConnsPerHost = 4
	t.Proxy = nil // purges go straight to the configured caches
	return &http.Client{Transport: t, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// PurgeExternal purges what a change of titles makes stale: each title's
// responses and the listings (Tags). It implements engine.ExternalPurger.
func (c *CDN) PurgeExternal(ctx context.Context, titles ...wiki.Title) error {
	return c.PurgeTags(ctx, Tags(titles...)...)
}

// PurgeTags purges every response carrying one of tags at every cache, the
// caches concurrently. The error names each cache that failed.
func (c *CDN) PurgeTags(ctx context.Context, tags ...string) error {
	batches := keyBatches(tags, MaxKeysPerRequest)
	if len(batches) == 0 || len(c.targets) == 0 {
		return nil
	}
	errs := make([]error, len(c.targets))
	var wg sync.WaitGroup
	for i, target := range c.targets {
		wg.Go(func() {
			for _, b := range batches {
				if err := c.send(ctx, target, b); err != nil {
					errs[i] = err
					return // the job retries every batch: purges are idempotent
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// send asks the cache at target to purge keys (one request).
func (c *CDN) send(ctx context.Context, target string, keys []string) error {
	req, err := http.NewRequestWithContext(ctx, "PURGE", target, nil)
	if err != nil {
		return fmt.Errorf("purge: cdn %s: %w", target, err)
	}
	req.Header.Set(PurgeKeysHeader, strings.Join(keys, " "))
	req.Header.Set("User-Agent", "wikid")
	start := time.Now()
	res, err := c.client.Do(req)
	if err == nil {
		// Read a little of the body so that the connection can be reused.
		io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
		res.Body.Close()
		if res.StatusCode < 200 || res.StatusCode > 299 {
			err = fmt.Errorf("answered %s", res.Status)
		}
	}
	d := time.Since(start)
	c.duration.Observe(d.Seconds())
	if err != nil {
		c.requests.WithLabelValues("error").Inc()
		c.log.Warn("purge: cdn purge failed", "cache", target, "keys", len(keys), "dur", d, "err", err)
		return fmt.Errorf("purge: cdn PURGE %s (%d keys): %w", target, len(keys), err)
	}
	c.requests.WithLabelValues("ok").Inc()
	c.keys.Add(float64(len(keys)))
	c.log.Debug("purge: cdn purged", "cache", target, "keys", len(keys), "dur", d)
	return nil
}

// keyBatches turns tags into their surrogate keys, without duplicates, in
// batches of at most n.
func keyBatches(tags []string, n int) [][]string {
	seen := make(map[string]bool, len(tags))
	var batches [][]string
	var cur []string
	for _, t := range tags {
		k := SurrogateKey(t)
		if seen[k] {
			continue
		}
		seen[k] = true
		if len(cur) == n {
			batches = append(batches, cur)
			cur = nil
		}
		cur = append(cur, k)
	}
	if len(cur) > 0 {
		batches = append(batches, cur)
	}
	return batches
}
