package testenv

import (
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// The peer matrix's TypeScript peers (testenv/peerkit): its set of tools,
// resources and prompts on the TypeScript SDK 1.x and 2.x and on fastmcp
// (server.mjs), and its TypeScript clients (client.mjs), pinned by
// package-lock.json and run with node. The scripts are plain ES modules,
// copied beside the installed node_modules so that their imports resolve
// there; no compiler runs.

// PeerKitDir installs the peer kit (npm ci, once) and returns the
// directory its scripts run from.
func PeerKitDir(t testing.TB) string {
	t.Helper()
	return npmScripts(t, "peerkit", "*.mjs")
}

// PeerKitArgv is the command line that runs one of the kit's scripts.
func PeerKitArgv(t testing.TB, script string, args ...string) []string {
	t.Helper()
	return append([]string{"node", filepath.Join(PeerKitDir(t), script)}, args...)
}

// StartPeerKitServer runs server.mjs with sdk ("ts1", "ts2", "fastmcp") over
// an HTTP transport ("http" or "stateless") on 127.0.0.1 and returns its
// endpoint (…/mcp) once it accepts connections. It is stopped when the
// test ends.
func StartPeerKitServer(t testing.TB, sdk, transport string) string {
	t.Helper()
	port := strconv.Itoa(FreePort(t))
	argv := PeerKitArgv(t, "server.mjs", "--sdk", sdk, "--transport", transport, "--port", port)
	cmd := exec.Command(argv[0], argv[1:]...)
	var out SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := "127.0.0.1:" + port
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return "http://" + addr + "/mcp"
		}
		if time.Now().After(end) {
			t.Fatalf("server.mjs --sdk %s --transport %s did not listen on %s:\n%s", sdk, transport, addr, out.String())
		}
	}
}
