package daemon

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestAPIChangesSettleAgain: a request of the API that can change the
// daemon (settings, servers) has it settle again; reads, calls and the
// face do not.
func TestAPIChangesSettleAgain(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		method, path string
		want         bool
	}{
		{"PUT", "/v1/settings", true},
		{"POST", "/v1/servers", true},
		{"DELETE", "/v1/servers/x", true},
		{"POST", "/v1/reload", true},
		{"GET", "/v1/status", false},
		{"HEAD", "/v1/servers", false},
		{"POST", "/v1/call", false},
		{"POST", "/v1/resources/read", false},
		{"POST", "/v1/prompts/get", false},
		{"POST", "/mcp", false},
		{"DELETE", "/mcp", false},
	} {
		changed := make(chan struct{}, 1)
		served := false
		h := notingChanges(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true }), changed)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(c.method, c.path, nil))
		got := len(changed) == 1
		if !served || got != c.want {
			t.Errorf("%s %s: served %v, settles again %v, want %v", c.method, c.path, served, got, c.want)
		}
	}
}
