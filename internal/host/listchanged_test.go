package host

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/catalog"
)

// growingServerArg re-executes the test binary as an MCP server whose tool
// "grow" adds a tool "grown" — the SDK then sends
// notifications/tools/list_changed.
const growingServerArg = "-plexus-host-growing-server"

func runGrowingServer() {
	s := mcp.NewServer(&mcp.Implementation{Name: "growing", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "grow", Description: "Adds a tool."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(s, &mcp.Tool{Name: "grown", Description: "Added at run time."},
				func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "new"}}}, nil, nil
				})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "grown"}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// TestUpstreamListChanged: an upstream tools/list_changed refreshes that
// server's part of the catalog and tells sessions "capabilities changed"
// (R-SUP-3), without restarting it.
func TestUpstreamListChanged(t *testing.T) {
	th := newTestHost(t)
	exe, _ := os.Executable()
	th.create("grow", mustJSON(t, map[string]any{"type": "stdio", "command": exe, "args": []string{growingServerArg}}))
	pid := th.readyPID("grow")
	events, stop := th.Subscribe()
	defer stop()

	res, err := th.Call(t.Context(), catalog.ReadableName("grow", "grow"), json.RawMessage(`{}`))
	if err != nil || res.IsError {
		t.Fatalf("grow: %+v %v", res, err)
	}
	grown := catalog.ReadableName("grow", "grown")
	deadline := time.After(30 * time.Second)
	sawCatalog := false
	for !sawCatalog {
		select {
		case ev := <-events:
			sawCatalog = ev.Type == apitype.EventCatalog
		case <-deadline:
			t.Fatal("no catalog event after the upstream's list changed")
		}
	}
	entries, _, _ := th.Tools("grow")
	if !slices.ContainsFunc(entries, func(e catalog.Entry) bool { return e.Name == grown }) {
		t.Fatalf("the new tool is not in the catalog: %v", entries)
	}
	res, err = th.Call(t.Context(), grown, json.RawMessage(`{}`))
	if err != nil || res.IsError || resultText(res) != "new" {
		t.Fatalf("calling the new tool: %+v %v", res, err)
	}
	if th.readyPID("grow") != pid {
		t.Fatal("the server was restarted to refresh its catalog")
	}
}
