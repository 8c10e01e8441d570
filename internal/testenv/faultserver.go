package testenv

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	faultOnce sync.Once
	faultPath string
	faultErr  error
)

// FaultServer builds the fault-injecting MCP server (testenv/faultserver)
// once per test process and returns its path. See its package comment for
// the flags.
func FaultServer(t testing.TB) string {
	t.Helper()
	faultOnce.Do(func() {
		dir, err := os.MkdirTemp("", "plexus-faultserver-")
		if err != nil {
			faultErr = err
			return
		}
		faultPath = filepath.Join(dir, "faultserver")
		cmd := exec.Command("go", "build", "-o", faultPath, "./internal/testenv/faultserver")
		cmd.Dir = RepoRoot()
		out, err := cmd.CombinedOutput()
		if err != nil {
			faultErr = errors.New("go build faultserver: " + err.Error() + "\n" + string(out))
		}
	})
	if faultErr != nil {
		t.Fatal(faultErr)
	}
	return faultPath
}
