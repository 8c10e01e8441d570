// Package metrics exposes the daemon's Prometheus metrics (R-OBS-2): calls,
// errors, unknown outcomes and latency per server, server states, restarts
// and catalog size. Label values are server names and fixed words only,
// never anything a secret could be in — and, in team mode, the user a
// token named (its user claim, never the token).
package metrics

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// StateInstalling is the state label of a server whose start waits for
// npm to install its package (apitype.ServerStatus.Installing): it counts
// there, not as starting or waking.
const StateInstalling = "installing"

// States are the server states a gauge is exported for.
var States = []string{
	apitype.StateDisabled, apitype.StateStarting, apitype.StateReady,
	apitype.StateFailed, apitype.StateBackoff, apitype.StateStopped, apitype.StateNeedsLogin,
	apitype.StateIdle, apitype.StateWaking, StateInstalling,
}

// Source is what the metrics read at scrape time: the servers' status.
type Source interface {
	Servers() (int64, []apitype.ServerStatus)
}

// Metrics holds the registry and the call instruments.
type Metrics struct {
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	face     *prometheus.CounterVec
	users    *prometheus.CounterVec

	// The series a call and a face request count in, by their labels:
	// a call finds its own without hashing and checking its label values
	// again (no series is ever deleted, so none goes stale).
	callSeries sync.Map // callLabels → callSeries
	faceSeries sync.Map // [2]string{path, reason} → prometheus.Counter
}

type callLabels struct{ server, path, outcome string }

type callSeries struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// New returns the metrics of a daemon whose servers src reports.
func New(src Source) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plexus_calls_total",
			Help: "Tool calls through Plexus, by server, path (decoded: through the SDK's client; frame: the client's frame forwarded) and outcome (ok, tool_error, timeout, unavailable, transport_lost, needs_login, upstream, invalid_arguments, held, result_too_large).",
		}, []string{"server", "path", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "plexus_call_duration_seconds",
			Help:    "Latency of tool calls through Plexus, by server.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"server"}),
	}
	m.face = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "plexus_face_requests_total",
		Help: "Requests to Plexus's MCP face, by the path each took (pages, frame, answer, refused, sdk) and the reason it took it.",
	}, []string{"path", "reason"})
	// No series until a call carries a user: the one-machine daemon's
	// metrics are as they were.
	m.users = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "plexus_user_calls_total",
		Help: "Tool calls of team members, by the user their token named (team.userClaim), server and outcome.",
	}, []string{"user", "server", "outcome"})
	m.reg.MustRegister(m.calls, m.duration, m.face, m.users, &serverCollector{src: src},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ObserveCall records one call: its outcome ("ok", "tool_error", or the
// plexus/error marker of a failed call) and how long it took.
func (m *Metrics) ObserveCall(server, path, outcome string, d time.Duration) {
	k := callLabels{server, path, outcome}
	v, ok := m.callSeries.Load(k)
	if !ok {
		v, _ = m.callSeries.LoadOrStore(k, callSeries{m.calls.WithLabelValues(server, path, outcome), m.duration.WithLabelValues(server)})
	}
	s := v.(callSeries)
	s.count.Inc()
	s.duration.Observe(d.Seconds())
}

// ObserveUserCall records one call of a team member.
func (m *Metrics) ObserveUserCall(user, server, outcome string) {
	m.users.WithLabelValues(user, server, outcome).Inc()
}

// ObserveFace records the path one request to the face took, and why.
func (m *Metrics) ObserveFace(path, reason string) {
	k := [2]string{path, reason}
	c, ok := m.faceSeries.Load(k)
	if !ok {
		c, _ = m.faceSeries.LoadOrStore(k, m.face.WithLabelValues(path, reason))
	}
	c.(prometheus.Counter).Inc()
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

var (
	stateDesc    = prometheus.NewDesc("plexus_server_state", "1 for the state each server is in, 0 for the others.", []string{"server", "state"}, nil)
	restartsDesc = prometheus.NewDesc("plexus_server_restarts", "Automatic restarts of each server since it was configured.", []string{"server"}, nil)
	crashDesc    = prometheus.NewDesc("plexus_server_crash_looping", "1 while a server is parked after too many failed restarts.", []string{"server"}, nil)
	toolsDesc    = prometheus.NewDesc("plexus_server_tools", "Tools each server contributes to the catalog.", []string{"server"}, nil)
	catalogDesc  = prometheus.NewDesc("plexus_catalog_tools", "Tools in the whole catalog.", nil, nil)
)

// serverCollector reads the servers' state at scrape time, so that the
// gauges are never stale.
type serverCollector struct{ src Source }

func (c *serverCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{stateDesc, restartsDesc, crashDesc, toolsDesc, catalogDesc} {
		ch <- d
	}
}

func (c *serverCollector) Collect(ch chan<- prometheus.Metric) {
	_, servers := c.src.Servers()
	total := 0
	for _, s := range servers {
		state := s.State
		if s.Installing && (state == apitype.StateStarting || state == apitype.StateWaking) {
			state = StateInstalling
		}
		for _, st := range States {
			v := 0.0
			if state == st {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(stateDesc, prometheus.GaugeValue, v, s.Name, st)
		}
		crash := 0.0
		if s.CrashLooping {
			crash = 1
		}
		ch <- prometheus.MustNewConstMetric(restartsDesc, prometheus.CounterValue, float64(s.Restarts), s.Name)
		ch <- prometheus.MustNewConstMetric(crashDesc, prometheus.GaugeValue, crash, s.Name)
		ch <- prometheus.MustNewConstMetric(toolsDesc, prometheus.GaugeValue, float64(s.Tools), s.Name)
		total += s.Tools
	}
	ch <- prometheus.MustNewConstMetric(catalogDesc, prometheus.GaugeValue, float64(total))
}
