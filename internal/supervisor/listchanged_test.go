package supervisor

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// TestListChangeWhileConnecting: a tool list change that the server
// announces after it was listed, before the connection is installed, is
// not lost: the server is ready with the tools as they are after it.
// (A team's replica that runs a server offers its tools a moment after
// its name; another replica that lost that change stayed "ready" without
// them.)
func TestListChangeWhileConnecting(t *testing.T) {
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	// No list_changed of its own: the only announcement is the one below.
	srv := mcp.NewServer(&mcp.Implementation{Name: "late", Version: "1"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	srv.AddTool(&mcp.Tool{Name: "first", InputSchema: map[string]any{"type": "object"}}, noop)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	ts := httptest.NewServer(h)
	defer ts.Close()

	sc := config.Server{Type: config.TypeHTTP, URL: ts.URL}
	s := New(Params{Name: "late", Config: sc, Spec: upstream.Spec{Name: "late", Type: "http", URL: ts.URL},
		connect: func(ctx context.Context, spec upstream.Spec) (*upstream.Conn, error) {
			conn, err := upstream.Connect(ctx, spec)
			if err == nil {
				// Listed with "first" alone; the change comes before
				// Connect's caller has installed the connection.
				srv.AddTool(&mcp.Tool{Name: "second", InputSchema: map[string]any{"type": "object"}}, noop)
				spec.OnListChanged("tools")
			}
			return conn, err
		}})
	defer s.Stop()
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, e := range s.Entries() {
		if e.Kind == catalog.KindTool {
			tools = append(tools, e.Tool)
		}
	}
	slices.Sort(tools)
	if st := s.Status(); st.State != StateReady || !slices.Equal(tools, []string{"first", "second"}) {
		t.Fatalf("once started: state %s, tools %v, want ready with [first second]", st.State, tools)
	}
}
