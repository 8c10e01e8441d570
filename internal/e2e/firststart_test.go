package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestFirstStartDownloadGetsItsOwnLimit: the first start of a server run
// by a package runner (here a stand-in npx that prints a download line and
// takes 2.5 s) is bounded by installTimeoutMs, not startupTimeoutMs: add
// shows the download's own line while it waits and succeeds; with an
// install limit too short the error names that setting and its flag.
func TestFirstStartDownloadGetsItsOwnLimit(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	fault := testenv.FaultServer(t)
	bin := t.TempDir()
	npx := filepath.Join(bin, "npx")
	// It refuses Plexus's install step (npm exec --call), so that the
	// server starts through it as npx runs it.
	script := "#!/bin/sh\ncase \"$*\" in *--call*) exit 1;; esac\necho 'npm http fetch GET 200 https://registry.npmjs.org/@example%2fserver 1800ms (cache miss)' >&2\nsleep 2.5\nexec " + fault + "\n"
	if err := os.WriteFile(npx, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	e.StartDaemon()
	r := e.Run("", "add", "dl", "--startup-timeout", "1000", "--", npx, "-y", "@example/server")
	if r.Code != 0 {
		t.Fatalf("add with a 1 s startup timeout and a 2.5 s first start: exit %d\n%s", r.Code, r.Stderr)
	}
	mustContain(t, "add's progress", r.Stderr, "npm http fetch GET 200")

	r = e.Run("", "add", "dl2", "--startup-timeout", "500", "--install-timeout", "1000", "--", npx, "-y", "@example/server")
	if r.Code == 0 {
		t.Fatalf("add with a 1 s install limit and a 2.5 s first start succeeded:\n%s", r.Stderr)
	}
	if !strings.Contains(r.Stderr, "installTimeoutMs") || !strings.Contains(r.Stderr, "--install-timeout") {
		t.Fatalf("the error does not name the install limit's setting and flag:\n%s", r.Stderr)
	}
}
