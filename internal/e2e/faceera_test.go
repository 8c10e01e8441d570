package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// TestSessionEraSeesNoNewFields: a client of the session era (2025-06-18)
// gets no field that only MCP 2026-07-28 defines — resultType, ttlMs,
// cacheScope — in any answer, from a server that speaks 2026-07-28:
// tools/list, the first call (the SDK's path) and later ones (forwarded as
// frames), a resource read and a prompt.
func TestSessionEraSeesNoNewFields(t *testing.T) {
	t.Parallel()
	e, base, token := faceEnv(t, "")
	echo := toolNamed(t, tools(t, e), "example", "echo").Name
	url := base + "/mcp"
	_, sid, _ := initialize(t, http.DefaultClient, base, token)
	rpc(t, url, token, sid, "2025-06-18", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	var all []string
	for i, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + echo + `","arguments":{"text":"a"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + echo + `","arguments":{"text":"b"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"` + echo + `","arguments":{"text":"c"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"resources/list"}`,
		`{"jsonrpc":"2.0","id":6,"method":"prompts/list"}`,
	} {
		code, got := rpc(t, url, token, sid, "2025-06-18", body)
		if code != nil {
			t.Errorf("request %d: %s", i+1, got)
		}
		all = append(all, got)
	}
	for _, field := range []string{`"resultType"`, `"ttlMs"`, `"cacheScope"`} {
		for i, got := range all {
			if strings.Contains(got, field) {
				t.Errorf("answer %d to a 2025-06-18 session has %s: %s", i+1, field, got)
			}
		}
	}
}
