package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// rpc POSTs one JSON-RPC message to the face and returns the error code
// of its answer (nil: no error), reading a JSON or an event-stream answer.
func rpc(t *testing.T, url, token, session, version, body string) (*int64, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	text := string(b)
	if i := strings.Index(text, "data: "); i >= 0 {
		text = strings.TrimSpace(text[i+len("data: "):])
	}
	var m struct {
		Error *struct {
			Code int64 `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(text), &m) != nil || m.Error == nil {
		return nil, resp.Status + " " + string(b)
	}
	return &m.Error.Code, resp.Status + " " + string(b)
}

// TestFaceErrorCodes: every error the face answers carries a code JSON-RPC
// or MCP defines — never 0: a request before initialize, a subscription
// to a resource no server offers, an unknown tool.
func TestFaceErrorCodes(t *testing.T) {
	t.Parallel()
	_, base, token := faceEnv(t, "")
	url := base + "/mcp"
	for _, tc := range []struct{ what, session, body string }{
		{"tools/list before initialize", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
	} {
		code, got := rpc(t, url, token, tc.session, "2025-06-18", tc.body)
		if code != nil && *code == 0 {
			t.Errorf("%s: error code 0: %s", tc.what, got)
		}
	}
	_, sid, _ := initialize(t, http.DefaultClient, base, token)
	rpc(t, url, token, sid, "2025-06-18", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, tc := range []struct {
		what, body string
		want       int64
	}{
		{"subscribe to an unknown resource", `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"nowhere://x"}}`, -32002},
		{"unsubscribe from an unknown resource", `{"jsonrpc":"2.0","id":3,"method":"resources/unsubscribe","params":{"uri":"nowhere://x"}}`, -32002},
		{"an unknown tool", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`, -32602},
	} {
		code, got := rpc(t, url, token, sid, "2025-06-18", tc.body)
		if code == nil || *code != tc.want {
			t.Errorf("%s: %s, want error code %d", tc.what, got, tc.want)
		}
	}
}
