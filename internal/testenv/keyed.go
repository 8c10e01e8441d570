package testenv

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// KeyedServer runs a Go SDK MCP server over streamable HTTP on 127.0.0.1
// with one tool, whoami, that answers only requests allowed passes (the
// others get 401), and returns its URL. It stops when the test ends.
func KeyedServer(t testing.TB, allowed func(*http.Request) bool) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "keyed", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "says who you are"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "authorized"}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	guard := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowed(r) {
			http.Error(w, "missing key", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	return ServeLoopback(t, guard)
}
