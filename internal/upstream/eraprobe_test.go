package upstream

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/era"
)

// TestProbeHTTPReadsTheServersOwnEra: a pinned server's one
// server/discover is read as the SDK's client reads it, and is all that
// is sent.
func TestProbeHTTPReadsTheServersOwnEra(t *testing.T) {
	for _, tc := range []struct {
		name, ctype, body string
		status            int
		want              string
	}{
		{"result", "application/json", `{"jsonrpc":"2.0","id":"plexus-era-probe","result":{"supportedVersions":["2026-07-28"]}}`, 200, era.Stateless},
		{"result on a stream after a priming event", "text/event-stream", "id: 1\ndata: \n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"plexus-era-probe\",\"result\":{\"supportedVersions\":[\"2026-07-28\",\"2025-11-25\"]}}\n\n", 200, era.Stateless},
		{"unsupported version, a stateless one supported", "application/json", `{"jsonrpc":"2.0","id":"plexus-era-probe","error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28"]}}}`, 400, era.Stateless},
		{"session required", "text/plain", "Bad Request: Server not initialized", 400, "2025-11-25"},
		{"method not found", "application/json", `{"jsonrpc":"2.0","id":"plexus-era-probe","error":{"code":-32601,"message":"Method not found"}}`, 200, "2025-11-25"},
		{"a result of the session era only", "application/json", `{"jsonrpc":"2.0","id":"plexus-era-probe","result":{"supportedVersions":["2025-11-25"]}}`, 200, "2025-11-25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var saw []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				saw = append(saw, r.Method+" "+r.Header.Get("Mcp-Protocol-Version")+" "+r.Header.Get("Mcp-Method")+" "+string(b))
				w.Header().Set("Content-Type", tc.ctype)
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			got := probeHTTP(t.Context(), Spec{Name: "p", Type: "http", URL: srv.URL, ProtocolVersion: "2025-11-25"})
			if got != tc.want {
				t.Errorf("own era %q, want %q", got, tc.want)
			}
			if len(saw) != 1 || !strings.HasPrefix(saw[0], "POST 2026-07-28 server/discover ") || !strings.Contains(saw[0], `"method":"server/discover"`) {
				t.Errorf("the server saw %q, want one server/discover POST of MCP 2026-07-28", saw)
			}
		})
	}
}
