// Package metrics is Wikid's observability: Prometheus metrics labelled by
// route and cache status, and an access log written off the request path.
package metrics

import (
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wikid/wikid/internal/edge"
	"github.com/wikid/wikid/internal/httpx"
)

// Metrics holds the registry and the request instruments.
type Metrics struct {
	Registry *prometheus.Registry
	duration *prometheus.HistogramVec
	bytes    *prometheus.CounterVec
	access   *AccessLog
	jobs     jobMetrics

	// Pre-resolved series for the fast path, so a hit does no label lookup.
	hitDuration    prometheus.Observer
	spliceDuration prometheus.Observer
	hitBytes       prometheus.Counter
}

// New registers the standard collectors, the request metrics and the edge
// cache's gauges. access may be nil.
func New(cache *edge.Cache, access *AccessLog) *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := &Metrics{
		Registry: reg,
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "wikid_http_request_duration_seconds",
			Help:    "Time to answer a request, by route and edge cache status.",
			Buckets: []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route", "cache"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wikid_http_response_bytes_total",
			Help: "Response body bytes sent, by route.",
		}, []string{"route"}),
		access: access,
	}
	reg.MustRegister(m.duration, m.bytes)
	m.jobs = newJobMetrics(reg)
	m.hitDuration = m.duration.WithLabelValues("page", "hit")
	m.spliceDuration = m.duration.WithLabelValues("page", "splice")
	m.hitBytes = m.bytes.WithLabelValues("page")
	if cache != nil {
		reg.MustRegister(edgeCollector{cache})
	}
	return m
}

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}

// FastHit records a response that the front server answered from the
// edge cache without net/http. target is valid during the call only.
// remote is called only when the access log is on.
// personal marks a spliced logged-in view.
func (m *Metrics) FastHit(method, target string, remote func() string, personal bool, status, bytes int, d time.Duration) {
	cache := "hit"
	if personal {
		cache = "splice"
		m.spliceDuration.Observe(d.Seconds())
	} else {
		m.hitDuration.Observe(d.Seconds())
	}
	m.hitBytes.Add(float64(bytes))
	if m.access != nil {
		// target may alias the connection's buffer: the entry gets a copy.
		m.access.Log(Entry{Time: time.Now(), Method: method, Path: strings.Clone(redactSecrets(target)), Status: status, Bytes: bytes, Duration: d, Cache: cache, Remote: remote()})
	}
}

// Middleware measures every request through net/http.
func (m *Metrics) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		// The route label is the name of the route the handler layer matched
		// (a pattern, never a raw path, so label cardinality stays bounded).
		r = r.WithContext(httpx.NoteRoute(r.Context()))
		next.ServeHTTP(sw, r)
		d := time.Since(start)
		route := httpx.RouteOf(r.Context())
		cache := strings.ToLower(sw.Header().Get("X-Cache"))
		if cache == "" {
			cache = "none"
		}
		m.duration.WithLabelValues(route, cache).Observe(d.Seconds())
		m.bytes.WithLabelValues(route).Add(float64(sw.bytes))
		if m.access != nil {
			m.access.Log(Entry{Time: start, Method: r.Method, Path: redactSecrets(r.URL.RequestURI()), Status: sw.status, Bytes: sw.bytes,
				Duration: d, Cache: cache, Remote: r.RemoteAddr})
		}
	})
}

