package face

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/audit"
)

// TestParamlessNotificationIsServed sends, as an attacker or a careless
// client might, notifications without params. The SDK gives their params
// to the face's middleware as a typed nil, whose _meta the face read when
// it did not know the message's session — a session a DELETE had just
// ended while the SDK still held the message: the daemon ended, taking
// every client and server with it (CI, stop 59). That race is rare over
// HTTP, so the middleware's reading of such a message is also checked
// directly.
func TestParamlessNotificationIsServed(t *testing.T) {
	p, url := testProfile(t, 3, 10)
	for _, method := range []string{"notifications/initialized", "notifications/roots/list_changed", "notifications/cancelled"} {
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","method":"`+method+`"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Errorf("%s: %s", method, resp.Status)
		}
	}
	// The profile still serves.
	hdr := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	if _, res, _ := post(t, url, hdr, listBody("1", "", "", true)); !bytes.Contains(res, []byte(toolName(3))) {
		t.Errorf("tools/list after the notifications: %s", res)
	}
	// The client of a message without params is the profile's, unnamed.
	ctx := p.withSDKClient(context.Background(), &mcp.ServerRequest[*mcp.InitializedParams]{})
	if c, _ := audit.ClientFrom(ctx); c.Profile != p.name || c.Name != "" {
		t.Errorf("client of a paramless message: %+v", c)
	}
}
