package e2e

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// malformed2026 serves a go-sdk MCP 2026-07-28 server (stateless) on
// 127.0.0.1 whose tool bad answers with an event stream that carries no
// JSON-RPC message and is then held open; everything else is the SDK's.
func malformed2026(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "malformed", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "bad", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	hold := make(chan struct{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"tools/call"`)) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":\n\n")
				w.(http.Flusher).Flush()
				select {
				case <-hold:
				case <-r.Context().Done():
				}
				return
			}
		}
		h.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { close(hold); srv.Close() })
	return "http://" + ln.Addr().String() + "/mcp"
}

// TestMalformedStreamThroughFace: a call whose MCP 2026-07-28 HTTP server
// answers with a malformed event stream fails at once through the face —
// a 2026-07-28 client's frame, a session-era client over HTTP, and one
// through `plexus mcp` — with an answer that says the outcome is unknown,
// instead of nothing for seconds.
func TestMalformedStreamThroughFace(t *testing.T) {
	// Not parallel: a broken stream must fail the call within 2 s.
	e, base, token := peerEnv(t,
		peerServer{name: "bad2026", args: []string{malformed2026(t)}},
		peerServer{name: "badhttp", args: []string{malformed2026(t)}},
		peerServer{name: "badstdio", args: []string{malformed2026(t)}})
	for _, name := range []string{"bad2026", "badhttp", "badstdio"} {
		waitState(t, e, name, "ready", 15*time.Second)
	}
	const limit = 2 * time.Second // the break was 5–8 s of nothing

	t.Run("2026-frame", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bad","arguments":{},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
		req, _ := http.NewRequest("POST", base+"/mcp/bad2026", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "bad")
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		start := time.Now()
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		t.Logf("answered in %s: %s", took.Round(time.Millisecond), out)
		if !bytes.Contains(out, []byte(`"isError":true`)) && !bytes.Contains(out, []byte(`"error":`)) {
			t.Errorf("the call did not fail: %s", out)
		}
		if !bytes.Contains(out, []byte("unknown")) {
			t.Errorf("the answer does not say the outcome is unknown: %s", out)
		}
		if took > limit {
			t.Errorf("the call failed after %s, want at once", took.Round(time.Millisecond))
		}
	})

	sessionCall := func(t *testing.T, tr mcp.Transport) {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "editor", Version: "1"}, nil).Connect(ctx, tr, sessionEra)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bad", Arguments: map[string]any{}})
		took := time.Since(start)
		switch {
		case err != nil:
			t.Logf("answered in %s: %v", took.Round(time.Millisecond), err)
			if !strings.Contains(err.Error(), "unknown") {
				t.Errorf("the error does not say the outcome is unknown: %v", err)
			}
		case !res.IsError:
			t.Errorf("the call did not fail: %+v", res)
		default:
			var text string
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					text += tc.Text
				}
			}
			t.Logf("answered in %s: %s", took.Round(time.Millisecond), text)
			if !strings.Contains(text, "unknown") {
				t.Errorf("the answer does not say the outcome is unknown: %s", text)
			}
		}
		if took > limit {
			t.Errorf("the call failed after %s, want at once", took.Round(time.Millisecond))
		}
	}
	t.Run("session-http", func(t *testing.T) {
		sessionCall(t, &mcp.StreamableClientTransport{Endpoint: base + "/mcp/badhttp", HTTPClient: &http.Client{Transport: bearer{token: token}}})
	})
	t.Run("plexus-mcp", func(t *testing.T) {
		cmd := exec.Command(e.Bin, "mcp", "--profile", "badstdio")
		cmd.Env = append(os.Environ(), "PLEXUS_HOME="+e.Home)
		sessionCall(t, testenv.Transport(t, cmd))
	})
}
