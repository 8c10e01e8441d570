package shimentry

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// heavy are packages of the binary whose initialisation the shim does not
// need and shows in GODEBUG=inittrace (they do work when initialised).
var heavy = []string{
	"github.com/plexus-mcp/plexus/internal/cli ",
	"github.com/plexus-mcp/plexus/internal/registry ",
	"github.com/prometheus/client_golang/prometheus ",
}

// TestShimSkipsTheRestOfTheBinary: `plexus __plexus-shim -- CMD` runs CMD
// and exits with its code before the CLI, the registry client and the
// metrics are initialised, where any other command initialises them: the
// shim starts in front of every stdio server, on the path of the first
// call to a server started on demand.
func TestShimSkipsTheRestOfTheBinary(t *testing.T) {
	t.Parallel()
	bin := testenv.Binary(t)
	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	out, code := run("--version")
	if code != 0 {
		t.Fatalf("plexus --version exited %d:\n%s", code, out)
	}
	for _, pkg := range heavy {
		if !strings.Contains(out, "init "+pkg) {
			t.Fatalf("plexus --version did not initialise %s (the check below would see nothing):\n%s", pkg, out)
		}
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to run behind the shim")
	}
	// The command's own code is the shim's: the shim ran it.
	out, code = run(Command, "--", sh, "-c", "exit 3")
	if code != 3 {
		t.Fatalf("the shim exited %d, want its command's 3:\n%s", code, out)
	}
	for _, pkg := range heavy {
		if strings.Contains(out, "init "+pkg) {
			t.Errorf("the shim initialised %s", pkg)
		}
	}
}
