package daemon

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/audit"
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
		{"POST", "/v1/sessions/abc/call", false},
		{"POST", "/v1/suggest/name", false},
		{"POST", "/mcp", false},
		{"DELETE", "/mcp", false},
	} {
		changed := make(chan struct{}, 1)
		served := false
		h := notingChanges(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true }), changed, nil, "")
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(c.method, c.path, nil))
		got := len(changed) == 1
		if !served || got != c.want {
			t.Errorf("%s %s: served %v, settles again %v, want %v", c.method, c.path, served, got, c.want)
		}
	}
}

// TestSettingsChangesAudited: each change through the API is a record of
// the audit log — its route, the server it names, its outcome by the
// answer's status, the door it came by — and never its body; reads are
// not recorded.
func TestSettingsChangesAudited(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	alog, err := audit.Open(audit.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	h := notingChanges(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "bad") {
			http.Error(w, "no", http.StatusBadRequest)
		}
	}), make(chan struct{}, 1), alog, "web")
	const canary = "CANARY-body-secret-31"
	for _, r := range []*http.Request{
		httptest.NewRequest("PUT", "/v1/secrets/GH_TOKEN", strings.NewReader(`{"value":"`+canary+`"}`)),
		httptest.NewRequest("POST", "/v1/servers/bad/enable", nil),
		httptest.NewRequest("GET", "/v1/servers/gh", nil),
	} {
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	alog.Close()
	var got []audit.Record
	audit.Read(path, 0, audit.Filter{}, func(r audit.Record) bool { got = append(got, r); return true })
	if len(got) != 2 {
		t.Fatalf("%d records, want 2 (the changes, not the read): %+v", len(got), got)
	}
	if r := got[0]; r.Kind != audit.KindSettings || r.Tool != "PUT /secrets/GH_TOKEN" || r.Outcome != "ok" || r.Reason != "via web" {
		t.Errorf("first record %+v", r)
	}
	if r := got[1]; r.Server != "bad" || r.Outcome != "error 400" {
		t.Errorf("second record %+v", r)
	}
	for _, r := range got {
		if strings.Contains(r.Tool+r.Reason+string(r.Arguments), canary) {
			t.Errorf("a request's body reached the log: %+v", r)
		}
	}
}
