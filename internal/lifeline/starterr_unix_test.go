//go:build unix

package lifeline

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestMissingInterpreterIsNamed starts, for real, a script whose #!
// interpreter does not exist: the kernel says "no such file or directory"
// of a file that is there, and the explained error names the interpreter.
func TestMissingInterpreterIsNamed(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "server.js")
	if err := os.WriteFile(script, []byte("#!/nonexistent/bin/node --flag\nconsole.log(1)\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := exec.Command(script).Start()
	if err == nil {
		t.Fatal("the script started")
	}
	got := ExplainStartError(script, err).Error()
	if !strings.Contains(got, "/nonexistent/bin/node") || !strings.Contains(got, "not installed") {
		t.Errorf("error %q does not name the missing interpreter", got)
	}

	// The shim says the same on its stderr, and exits 127.
	cmd := exec.Command(os.Args[0], shimArg, "--", script)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 127 {
		t.Fatalf("shim: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "/nonexistent/bin/node") {
		t.Errorf("shim said %q", out)
	}
}

// TestOtherStartErrorsAreKept: a missing file, or a missing file's own
// error, is not reworded.
func TestOtherStartErrorsAreKept(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nothere")
	err := exec.Command(missing).Start()
	if got := ExplainStartError(missing, err); got != err {
		t.Errorf("missing file: %v", got)
	}
	if got := ExplainStartError("/bin/sh", syscall.EACCES); got != syscall.EACCES {
		t.Errorf("EACCES: %v", got)
	}
}
