package e2e

import (
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestStopEndsProcessGroups: disabling a server, deleting it and stopping
// the daemon (SIGTERM) each end the server's whole process group — the
// shim, the server and the grandchild it left holding stdout — before they
// return. /proc is read, so that a zombie or a process that left the group
// is told apart.
func TestStopEndsProcessGroups(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	fs := testenv.FaultServer(t)
	names := []string{"disabled", "deleted", "shutdown"}
	files := map[string]faultFiles{}
	srvs := map[string]any{}
	for _, n := range names {
		files[n] = newFaultFiles(t)
		srvs[n] = stdioServer(fs, files[n].args("--grandchild")...)
	}
	writeSettings(t, e, 0, srvs)
	e.StartDaemon()

	groups := map[string]int{}
	for _, n := range names {
		st := waitState(t, e, n, "ready", 20*time.Second)
		members := map[int]bool{}
		for _, p := range groupMembers(t, st.PID) {
			members[p.PID] = true
		}
		for _, s := range files[n].starts(t) {
			if !members[s.PID] {
				t.Fatalf("%s: %s %d is not in the server's process group %d", n, s.What, s.PID, st.PID)
			}
		}
		if !members[st.PID] || len(members) < 3 {
			t.Fatalf("%s: process group %d has %d live processes, want the shim, the server and the grandchild", n, st.PID, len(members))
		}
		groups[n] = st.PID
	}

	e.MustRun("disable", "disabled")
	groupEnded(t, "disable", groups["disabled"])
	if st := statusOf(t, e, "disabled"); st.State != "disabled" || st.PID != 0 {
		t.Errorf("disabled server: %+v", st)
	}
	e.MustRun("rm", "deleted")
	groupEnded(t, "rm", groups["deleted"])
	if st := statusOf(t, e, "shutdown"); st.State != "ready" || st.PID != groups["shutdown"] {
		t.Errorf("the remaining server was disturbed: %+v", st)
	}
	e.StopDaemon()
	groupEnded(t, "daemon shutdown", groups["shutdown"])
	for _, n := range names {
		noStrays(t, files[n], 0, 0)
	}
}

// groupEnded fails unless no live process of group pgid is left now, when
// the operation that ends it has returned.
func groupEnded(t *testing.T, op string, pgid int) {
	t.Helper()
	if left := groupMembers(t, pgid); len(left) > 0 {
		t.Errorf("%s returned with %d live processes left in group %d: %+v", op, len(left), pgid, left)
		waitGroupEmpty(t, pgid, 10*time.Second)
	}
}
