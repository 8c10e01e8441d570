//go:build unix

package localapi

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestForeignUIDRefusedAsRoot connects as another user. The socket is 0600 in
// production; here it is opened up on purpose so that the uid check itself
// is what refuses the request.
func TestForeignUIDRefusedAsRoot(t *testing.T) {
	testenv.NeedRoot(t, "a client of another uid is started with setuid")
	// A directory the other user can enter, holding the socket and a copy
	// of this test binary (the go tool's build directory is private).
	dir, err := os.MkdirTemp("", "plexus-uid-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock, c := serveIn(t, dir)
	resp := do(t, c, "GET", "/v1/status", "")
	if resp.StatusCode != 200 {
		t.Fatalf("own uid refused: %d", resp.StatusCode)
	}
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(dir, "probe")
	if err := os.WriteFile(probe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(probe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "PLEXUS_LOCALAPI_PROBE="+sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), strconv.Itoa(http.StatusForbidden)+" ") || !strings.Contains(string(out), "uid 65534") {
		t.Fatalf("foreign uid got: %s", out)
	}
}
