package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// BenchmarkSandboxCost measures what the sandbox costs the example server:
// the start (add, which starts the server and lists its tools, until it
// answers) and one tools/call through the daemon's API, without and with
// the strict sandbox, and with a host:port list (the server's network
// namespace with the daemon's filtering proxy on its loopback). The ratio
// is what counts on a shared machine.
func BenchmarkSandboxCost(b *testing.B) {
	requireSandbox(b)
	for _, mode := range []struct {
		name  string
		flags []string
	}{{"plain", nil}, {"sandboxed", []string{"--sandbox"}}, {"sandboxed-hostlist", []string{"--sandbox", "--allow-net", "127.0.0.1:9"}}} {
		b.Run(mode.name, func(b *testing.B) {
			e := testenv.New(b)
			e.StartDaemon()
			c := client.New(e.Home)
			ctx := context.Background()
			args := json.RawMessage(`{"text":"ping"}`)
			var startTotal time.Duration
			starts := 0
			add := func() string {
				start := time.Now()
				e.MustRun(append(append([]string{"add", "example"}, mode.flags...), "--", e.Bin, "example-server")...)
				startTotal += time.Since(start)
				starts++
				list, err := c.Tools(ctx, "example")
				if err != nil {
					b.Fatal(err)
				}
				for _, t := range list.Tools {
					if t.Tool == "echo" {
						return t.Name
					}
				}
				b.Fatal("no echo tool")
				return ""
			}
			// Starts: a few, each a fresh server.
			var name string
			for range 3 {
				if name != "" {
					e.MustRun("rm", "example")
				}
				name = add()
			}
			req := apitype.CallRequest{Name: name, Arguments: args}
			b.ResetTimer()
			for b.Loop() {
				if _, err := c.Call(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(startTotal.Microseconds())/float64(starts), "µs/start")
		})
	}
}
