package testenv

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SlowServer serves a session-era go-sdk MCP server on 127.0.0.1 with a
// tool slow (sleeps ms, then answers "slept MS ms") and steps (three
// progress notifications ms apart, then "stepped") and cancelled (how
// many calls of slow were cancelled before they slept their time), for
// tests of what happens mid-call. It returns the server's URL.
func SlowServer(t testing.TB) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
	type in struct {
		MS int `json:"ms"`
	}
	var cancelled atomic.Int64
	mcp.AddTool(s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		select {
		case <-time.After(time.Duration(a.MS) * time.Millisecond):
		case <-ctx.Done():
			cancelled.Add(1)
			return nil, nil, ctx.Err()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("slept %d ms", a.MS)}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "cancelled"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(cancelled.Load())}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "steps"}, func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		for i := range 3 {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1), Total: 3})
			select {
			case <-time.After(time.Duration(a.MS) * time.Millisecond):
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "stepped"}}}, nil, nil
	})
	return ServeLoopback(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
}
