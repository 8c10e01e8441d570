package loadtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// The ways the Plexus leg of Compare reaches the daemon.
const (
	ViaHTTP  = "http"  // the daemon's streamable HTTP face at /mcp
	ViaStdio = "stdio" // `plexus mcp`, which bridges stdio to that face
)

// CompareOptions is one side-by-side run.
type CompareOptions struct {
	Plexus string   // the plexus binary
	Server []string // argv of the stdio server under test
	// Servers is how many copies of Server the daemon runs (named s1…sN);
	// the calls go to s1. 0 means 1.
	Servers  int
	Via      string // ViaHTTP ("" too) or ViaStdio
	Protocol string // the era both legs ask for; "" is the SDK's latest
	Client   string // the client both legs use: ClientSDK ("" too) or ClientRaw
	// Workload is the one-caller latency phase (its Concurrency is
	// ignored: 1); Concurrency callers then run the throughput phase with
	// the same number of calls. 0 means 16.
	Workload    Workload
	Concurrency int
	// IdleSessions, if > 0, is how many session-era sessions are opened to
	// the idle daemon, before the calls, to measure the RSS they add.
	IdleSessions int
	// Progress, if not nil, gets a line as each phase ends.
	Progress io.Writer
}

// Leg is one side of a comparison: the one-caller and the many-caller phase.
type Leg struct {
	Latency    *Result `json:"latency"`
	Throughput *Result `json:"throughput"`
}

// DaemonStats is what the daemon itself cost.
type DaemonStats struct {
	PID            int     `json:"pid"`
	Servers        int     `json:"servers"`
	ReadyMs        float64 `json:"readyMs"`        // process start → API answers
	ServersReadyMs float64 `json:"serversReadyMs"` // process start → every server ready
	IdleRSS        int64   `json:"idleRssBytes"`   // servers ready, before any call
	CPUPerCallUs   float64 `json:"cpuPerCallUs"`   // over both phases of the Plexus leg
	// IdleSessions extra sessions added SessionsRSS bytes (after − before).
	IdleSessions int   `json:"idleSessions,omitempty"`
	SessionsRSS  int64 `json:"sessionsRssBytes,omitempty"`
}

// Ratios compare the Plexus leg with the direct one.
type Ratios struct {
	AddedP50Us      float64 `json:"addedP50Us"` // one caller, Plexus − direct
	AddedP99Us      float64 `json:"addedP99Us"`
	P50             float64 `json:"p50"` // Plexus ÷ direct
	P99             float64 `json:"p99"`
	Throughput      float64 `json:"throughput"` // calls/s with Concurrency callers, Plexus ÷ direct
	ThroughputP50   float64 `json:"throughputP50"`
	CPUPerCallUs    float64 `json:"cpuPerCallUs"`
	PlexusErrors    int     `json:"plexusErrors"`
	DirectErrors    int     `json:"directErrors"`
	PlexusMaxCallMs float64 `json:"plexusMaxCallMs"`
}

// Report is everything Compare measured; the load tool prints it as one
// JSON line.
type Report struct {
	Server      []string    `json:"server"`
	Via         string      `json:"via"`
	Protocol    string      `json:"protocol"`
	Client      string      `json:"client"`
	Tool        string      `json:"tool"`
	Calls       int         `json:"calls"`
	Concurrency int         `json:"concurrency"`
	Sessions    int         `json:"sessions"`
	Direct      Leg         `json:"direct"`
	Plexus      Leg         `json:"plexus"`
	Daemon      DaemonStats `json:"daemon"`
	Ratios      Ratios      `json:"ratios"`
}

