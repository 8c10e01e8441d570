package testenv

import (
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// PeerServer builds testenv/peerserver, the peer matrix's set of tools,
// resources and prompts on the go-sdk or mcp-go, and returns its path.
func PeerServer(t testing.TB) string {
	t.Helper()
	return BuildCommand(t, "./internal/testenv/peerserver")
}

// StartPeerServer runs peerserver on sdk ("gosdk" or "mcpgo") over an HTTP
// transport ("http", "stateless" or "sse") on 127.0.0.1, and returns its
// endpoint (…/mcp, or …/sse for SSE) once it accepts connections. It is
// stopped when the test ends.
func StartPeerServer(t testing.TB, sdk, transport string) string {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(FreePort(t))
	cmd := exec.Command(PeerServer(t), "-sdk", sdk, "-transport", transport, "-addr", addr)
	var out SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	path := "/mcp"
	if transport == "sse" {
		path = "/sse"
	}
	for end := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return "http://" + addr + path
		}
		if time.Now().After(end) {
			t.Fatalf("peerserver -sdk %s -transport %s did not listen on %s:\n%s", sdk, transport, addr, out.String())
		}
	}
}
