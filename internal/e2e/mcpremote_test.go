package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestMCPRemoteLongSession: mcp-remote from npm — the bridge that
// local-only clients such as Claude Desktop run in front of a remote
// server — in front of the HTTP face, driven over stdio by the TypeScript
// SDK client: after 100 calls on one session, the server's elicitation,
// sampling and roots requests, on the call's stream and on the standalone
// GET stream, cross both proxies (mcp-remote, then Plexus) and are
// answered, in both session-era protocol versions.
func TestMCPRemoteLongSession(t *testing.T) {
	t.Parallel()
	needConformance(t)
	modules := testenv.NPMInstall(t, filepath.Join(testenv.RepoRoot(), "internal", "e2e", "testdata", "mcpremote"), "mcpremote")
	bridge := filepath.Join(modules, "mcp-remote", "dist", "proxy.js")
	peer := testenv.StartTSPeer(t)
	_, base, token := peerEnv(t, peerServer{name: "ts", args: []string{peer}})

	// The token goes in a header file: mcp-remote reads a header from its
	// command line as one argument, and the stdio command is split at
	// spaces. Its own state (OAuth client registrations it would make)
	// goes under a home of the test's.
	dir := t.TempDir()
	headers := filepath.Join(dir, "headers")
	if err := os.WriteFile(headers, []byte("Authorization: Bearer "+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	node := "node"
	command := strings.Join([]string{node, bridge, base + "/mcp/ts", "--header-file", headers, "--allow-http", "--transport", "http-only", "--silent"}, " ")
	env := []string{"HOME=" + dir, "MCP_REMOTE_CONFIG_DIR=" + filepath.Join(dir, "mcp-auth")}
	steps := "elicitation,sampling,roots,standalone_elicitation,standalone_sampling,standalone_roots"
	for _, protocol := range []string{"2025-11-25", "2025-06-18"} {
		t.Run(protocol, func(t *testing.T) {
			lines := longSession(t, env, "--stdio", command, "--calls", "100", "--protocol", protocol, "--step-timeout", "10000", "--steps", steps)
			if len(lines) == 0 {
				t.Fatal("the long session through mcp-remote printed nothing")
			}
		})
	}
}
