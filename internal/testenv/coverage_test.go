package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// coverChildEnv makes TestCoverageOfWhatTheTestsRun's inner run build and
// run a command; unset, that step does nothing.
const coverChildEnv = "PLEXUS_TESTENV_COVER_CHILD"

// TestCoverageOfWhatTheTestsRun runs the README's whole-system coverage
// command on this package alone: a test that runs a command the harness
// built must leave that command's coverage in the -test.gocoverdir folder,
// beside the test binary's own, so that covdata counts the command's code.
func TestCoverageOfWhatTheTestsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a coverage test of its own; the full run does it")
	}
	dir := t.TempDir()
	cmd := exec.Command("go", "test", "-count=1", "-cover", "-coverpkg=./...", "-run", "^TestCoverChild$", "./internal/testenv", "-args", "-test.gocoverdir="+dir)
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), coverChildEnv+"=1", "GOCOVERDIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the coverage run failed: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "tool", "covdata", "percent", "-i="+dir, "-pkg="+Module+"internal/testenv/scriptserver").CombinedOutput()
	if err != nil {
		t.Fatalf("covdata: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "scriptserver") || strings.Contains(string(out), " 0.0%") {
		t.Errorf("the command's coverage is missing from %s:\n%s", dir, out)
	}
}

// TestCoverChild is the inner run's step: it builds scriptserver through
// the harness and runs it once (its usage error ends it at once).
func TestCoverChild(t *testing.T) {
	if os.Getenv(coverChildEnv) == "" {
		t.Skip("a step of TestCoverageOfWhatTheTestsRun")
	}
	bin := BuildCommand(t, "./internal/testenv/scriptserver")
	if out, err := exec.Command(bin).CombinedOutput(); err == nil || !strings.Contains(string(out), "usage") {
		t.Fatalf("scriptserver without arguments: %v %s", err, out)
	}
	if m, _ := filepath.Glob(filepath.Join(os.Getenv("GOCOVERDIR"), "covcounters.*")); len(m) == 0 {
		t.Error("the command wrote no coverage counters")
	}
}
