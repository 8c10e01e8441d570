package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// TestIdle2026UpstreamStaysReady: a stateless MCP 2026-07-28 server over
// streamable HTTP (no session, every request must carry its _meta, ping
// removed) stays ready and callable through more than ten keep-alive
// intervals: its keep-alive is what that era defines, and a refused
// health check is not a lost connection.
func TestIdle2026UpstreamStaysReady(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "stateless", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo " + string(req.Params.Arguments)}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	var posts atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
			if !refuseSessionless(w, r) {
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()

	// Each check may take half the interval before it counts as missed.
	sc := config.Server{Type: config.TypeHTTP, URL: ts.URL, KeepAliveMs: 250}
	p := PolicyFor(sc)
	if p.KeepAlive != 250*time.Millisecond {
		t.Fatalf("keepAliveMs 250 gave a keep-alive of %v", p.KeepAlive)
	}
	p.Initial = 20 * time.Millisecond
	s := New(Params{Name: "idle", Config: sc, Spec: upstream.Spec{Name: "idle", Type: "http", URL: ts.URL}, Policy: p})
	defer s.Stop()
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	conn, err := s.Conn()
	if err != nil {
		t.Fatal(err)
	}
	if v := conn.ProtocolVersion(); v != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", v)
	}
	// More than ten intervals, each with its health check (on a loaded
	// machine a tick may come late, so count the checks, not the time).
	// The checks come one after another: when the twelfth has arrived, the
	// eleventh's answer has been taken, so the status then says what eleven
	// answered checks made of the server.
	before, start := posts.Load(), time.Now()
	for posts.Load()-before < 12 {
		if time.Since(start) > 20*time.Second {
			t.Fatalf("only %d health checks in %v", posts.Load()-before, time.Since(start))
		}
		if st := s.Status(); st.State != StateReady || st.Restarts != 0 {
			t.Fatalf("after %d health checks: state %s, %d restarts, last error %q", posts.Load()-before, st.State, st.Restarts, st.LastError)
		}
		time.Sleep(p.KeepAlive / 4)
	}
	if st := s.Status(); st.State != StateReady || st.Restarts != 0 {
		t.Fatalf("after 11 answered health checks: state %s, %d restarts, last error %q", st.State, st.Restarts, st.LastError)
	}
	conn2, err := s.Conn()
	if err != nil {
		t.Fatal(err)
	}
	if conn2 != conn {
		t.Fatal("the connection was replaced")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// The check is one the era defines, answered, not one refused.
	if err := conn.Ping(ctx); err != nil {
		t.Fatalf("health check of a 2026-07-28 server: %v", err)
	}
	res, err := conn.CallTool(ctx, "echo", []byte(`{"x":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != `echo {"x":1}` {
		t.Fatalf("echo answered %q", got)
	}
}

// refuseSessionless answers 400, as a strict 2026-07-28 server does, a
// request without the era's Mcp-Protocol-Version header and _meta
// protocol version; false when it did.
func refuseSessionless(w http.ResponseWriter, r *http.Request) bool {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	json.Unmarshal(body, &msg)
	if msg.ID == nil { // a notification or an answer
		return true
	}
	if r.Header.Get("Mcp-Protocol-Version") == "2026-07-28" && msg.Params.Meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28" {
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Bad Request: protocol version missing"},"id":null}`)
	return false
}
