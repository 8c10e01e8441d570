package daemon

import (
	"fmt"
	"net/http"
)

// metricsListener adds to tcp, when opts.MetricsListen is set, a listener
// that serves GET /metrics alone, without a token: what a Prometheus
// scraper of a team's pods reads (the chart's annotations). The metrics
// name servers and count calls, sessions and states; they carry no secret
// and no member's data. Beyond loopback it is allowed in team mode only,
// as --listen is (network.go), and the chart's NetworkPolicy admits only
// the namespaces it is told to there. Everything else on it is 404.
func (p *parts) metricsListener(opts Options, tcp tcpServers) (tcpServers, error) {
	if opts.MetricsListen == "" {
		return tcp, nil
	}
	ln, _, err := listenHTTP(opts.MetricsListen, p.h.LiveConfig().Team != nil)
	if err != nil {
		return tcp, fmt.Errorf("--metrics-listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", p.mtr.Handler())
	// Under limits of its own (limits.go): with no credential, each of
	// its connections stays unproven, the oldest closed by a new one
	// beyond the bound, so that a flood of it holds nothing the other
	// listeners need.
	l := limitTCP(ln, "metrics "+ln.Addr().String(), p.log)
	// pod: it is not the loopback address of the web page and the API.
	return append(tcp, &tcpServer{srv: l.Server(mux, p.errorLog(), nil), ln: l, pod: true}), nil
}
