package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// BenchmarkCallEcho compares one tools/call of the example server's echo
// made directly over stdio with the same call through the daemon's API.
// Compare the two with benchstat; on a shared machine the ratio is what
// counts, not the absolute numbers.
func BenchmarkCallEcho(b *testing.B) {
	bin := testenv.Binary(b)
	args := json.RawMessage(`{"text":"ping"}`)

	b.Run("direct", func(b *testing.B) {
		ctx := context.Background()
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		// The same protocol version the daemon negotiates with this server.
		cs, err := c.Connect(ctx, testenv.Transport(b, exec.Command(bin, "example-server")), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		params := &mcp.CallToolParams{Name: "echo", Arguments: args}
		b.ResetTimer()
		for b.Loop() {
			if _, err := cs.CallTool(ctx, params); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("daemon", func(b *testing.B) {
		e := testenv.New(b)
		e.StartDaemon()
		e.MustRun("add", "example", "--", bin, "example-server")
		c := client.New(e.Home)
		ctx := context.Background()
		list, err := c.Tools(ctx, "example")
		if err != nil {
			b.Fatal(err)
		}
		var name string
		for _, t := range list.Tools {
			if t.Tool == "echo" {
				name = t.Name
			}
		}
		req := apitype.CallRequest{Name: name, Arguments: args}
		b.ResetTimer()
		for b.Loop() {
			if _, err := c.Call(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDaemonReady measures a daemon's start until its API answers,
// with no servers configured.
func BenchmarkDaemonReady(b *testing.B) {
	for b.Loop() {
		e := testenv.New(b)
		start := time.Now()
		e.StartDaemon()
		b.ReportMetric(float64(time.Since(start).Microseconds()), "µs/ready")
		e.StopDaemon()
	}
}
