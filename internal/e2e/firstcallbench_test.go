package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/lifeline"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// BenchmarkFirstCall is the first call to a stopped server against a
// direct start of it, in pairs: "direct" starts the example server, opens
// a session (initialize, tools/list) and calls echo, as an editor does;
// "on demand" calls echo through the HTTP face of a daemon (in this
// process, behind the lifeline shim) that runs the server on demand and
// stops it 20 ms after each use. Each leg begins with nothing of the
// previous one left running (the direct leg's session closed and its
// process gone, the on-demand server idle and its processes gone), as
// for an editor's first call minutes after the last. It reports the
// median of each leg and the median of the pairwise differences
// (ondemand-over-direct-ms): what a start on demand costs its caller; the
// target is 50 ms at most (docs/performance.md). The example server is a
// Go binary that starts in milliseconds, so that what Plexus adds is not
// lost in the server's own start:
//
//	go test -run '^$' -bench FirstCall -benchtime 20x -count 3 ./internal/e2e
func BenchmarkFirstCall(b *testing.B) {
	bin := testenv.Binary(b)
	args := json.RawMessage(`{"text":"ping"}`)
	call := func(b *testing.B, cs *mcp.ClientSession, name string) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			b.Fatal(res, err)
		}
	}
	direct := func(b *testing.B) time.Duration {
		began := time.Now()
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), testenv.Transport(b, exec.Command(bin, "example-server")), nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		call(b, cs, "echo")
		took := time.Since(began)
		cs.Close() // waits for the server's exit
		return took
	}

	url, token, home := inProcessDaemon(b, bin, "", `, "start": "onDemand", "idleStopMs": 20`)
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{token: token}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	name := echoName(b, cs)
	api := client.New(home)
	// idle waits until the server is idle and the processes of its last
	// start are gone (the daemon runs in this process: they were its
	// children).
	idle := func() {
		deadline := time.Now().Add(30 * time.Second)
		for {
			st, err := api.Status(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			if st.Servers[0].State == apitype.StateIdle && !runsAny(bin) {
				return
			}
			if time.Now().After(deadline) {
				b.Fatalf("the server is %s after 30s, not idle (or its processes not gone)", st.Servers[0].State)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	onDemand := func(b *testing.B) time.Duration {
		idle()
		began := time.Now()
		call(b, cs, name)
		return time.Since(began)
	}

	var directs, onDemands, over []float64
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ResetTimer()
	for b.Loop() {
		d, o := direct(b), onDemand(b)
		directs, onDemands, over = append(directs, ms(d)), append(onDemands, ms(o)), append(over, ms(o-d))
	}
	b.ReportMetric(median(directs), "direct-ms")
	b.ReportMetric(median(onDemands), "ondemand-ms")
	b.ReportMetric(median(over), "ondemand-over-direct-ms")
}

// runsAny reports whether a descendant of this process runs the program
// at path (read from /proc: false where there is none).
func runsAny(path string) bool {
	for _, pid := range lifeline.Descendants(os.Getpid()) {
		argv, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if bytes.HasPrefix(argv, []byte(path+"\x00")) {
			return true
		}
	}
	return false
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2]
}
