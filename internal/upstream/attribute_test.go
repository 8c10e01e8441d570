//lint:file-ignore SA1019 Plexus relays what MCP 2026-07-28 deprecates (sampling, roots, logging) for the session-era clients and servers that still use it, through the deprecation window.

package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// namedPeer is a client that answers an elicitation with its own name and
// keeps the log messages it gets.
type namedPeer struct {
	capsPeer
	name string
	mu   sync.Mutex
	logs []string
}

func (p *namedPeer) Ask(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
	if method != "elicitation/create" {
		return nil, fmt.Errorf("asked %s", method)
	}
	return json.Marshal(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": p.name}})
}

func (p *namedPeer) Log(_ context.Context, m *mcp.LoggingMessageParams) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.logs = append(p.logs, fmt.Sprint(m.Data))
}

// TestStreamAttributesRequests: a session-era server over streamable HTTP
// asks the client and logs in the middle of calls of two clients at once,
// each on its call's own stream: each question and log message reaches
// the client whose call it came with. Without the stream known, the
// question was refused ("calls from 2 clients are in flight") and the log
// message went nowhere.
func TestStreamAttributesRequests(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	both := make(chan struct{})
	var arrived sync.WaitGroup
	arrived.Add(2)
	go func() { arrived.Wait(); close(both) }()
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct {
			Tag string `json:"tag"`
		}
		json.Unmarshal(req.Params.Arguments, &a)
		arrived.Done()
		<-both // both calls in flight before either asks
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "log of " + a.Tag})
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: a.Tag, RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Tag + " answered by " + res.Content["name"].(string)}}}, nil
	})
	sessionsEnded(t, s)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Connect(ctx, Spec{Name: "asker", Type: "http", URL: ts.URL, ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The server sends logs once asked for a level.
	c.WantLogs(ctx, "debug")
	caps := capsPeer{caps: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}}
	peers := []*namedPeer{{capsPeer: caps, name: "alice"}, {capsPeer: caps, name: "bob"}}
	var wg sync.WaitGroup
	got := make([]string, 2)
	for i, p := range peers {
		wg.Go(func() {
			res, err := c.CallTool(WithPeer(ctx, p, nil), "ask", json.RawMessage(`{"tag":"`+p.name+`'s call"}`))
			if err != nil {
				got[i] = err.Error()
				return
			}
			got[i] = resultText(t, res)
		})
	}
	wg.Wait()
	for i, p := range peers {
		if want := p.name + "'s call answered by " + p.name; got[i] != want {
			t.Errorf("%s: %q, want %q", p.name, got[i], want)
		}
		p.mu.Lock()
		if len(p.logs) != 1 || p.logs[0] != "log of "+p.name+"'s call" {
			t.Errorf("%s got the logs %q", p.name, p.logs)
		}
		p.mu.Unlock()
	}
}
