package loadtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// StartupReport is what Startup measured. Times are in milliseconds.
type StartupReport struct {
	Server []string `json:"server"`
	// ColdReadyMs: a daemon with no servers, process start → API answers.
	ColdReadyMs float64 `json:"coldReadyMs"`
	ColdRSS     int64   `json:"coldRssBytes"`
	Servers     int     `json:"servers"`
	// With Servers servers: process start → API, → every server ready.
	ReadyMs        float64 `json:"readyMs"`
	ServersReadyMs float64 `json:"serversReadyMs"`
	IdleRSS        int64   `json:"idleRssBytes"`
	// The same servers started directly, all at once: process start →
	// handshake done, for the slowest and the median one.
	DirectSlowestMs float64 `json:"directSlowestMs"`
	DirectMedianMs  float64 `json:"directMedianMs"`
	// OverSlowestMs is ServersReadyMs − DirectSlowestMs: what the daemon
	// adds to its slowest server.
	OverSlowestMs float64 `json:"overSlowestMs"`
}

// Startup measures a cold daemon without servers, then one with n copies
// of server, and the same n servers started directly in parallel.
func Startup(ctx context.Context, plexus string, server []string, n int) (*StartupReport, error) {
	if len(server) == 0 || plexus == "" {
		return nil, errors.New("startup needs a stdio server and the plexus binary")
	}
	n = max(n, 1)
	rep := &StartupReport{Server: server, Servers: n}
	cold, err := StartDaemon(ctx, plexus, nil)
	if err != nil {
		return nil, err
	}
	rep.ColdReadyMs = ms(cold.Ready)
	p, err := ReadProc(cold.PID)
	cold.Stop()
	if err != nil {
		return nil, err
	}
	rep.ColdRSS = p.RSS

	direct, err := parallelHandshakes(ctx, Target{Stdio: server}, n)
	if err != nil {
		return nil, err
	}
	rep.DirectSlowestMs, rep.DirectMedianMs = direct[len(direct)-1], median(direct)

	servers := make([][]string, n)
	for i := range servers {
		servers[i] = server
	}
	d, err := StartDaemon(ctx, plexus, servers)
	if err != nil {
		return nil, err
	}
	defer d.Stop()
	rep.ReadyMs = ms(d.Ready)
	sr, err := d.WaitServers(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, d.Output())
	}
	rep.ServersReadyMs = ms(sr)
	rep.OverSlowestMs = rep.ServersReadyMs - rep.DirectSlowestMs
	if p, err = ReadProc(d.PID); err != nil {
		return nil, err
	}
	rep.IdleRSS = p.RSS
	return rep, nil
}

// parallelHandshakes starts n sessions to t at once and returns each one's
// time from process start to handshake done, in ms, sorted.
func parallelHandshakes(ctx context.Context, t Target, n int) ([]float64, error) {
	times := make([]float64, n)
	sessions := make([]session, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var d time.Duration
			sessions[i], d, errs[i] = t.open(ctx, nil, 1)
			times[i] = ms(d)
		})
	}
	wg.Wait()
	var open []session
	for _, cs := range sessions {
		if cs != nil {
			open = append(open, cs)
		}
	}
	closeAll(open)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	median(times) // sorts
	return times, nil
}
