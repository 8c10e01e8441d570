package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// answerPeer is a client that accepts every elicitation with a fixed name.
type answerPeer struct{ capsPeer }

func (answerPeer) Ask(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	var p mcp.ElicitParams
	if method != "elicitation/create" || json.Unmarshal(params, &p) != nil {
		return nil, fmt.Errorf("answerPeer: asked %s", method)
	}
	return json.Marshal(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "from " + p.Message}})
}

// TestStandaloneStreamRequestReachesCaller: a session-era server over
// streamable HTTP that sends its elicitation on the standalone GET stream
// (a request not tied to the call's own POST stream) during a call; the
// request reaches the caller of that call, the only one in flight, and
// the call completes with the caller's answer.
func TestStandaloneStreamRequestReachesCaller(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "standalone", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// Not the call's context: the SDK sends it on the standalone stream.
		ectx, cancel := context.WithTimeout(context.WithoutCancel(context.Background()), 10*time.Second)
		defer cancel()
		res, err := req.Session.Elicit(ectx, &mcp.ElicitParams{Message: "standalone", RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action + " " + res.Content["name"].(string)}}}, nil
	})
	sessionsEnded(t, s)
	var gets = make(chan string, 8)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			// Told once the server answers the stream: the SDK's server takes
			// the stream for its requests as it writes the answer's headers
			// (before that, a request it sends there is undelivered).
			w = &headerSignal{ResponseWriter: w, signal: func() {
				select {
				case gets <- r.Header.Get("Mcp-Protocol-Version"):
				default:
				}
			}}
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	for _, v := range []string{"2025-11-25", "2025-06-18"} {
		t.Run(v, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := Connect(ctx, Spec{Name: "standalone", Type: "http", URL: ts.URL, ProtocolVersion: v})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			select {
			case got := <-gets:
				if got != v {
					t.Errorf("standalone stream opened with Mcp-Protocol-Version %q, want %q", got, v)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("no standalone GET stream was opened")
			}
			peer := answerPeer{capsPeer{caps: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}}}
			cctx, ccancel := context.WithTimeout(WithPeer(ctx, peer, nil), 5*time.Second)
			defer ccancel()
			res, err := c.CallTool(cctx, "ask", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "accept from standalone" {
				t.Fatalf("call answered %q", got)
			}
		})
	}
}

// headerSignal calls signal once the handler has written its answer's
// status.
type headerSignal struct {
	http.ResponseWriter
	signal func()
}

func (w *headerSignal) WriteHeader(code int) {
	w.ResponseWriter.WriteHeader(code)
	if w.signal != nil {
		w.signal()
		w.signal = nil
	}
}

func (w *headerSignal) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

func (w *headerSignal) Unwrap() http.ResponseWriter { return w.ResponseWriter }
