//go:build unix

package testenv

import (
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"

	"github.com/plexus-mcp/plexus/internal/lifeline"
)

// The parent-death signal reaches a test's direct child only; what that
// child started in its group would outlive a killed test binary. So each
// test binary runs one keeper: a shell that reads "+ PGID" and "- PGID"
// lines on its stdin, and when the stdin ends, which it does when the test
// binary exits however it exits, kills every group still listed. Groups
// are listed at Start and struck off when their test ends.
const keeperScript = `pgs=' '
while read -r op pg; do
  case "$op $pgs" in
    "+ "*) pgs="$pgs$pg " ;;
    "- "*" $pg "*) pgs="${pgs%% $pg *} ${pgs#* $pg }" ;;
  esac
done
for pg in $pgs; do kill -s KILL -- "-$pg" 2>/dev/null; done
`

var keeper struct {
	once sync.Once
	mu   sync.Mutex
	w    io.Writer // nil if the keeper could not start
}

// keep tells the keeper that group pgid is the test binary's (on true) or
// no longer (on false).
func keep(pgid int, on bool) {
	keeper.once.Do(startKeeper)
	keeper.mu.Lock()
	defer keeper.mu.Unlock()
	if keeper.w == nil {
		return
	}
	op := "-"
	if on {
		op = "+"
	}
	fmt.Fprintf(keeper.w, "%s %d\n", op, pgid)
}

func startKeeper() {
	cmd := exec.Command("sh", "-c", keeperScript)
	// Its own group, so that no test's group kill reaches it; its stdin's
	// write end is held by the test binary alone (close-on-exec).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	w, err := cmd.StdinPipe()
	if err != nil {
		return
	}
	if err := cmd.Start(); err != nil {
		return
	}
	keeper.w = w
}

// own puts cmd in a process group of its own and, where the system has
// one, gives it the parent-death signal.
func own(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// A session leader leads its group already, and may not setpgid.
	cmd.SysProcAttr.Setpgid = !cmd.SysProcAttr.Setsid
	deathSig(cmd.SysProcAttr)
}

// endGroup kills what is left of the process group pgid, the group of a
// child the test started, and strikes it off the keeper's list. The
// leader's pid stays allocated while the group has members, so a group
// found alive is still the test's own (unless its members all died and the
// pid came round again in the same test: with tens of thousands of pids,
// not in one test's lifetime).
func endGroup(pgid int) {
	if lifeline.GroupAlive(pgid) {
		lifeline.SignalGroup(pgid, syscall.SIGKILL)
	}
	keep(pgid, false)
}
