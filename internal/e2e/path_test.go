package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestThinPATHFindsLoginShellCommands: a daemon started by a service manager
// has a thin PATH; a command that the user's login shell would find (npx in
// ~/.nvm, say) is found all the same, and one found nowhere is an error
// naming the command and the PATH searched (R-RUN-5).
func TestThinPATHFindsLoginShellCommands(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	dir := t.TempDir()
	tools := filepath.Join(dir, "user-tools")
	if err := os.Mkdir(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	// A command only the login shell's PATH has.
	writeScript(t, filepath.Join(tools, "my-mcp-server"), "#!/bin/sh\nexec "+e.Bin+" example-server\n")
	// A login shell whose profile puts that directory on PATH.
	shell := filepath.Join(dir, "loginsh")
	writeScript(t, shell, "#!/bin/sh\nPATH=\""+tools+":$PATH\"; export PATH\n[ \"$1\" = \"-lc\" ] && shift\nexec /bin/sh -c \"$1\"\n")
	e.ExtraEnv = []string{"PATH=/usr/bin:/bin", "SHELL=" + shell}
	e.StartDaemon()

	e.MustRun("add", "mine", "--", "my-mcp-server")
	st := waitState(t, e, "mine", "ready", 20*time.Second)
	if st.Tools != 6 {
		t.Fatalf("mine: %+v", st)
	}

	r := e.Run("", "add", "nowhere", "--", "no-such-mcp-server")
	if r.Code == 0 {
		t.Fatal("a command found nowhere was saved")
	}
	for _, want := range []string{"no-such-mcp-server", "/usr/bin", tools} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("error does not name %q:\n%s", want, r.Stderr)
		}
	}
	// The first line fits a terminal: the PATH is on a detail line, and
	// nothing is said twice.
	first, _, _ := strings.Cut(r.Stderr, "\n")
	if strings.Contains(first, "/usr/bin") || len(first) > 160 {
		t.Errorf("the first line of the error holds the PATH or is too long:\n%s", r.Stderr)
	}
	if strings.Count(r.Stderr, tools) != 1 || strings.Count(r.Stderr, "not found in PATH") != 1 {
		t.Errorf("the error repeats itself:\n%s", r.Stderr)
	}
}

func writeScript(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}
