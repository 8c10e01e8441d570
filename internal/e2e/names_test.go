package e2e

import (
	"regexp"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

var toolNameRule = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// TestNamesDistinctAndStable: two servers with the same tools get distinct
// names, and every name is the same after the daemon restarts.
func TestNamesDistinctAndStable(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.StartDaemon()
	e.MustRun("add", "alpha", "--", e.Bin, "example-server")
	e.MustRun("add", "beta", "--command", e.Bin+" example-server")
	waitState(t, e, "alpha", "ready", 20*time.Second)
	waitState(t, e, "beta", "ready", 20*time.Second)

	before := map[string]string{}
	for _, tl := range tools(t, e) {
		if !toolNameRule.MatchString(tl.Name) {
			t.Errorf("name %q breaks the model-tool rule", tl.Name)
		}
		before[tl.Server+"/"+tl.Tool] = tl.Name
	}
	if a, b := before["alpha/echo"], before["beta/echo"]; a == "" || a == b {
		t.Fatalf("echo of alpha and beta: %q and %q", a, b)
	}

	e.StopDaemon()
	e.StartDaemon()
	waitState(t, e, "alpha", "ready", 20*time.Second)
	waitState(t, e, "beta", "ready", 20*time.Second)
	after := tools(t, e)
	if len(after) != len(before) {
		t.Fatalf("%d tools after restart, %d before", len(after), len(before))
	}
	for _, tl := range after {
		if before[tl.Server+"/"+tl.Tool] != tl.Name {
			t.Errorf("%s/%s renamed from %q to %q", tl.Server, tl.Tool, before[tl.Server+"/"+tl.Tool], tl.Name)
		}
	}
}

// TestKilledDaemonLeavesNoServer: a daemon killed with SIGKILL cannot stop
// its servers, so the lifeline shim must end each server's whole process
// group — including a grandchild, as npx leaves.
func TestKilledDaemonLeavesNoServer(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.StartDaemon()
	e.MustRun("add", "example", "--", "sh", "-c", "sleep 1000 & exec "+e.Bin+" example-server")
	st := waitState(t, e, "example", "ready", 20*time.Second)
	e.KillDaemon()
	groupGone(t, st.PID, 10*time.Second)
}
