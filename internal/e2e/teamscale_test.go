package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/loadtest"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// The size of TestTeamScaling's run. The defaults are a check that it
// works; tools/team-scale.sh runs it at the size quoted in docs/team.md.
var (
	scaleCalls    = flag.Int("scale.calls", 300, "TestTeamScaling: measured calls per replica count")
	scaleCallers  = flag.Int("scale.c", 8, "TestTeamScaling: concurrent callers")
	scaleReplicas = flag.String("scale.replicas", "1,2,3", "TestTeamScaling: the replica counts to measure, in order")
	scaleIdle     = flag.Duration("scale.idle", 0, "TestTeamScaling: first measure a settled replica's CPU over this long idle (Linux)")
)

// echoUpstream is an MCP server over streamable HTTP with one tool, echo,
// on loopback: the upstream every replica connects to itself.
func echoUpstream(t *testing.T) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	return testenv.ServeLoopback(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
}

// scaleReplica starts a daemon whose home holds token (every replica
// takes the same, as the team's would take the same JWTs) and the
// upstream, and returns it with its HTTP address.
func scaleReplica(t *testing.T, token, upstream string) (*testenv.Env, string) {
	cfg := fmt.Sprintf(`{"mcp": {"servers": {"echo": {"type": "http", "url": %q}}, "face": {"allowExternalCall": true}}}`, upstream)
	e := envWithFiles(t, map[string]string{"token": token + "\n", "extensions.json": cfg})
	e.StartDaemon()
	within(t, 10*time.Second, "the echo server ready", func() bool { return servers(t, e)["echo"].State == "ready" })
	st, err := client.New(e.Home).Status(context.Background())
	if err != nil || st.HTTPAddr == "" {
		t.Fatalf("status: %v (no HTTP address)", err)
	}
	return e, st.HTTPAddr
}

type scaleRow struct {
	Replicas    int     `json:"replicas"`
	CallsPerSec float64 `json:"callsPerSec"`
	P50Us       float64 `json:"p50Us"`
	P99Us       float64 `json:"p99Us"`
	Ratio       float64 `json:"ratioToOne"`
	// The first replica's RSS before and after the run, and its CPU time
	// per call it served.
	RSSBefore    int64   `json:"rssBeforeBytes"`
	RSSAfter     int64   `json:"rssAfterBytes"`
	CPUPerCallUs float64 `json:"cpuPerCallUs"`
}

// TestTeamScaling: 1, 2 and 3 replicas behind HAProxy (round robin, as a
// Kubernetes Service would spread connections), each connected to the
// same HTTP upstream itself, driven by the load tool with MCP 2026-07-28
// requests (no protocol session, so any replica can take any request).
// Every call succeeds, every replica behind the balancer serves some, and
// the table of calls/s and p50 against one replica is printed.
func TestTeamScaling(t *testing.T) {
	if testenv.Race() {
		t.Skip("a measurement: the race detector's cost would be measured instead")
	}
	var counts []int
	for _, f := range strings.Split(*scaleReplicas, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			t.Fatalf("-scale.replicas %q: want counts such as 1,2,3", *scaleReplicas)
		}
		counts = append(counts, n)
	}
	upstream := echoUpstream(t)
	token := strings.Repeat("5ca1e", 8)
	var addrs []string
	var first *testenv.Env
	for range counts[len(counts)-1] {
		e, addr := scaleReplica(t, token, upstream)
		if first == nil {
			first = e
		}
		addrs = append(addrs, addr)
	}
	header := http.Header{"Authorization": {"Bearer " + token}}
	if *scaleIdle > 0 {
		idleCPU(t, first.DaemonPID(), *scaleIdle)
	}
	var rows []scaleRow
	for _, n := range counts {
		lb := testenv.StartHAProxy(t, addrs[:n]...).Addr
		before := make([]int, n)
		for i, a := range addrs[:n] {
			before[i] = callsMade(t, "http://"+a, token, "")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		r, err := loadtest.Run(ctx, loadtest.Target{URL: "http://" + lb + "/mcp", Header: header, Protocol: loadtest.Protocol2026, Client: loadtest.ClientRaw},
			loadtest.Workload{Server: "echo", Tool: "echo", Args: json.RawMessage(`{"text":"x"}`), Calls: *scaleCalls, Concurrency: *scaleCallers, Sessions: 1,
				CallTimeout: 30 * time.Second, PID: first.DaemonPID()})
		cancel()
		if err != nil {
			t.Fatalf("%d replicas: %v", n, err)
		}
		if r.Errors > 0 {
			t.Errorf("%d replicas: %d of %d calls failed, the first: %s", n, r.Errors, r.Calls, r.FirstError)
		}
		served := make([]int, n)
		for i, a := range addrs[:n] {
			if served[i] = callsMade(t, "http://"+a, token, "") - before[i]; served[i] == 0 {
				t.Errorf("%d replicas: replica %d served no call: the balancer did not spread them", n, i+1)
			}
		}
		row := scaleRow{Replicas: n, CallsPerSec: r.CallsPerSec, P50Us: r.P50, P99Us: r.P99}
		if r.Proc != nil && served[0] > 0 {
			row.RSSBefore, row.RSSAfter, row.CPUPerCallUs = r.Proc.RSSBefore, r.Proc.RSSAfter, r.Proc.CPUUs/float64(served[0])
		}
		row.Ratio = row.CallsPerSec / max(rows0(rows, row).CallsPerSec, 1e-9)
		rows = append(rows, row)
	}
	t.Logf("%d calls a count, %d callers, through HAProxy:", *scaleCalls, *scaleCallers)
	t.Logf("%-9s %10s %10s %10s %8s %28s", "replicas", "calls/s", "p50", "p99", "×one", "replica 1: rss, cpu/call served")
	for _, r := range rows {
		t.Logf("%-9d %10.0f %8.0fµs %8.0fµs %8.2f %8.1f→%.1f MiB %5.0fµs", r.Replicas, r.CallsPerSec, r.P50Us, r.P99Us, r.Ratio,
			float64(r.RSSBefore)/(1<<20), float64(r.RSSAfter)/(1<<20), r.CPUPerCallUs)
	}
	b, _ := json.Marshal(rows)
	t.Logf("%s", b)
}

