package metrics

import "github.com/prometheus/client_golang/prometheus"

// RenderCounts is the state of the engine's render gate.
type RenderCounts struct {
	Running, Waiting int
	Refused          int64 // refused with 503 since start
}

// RegisterRenders exposes the render gate's figures that stats reports:
// renders running and waiting for a slot, and those refused.
func (m *Metrics) RegisterRenders(stats func() RenderCounts) {
	m.Registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "wikid_renders_running",
			Help: "Renders, link parses and searches holding a slot of the render gate."},
			func() float64 { return float64(stats().Running) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "wikid_renders_waiting",
			Help: "Renders, link parses and searches waiting for a slot of the render gate."},
			func() float64 { return float64(stats().Waiting) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "wikid_renders_refused_total",
			Help: "Renders, link parses and searches refused with 503 because the render queue was full or the wait ran out."},
			func() float64 { return float64(stats().Refused) }),
	)
}
