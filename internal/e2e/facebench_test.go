package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// BenchmarkFaceCall is one tools/call of the example server's echo, made
// directly over stdio and through a daemon running in this process, over
// its HTTP face in both protocol eras. With the daemon in-process,
// -cpuprofile and -memprofile show the daemon's call path:
//
//	go test -run '^$' -bench FaceCall -cpuprofile cpu.out ./internal/e2e
//
// The direct leg is the floor; on a shared machine compare ratios, not
// absolute numbers (docs/performance.md). The last leg is the session-era
// one with the audit log off, which is on in every other.
func BenchmarkFaceCall(b *testing.B) {
	bin := testenv.Binary(b)
	args := json.RawMessage(`{"text":"ping"}`)
	call := func(b *testing.B, cs *mcp.ClientSession, name string) {
		params := &mcp.CallToolParams{Name: name, Arguments: args}
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		cpu := cpuTime()
		for b.Loop() {
			res, err := cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
		// This process's CPU per call: the client and, for the HTTP
		// legs, the daemon (the server is a process of its own).
		b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	}

	b.Run("direct", func(b *testing.B) {
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), testenv.Transport(b, exec.Command(bin, "example-server")), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		call(b, cs, "echo")
	})

	url, token, _ := inProcessDaemon(b, bin, "", "")
	for _, era := range []string{"2026-07-28", "2025-11-25"} {
		b.Run("http-"+era, func(b *testing.B) {
			hc := &http.Client{Transport: bearer{token: token}}
			c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true},
				&mcp.ClientSessionOptions{ProtocolVersion: era})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			call(b, cs, echoName(b, cs))
		})
	}
	// The audit log is on by default (every leg above records each call):
	// the session-era leg again with it off shows its cost.
	b.Run("http-2025-11-25-audit-off", func(b *testing.B) {
		url, token, _ := inProcessDaemon(b, bin, `"audit": {"enabled": false}, `, "")
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token: token}}, DisableStandaloneSSE: true},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		call(b, cs, echoName(b, cs))
	})
}

// inProcessDaemon runs daemon.Run in this process on a fresh home with the
// example server (its definition given the JSON members server, if any:
// `, "idleStopMs": 20`, say) and the face's external calls on (and the
// members of mcp in extra, each followed by a comma), and returns the
// face's URL and token, and the home, once the server's tools are listed
// there.
func inProcessDaemon(b *testing.B, bin, extra, server string) (url, token, home string) {
	home = filepath.Join(b.TempDir(), "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		b.Fatal(err)
	}
	cfg := `{"mcp": {` + extra + `"face": {"allowExternalCall": true}, "servers": {"example": {"type": "stdio", "command": ` +
		jsonString(bin) + `, "args": ["example-server"]` + server + `}}}}`
	if err := os.WriteFile(filepath.Join(home, "extensions.json"), []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	base, token := inProcess(b, home, func(st *apitype.Status) bool {
		return len(st.Servers) == 1 && st.Servers[0].Tools > 0
	})
	return base + "/mcp", token, home
}

// echoName waits until the face lists the example server's echo and
// returns its Plexus name.
func echoName(b *testing.B, cs *mcp.ClientSession) string {
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range res.Tools {
			if t.Name == "example_echo" {
				return t.Name
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("no echo tool on the face after 30s: %d tools", len(res.Tools))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