// Compare runs the workload directly against o.Server over stdio and
// through a Plexus daemon it starts with that server, in alternation
// (direct, Plexus, direct, Plexus), so that both legs share the machine's
// noise.
func Compare(ctx context.Context, o CompareOptions) (*Report, error) {
	if len(o.Server) == 0 || o.Plexus == "" {
		return nil, errors.New("compare needs a stdio server and the plexus binary")
	}
	if o.Via == "" {
		o.Via = ViaHTTP
	}
	if o.Via != ViaHTTP && o.Via != ViaStdio {
		return nil, fmt.Errorf("via %q: want %s or %s", o.Via, ViaHTTP, ViaStdio)
	}
	o.Servers = max(o.Servers, 1)
	if o.Concurrency <= 0 {
		o.Concurrency = 16
	}
	servers := make([][]string, o.Servers)
	for i := range servers {
		servers[i] = o.Server
	}
	d, err := StartDaemon(ctx, o.Plexus, servers)
	if err != nil {
		return nil, err
	}
	defer d.Stop()
	rep := &Report{Server: o.Server, Via: o.Via, Protocol: o.Protocol, Client: cmp.Or(o.Client, ClientSDK), Tool: o.Workload.Tool, Calls: o.Workload.Calls,
		Concurrency: o.Concurrency, Sessions: max(o.Workload.Sessions, 1)}
	rep.Daemon = DaemonStats{PID: d.PID, Servers: o.Servers, ReadyMs: ms(d.Ready)}
	sr, err := d.WaitServers(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, d.Output())
	}
	rep.Daemon.ServersReadyMs = ms(sr)
	if err := d.WaitTool(ctx, o.Workload.Tool, firstServer); err != nil {
		return nil, err
	}
	idle, err := ReadProc(d.PID)
	if err != nil {
		return nil, err
	}
	rep.Daemon.IdleRSS = idle.RSS

	direct := Target{Stdio: o.Server, Protocol: o.Protocol, Client: o.Client}
	plexus := Target{URL: d.FaceURL(), Header: d.Auth(), Protocol: o.Protocol, Client: o.Client}
	if o.Via == ViaStdio {
		plexus = Target{Stdio: []string{o.Plexus, "mcp"}, Env: []string{"PLEXUS_HOME=" + d.Home}, Protocol: o.Protocol, Client: o.Client}
	}
	// Sessions first, on the idle daemon: after the load phases its heap
	// holds their garbage, which the collector returns at its own pace.
	if o.IdleSessions > 0 {
		added, err := sessionsRSS(ctx, plexus, d.PID, o.IdleSessions)
		if err != nil {
			return nil, err
		}
		rep.Daemon.IdleSessions, rep.Daemon.SessionsRSS = o.IdleSessions, added
	}
	// The direct leg is one connection to one server process, as the
	// daemon has one shared instance (R-PROTO-3); the Plexus leg may spread
	// its callers over several sessions to the face.
	oneCaller := o.Workload
	oneCaller.Concurrency, oneCaller.PID, oneCaller.Server = 1, 0, firstServer
	many := oneCaller
	many.Concurrency = o.Concurrency
	phases := []struct {
		name   string
		target Target
		w      Workload
		out    **Result
	}{
		{"direct, 1 caller", direct, single(oneCaller), &rep.Direct.Latency},
		{"plexus, 1 caller", plexus, withPID(oneCaller, d.PID), &rep.Plexus.Latency},
		{fmt.Sprintf("direct, %d callers", o.Concurrency), direct, single(many), &rep.Direct.Throughput},
		{fmt.Sprintf("plexus, %d callers", o.Concurrency), plexus, withPID(many, d.PID), &rep.Plexus.Throughput},
	}
	for _, p := range phases {
		r, err := Run(ctx, p.target, p.w)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		*p.out = r
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "%-20s %s\n", p.name, r.Line())
		}
	}
	rep.ratios()
	return rep, nil
}

// firstServer is the daemon's server that Compare calls (StartDaemon names
// them s1…sN).
const firstServer = "s1"

func single(w Workload) Workload           { w.Sessions = 1; return w }
func withPID(w Workload, pid int) Workload { w.PID = pid; return w }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

func (rep *Report) ratios() {
	dl, pl := rep.Direct.Latency, rep.Plexus.Latency
	dt, pt := rep.Direct.Throughput, rep.Plexus.Throughput
	r := &rep.Ratios
	r.AddedP50Us, r.AddedP99Us = pl.P50-dl.P50, pl.P99-dl.P99
	r.P50, r.P99 = ratio(pl.P50, dl.P50), ratio(pl.P99, dl.P99)
	r.Throughput, r.ThroughputP50 = ratio(pt.CallsPerSec, dt.CallsPerSec), ratio(pt.P50, dt.P50)
	r.PlexusErrors, r.DirectErrors = pl.Errors+pt.Errors, dl.Errors+dt.Errors
	r.PlexusMaxCallMs = max(pl.Max, pt.Max) / 1e3
	if pl.Proc != nil && pt.Proc != nil {
		calls := float64(pl.Calls + pt.Calls)
		rep.Daemon.CPUPerCallUs = (pl.Proc.CPUUs + pt.Proc.CPUUs) / max(calls, 1)
		r.CPUPerCallUs = rep.Daemon.CPUPerCallUs
	}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// sessionsRSS opens n sessions to t and returns the RSS they added to pid.
// They are session-era sessions whatever the run's era: a 2026-07-28
// client holds no session on the server.
func sessionsRSS(ctx context.Context, t Target, pid, n int) (int64, error) {
	t.Protocol, t.Client = Protocol2025, ClientSDK
	before, err := ReadProc(pid)
	if err != nil {
		return 0, err
	}
	hc := httpClient(t.Header, n)
	defer hc.CloseIdleConnections()
	sessions, _, err := openSessions(ctx, t, hc, n, 1)
	defer closeAll(sessions)
	if err != nil {
		return 0, fmt.Errorf("opening %d idle sessions: %w", n, err)
	}
	// Each session's first call gives it a host session (its composition).
	for _, cs := range sessions {
		if _, err := cs.tools(ctx); err != nil {
			return 0, fmt.Errorf("listing on an idle session: %w", err)
		}
	}
	after, err := ReadProc(pid)
	if err != nil {
		return 0, err
	}
	return after.RSS - before.RSS, nil
}

// Line is a one-line human summary of r.
func (r *Result) Line() string {
	s := fmt.Sprintf("handshake %s  list %s (%d tools)  p50 %s  p90 %s  p99 %s  max %s  %.0f calls/s  errors %d",
		fmtUs(r.HandshakeUs), fmtUs(r.ListUs), r.Tools, fmtUs(r.P50), fmtUs(r.P90), fmtUs(r.P99), fmtUs(r.Max), r.CallsPerSec, r.Errors)
	if r.Proc != nil {
		s += fmt.Sprintf("  cpu/call %s  rss %.1f MiB", fmtUs(r.Proc.CPUPerCallUs), float64(r.Proc.RSSAfter)/(1<<20))
	}
	return s
}

func fmtUs(v float64) string {
	if v >= 10000 {
		return fmt.Sprintf("%.1fms", v/1000)
	}
	return fmt.Sprintf("%.0fµs", v)
}
