package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pollingServer is a session-era streamable HTTP server written by hand
// that does SSE polling: it answers a tools/call with an event stream that
// it closes on purpose after a priming event (an id and a retry delay),
// and serves the call's answer only when the client resumes that stream
// with a GET carrying Last-Event-ID.
type pollingServer struct {
	mu      sync.Mutex
	callID  json.RawMessage // of the tools/call whose answer waits
	resumed []string        // Last-Event-ID and Mcp-Protocol-Version of each resumption
}

func (p *pollingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodDelete {
		return
	}
	if r.Method == http.MethodGet {
		last := r.Header.Get("Last-Event-ID")
		if last == "" {
			w.WriteHeader(http.StatusMethodNotAllowed) // no standalone stream
			return
		}
		p.mu.Lock()
		p.resumed = append(p.resumed, last+" "+r.Header.Get("Mcp-Protocol-Version"))
		id := p.callID
		p.mu.Unlock()
		if last != "call-1" || r.Header.Get("Mcp-Protocol-Version") != "2025-11-25" || r.Header.Get("Mcp-Session-Id") != "poll-session" {
			http.Error(w, "bad resumption", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: call-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"resumed\"}]}}\n\n", id)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	json.Unmarshal(body, &msg)
	w.Header().Set("Mcp-Session-Id", "poll-session")
	if msg.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	answer := func(result string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
	}
	switch msg.Method {
	case "initialize":
		answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"polling","version":"1"}}`)
	case "tools/list":
		answer(`{"tools":[{"name":"poll","inputSchema":{"type":"object"}}]}`)
	case "tools/call":
		p.mu.Lock()
		p.callID = msg.ID
		p.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: call-1\nretry: 50\ndata: \n\n") // then the stream ends
	default:
		answer(`{}`)
	}
}

// TestSSEPollingIsResumed: a call whose stream the server closes on
// purpose is resumed with Last-Event-ID and gets its answer, on the
// decoded path and on the frame-forwarding one.
func TestSSEPollingIsResumed(t *testing.T) {
	p := &pollingServer{}
	ts := httptest.NewServer(p)
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Connect(ctx, Spec{Name: "polling", Type: "http", URL: ts.URL, ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "poll", nil)
	if err != nil {
		t.Fatalf("decoded call: %v (resumptions: %q)", err, p.resumed)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "resumed" {
		t.Fatalf("decoded call answered %q", got)
	}
	raw, err := c.CallRaw(ctx, map[string]json.RawMessage{"name": json.RawMessage(`"poll"`)})
	if err != nil {
		t.Fatalf("forwarded call: %v (resumptions: %q)", err, p.resumed)
	}
	if want := `{"content":[{"type":"text","text":"resumed"}]}`; string(raw) != want {
		t.Fatalf("forwarded call answered %s", raw)
	}
}
