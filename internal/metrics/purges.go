package metrics

import "github.com/prometheus/client_golang/prometheus"

// PurgeCounts are the purge log's figures for this process (purge.Node).
type PurgeCounts struct {
	Published, PublishFailed uint64 // events appended, and appends that failed
	Applied                  uint64 // other processes' events applied here
	Gaps                     uint64 // times events were missed and the whole cache dropped
	ReadFailed               uint64 // reads of the log that failed
}

// RegisterPurges exposes the purge log's figures: whether this process
// tells the others what it purged, and keeps up with what they purged.
func (m *Metrics) RegisterPurges(stats func() PurgeCounts) {
	m.Registry.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "wikid_purge_log_published_total",
			Help: "Purges this process appended to the purge log for the other processes on the database."},
			func() float64 { return float64(stats().Published) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "wikid_purge_log_publish_failed_total",
			Help: "Purges this process could not append to the purge log: the other processes keep those pages until a later purge."},
			func() float64 { return float64(stats().PublishFailed) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "wikid_purge_log_applied_total",
			Help: "Other processes' purges applied to this process's caches."},
			func() float64 { return float64(stats().Applied) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "wikid_purge_log_gaps_total",
			Help: "Times this process found events missing from the purge log (it could not read it for an hour) and dropped its whole cache."},
			func() float64 { return float64(stats().Gaps) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "wikid_purge_log_read_failed_total",
			Help: "Reads of the purge log that failed (they are retried every 50 ms)."},
			func() float64 { return float64(stats().ReadFailed) }),
	)
}