// rows0 is the first row measured, or row itself when it is.
func rows0(rows []scaleRow, row scaleRow) scaleRow {
	if len(rows) == 0 {
		return row
	}
	return rows[0]
}

// idleCPU logs the CPU time a settled replica spends over d doing nothing,
// from /proc (Linux; elsewhere it says so).
func idleCPU(t *testing.T, pid int, d time.Duration) {
	ticks := func() int64 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return -1
		}
		// The fields after the command's closing parenthesis; utime and
		// stime are the 14th and 15th of the line.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		return u + s
	}
	start := ticks()
	if start < 0 {
		t.Logf("idle CPU: no /proc here")
		return
	}
	time.Sleep(d)
	// USER_HZ is 100 on Linux: a tick is 10 ms.
	t.Logf("idle CPU of a settled replica: %d ms over %s", (ticks()-start)*10, d)
}

// TestReplicaDiesBehindTheBalancer: with two replicas behind HAProxy, one
// killed, the calls after the balancer has taken it out all go to the
// other, and none fails (docs/team.md, "A replica dies"). Between the kill
// and that, a request can still go to it on a connection the balancer
// opened before (one clean-clone run met that): haproxy does not send a
// request again that may have reached a replica, and its client gets an
// error, as a call in flight on a dying replica does.
func TestReplicaDiesBehindTheBalancer(t *testing.T) {
	upstream := echoUpstream(t)
	token := strings.Repeat("dead1", 8)
	_, addrA := scaleReplica(t, token, upstream)
	b, addrB := scaleReplica(t, token, upstream)
	lb := testenv.StartHAProxy(t, addrA, addrB)
	target := loadtest.Target{URL: "http://" + lb.Addr + "/mcp", Header: http.Header{"Authorization": {"Bearer " + token}},
		Protocol: loadtest.Protocol2026, Client: loadtest.ClientRaw}
	run := func(what string) *loadtest.Result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		r, err := loadtest.Run(ctx, target, loadtest.Workload{Server: "echo", Tool: "echo", Args: json.RawMessage(`{"text":"x"}`),
			Calls: 200, Concurrency: 4, Sessions: 1, Warmup: -1, CallTimeout: 10 * time.Second})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return r
	}
	if r := run("both replicas"); r.Errors > 0 {
		t.Fatalf("both replicas: %d calls failed: %s", r.Errors, r.FirstError)
	}
	servedByA := callsMade(t, "http://"+addrA, token, "")
	b.KillDaemon()
	lb.WaitDown(t, addrB)
	if r := run("one replica killed"); r.Errors > 0 {
		t.Errorf("after a replica died: %d of %d calls failed, the first: %s", r.Errors, r.Calls, r.FirstError)
	}
	if got := callsMade(t, "http://"+addrA, token, "") - servedByA; got < 200 {
		t.Errorf("the live replica served %d of the 200 calls after the other died", got)
	}
}
