package tui

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestTerminalSlowStart adds, in the real terminal, a server that takes
// seconds to start (a real child process that writes a stderr line and
// sleeps, as a first `npx -y` does while it downloads): while the form
// waits it shows the seconds waited and the server's latest stderr line.
func TestTerminalSlowStart(t *testing.T) {
	needTmux(t)
	e := testenv.New(t)
	e.StartDaemon()
	script := filepath.Join(t.TempDir(), "slow.sh")
	body := "#!/bin/sh\necho 'npm warn exec The following package was not found and will be installed' >&2\nsleep 6\nexec " +
		strconv.Quote(e.Bin) + " example-server\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	x := openStdioForm(t, e)
	x.must("send-keys", "-t", "tui", "-l", script)
	x.must("send-keys", "-t", "tui", "Tab", "C-u")
	x.must("send-keys", "-t", "tui", "-l", "slow")
	x.must("send-keys", "-t", "tui", "C-s")
	x.waitText("starting slow to check that it works… 2s", "stderr: npm warn exec The following package was not found")
}
