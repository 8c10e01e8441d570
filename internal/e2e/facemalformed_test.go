package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestMalformedStreamThroughFace: a call whose MCP 2026-07-28 HTTP server
// answers with a malformed event stream fails at once through the face —
// a 2026-07-28 client's frame, a session-era client over HTTP, and one
// through `plexus mcp` — with an answer that says the outcome is unknown,
// instead of nothing for seconds.
func TestMalformedStreamThroughFace(t *testing.T) {
	// Not parallel: a broken stream must fail the call within 2 s.
	e, base, token := peerEnv(t,
		peerServer{name: "bad2026", args: []string{testenv.MalformedStreamServer(t)}},
		peerServer{name: "badhttp", args: []string{testenv.MalformedStreamServer(t)}},
		peerServer{name: "badstdio", args: []string{testenv.MalformedStreamServer(t)}})
	for _, name := range []string{"bad2026", "badhttp", "badstdio"} {
		waitState(t, e, name, "ready", 15*time.Second)
	}
	const limit = 2 * time.Second // the break was 5–8 s of nothing

	t.Run("2026-frame", func(t *testing.T) {
		req := request2026(base+"/mcp/bad2026", token, "bad", `{}`)
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		start := time.Now()
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		t.Logf("answered in %s: %s", took.Round(time.Millisecond), out)
		if !bytes.Contains(out, []byte(`"isError":true`)) && !bytes.Contains(out, []byte(`"error":`)) {
			t.Errorf("the call did not fail: %s", out)
		}
		if !bytes.Contains(out, []byte("unknown")) {
			t.Errorf("the answer does not say the outcome is unknown: %s", out)
		}
		if took > limit {
			t.Errorf("the call failed after %s, want at once", took.Round(time.Millisecond))
		}
	})

	sessionCall := func(t *testing.T, tr mcp.Transport) {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "editor", Version: "1"}, nil).Connect(ctx, tr, sessionEra)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bad", Arguments: map[string]any{}})
		took := time.Since(start)
		switch {
		case err != nil:
			t.Logf("answered in %s: %v", took.Round(time.Millisecond), err)
			if !strings.Contains(err.Error(), "unknown") {
				t.Errorf("the error does not say the outcome is unknown: %v", err)
			}
		case !res.IsError:
			t.Errorf("the call did not fail: %+v", res)
		default:
			var text string
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					text += tc.Text
				}
			}
			t.Logf("answered in %s: %s", took.Round(time.Millisecond), text)
			if !strings.Contains(text, "unknown") {
				t.Errorf("the answer does not say the outcome is unknown: %s", text)
			}
		}
		if took > limit {
			t.Errorf("the call failed after %s, want at once", took.Round(time.Millisecond))
		}
	}
	t.Run("session-http", func(t *testing.T) {
		sessionCall(t, &mcp.StreamableClientTransport{Endpoint: base + "/mcp/badhttp", HTTPClient: &http.Client{Transport: bearer{token: token}}})
	})
	t.Run("plexus-mcp", func(t *testing.T) {
		cmd := exec.Command(e.Bin, "mcp", "--profile", "badstdio")
		cmd.Env = append(os.Environ(), "PLEXUS_HOME="+e.Home)
		sessionCall(t, testenv.Transport(t, cmd))
	})
}
