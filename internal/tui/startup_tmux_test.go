package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestTerminalStartupTimeout: in the real terminal, the form's startup
// field takes a server's startup timeout; a server slower than the one
// typed is refused with the timeout named (nothing saved), a timeout long
// enough saves it as startupTimeoutMs, the edit form shows it again, and a
// word in the field is refused before anything is sent.
func TestTerminalStartupTimeout(t *testing.T) {
	needTmux(t)
	e := testenv.New(t)
	e.StartDaemon()
	script := filepath.Join(t.TempDir(), "slow.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nsleep 3\nexec '"+e.Bin+"' example-server\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	x := openStdioForm(t, e)
	x.waitText("startup ms")
	x.must("send-keys", "-t", "tui", "-l", script)
	x.must("send-keys", "-t", "tui", "Tab", "C-u")
	x.must("send-keys", "-t", "tui", "-l", "slow")
	x.must("send-keys", "-t", "tui", "Tab", "Tab", "Tab") // past env and the sandbox
	x.must("send-keys", "-t", "tui", "-l", "soon")
	x.must("send-keys", "-t", "tui", "C-s")
	x.waitText("error: startup ms: give a whole number of milliseconds")

	x.must("send-keys", "-t", "tui", "C-u")
	x.must("send-keys", "-t", "tui", "-l", "1000")
	x.must("send-keys", "-t", "tui", "C-s")
	x.waitText("startup timeout (1s) exceeded", "Nothing was saved")
	if ext, _ := files(t, e.Home); strings.Contains(ext, "slow") {
		t.Fatalf("a server that did not start in time was saved:\n%s", ext)
	}

	x.must("send-keys", "-t", "tui", "C-u")
	x.must("send-keys", "-t", "tui", "-l", "60000")
	x.must("send-keys", "-t", "tui", "C-s")
	x.waitText("added slow (ready")
	deadline := time.Now().Add(waitFor)
	for ext, _ := files(t, e.Home); !strings.Contains(ext, `"startupTimeoutMs": 60000`); ext, _ = files(t, e.Home) {
		if time.Now().After(deadline) {
			t.Fatalf("the startup timeout was not saved:\n%s", ext)
		}
		time.Sleep(100 * time.Millisecond)
	}
	x.must("send-keys", "-t", "tui", "Enter")
	x.waitText("edit slow", "startup ms    60000")
}
