package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// The matrix's TypeScript side: its servers (testenv/peerkit/server.mjs)
// and its clients (client.mjs), which run every TypeScript row of the
// matrix in one node process.

// peerKitServer is one TypeScript server of the matrix: a command (stdio)
// or an HTTP server started once.
type peerKitServer struct {
	name, kind string
	command    []string
	start      func(t *testing.T) string
}

func peerKitServers(t *testing.T) []peerKitServer {
	needConformance(t)
	http := func(name, sdk, transport string) peerKitServer {
		return peerKitServer{name: name, kind: "http", start: func(t *testing.T) string { return testenv.StartPeerKitServer(t, sdk, transport) }}
	}
	stdio := func(name, sdk string) peerKitServer {
		return peerKitServer{name: name, kind: "stdio", command: testenv.PeerKitArgv(t, "server.mjs", "--sdk", sdk, "--transport", "stdio")}
	}
	return []peerKitServer{
		http("ts1-http", "ts1", "http"),
		stdio("ts1-stdio", "ts1"),
		http("ts2-http", "ts2", "http"),
		http("fastmcp-http", "fastmcp", "http"),
		http("fastmcp-stateless", "fastmcp", "stateless"),
		stdio("fastmcp-stdio", "fastmcp"),
	}
}

// tsEndpoint is a peerEndpoint as client.mjs reads it.
type tsEndpoint struct {
	Kind    string            `json:"kind"`
	URL     string            `json:"url,omitempty"`
	Token   string            `json:"token,omitempty"`
	Command []string          `json:"command,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

func tsEndpointOf(e peerEndpoint) tsEndpoint {
	out := tsEndpoint{Kind: e.kind, URL: e.url, Token: e.token, Command: e.command}
	for _, kv := range e.env {
		k, v, _ := strings.Cut(kv, "=")
		if out.Env == nil {
			out.Env = map[string]string{}
		}
		out.Env[k] = v
	}
	return out
}

// tsRow is one row for client.mjs.
type tsRow struct {
	ID       string     `json:"id"`
	Client   string     `json:"client"`
	Era      string     `json:"era"`
	Key      string     `json:"key"`
	Lane     string     `json:"lane,omitempty"` // the lane the row runs in, if any
	Endpoint tsEndpoint `json:"endpoint"`
	Bounds   tsBounds   `json:"bounds"` // how long it waits (bounds)
}

// runTSClients runs the rows in client.mjs and returns each row's
// observations; a row client.mjs did not report says so in every cell.
func runTSClients(t *testing.T, rows []tsRow, idle time.Duration) map[string]map[string]string {
	plan, _ := json.Marshal(map[string]any{"idleMs": idle.Milliseconds(), "parallel": 48, "rows": rows})
	p := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(p, plan, 0o600); err != nil {
		t.Fatal(err)
	}
	argv := testenv.PeerKitArgv(t, "client.mjs", p)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	got := map[string]map[string]string{}
	if jerr := json.Unmarshal(stdout.Bytes(), &got); jerr != nil {
		t.Errorf("client.mjs: %v %v\n%s", err, jerr, lastLines(stderr.String(), 50))
	}
	for _, r := range rows {
		if _, ok := got[r.ID]; !ok {
			got[r.ID] = allOps("client.mjs reported nothing for this row")
		}
	}
	return got
}
