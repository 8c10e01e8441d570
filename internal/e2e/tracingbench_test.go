package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// BenchmarkFaceCallTracing is BenchmarkFaceCall's session-era call through
// an in-process daemon with tracing off (the default) and on, exporting to
// an OTLP/HTTP endpoint in this process that takes and drops the spans
// (decoding them is a collector's cost, not Plexus's); the client sends a
// traceparent in _meta either way. Off must be within noise of
// BenchmarkFaceCall; the difference on is the cost of the two spans and
// their export. cpu-ns/op is this process's CPU time (user and system:
// client, daemon and endpoint; the server is a process of its own) per
// call (docs/performance.md):
//
//	go test -run '^$' -bench FaceCallTracing -count 6 ./internal/e2e
func BenchmarkFaceCallTracing(b *testing.B) {
	bin := testenv.Binary(b)
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer sink.Close()
	b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.URL)
	for _, mode := range []string{"off", "on"} {
		b.Run(mode, func(b *testing.B) {
			home := filepath.Join(b.TempDir(), "home")
			if err := os.Mkdir(home, 0o700); err != nil {
				b.Fatal(err)
			}
			tracing := ""
			if mode == "on" {
				tracing = `"tracing": {"enabled": true}, `
			}
			cfg := `{"mcp": {` + tracing + `"face": {"allowExternalCall": true}, "servers": {"example": {"type": "stdio", "command": ` +
				jsonString(bin) + `, "args": ["example-server"]}}}}`
			if err := os.WriteFile(filepath.Join(home, "extensions.json"), []byte(cfg), 0o600); err != nil {
				b.Fatal(err)
			}
			base, token := inProcess(b, home, func(st *apitype.Status) bool {
				return len(st.Servers) == 1 && st.Servers[0].State == "ready"
			})
			c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp",
				HTTPClient: &http.Client{Transport: bearer{token: token}}, DisableStandaloneSSE: true}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			params := &mcp.CallToolParams{Name: echoName(b, cs), Arguments: json.RawMessage(`{"text":"ping"}`),
				Meta: mcp.Meta{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuTime()
			for b.Loop() {
				res, err := cs.CallTool(context.Background(), params)
				if err != nil || res.IsError {
					b.Fatal(res, err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is this process's CPU time so far (user and system), in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
