package testenv

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/sse"
)

// MalformedStreamServer serves a go-sdk MCP 2026-07-28 server (stateless)
// on 127.0.0.1 whose tool bad answers every call with an event stream
// that carries no JSON-RPC message and then ends; everything else is the
// SDK's. It returns the server's URL.
func MalformedStreamServer(t testing.TB) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "malformed", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "bad", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	url := ServeLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"tools/call"`)) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write(sse.AppendEvent(nil, sse.Event{Type: "message", ID: "1", Data: `{"jsonrpc":"2.0","id":`}))
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	return url
}
