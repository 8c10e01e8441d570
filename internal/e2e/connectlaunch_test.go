package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestConnectFollowsHomeAndPort: with Plexus on a home and a port of its
// own, `plexus connect claude` writes both into Claude Code's entry, and
// the entry's exact command — run as a client runs it, with the user's
// environment and none of Plexus's, while no daemon runs — starts the
// daemon on that home and that port and serves its servers' tools. No
// second daemon appears on ~/.plexus.
func TestConnectFollowsHomeAndPort(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	h := newClientHome(t, e)
	addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	e.DaemonArgs = []string{"--listen", addr}
	e.StartDaemon()
	e.MustRun("add", "example", "--", e.Bin, "example-server")
	echo := toolNamed(t, tools(t, e), "example", "echo").Name
	e.MustRun("connect", "claude", "--yes")

	var file struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	b, err := os.ReadFile(filepath.Join(h.dir, clientFiles["claude"]))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	entry := file.MCPServers["plexus"]
	if entry.Env["PLEXUS_HOME"] != e.Home || !slices.Equal(entry.Args, []string{"mcp", "--listen", addr}) {
		t.Fatalf("the entry does not carry the home and the port:\n%s", b)
	}
	e.StopDaemon()

	// As Claude Code starts it: the entry's command, arguments and env,
	// over the user's own environment (no PLEXUS_HOME).
	cmd := exec.Command(entry.Command, entry.Args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, h.env...)
	for k, v := range entry.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, testenv.Transport(t, cmd), nil)
	if err != nil {
		t.Fatal(err)
	}
	pid := adoptStartedDaemon(t, e)
	defer stopStartedDaemon(t, pid)
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "from the entry"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "from the entry" {
		t.Fatalf("calling %s through the entry's command: %+v %v", echo, res, err)
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("the daemon the entry started does not listen on %s: %v", addr, err)
	}
	resp.Body.Close()
	if _, err := os.Stat(filepath.Join(h.dir, ".plexus")); !os.IsNotExist(err) {
		t.Fatalf("a second home appeared in the user's home: %v", err)
	}
}
