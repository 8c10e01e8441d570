package localapi

import (
	"encoding/json"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// TestNamesSettingRoute: GET /v1/settings names the scheme in force, a PUT
// without it keeps it, "hashed" and "readable" switch it, and anything
// else is refused at mcp.names with nothing changed.
func TestNamesSettingRoute(t *testing.T) {
	_, c := serve(t)
	var s apitype.Settings
	getJSON(t, c, "GET", "/v1/settings", "", &s)
	if s.Names != "readable" {
		t.Fatalf("default names = %q", s.Names)
	}
	getJSON(t, c, "PUT", "/v1/settings", `{"names":"hashed"}`, &s)
	if s.Names != "hashed" {
		t.Fatalf("after names=hashed: %q", s.Names)
	}
	getJSON(t, c, "PUT", "/v1/settings", `{"retryMs":5000}`, &s)
	if s.Names != "hashed" || s.RetryMs != 5000 {
		t.Errorf("a PUT without names: %q, retryMs %d", s.Names, s.RetryMs)
	}
	resp := do(t, c, "PUT", "/v1/settings", `{"names":"pretty"}`)
	if e := decodeError(t, resp); resp.StatusCode != 400 || len(e.Problems) != 1 || e.Problems[0].Path != "mcp.names" {
		t.Errorf("names=pretty: %d %+v", resp.StatusCode, e)
	}
	getJSON(t, c, "PUT", "/v1/settings", `{"names":"readable"}`, &s)
	raw, _ := json.Marshal(s)
	if s.Names != "readable" {
		t.Errorf("back to readable: %s", raw)
	}
}
