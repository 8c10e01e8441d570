package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestPidsCgroupOutlivesAnOldStartsReleaseAsRoot: a server started again while
// its last process is being cleaned up shares the pids cgroup (it is
// named after the private folder); the old start's release must leave it
// to the new start, whose launcher has yet to join it, and the new
// start's release removes it.
func TestPidsCgroupOutlivesAnOldStartsReleaseAsRoot(t *testing.T) {
	testenv.NeedRoot(t, "pids cgroups are made for a daemon running as root")
	base := Policy{Private: filepath.Join(t.TempDir(), "private"), Limits: Limits{Processes: 8}}
	old, fresh := base, base
	if err := PreparePids(&old); err != nil {
		t.Skipf("no pids cgroup here: %v", err)
	}
	if err := PreparePids(&fresh); err != nil {
		t.Fatal(err)
	}
	if old.PidsCgroup != fresh.PidsCgroup {
		t.Fatalf("two starts of one server got cgroups %s and %s", old.PidsCgroup, fresh.PidsCgroup)
	}
	ReleasePids(&old)
	if _, err := os.Stat(filepath.Join(fresh.PidsCgroup, "cgroup.procs")); err != nil {
		t.Fatalf("the old start's release removed the new start's cgroup: %v", err)
	}
	ReleasePids(&fresh)
	if _, err := os.Stat(fresh.PidsCgroup); !os.IsNotExist(err) {
		t.Fatalf("the cgroup outlived its last start: %v", err)
	}
}
