package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestThinPATHFindsVersionManagerCommands: a daemon started with a bare
// PATH and no login shell to ask (launchd gives no SHELL profile run, a
// profile may set PATH for interactive shells only) still finds a server
// command that volta put in ~/.volta/bin.
func TestThinPATHFindsVersionManagerCommands(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	home := t.TempDir()
	volta := filepath.Join(home, ".volta", "bin")
	if err := os.MkdirAll(volta, 0o755); err != nil {
		t.Fatal(err)
	}
	writeScript(t, filepath.Join(volta, "volta-mcp-server"), "#!/bin/sh\nexec "+e.Bin+" example-server\n")
	e.ExtraEnv = []string{"PATH=/usr/bin:/bin", "SHELL=", "HOME=" + home}
	e.StartDaemon()

	e.MustRun("add", "volta", "--", "volta-mcp-server")
	if st := waitState(t, e, "volta", "ready", 20*time.Second); st.Tools != 6 {
		t.Fatalf("volta: %+v", st)
	}
}
