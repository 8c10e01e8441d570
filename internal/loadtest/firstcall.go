package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
)

// The first call to a stopped server, against a direct start: what a
// server started on demand costs its first caller over an editor starting
// the server itself. One server of the fleet (server-memory) is measured
// both ways, alternately, n times each, so that the machine's load weighs
// on both alike: directly (the process's start, initialize, tools/list,
// the call), and through a `plexus mcp` bridge connected once to a daemon
// that runs the server on demand with a short idle stop — each call there
// is made once the server is back to "idle", and is timed from the call
// to its answer. The numbers are the medians and the median of the
// pairwise differences, which is the cost of starting on demand.

// firstCallIdleStop is the daemon's idle stop in this measurement: short,
// so that the server is stopped again between the samples.
const firstCallIdleStop = 300 * time.Millisecond

// FirstCallReport is FirstCall's result.
type FirstCallReport struct {
	Server  string          `json:"server"`
	Samples int             `json:"samples"`
	Direct  []time.Duration `json:"directNs"`
	Demand  []time.Duration `json:"onDemandNs"`
	// Restarted: the first call after the daemon started again.
	Restarted []time.Duration `json:"afterRestartNs"`
	// The medians, and the median of the pairwise differences (on demand
	// minus direct).
	DirectMedian    time.Duration `json:"directMedianNs"`
	DemandMedian    time.Duration `json:"onDemandMedianNs"`
	RestartedMedian time.Duration `json:"afterRestartMedianNs"`
	Over            time.Duration `json:"overDirectMedianNs"`
}

// FirstCall installs the fleet (as Fleet does) and measures server-memory's
// first call n times each way.
func FirstCall(ctx context.Context, bin string, n int, progress io.Writer) (*FirstCallReport, error) {
	if n <= 0 {
		n = 9
	}
	if progress == nil {
		progress = io.Discard
	}
	binDir, err := fleetInstall(progress)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "plexus-load-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var srv FleetServer
	for _, s := range FleetServers(dir) {
		if s.Name == fleetCallServer {
			srv = s
		}
	}
	home := filepath.Join(dir, "home")
	if err := writeFleetConfig(home, binDir, []FleetServer{srv}, true, firstCallIdleStop); err != nil {
		return nil, err
	}
	d, err := startDaemonIn(ctx, bin, dir, home)
	if err != nil {
		return nil, err
	}
	d.keepDir = true // removed above, with the memory file
	defer func() { d.Stop() }()
	if _, err := d.WaitServers(ctx); err != nil { // the first start lists it
		return nil, err
	}
	bridge, err := openBridge(ctx, bin, home)
	if err != nil {
		return nil, err
	}
	defer func() { bridge.Close() }()
	api := client.New(home)
	rep := &FirstCallReport{Server: srv.Name, Samples: n}
	tool := srv.Name + "_" + fleetCallTool
	for i := range n {
		fmt.Fprintf(progress, "first call %d/%d…\n", i+1, n)
		start := time.Now()
		cs, c, err := connectDirect(ctx, binDir, srv)
		if err != nil {
			return nil, err
		}
		_, err = callFirst(ctx, cs, fleetCallTool)
		took := time.Since(start)
		cs.Close()
		c.Wait()
		if err != nil {
			return nil, err
		}
		rep.Direct = append(rep.Direct, took)
		if err := waitState(ctx, api, srv.Name, apitype.StateIdle); err != nil {
			return nil, err
		}
		if took, err = callFirst(ctx, bridge, tool); err != nil {
			return nil, err
		}
		rep.Demand = append(rep.Demand, took)
		// A daemon started again on the same home lists the server from
		// its cached catalog: its first call is the first start since.
		bridge.Close()
		d.Stop()
		if d, err = startDaemonIn(ctx, bin, dir, home); err != nil {
			return nil, err
		}
		d.keepDir = true
		if bridge, err = openBridge(ctx, bin, home); err != nil {
			return nil, err
		}
		if err := waitState(ctx, api, srv.Name, apitype.StateIdle); err != nil {
			return nil, err
		}
		if took, err = callFirst(ctx, bridge, tool); err != nil {
			return nil, err
		}
		rep.Restarted = append(rep.Restarted, took)
	}
	over := make([]time.Duration, n)
	for i := range n {
		over[i] = rep.Demand[i] - rep.Direct[i]
	}
	rep.DirectMedian, rep.DemandMedian, rep.Over = medianTime(rep.Direct), medianTime(rep.Demand), medianTime(over)
	rep.RestartedMedian = medianTime(rep.Restarted)
	return rep, nil
}

// medianTime is the median of ds, left as they are.
func medianTime(ds []time.Duration) time.Duration {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	return time.Duration(median(xs))
}

// waitState waits until the daemon shows server in state.
func waitState(ctx context.Context, api *client.Client, server, state string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := api.Status(ctx)
		if err != nil {
			return err
		}
		for _, s := range st.Servers {
			if s.Name == server && s.State == state {
				return nil
			}
		}
		if time.Now().After(deadline) {
			b, _ := json.Marshal(st.Servers)
			return fmt.Errorf("%s not %s after 30s: %s", server, state, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// printFirstCall writes the report.
func printFirstCall(w io.Writer, r *FirstCallReport) {
	fmt.Fprintf(w, "first call to %s, %d samples each way (medians):\n", r.Server, r.Samples)
	fmt.Fprintf(w, "  direct start + call      %8s\n", r.DirectMedian.Round(time.Millisecond))
	fmt.Fprintf(w, "  Plexus, stopped on demand %7s\n", r.DemandMedian.Round(time.Millisecond))
	fmt.Fprintf(w, "  after a daemon restart  %8s\n", r.RestartedMedian.Round(time.Millisecond))
	fmt.Fprintf(w, "  on demand over direct    %8s (median of the pairwise differences)\n", r.Over.Round(time.Millisecond))
}

// openBridge starts `plexus mcp` on home, as an editor does, and opens its
// session.
func openBridge(ctx context.Context, bin, home string) (*mcp.ClientSession, error) {
	cmd := exec.Command(bin, "mcp")
	cmd.Env = append(os.Environ(), "PLEXUS_HOME="+home)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "editor", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("plexus mcp: %w", err)
	}
	return cs, nil
}
