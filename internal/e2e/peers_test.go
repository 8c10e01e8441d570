package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// Peers the project's own servers are not: the TypeScript peer
// (testenv/tspeer) and the go-sdk's conformance server, behind Plexus, driven
// by the official TypeScript and Go SDK clients.

// peerServer is one server a peer test puts behind Plexus: added by URL or
// command (args), with extra settings (JSON members) merged into its entry,
// and a bare profile of the same name.
type peerServer struct {
	name     string
	args     []string
	settings string
}

// peerEnv starts a daemon with the servers given, each in a bare profile of
// its name, and returns it with the face's base URL and token.
func peerEnv(t *testing.T, servers ...peerServer) (*testenv.Env, string, string) {
	t.Helper()
	e := testenv.New(t)
	e.StartDaemon()
	for _, s := range servers {
		e.MustRun(append([]string{"add", s.name}, s.args...)...)
	}
	p := filepath.Join(e.Home, "extensions.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(b)
	var profiles []string
	for _, s := range servers {
		if s.settings != "" {
			cfg = strings.Replace(cfg, `"`+s.name+`": {`, `"`+s.name+`": {`+s.settings+`,`, 1)
		}
		profiles = append(profiles, fmt.Sprintf(`%q: {"servers": [%q], "naming": "bare"}`, s.name, s.name))
	}
	cfg = strings.Replace(cfg, `"mcp": {`, `"mcp": {"face": {"allowExternalCall": true}, "profiles": {`+strings.Join(profiles, ", ")+`},`, 1)
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.Run("", "reload"); r.Code != 0 {
		t.Fatalf("plexus reload with %s:\n%s%s", cfg, r.Stdout, r.Stderr)
	}
	_, base, token := faceURL(t, e)
	return e, base, token
}

// longSession runs testenv/tspeer/longsession.ts with args and returns its
// step lines; it fails the test for every step that failed.
func longSession(t *testing.T, env []string, args ...string) []string {
	t.Helper()
	cmd := testenv.TSPeerCommand(t, "longsession.ts", args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	go func() { <-ctx.Done(); cmd.Process.Kill() }()
	out, err := cmd.Output()
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		lines = append(lines, line)
		if strings.HasPrefix(line, "FAIL ") {
			t.Errorf("long session: %s", line)
		}
	}
	if err != nil && !t.Failed() {
		t.Errorf("longsession.ts: %v\n%s\n%s", err, out, stderr.String())
	}
	t.Logf("long session %v:\n%s", args, out)
	return lines
}

// TestLongSession: after 100 calls on one session, the server's
// elicitation, sampling and roots requests — on the call's own stream and
// on the standalone GET stream — reach the TypeScript SDK client with their
// fields intact and are answered, through both faces, in both session-era
// protocol versions.
func TestLongSession(t *testing.T) {
	needConformance(t)
	peer := testenv.StartTSPeer(t)
	e, base, token := peerEnv(t, peerServer{name: "ts", args: []string{peer}})
	t.Run("fresh-session", func(t *testing.T) {
		// The control: the same elicitation with no call before it.
		longSession(t, nil, "--url", base+"/mcp/ts", "--token", token, "--calls", "0", "--steps", "elicitation", "--step-timeout", "5000")
	})
	steps := "elicitation,sampling,roots,standalone_elicitation,standalone_sampling,standalone_roots"
	for _, protocol := range []string{"2025-11-25", "2025-06-18"} {
		common := []string{"--calls", "100", "--protocol", protocol, "--step-timeout", "5000", "--steps", steps}
		t.Run("http/"+protocol, func(t *testing.T) {
			longSession(t, nil, append([]string{"--url", base + "/mcp/ts", "--token", token}, common...)...)
		})
		t.Run("stdio/"+protocol, func(t *testing.T) {
			longSession(t, []string{"PLEXUS_HOME=" + e.Home}, append([]string{"--stdio", e.Bin + " mcp --profile ts"}, common...)...)
		})
	}
}
