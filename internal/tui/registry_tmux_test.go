package tui

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/registry/registrytest"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestTerminalRegistry searches the MCP registry in the real terminal
// (tmux, 120x30) and adds from the results through the form: an npm
// server (npx, resolved without the network) that starts, and a remote
// whose bearer token is typed masked into the form and checked by the
// server; a required value the entry lacks is asked for first.
func TestTerminalRegistry(t *testing.T) {
	needTmux(t)
	const canary = "CANARY-tui-registry-6b0d"
	reg := registrytest.Start(t)
	remote := testenv.KeyedServer(t, func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer "+canary })
	reg.SetRemoteURL("io.github.github/github-mcp-server", remote)
	e := testenv.New(t)
	testenv.NPMProject(t, filepath.Dir(e.Home))
	e.StartDaemon()
	e.MustRun("settings", "set", "registry.url", reg.URL)

	x := newTmux(t)
	x.must("new-session", "-d", "-s", "tui", "-x", "120", "-y", "30", "env PLEXUS_HOME="+e.Home+" "+e.Bin+" tui")
	x.must("set-option", "-t", "tui", "remain-on-exit", "on")
	var screens []string
	screens = append(screens, x.waitText("No servers yet. Press / to find one in the MCP registry"))
	x.must("send-keys", "-t", "tui", "/")
	screens = append(screens, x.waitText("› registry", "from "+reg.URL, "io.github.modelcontextprotocol/server-memory", "remote (not mcpb)"))
	x.must("send-keys", "-t", "tui", "-l", "memory")
	x.must("send-keys", "-t", "tui", "Enter")
	x.waitText("› io.github.modelcontextprotocol/server-memory", "1 npm @modelcontextprotocol/server-memory@2026.8.31")
	x.must("send-keys", "-t", "tui", "Enter")
	screens = append(screens, x.waitText("new server", "from the MCP registry (npm", "npx -y @modelcontextprotocol/server-memory@2026.8.31", "name          memory"))
	x.must("send-keys", "-t", "tui", "C-s")
	screens = append(screens, x.waitText("added memory (ready, "))

	// A remote with a secret: the bearer field says what it wants; what is
	// typed is masked, stored, and reaches the server.
	x.must("send-keys", "-t", "tui", "/")
	x.waitText("› registry")
	x.must("send-keys", "-t", "tui", "C-u")
	x.must("send-keys", "-t", "tui", "-l", "github-mcp")
	x.must("send-keys", "-t", "tui", "Enter")
	x.waitText("› io.github.github/github-mcp-server")
	x.must("send-keys", "-t", "tui", "Enter")
	screens = append(screens, x.waitText("name          github", "required: Authentication token (PAT or App token)"))
	x.must("send-keys", "-t", "tui", "Down")
	x.must("send-keys", "-t", "tui", "-l", canary)
	screens = append(screens, x.waitText("bearer token  ••••"))
	x.must("send-keys", "-t", "tui", "C-s")
	screens = append(screens, x.waitText("added github (ready, 1 tool)"))

	// A required value the entry lacks is asked for before the form.
	x.must("send-keys", "-t", "tui", "/")
	x.must("send-keys", "-t", "tui", "C-u")
	x.must("send-keys", "-t", "tui", "-l", "neo4j")
	x.must("send-keys", "-t", "tui", "Enter")
	x.waitText("› io.github.neo4j-contrib/mcp-neo4j-cypher")
	x.must("send-keys", "-t", "tui", "Enter")
	screens = append(screens, x.waitText("needs NEO4J_URI:", "Neo4j connection URI"))
	x.must("send-keys", "-t", "tui", "-l", "bolt://127.0.0.1:1")
	x.must("send-keys", "-t", "tui", "Enter")
	x.waitText("needs NEO4J_USERNAME:")
	x.must("send-keys", "-t", "tui", "-l", "neo4j")
	x.must("send-keys", "-t", "tui", "Enter")
	screens = append(screens, x.waitText("uvx mcp-neo4j-cypher==0.5.1", "NEO4J_PASSWORD (required: Neo4j password)"))
	x.must("send-keys", "-t", "tui", "Escape")
	x.waitText("nothing changed")

	for _, s := range screens {
		if strings.Contains(s, canary) {
			t.Fatalf("the terminal showed the secret:\n%s", s)
		}
	}
	ext, creds := files(t, e.Home)
	if !strings.Contains(ext, `"bearerTokenEnvVar": "GITHUB_TOKEN"`) || strings.Contains(ext, canary) || !strings.Contains(creds, canary) {
		t.Errorf("the token is not where it belongs:\n%s", ext)
	}
}
