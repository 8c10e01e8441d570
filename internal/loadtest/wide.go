package loadtest

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// WideServer is a stdio MCP server with n tools, for measuring a large
// catalog (25 of them with 200 tools each make the 5,000): echo
// and n−1 tools named tool_001… with a short description and schema,
// which answer "ok".
func WideServer(n int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "plexus-load-wide", Version: "1"}, nil)
	type echoArgs struct {
		Text string `json:"text" jsonschema:"the text to send back"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
		})
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"path":  map[string]any{"type": "string", "description": "A path to act on."},
		"count": map[string]any{"type": "integer", "description": "How many times."},
	}}
	for i := 1; i < n; i++ {
		s.AddTool(&mcp.Tool{
			Name:        fmt.Sprintf("tool_%03d", i),
			Description: fmt.Sprintf("Tool number %d of a wide server: it does nothing, and says so.", i),
			InputSchema: schema,
		}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	}
	return s
}
