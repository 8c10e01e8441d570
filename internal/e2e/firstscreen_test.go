package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestREADMEFirstScreen runs the README's first screen as a new user
// would, on a clean home (HOME a fresh folder, no PLEXUS_HOME: the
// daemon's home is ~/.plexus): install (the test's binary is on PATH
// already), run the daemon, add a server from npm, connect Claude Code —
// and then, as Claude Code does, start the entry connect wrote and call the
// server's tool through it.
func TestREADMEFirstScreen(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("npm"); err != nil && os.Getenv("CI") == "" {
		t.Skip("npm is missing (CI installs it)")
	}
	lines := readmeBlock(t, "## Install, run, connect")
	e := testenv.New(t)
	h := newClientHome(t, e)
	e.Home = filepath.Join(h.dir, ".plexus")
	e.ExtraEnv = append(e.ExtraEnv, "PLEXUS_HOME=") // the defaults
	// The npm server at the version the tests pin (npm ci), run as the
	// line runs it: npx would fetch whatever is newest.
	memory := testenv.NPMBin(t, "mcp-server-memory")
	stand := strings.NewReplacer("npx -y @modelcontextprotocol/server-memory", memory)
	for _, line := range lines {
		switch {
		case strings.HasPrefix(line, "go install "):
			continue // the test's binary is on PATH already
		case strings.HasPrefix(line, "plexus daemon"):
			// The harness runs it (on a free port: tests run many daemons).
			e.StartDaemon()
			continue
		}
		r := e.Shell("", stand.Replace(line))
		if r.Code != 0 {
			t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", line, r.Code, r.Stdout, r.Stderr)
		}
		if strings.Contains(line, "tools --server memory") && !strings.Contains(r.Stdout, "read_graph") {
			t.Errorf("%s printed:\n%s", line, r.Stdout)
		}
	}
	st := servers(t, e)
	if s := st["memory"]; s.State != "ready" || s.Tools == 0 {
		t.Fatalf("memory after the first screen: %+v", s)
	}
	readGraph := toolNamed(t, tools(t, e), "memory", "read_graph").Name

	var file struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	b, err := os.ReadFile(filepath.Join(h.dir, clientFiles["claude"]))
	if err != nil || json.Unmarshal(b, &file) != nil {
		t.Fatalf("Claude Code's file after connect: %v\n%s", err, b)
	}
	entry, ok := file.MCPServers["plexus"]
	if !ok {
		t.Fatalf("no plexus entry:\n%s", b)
	}
	cmd := exec.Command(entry.Command, entry.Args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, h.env...)
	for k, v := range entry.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "1"}, nil).Connect(ctx, testenv.Transport(t, cmd), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: readGraph, Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("calling %s as Claude Code: %+v %v", readGraph, res, err)
	}
}

// readmeBlock returns the command lines of the first sh block after the
// README heading, without comments and blank lines.
func readmeBlock(t *testing.T, heading string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README has no %q section", heading)
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	block, _, ok2 := strings.Cut(block, "\n```")
	if !ok || !ok2 {
		t.Fatalf("the README's %q has no sh block", heading)
	}
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if cmd, _, found := strings.Cut(l, "  #"); found {
			l = strings.TrimSpace(cmd)
		}
		lines = append(lines, l)
	}
	return lines
}
