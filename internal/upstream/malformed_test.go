package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestMalformedStreamFailsAtOnce: a 2026-07-28 server that answers a call
// with an event stream whose data is no JSON-RPC message, and which then
// ends, fails that call at once, with an error that says so, on both call
// paths; the connection goes on serving.
func TestMalformedStreamFailsAtOnce(t *testing.T) {
	url := testenv.MalformedStreamServer(t)
	for _, path := range []string{"decoded", "forwarded"} {
		t.Run(path, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := Connect(ctx, Spec{Name: "malformed", Type: "http", URL: url})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if v := c.ProtocolVersion(); v != "2026-07-28" {
				t.Fatalf("negotiated %q", v)
			}
			if path == "decoded" {
				_, err = c.CallTool(ctx, "bad", nil)
			} else {
				_, err = c.CallRaw(ctx, map[string]json.RawMessage{"name": json.RawMessage(`"bad"`)})
			}
			if err == nil {
				t.Fatal("the call succeeded")
			}
			// The stream ends after the malformed event: a call that
			// waited for more ran into its deadline instead.
			if ctx.Err() != nil {
				t.Errorf("the call failed only at its deadline, want at once (%v)", err)
			}
			if !strings.Contains(err.Error(), "decode") || !errors.Is(err, ErrTransportLost) {
				t.Errorf("error %q does not say the answer was malformed and its outcome unknown", err)
			}
			if err := c.Ping(ctx); err != nil {
				t.Errorf("the connection is lost after a malformed answer: %v", err)
			}
		})
	}
}
