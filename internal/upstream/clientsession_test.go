//lint:file-ignore SA1019 Plexus relays what MCP 2026-07-28 deprecates (sampling, roots, logging) for the session-era clients and servers that still use it, through the deprecation window.

package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/era"
)

// ownerPeer is a client holding a session with Plexus: its key, version,
// log level and end, and the log messages it got.
type ownerPeer struct {
	capsPeer
	version, level string
	ended          chan struct{}
	aside          *ownerPeer // the client on its standalone stream; nil: itself

	mu   sync.Mutex
	logs []string
}

func (p *ownerPeer) ClientSession() (any, string, <-chan struct{}) { return p, p.version, p.ended }
func (p *ownerPeer) Standalone() Peer {
	if p.aside == nil {
		return p
	}
	return p.aside
}
func (p *ownerPeer) LogLevel() string { return p.level }
func (p *ownerPeer) Log(_ context.Context, m *mcp.LoggingMessageParams) {
	p.mu.Lock()
	p.logs = append(p.logs, string(m.Level))
	p.mu.Unlock()
}

// A remote session-era server gives each client of a session with Plexus
// a session of its own: its requests go there, in its version, with its
// capabilities and at its log level, and the session ends with the
// client's; callers without one (the settings API) share the connection.
func TestOneSessionPerClientSession(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "sessions", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}})
	s.AddTool(&mcp.Tool{Name: "who", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "hello"})
		ip := req.Session.InitializeParams()
		b, _ := json.Marshal(map[string]any{"id": req.Session.ID(), "version": ip.ProtocolVersion, "elicit": ip.Capabilities.Elicitation != nil})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
	})
	var refused atomic.Int32 // how often the SDK refused the message below
	defer func() {
		if n := refused.Load(); n > 0 {
			t.Logf("the standalone stream's message was refused %d times before its stream was connected", n)
		}
	}()
	s.AddTool(&mcp.Tool{Name: "aside", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// Not in the request's context: the SDK sends it on the session's
		// standalone stream — or refuses it, "stream not connected", if
		// the client's GET for that stream has not reached it yet (a
		// loaded machine; the SDK keeps no such message for later). A
		// server that must be heard sends it again until it is taken.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			err := req.Session.Log(context.Background(), &mcp.LoggingMessageParams{Level: "error", Data: "aside"})
			if err == nil || time.Now().After(deadline) {
				break
			}
			refused.Add(1)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, nil
	})
	sessionsEnded(t, s)
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	conn := mustConnect(t, Spec{Name: "remote", Type: "http", URL: srv.URL, StartupTimeout: 10 * time.Second})
	defer conn.Close()

	type seen struct {
		ID, Version string
		Elicit      bool
	}
	call := func(p Peer) seen {
		t.Helper()
		ctx := context.Background()
		if p != nil {
			ctx = WithPeer(ctx, p, nil)
		}
		res, err := conn.CallRaw(ctx, map[string]json.RawMessage{"name": json.RawMessage(`"who"`), "arguments": json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		var r mcp.CallToolResult
		var w seen
		if err := json.Unmarshal(res, &r); err != nil || json.Unmarshal([]byte(r.Content[0].(*mcp.TextContent).Text), &w) != nil {
			t.Fatalf("result %s: %v", res, err)
		}
		return w
	}
	a := &ownerPeer{capsPeer: capsPeer{&mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}}, version: "2025-06-18", level: "error", ended: make(chan struct{})}
	b := &ownerPeer{capsPeer: capsPeer{&mcp.ClientCapabilities{}}, version: "2025-11-25", level: "debug", ended: make(chan struct{}), aside: &ownerPeer{}}
	shared, a1, a2, b1 := call(nil), call(a), call(a), call(b)
	if a1.ID != a2.ID || a1.ID == b1.ID || a1.ID == shared.ID || b1.ID == shared.ID {
		t.Fatalf("sessions: shared %s, client A %s then %s, client B %s: want one per client, another shared", shared.ID, a1.ID, a2.ID, b1.ID)
	}
	if a1.Version != "2025-06-18" || !a1.Elicit || b1.Version != "2025-11-25" || b1.Elicit {
		t.Errorf("client A's session %+v, B's %+v: want each in its version, with its capabilities", a1, b1)
	}
	a.mu.Lock()
	aLogs := len(a.logs)
	a.mu.Unlock()
	b.mu.Lock()
	bLogs := len(b.logs)
	b.mu.Unlock()
	if aLogs != 0 || bLogs != 1 {
		t.Errorf("info messages: %d to the client at level error, %d to the one at debug; want 0 and 1, as each gets directly", aLogs, bLogs)
	}

	// What the server sends on the session's standalone stream reaches
	// the client's own standalone stream, not the call's.
	if _, err := conn.CallRaw(WithPeer(context.Background(), b, nil), map[string]json.RawMessage{"name": json.RawMessage(`"aside"`)}); err != nil {
		t.Fatal(err)
	}
	if !waitFor(30*time.Second, func() bool { b.aside.mu.Lock(); defer b.aside.mu.Unlock(); return len(b.aside.logs) == 1 }) {
		t.Error("a log message of the session's standalone stream did not reach the client's standalone stream")
	}
	b.mu.Lock()
	if len(b.logs) != 1 {
		t.Errorf("the call's stream got %v: want only the message of the earlier call", b.logs)
	}
	b.mu.Unlock()

	count := func() (n int) {
		for range s.Sessions() {
			n++
		}
		return n
	}
	close(a.ended)
	if !waitFor(10*time.Second, func() bool { return count() == 2 }) {
		t.Fatalf("the server holds %d sessions after client A's ended: want 2 (shared, B)", count())
	}
	if c := call(a); c.ID != shared.ID {
		t.Fatalf("a straggler of an ended client session went on session %s, not the shared one", c.ID)
	}
}

