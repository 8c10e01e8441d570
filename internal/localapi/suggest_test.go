package localapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/cmdline"
	"github.com/plexus-mcp/plexus/internal/serverconf"
)

// TestSuggestName: the API suggests the names serverconf does, from a URL
// or a command line split as in a shell; an unfinished line or bad JSON
// suggests nothing or is refused.
func TestSuggestName(t *testing.T) {
	_, c := serve(t)
	for _, tc := range []struct{ field, value string }{
		{"url", "https://mcp.example.com/mcp"},
		{"url", "http://127.0.0.1:9/mcp"},
		{"command", `npx -y @modelcontextprotocol/server-filesystem "/srv/my docs"`},
		{"command", "/usr/local/bin/docs-mcp --port 1"},
		{"command", `npx "open quote`},
	} {
		want := ""
		if tc.field == "url" {
			want = serverconf.NameFromURL(tc.value)
		} else if argv, err := cmdline.Split(tc.value); err == nil {
			want = serverconf.NameFromArgv(argv)
		}
		resp := do(t, c, "POST", "/v1/suggest/name", `{"`+tc.field+`": `+strconv.Quote(tc.value)+`}`, "Content-Type", "application/json")
		var got apitype.SuggestedName
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %q: %d %v", tc.field, tc.value, resp.StatusCode, err)
		}
		resp.Body.Close()
		if got.Name != want {
			t.Errorf("%s %q: suggested %q, want %q", tc.field, tc.value, got.Name, want)
		}
	}
	resp := do(t, c, "POST", "/v1/suggest/name", `{"url": 1}`, "Content-Type", "application/json")
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad JSON: status %d", resp.StatusCode)
	}
	decodeError(t, resp)
}
