package testenv

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// The TypeScript peer (testenv/tspeer): a conformance MCP server and a
// long-session client on the official TypeScript SDK, pinned by its
// package-lock.json and run with tsx. Its sources are copied beside the
// installed node_modules so their imports resolve there.

// TSPeerDir installs the TypeScript peer (npm ci, once) and returns the
// directory its scripts run from.
func TSPeerDir(t testing.TB) string {
	t.Helper()
	return npmScripts(t, "tspeer", "*.ts")
}

// TSPeerCommand is a command that runs one of the peer's scripts (e.g.
// "longsession.ts") with node and tsx, in the peer's directory. Its
// environment is this process's with TMPDIR set to a folder of the test's
// own: tsx keeps its compile cache in the temporary folder (tsx-UID), and
// that would outlive the test; a caller adds to cmd.Env, not replaces it.
func TSPeerCommand(t testing.TB, script string, args ...string) *exec.Cmd {
	t.Helper()
	dir := TSPeerDir(t)
	cmd := exec.Command("node", append([]string{"--import", "tsx", script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	return cmd
}

// StartTSPeer runs the peer's session-era MCP server (server.ts) over
// streamable HTTP on 127.0.0.1 and returns its endpoint URL
// (http://localhost:PORT/mcp, as the conformance suite wants it) once it
// accepts connections. It is stopped when the test ends.
func StartTSPeer(t testing.TB) string {
	t.Helper()
	return startTSPeer(t, "server.ts")
}

// StartTSPeer2026 runs the peer as a strict MCP 2026-07-28 server
// (modern.ts): stateless, refusing session-era requests. Like StartTSPeer.
func StartTSPeer2026(t testing.TB) string {
	t.Helper()
	return startTSPeer(t, "modern.ts")
}

func startTSPeer(t testing.TB, script string) string {
	t.Helper()
	port := FreePort(t)
	cmd := TSPeerCommand(t, script, "--port", strconv.Itoa(port))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return fmt.Sprintf("http://localhost:%d/mcp", port)
		}
		if time.Now().After(end) {
			t.Fatalf("the TypeScript peer did not listen on %s:\n%s", addr, out.String())
		}
	}
}
