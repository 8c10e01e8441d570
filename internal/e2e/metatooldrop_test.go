package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestDroppedPOSTCancelsUpstream: a client whose
// POST carrying a call goes away — the connection dropped, no
// notifications/cancelled — has cancelled that call, and the server
// upstream is told so, whether the call was a tool's own (a bare profile)
// or made through the call_tool meta-tool (a profile with metaTools).
// The server is the matrix's go-sdk peer over stdio: its slow tool notes
// whether it saw its call cancelled or ran to the end.
func TestDroppedPOSTCancelsUpstream(t *testing.T) {
	t.Parallel()
	peer := testenv.PeerServer(t)
	e, base, token := peerEnv(t, peerServer{name: "peer", args: []string{"--", peer, "-sdk", "gosdk", "-transport", "stdio"}})
	e.MustRun("settings", "set", "profiles.meta", `{"servers":["peer"],"metaTools":true}`)
	slow := toolNamed(t, tools(t, e), "peer", "slow").Name

	// status asks the server, on a session of the bare profile, what its
	// slow tool noted under key.
	c := mcp.NewClient(&mcp.Implementation{Name: "status", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp/peer", HTTPClient: &http.Client{Transport: bearer{token: token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	status := func(key string) string {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow_status", Arguments: map[string]any{"key": key}})
		if err != nil {
			return err.Error()
		}
		return textOfResult(t, res, nil)
	}

	for _, tc := range []struct{ name, profile, call string }{
		{"own-tool", "peer", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"key":"own","steps":100,"ms":100}}}`},
		{"call_tool", "meta", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"` + slow + `","arguments":{"key":"meta","steps":100,"ms":100}}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := map[string]string{"own-tool": "own", "call_tool": "meta"}[tc.name]
			url := base + "/mcp/" + tc.profile
			id := rawPOST(t, url, token, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"dropper","version":"1"}}}`)
			rawPOST(t, url, token, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			// The call's POST, dropped once the server has started.
			pctx, drop := context.WithCancel(ctx)
			req, _ := http.NewRequestWithContext(pctx, "POST", url, strings.NewReader(tc.call))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
			done := make(chan struct{})
			go func() {
				defer close(done)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
			waitFor(t, 10*time.Second, "the slow call to start", func() bool { return status(key) == "running" })
			drop()
			<-done
			var got string
			for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
				if got = status(key); got != "running" {
					break
				}
			}
			if got != "cancelled" {
				t.Errorf("3 s after the client dropped the POST of a call through profile %s, the server's call is %q, want cancelled", tc.profile, got)
			}
		})
	}
}

// rawPOST posts body to a profile's endpoint url on session id ("" for
// none), reads the answer whole, and returns the session id it names.
func rawPOST(t *testing.T, url, token, id, body string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("POST %s: %s", body, resp.Status)
	}
	return resp.Header.Get("Mcp-Session-Id")
}
