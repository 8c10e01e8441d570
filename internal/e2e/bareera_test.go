//lint:file-ignore SA1019 the test sets a log level, which MCP 2026-07-28 deprecates, because a session-era server still answers it.

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// A bare profile mirrors its one server, its protocol era included: in
// front of a server that speaks only the session era, a client that
// prefers MCP 2026-07-28 falls back to initialize through either face,
// exactly as it does before the server itself (and then its ping,
// logging/setLevel and progress are the session's, as directly). A
// profile that gathers servers offers every era and translates, so the
// same client stays in 2026-07-28 there. (Before, the bare profile spoke
// 2026-07-28 to it too: the peer matrix's ping, log-level and progress
// cells of every 2026 client in front of a session-era server differed.)
// A server whose settings pin the session era is such a server when it
// speaks only that era over streamable HTTP (it refuses the
// server/discover a client of 2026-07-28 tries first), and is not when it
// speaks 2026-07-28 too, or over stdio (where Plexus cannot ask it apart). (Before, every pinned server's bare profile spoke
// 2026-07-28: the peer matrix's log, log-level, questions and ping cells
// of 2026 clients in front of pinned fastmcp and TypeScript 1.x servers
// differed.)
func TestBareProfileSpeaksItsServersEra(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.StartDaemon()
	e.MustRun("settings", "set", "face.allowExternalCall", "true")
	script := filepath.Join(t.TempDir(), "session.script")
	os.WriteFile(script, []byte(`initialize -> {"jsonrpc":"2.0","id":{{id}},"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"script","version":"1"}}}
tools/list -> {"jsonrpc":"2.0","id":{{id}},"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}
ping -> {"jsonrpc":"2.0","id":{{id}},"result":{}}
logging/setLevel -> {"jsonrpc":"2.0","id":{{id}},"result":{}}
`), 0o600)
	e.MustRun("add", "old", "--", testenv.ScriptServer(t), script)
	e.MustRun("settings", "set", "profiles.solo", `{"servers":["old"],"naming":"bare"}`)
	e.MustRun("settings", "set", "profiles.all", `{"servers":["old"],"naming":"plexus"}`)
	// The same server pinned to the session era by its settings, over
	// stdio and over streamable HTTP: the pin holds Plexus back, but this
	// server speaks only the session era of its own (it refuses the
	// server/discover Plexus asks before pinning it), so its bare profile
	// offers only that. A pinned server that speaks 2026-07-28 too
	// (mcp-go's), which a client reaching it directly speaks 2026-07-28
	// with: its bare profile offers every era and translates.
	httpURL, _ := testenv.StartScriptHTTP(t, script)
	e.MustRun("add", "held", "--", testenv.ScriptServer(t), script)
	e.MustRun("add", "heldhttp", httpURL)
	e.MustRun("add", "newheld", testenv.StartPeerServer(t, "mcpgo", "http"))
	cfg := filepath.Join(e.Home, "extensions.json")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pinned := string(b)
	for _, name := range []string{"held", "heldhttp", "newheld"} {
		pinned = strings.Replace(pinned, `"`+name+`": {`, `"`+name+`": {"protocolVersion": "2025-11-25",`, 1)
	}
	os.WriteFile(cfg, []byte(pinned), 0o600)
	e.MustRun("reload")
	for _, name := range []string{"held", "heldhttp", "newheld"} {
		waitState(t, e, name, "ready", 30*time.Second)
	}
	e.MustRun("settings", "set", "profiles.heldsolo", `{"servers":["held"],"naming":"bare"}`)
	e.MustRun("settings", "set", "profiles.heldhttp", `{"servers":["heldhttp"],"naming":"bare"}`)
	e.MustRun("settings", "set", "profiles.newheld", `{"servers":["newheld"],"naming":"bare"}`)
	st, err := client.New(e.Home).Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := os.ReadFile(filepath.Join(e.Home, "token"))
	token := strings.TrimSpace(string(tok))

	for _, tc := range []struct{ profile, face, want string }{
		{"solo", "http", era2025},
		{"solo", "stdio", era2025},
		{"all", "http", era2026},
		{"all", "stdio", era2026},
		{"heldsolo", "http", era2025},
		{"heldsolo", "stdio", era2025},
		{"heldhttp", "http", era2025},
		{"heldhttp", "stdio", era2025},
		{"newheld", "http", era2026},
	} {
		t.Run(tc.profile+"/"+tc.face, func(t *testing.T) {
			t.Parallel()
			var tr mcp.Transport
			if tc.face == "http" {
				tr = &mcp.StreamableClientTransport{Endpoint: "http://" + st.HTTPAddr + "/mcp/" + tc.profile,
					HTTPClient: peerEndpoint{token: token}.httpClient()}
			} else {
				cmd := exec.Command(e.Bin, "mcp", "--profile", tc.profile)
				cmd.Env = append(os.Environ(), "PLEXUS_HOME="+e.Home)
				tr = &mcp.CommandTransport{Command: cmd}
			}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			c := mcp.NewClient(&mcp.Implementation{Name: "era-test", Version: "1"}, nil)
			cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: era2026})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != tc.want {
				t.Fatalf("the client speaks %s through profile %s over the %s face; want %s, as before the server itself", got, tc.profile, tc.face, tc.want)
			}
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			if tc.want == era2025 {
				// The session's own requests, which a session-era server
				// answers and the client sends only in that era.
				if err := cs.Ping(ctx, nil); err != nil {
					t.Fatalf("ping: %v", err)
				}
				if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
					t.Fatalf("logging/setLevel: %v", err)
				}
			}
		})
	}
}
