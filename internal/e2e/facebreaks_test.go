package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// Issue 43's breaks of the face and the era translator that a wire
// transcript cannot show (cancellation, a question right after it, the
// rounds of a 2026-07-28 client's answers): each test here fails on the
// code before the issue.

// eraServer serves a go-sdk server of MCP 2026-07-28 (stateless) on
// 127.0.0.1 with a tool slow (waits ms, or until cancelled), and counts
// what reached it that the era refuses: notifications/cancelled POSTed to
// it (that era cancels a request by closing it) and the answers of 400
// and over it gave.
type eraServer struct {
	url                 string
	cancelled, notified atomic.Int64
	refused             atomic.Int64
}

func startEraServer(t *testing.T) *eraServer {
	t.Helper()
	es := &eraServer{}
	s := mcp.NewServer(&mcp.Implementation{Name: "era", Version: "1"}, nil)
	type in struct {
		MS int `json:"ms"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		select {
		case <-time.After(time.Duration(a.MS) * time.Millisecond):
		case <-ctx.Done():
			es.cancelled.Add(1)
			return nil, nil, ctx.Err()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("slept %d ms", a.MS)}}}, nil, nil
	})
	// As MCP 2026-07-28 asks, a request closed is a request cancelled.
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true})
	es.url = testenv.ServeLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			b, _ := io.ReadAll(r.Body)
			if bytes.Contains(b, []byte(`"notifications/cancelled"`)) {
				es.notified.Add(1)
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		if sw.status >= 400 {
			es.refused.Add(1)
		}
	}))
	return es
}

// statusWriter notes the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// waitTrue waits up to d for cond.
func waitTrue(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

// TestCancelStatelessCall is break 3 and the first half of break 4: a
// 2026-07-28 client cancels a call to a 2026-07-28 server over streamable
// HTTP — through the HTTP face (by closing its request) and through
// `plexus mcp` (by notifications/cancelled, as that era's stdio client
// does). The cancellation reaches the server as that era has it (the
// request closed), with no notifications/cancelled POSTed to it (refused
// 400, and taken by Plexus for a lost connection: the server restarted),
// and the server keeps serving. Before, through the HTTP face the server
// was restarted, and through `plexus mcp` the tool ran its full time.
func TestCancelStatelessCall(t *testing.T) {
	t.Parallel()
	es := startEraServer(t)
	e, base, token := peerEnv(t, peerServer{name: "era", args: []string{es.url}})
	waitState(t, e, "era", "ready", 30*time.Second)
	call := func(t *testing.T, transport mcp.Transport) {
		c := mcp.NewClient(&mcp.Implementation{Name: "canceller", Version: "1"}, nil)
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		cs, err := c.Connect(ctx, transport, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("negotiated %s, want 2026-07-28", v)
		}
		before := es.cancelled.Load()
		cctx, ccancel := context.WithCancel(ctx)
		time.AfterFunc(300*time.Millisecond, ccancel)
		start := time.Now()
		if _, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 60000}}); err == nil {
			t.Fatal("a cancelled call answered")
		}
		if !waitTrue(10*time.Second, func() bool { return es.cancelled.Load() > before }) {
			t.Fatalf("the server's call was not cancelled %s after the client cancelled it", time.Since(start))
		}
		if n, r := es.notified.Load(), es.refused.Load(); n != 0 || r != 0 {
			t.Errorf("the server got %d notifications/cancelled and refused %d requests", n, r)
		}
		if got := textOf(t)(cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 1}})); got != "slept 1 ms" {
			t.Errorf("the call after: %q", got)
		}
	}
	t.Run("http", func(t *testing.T) {
		call(t, &mcp.StreamableClientTransport{Endpoint: base + "/mcp/era", HTTPClient: &http.Client{Transport: bearer{token: token}}})
	})
	t.Run("plexus-mcp", func(t *testing.T) {
		cmd := exec.Command(e.Bin, "mcp", "--profile", "era")
		cmd.Env = append(os.Environ(), "PLEXUS_HOME="+e.Home)
		call(t, testenv.Transport(t, cmd))
	})
	if out := e.MustRun("status", "--json"); strings.Contains(out, `"restarts": 1`) {
		t.Errorf("the server was restarted:\n%s", out)
	}
}

// TestCancelSessionCallToPinnedServer is the second half of break 4: a
// session-era client cancels a call that Plexus makes on a server it
// pinned to the session era, over streamable HTTP; the server's call ends.
func TestCancelSessionCallToPinnedServer(t *testing.T) {
	t.Parallel()
	e, base, token := peerEnv(t, peerServer{name: "slow", args: []string{testenv.SlowServer(t)}, settings: `"protocolVersion": "2025-11-25"`})
	waitState(t, e, "slow", "ready", 30*time.Second)
	c := mcp.NewClient(&mcp.Implementation{Name: "canceller", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp/slow", HTTPClient: &http.Client{Transport: bearer{token: token}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cancelledUpstream := func() string {
		return textOf(t)(cs.CallTool(ctx, &mcp.CallToolParams{Name: "cancelled"}))
	}
	for i := range 2 {
		cctx, ccancel := context.WithCancel(ctx)
		time.AfterFunc(300*time.Millisecond, ccancel)
		if _, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 60000}}); err == nil {
			t.Fatal("a cancelled call answered")
		}
		want := fmt.Sprint(i + 1)
		if !waitTrue(10*time.Second, func() bool { return cancelledUpstream() == want }) {
			t.Fatalf("cancellation %d did not reach the server: it counts %s", i+1, cancelledUpstream())
		}
	}
}

// TestAskRightAfterCancel is break 9: right after a session-era client
// cancels a call on a session-era server, the same client's next call is
// asked for input by that server, and the question reaches it. Before,
// the cancelled call still counted as another client in flight for up
// to 2 s ("calls from 2 clients are in flight", with one client), or the
// question went to it ("context canceled").
func TestAskRightAfterCancel(t *testing.T) {
	t.Parallel()
	e, base, token := faceEnv(t, "")
	addOldServer(t, e)
	all := tools(t, e)
	sleep, ask := toolNamed(t, all, "old", "sleep").Name, toolNamed(t, all, "old", "ask").Name
	c := mcp.NewClient(&mcp.Implementation{Name: "editor", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "yes"}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearer{token: token}}}, sessionEra)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i := range 5 {
		cctx, ccancel := context.WithCancel(ctx)
		time.AfterFunc(200*time.Millisecond, ccancel)
		cs.CallTool(cctx, &mcp.CallToolParams{Name: sleep, Arguments: map[string]any{"ms": 60000}})
		if got := textOf(t)(cs.CallTool(ctx, &mcp.CallToolParams{Name: ask, Arguments: map[string]any{"question": "ok?"}})); got != "answer: yes" {
			t.Fatalf("round %d: the question right after a cancel: %q", i, got)
		}
	}
}

// TestStatelessClientAnswersSessionServer is break 7: a 2026-07-28 client
// answers a session-era server's elicitation, asked in the middle of the
// call: the face hands it to the client in the call's result
// (input_required) and the client's retry carries the answer to the
// server, which completes the call, also twice in a row. (Roots:
// TestFaceRoots; sampling takes the same way.)
func TestStatelessClientAnswersSessionServer(t *testing.T) {
	t.Parallel()
	e, base, token := faceEnv(t, "")
	addOldServer(t, e)
	all := tools(t, e)
	c := mcp.NewClient(&mcp.Implementation{Name: "editor", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "yes to " + req.Params.Message}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearer{token: token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s", v)
	}
	for i := range 2 {
		q := fmt.Sprintf("ok %d?", i)
		if got := textOf(t)(cs.CallTool(ctx, &mcp.CallToolParams{Name: toolNamed(t, all, "old", "ask").Name, Arguments: map[string]any{"question": q}})); got != "answer: yes to "+q {
			t.Errorf("elicitation %d: %q", i, got)
		}
	}
}
