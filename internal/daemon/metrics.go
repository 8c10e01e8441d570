package daemon

import (
	"fmt"
	"net/http"
	"time"
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
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	// pod: it is not the loopback address of the web page and the API.
	return append(tcp, &tcpServer{srv: srv, ln: ln, pod: true}), nil
}
