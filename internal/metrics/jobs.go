package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wikid/wikid/internal/wiki"
)

// jobMetrics are the job queue's instruments: run time and failures per
// kind, observed by the runner; depth and age, read from the store on scrape.
type jobMetrics struct {
	duration *prometheus.HistogramVec
	failures *prometheus.CounterVec
}

func newJobMetrics(reg *prometheus.Registry) jobMetrics {
	jm := jobMetrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "wikid_job_duration_seconds",
			Help:    "Time to run a job, by kind (failed runs included).",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"kind"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wikid_job_failures_total",
			Help: "Job runs that failed (and were retried or went dead), by kind.",
		}, []string{"kind"}),
	}
	reg.MustRegister(jm.duration, jm.failures)
	return jm
}

// ObserveJob records one job run (the runner's Observe hook).
func (m *Metrics) ObserveJob(kind string, d time.Duration, err error) {
	m.jobs.duration.WithLabelValues(kind).Observe(d.Seconds())
	if err != nil {
		m.jobs.failures.WithLabelValues(kind).Inc()
	}
}

// RegisterJobQueue exposes the queue's depth per state and the age of its
// oldest queued job, read through stats on every scrape (two indexed
// queries on the reader pool).
func (m *Metrics) RegisterJobQueue(stats func(context.Context) (wiki.JobStats, error)) {
	m.Registry.MustRegister(queueCollector{stats})
}

type queueCollector struct {
	stats func(context.Context) (wiki.JobStats, error)
}

var (
	descJobs      = prometheus.NewDesc("wikid_jobs", "Jobs in the queue, by state.", []string{"state"}, nil)
	descJobAge    = prometheus.NewDesc("wikid_jobs_oldest_queued_age_seconds", "Age of the oldest queued job (0 when none).", nil, nil)
	descJobScrape = prometheus.NewDesc("wikid_jobs_stats_error", "1 when reading the queue's stats failed on this scrape, else 0.", nil, nil)
)

func (c queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descJobs
	ch <- descJobAge
	ch <- descJobScrape
}

func (c queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := c.stats(ctx)
	failed := 0.0
	if err != nil {
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(descJobScrape, prometheus.GaugeValue, failed)
	if err != nil {
		return
	}
	for _, s := range wiki.JobStates {
		ch <- prometheus.MustNewConstMetric(descJobs, prometheus.GaugeValue, float64(st.Counts[s]), string(s))
	}
	age := 0.0
	if !st.OldestQueued.IsZero() {
		age = max(0, time.Since(st.OldestQueued).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(descJobAge, prometheus.GaugeValue, age)
}
