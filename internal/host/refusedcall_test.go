package host

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// TestCallRefused401NeedsLogin: a server that logs in with OAuth and
// refuses a call with HTTP 401 (here it takes the handshake without a
// token and wants one for calls; a login that ended while connected does
// the same) did not process the call: the call says to log in, not that
// the connection was lost and the outcome is unknown, nor to configure a
// header.
func TestCallRefused401NeedsLogin(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "wants-login", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		t.Error("a refused call ran")
		return &mcp.CallToolResult{}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Authorization") == "" {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte(`"tools/call"`)) {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
				http.Error(w, "a token is required", http.StatusUnauthorized)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	th := newTestHost(t)
	th.create("srv", mustJSON(t, map[string]any{"type": "http", "url": ts.URL,
		"oauth": map[string]any{"clientId": "plexus", "authUrl": ts.URL + "/authorize", "tokenUrl": ts.URL + "/token"}}))
	res, err := th.Call(t.Context(), "srv_echo", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	text := ""
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	if !res.IsError || res.Meta[apitype.MetaError] != "needs_login" || !strings.Contains(text, "plexus login srv") {
		t.Fatalf("refused call: %v %q, want needs_login saying to run plexus login", res.Meta, text)
	}
}
