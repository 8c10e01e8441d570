//go:build unix

package lifeline

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Grace is how long the shim waits for the tree after SIGTERM before it
// sends SIGKILL. It is shorter than the daemon's own grace, so the shim is
// done before the daemon escalates.
const Grace = time.Second

// killWait bounds the wait for the tree after SIGKILL: a process in
// uninterruptible sleep dies only when it wakes.
const killWait = 2 * time.Second

// Main is the lifeline shim. The daemon re-executes itself with a hidden
// subcommand that calls Main(args) with args = ["--", path, arg...] and
// returns its result as the exit code. The daemon starts the shim as a
// process-group leader with Pdeathsig=SIGTERM (see GroupAttr). The shim runs
// the command in its own group, with its stdin, stdout and stderr, and then:
//
//   - when the command exits, it ends the rest of the tree (SIGTERM, a short
//     grace, SIGKILL to whatever is left) and exits with the command's code
//     (128+signal if it was killed by a signal);
//   - when it gets SIGTERM (the daemon died, or is stopping the server), it
//     does the same to the whole tree and exits with 143.
//
// The tree is every descendant of the shim, found through /proc: members of
// its group, and processes that started a session or group of their own.
// As a subreaper the shim inherits the orphans of double forks, so they stay
// in the tree, and it knows the tree is gone when it has no child left.
func Main(args []string) int {
	args, ok := commandArgs(args)
	if !ok {
		return 2
	}
	// Never signal a group we do not lead (it could be the daemon's).
	if unix.Getpgrp() != os.Getpid() {
		if err := unix.Setpgid(0, 0); err != nil {
			fmt.Fprintf(os.Stderr, "plexus shim: setpgid: %v\n", err)
			return 1
		}
	}
	becomeSubreaper()
	// Before the command starts, so that no SIGTERM is missed.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	child, err := os.StartProcess(args[0], args, &os.ProcAttr{
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		// If the shim itself dies (SIGKILL), take the command along.
		Sys: deathSigAttr(syscall.SIGKILL),
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "plexus shim: %v\n", ExplainStartError(args[0], err))
		return 127
	}
	releaseStdio()

	r := startReaper(child.Pid)
	select {
	case code := <-r.childExit:
		endTree(r.allGone)
		return code
	case <-sigs:
		endTree(r.allGone)
		return 128 + int(syscall.SIGTERM)
	}
}

// endTree sends SIGTERM to the shim's group and to every other descendant
// (the shim has SIGTERM caught), again to any that appear meanwhile, and
// waits for the tree to go. What outlives the grace gets SIGKILL, by pid,
// so that the shim lives on to see it gone: were the shim to die first,
// the survivors would be reparented to init and outlive the server.
func endTree(allGone <-chan struct{}) {
	self, pgid := os.Getpid(), unix.Getpgrp()
	unix.Kill(-pgid, unix.SIGTERM)
	if signalTree(self, unix.SIGTERM, allGone, Grace) {
		return
	}
	if !canWalkTree {
		// Only the group can be reached; SIGKILL ends the shim with it.
		unix.Kill(-pgid, unix.SIGKILL)
	}
	signalTree(self, unix.SIGKILL, allGone, killWait)
}

// signalTree sends sig to every descendant of root, every 20ms until
// allGone is closed (true) or d has passed (false), so that processes
// forked in between get it too. A descendant is signalled once. Once the
// shim has no child left it has no descendant either (a descendant's
// parent is one), so the process table is not walked again: a walk costs
// milliseconds on a busy machine, and the common case, a server that
// exits alone, paid one on every stop.
func signalTree(root int, sig unix.Signal, allGone <-chan struct{}, d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	sent := map[int]bool{}
	for {
		select {
		case <-allGone:
			return true
		default:
		}
		for _, pid := range Descendants(root) {
			if !sent[pid] {
				sent[pid] = true
				unix.Kill(pid, sig)
			}
		}
		select {
		case <-allGone:
			return true
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
}

// reaper reaps every child of the shim: the command, and the orphans that the
// subreaper setting brings.
type reaper struct {
	childExit chan int      // the command's exit code
	allGone   chan struct{} // closed when the shim has no children left
}

func startReaper(childPID int) *reaper {
	r := &reaper{childExit: make(chan int, 1), allGone: make(chan struct{})}
	go func() {
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, 0, nil)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil { // ECHILD: nothing left to wait for
				close(r.allGone)
				return
			}
			if pid == childPID {
				code := ws.ExitStatus()
				if ws.Signaled() {
					code = 128 + int(ws.Signal())
				}
				r.childExit <- code
			}
		}
	}()
	return r
}
