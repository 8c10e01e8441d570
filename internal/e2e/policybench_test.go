package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// BenchmarkFaceCallPolicy is BenchmarkFaceCall's call (both eras) through
// an in-process daemon with no mcp.policy ("none": the gate is one nil
// check, within noise of BenchmarkFaceCall) and with a few rules and
// limits the call is matched against ("rules": four rules that do not
// match it and one that allows it, and two limits it is counted against;
// the difference is the cost of a policy, docs/performance.md):
//
//	go test -run '^$' -bench FaceCallPolicy -count 6 ./internal/e2e
func BenchmarkFaceCallPolicy(b *testing.B) {
	bin := testenv.Binary(b)
	const rules = `"policy": {"rules": [
		{"tool": "github_*", "action": "deny"},
		{"client": "claude-*", "tool": "fs_write_*", "action": "askEveryCall"},
		{"profile": "work", "destructive": true, "action": "askOncePerSession"},
		{"tool": "*_delete_*", "action": "deny"},
		{"tool": "example_*", "client": "bench", "action": "allow"}],
		"limits": [{"tool": "example_*", "calls": 1000000000, "windowMs": 1000}, {"client": "b*", "calls": 1000000000, "windowMs": 60000}]}, `
	for _, mode := range []string{"none", "rules"} {
		for _, era := range []string{"2026-07-28", "2025-11-25"} {
			b.Run(mode+"-"+era, func(b *testing.B) {
				home := filepath.Join(b.TempDir(), "home")
				if err := os.Mkdir(home, 0o700); err != nil {
					b.Fatal(err)
				}
				policy := ""
				if mode == "rules" {
					policy = rules
				}
				cfg := `{"mcp": {` + policy + `"face": {"allowExternalCall": true}, "servers": {"example": {"type": "stdio", "command": ` +
					jsonString(bin) + `, "args": ["example-server"]}}}}`
				if err := os.WriteFile(filepath.Join(home, "extensions.json"), []byte(cfg), 0o600); err != nil {
					b.Fatal(err)
				}
				base, token := inProcess(b, home, func(st *apitype.Status) bool {
					return len(st.Servers) == 1 && st.Servers[0].State == "ready"
				})
				c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
				cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp",
					HTTPClient: &http.Client{Transport: bearer{token: token}}, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: era})
				if err != nil {
					b.Fatal(err)
				}
				defer cs.Close()
				params := &mcp.CallToolParams{Name: echoName(b, cs), Arguments: json.RawMessage(`{"text":"ping"}`)}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					res, err := cs.CallTool(context.Background(), params)
					if err != nil || res.IsError {
						b.Fatal(res, err)
					}
				}
			})
		}
	}
}