type statusWriter struct {
	http.ResponseWriter
	status      int
	bytes       int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader && code >= 200 {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// Unwrap lets the edge find its recorder and http.ResponseController the
// connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// edgeCollector exposes the edge cache's counters and sizes.
type edgeCollector struct{ c *edge.Cache }

var (
	descRequests  = prometheus.NewDesc("wikid_edge_requests_total", "Edge cache lookups by result.", []string{"result"}, nil)
	descStores    = prometheus.NewDesc("wikid_edge_stores_total", "Responses stored in the edge cache.", nil, nil)
	descEvictions = prometheus.NewDesc("wikid_edge_evictions_total", "Entries evicted to stay within the byte budget.", nil, nil)
	descPurged    = prometheus.NewDesc("wikid_edge_purged_total", "Entries removed by purges.", nil, nil)
	descRefreshed = prometheus.NewDesc("wikid_edge_refreshed_total", "Entries rendered again and replaced in place (a linked page was created or deleted).", nil, nil)
	descEntries   = prometheus.NewDesc("wikid_edge_entries", "Entries held by the edge cache.", nil, nil)
	descBytes     = prometheus.NewDesc("wikid_edge_bytes", "Bytes held by the edge cache (all variants).", nil, nil)
	descArena     = prometheus.NewDesc("wikid_edge_arena_bytes", "Bytes of large bodies the edge cache also keeps in a memory file for sendfile (on top of wikid_edge_bytes).", nil, nil)
	descHitRatio  = prometheus.NewDesc("wikid_edge_hit_ratio", "Hits / (hits + misses) since start.", nil, nil)
)

func (e edgeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRequests, descStores, descEvictions, descPurged, descRefreshed, descEntries, descBytes, descArena, descHitRatio} {
		ch <- d
	}
}

func (e edgeCollector) Collect(ch chan<- prometheus.Metric) {
	st := e.c.Stats()
	ch <- prometheus.MustNewConstMetric(descRequests, prometheus.CounterValue, float64(st.Hits), "hit")
	ch <- prometheus.MustNewConstMetric(descRequests, prometheus.CounterValue, float64(st.Misses), "miss")
	ch <- prometheus.MustNewConstMetric(descRequests, prometheus.CounterValue, float64(st.Coalesced), "coalesced")
	ch <- prometheus.MustNewConstMetric(descStores, prometheus.CounterValue, float64(st.Stores))
	ch <- prometheus.MustNewConstMetric(descEvictions, prometheus.CounterValue, float64(st.Evictions))
	ch <- prometheus.MustNewConstMetric(descPurged, prometheus.CounterValue, float64(st.Purged))
	ch <- prometheus.MustNewConstMetric(descRefreshed, prometheus.CounterValue, float64(st.Refreshed))
	ch <- prometheus.MustNewConstMetric(descEntries, prometheus.GaugeValue, float64(st.Entries))
	ch <- prometheus.MustNewConstMetric(descBytes, prometheus.GaugeValue, float64(st.Bytes))
	ch <- prometheus.MustNewConstMetric(descArena, prometheus.GaugeValue, float64(st.ArenaBytes))
	ratio := 0.0
	if t := st.Hits + st.Misses; t > 0 {
		ratio = float64(st.Hits) / float64(t)
	}
	ch <- prometheus.MustNewConstMetric(descHitRatio, prometheus.GaugeValue, ratio)
}

// Entry is one access-log line.
type Entry struct {
	Time     time.Time
	Method   string
	Path     string
	Status   int
	Bytes    int
	Duration time.Duration
	Cache    string
	Remote   string
}

// ConnCounts are the client-connection figures the front server keeps.
type ConnCounts struct {
	Open, Max                             int
	Refused, IdleEvicted, SlowHeadEvicted uint64
}

var (
	descConnsOpen    = prometheus.NewDesc("wikid_conns_open", "Client connections open now (fast path and net/http).", nil, nil)
	descConnsMax     = prometheus.NewDesc("wikid_conns_max", "The cap on open client connections (max_conns).", nil, nil)
	descConnsClosed  = prometheus.NewDesc("wikid_conns_evicted_total", "Connections closed to make room under the cap, by what they were doing.", []string{"state"}, nil)
	descConnsRefused = prometheus.NewDesc("wikid_conns_refused_total", "New connections closed at once: the cap was reached and every connection was being answered.", nil, nil)
)

type connCollector func() ConnCounts

func (c connCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descConnsOpen, descConnsMax, descConnsClosed, descConnsRefused} {
		ch <- d
	}
}

func (c connCollector) Collect(ch chan<- prometheus.Metric) {
	st := c()
	ch <- prometheus.MustNewConstMetric(descConnsOpen, prometheus.GaugeValue, float64(st.Open))
	ch <- prometheus.MustNewConstMetric(descConnsMax, prometheus.GaugeValue, float64(st.Max))
	ch <- prometheus.MustNewConstMetric(descConnsClosed, prometheus.CounterValue, float64(st.IdleEvicted), "idle")
	ch <- prometheus.MustNewConstMetric(descConnsClosed, prometheus.CounterValue, float64(st.SlowHeadEvicted), "slow_head")
	ch <- prometheus.MustNewConstMetric(descConnsRefused, prometheus.CounterValue, float64(st.Refused))
}

// RegisterConns exposes the connection figures that stats reports.
func (m *Metrics) RegisterConns(stats func() ConnCounts) {
	m.Registry.MustRegister(connCollector(stats))
}

// redactSecrets hides the value of every parameter of the query whose
// name ends in "token" (a password reset link's secret, a watchlist
// feed's wltoken) from the access log: whoever reads the log must not be
// able to use the link.
func redactSecrets(target string) string {
	path, query, ok := strings.Cut(target, "?")
	if !ok || !strings.Contains(query, "token") {
		return target
	}
	parts := strings.Split(query, "&")
	for i, p := range parts {
		name, _, hasValue := strings.Cut(p, "=")
		if hasValue && strings.HasSuffix(strings.ToLower(name), "token") {
			parts[i] = name + "=REDACTED"
		}
	}
	return path + "?" + strings.Join(parts, "&")
}
