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

// resumingServer is a session-era streamable HTTP server written by hand
// whose standalone stream ends at once after a priming event; only the
// resumed stream (Last-Event-ID) carries the elicitation that its one tool
// waits for, and the tool's answer is the client's. The elicitation goes
// out once the call has arrived, as a real server's would: sent before it,
// the client rightly refuses it, having no call to send it to.
type resumingServer struct {
	answered chan string   // the elicitation's answer, as the client sent it
	called   chan struct{} // closed when tools/call arrives
	callOnce sync.Once

	mu    sync.Mutex
	heads []string // Last-Event-ID of each standalone GET
}

func (p *resumingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodDelete:
		return
	case http.MethodGet:
		last := r.Header.Get("Last-Event-ID")
		p.mu.Lock()
		p.heads = append(p.heads, last)
		p.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if last != "g1" {
			io.WriteString(w, "id: g1\nretry: 20\ndata: \n\n") // then the stream ends
			return
		}
		w.(http.Flusher).Flush()
		select {
		case <-p.called:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "id: g2\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"e1\",\"method\":\"elicitation/create\",\"params\":{\"message\":\"resumed\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}}}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	}
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
	}
	json.Unmarshal(body, &msg)
	w.Header().Set("Mcp-Session-Id", "resume-session")
	if msg.Method == "" && string(msg.ID) == `"e1"` {
		p.answered <- string(msg.Result)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if msg.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch msg.Method {
	case "initialize":
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"resuming","version":"1"}}}`, msg.ID)
	case "tools/list":
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"ask","inputSchema":{"type":"object"}}]}}`, msg.ID)
	case "tools/call":
		p.callOnce.Do(func() { close(p.called) })
		var got string
		select {
		case got = <-p.answered:
		case <-time.After(30 * time.Second):
			got = "no answer"
		}
		text, _ := json.Marshal(got)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}]}}`, msg.ID, text)
	default:
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, msg.ID)
	}
}

// TestStandaloneStreamIsResumed: a standalone stream the server ends is
// opened again with Last-Event-ID after the server's retry delay, and what
// comes on the resumed stream reaches the caller.
func TestStandaloneStreamIsResumed(t *testing.T) {
	p := &resumingServer{answered: make(chan string, 1), called: make(chan struct{})}
	ts := httptest.NewServer(p)
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Connect(ctx, Spec{Name: "resuming", Type: "http", URL: ts.URL, ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	peer := answerPeer{capsPeer{caps: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}}}
	res, err := c.CallTool(WithPeer(ctx, peer, nil), "ask", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Content[0].(*mcp.TextContent).Text, `{"action":"accept","content":{"name":"from resumed"}}`; got != want {
		p.mu.Lock()
		defer p.mu.Unlock()
		t.Fatalf("call answered %q, want %q (standalone GETs with Last-Event-ID %q)", got, want, p.heads)
	}
}