// Past maxClientSessions the session idle longest makes room, never a
// busy one.
func TestClientSessionsCap(t *testing.T) {
	cs := &clientSessions{byKey: map[any]*clientSession{}}
	now := time.Now()
	for i := range maxClientSessions {
		cs.byKey[i] = &clientSession{busy: 1, quit: make(chan struct{}), lastUsed: now.Add(time.Duration(i) * time.Second)}
	}
	if cs.makeRoomLocked() {
		t.Fatal("room made in place of a busy session")
	}
	cs.byKey[7].busy, cs.byKey[9].busy = 0, 0
	if !cs.makeRoomLocked() || cs.byKey[7] != nil || cs.byKey[9] == nil || len(cs.byKey) != maxClientSessions-1 {
		t.Fatalf("want session 7 (idle longest) closed, have %d sessions", len(cs.byKey))
	}
}

// TestReplicaAnswersInTheSessionEra: a connection to another team
// replica's server (RunsOn) that the replica answered in the session era —
// it refused the discovery while it started the server — fails, to be
// tried again: a session there would be its first caller's, and every
// other member's request on it refused. The same server is an ordinary
// session-era server when it is no replica.
func TestReplicaAnswersInTheSessionEra(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "starting", Version: "1"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"server/discover"`)) {
			http.Error(w, "this replica is starting that server", http.StatusServiceUnavailable)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	spec := Spec{Name: "held", Type: "http", URL: srv.URL, StartupTimeout: 5 * time.Second}
	c := mustConnect(t, spec)
	if v := c.ProtocolVersion(); !era.IsSession(v) {
		t.Fatalf("not a replica: connected in %q, want the session era", v)
	}
	c.Close()
	spec.RunsOn = "r1"
	if c, err := Connect(context.Background(), spec); err == nil {
		c.Close()
		t.Fatal("a replica's answer in the session era was taken")
	} else if !strings.Contains(err.Error(), "replica r1 answered in MCP 2025") {
		t.Fatalf("error %q does not say the replica answered in the session era", err)
	}
}
