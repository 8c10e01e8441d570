package upstream

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// shimGrace is how long the shim waits for the group after SIGTERM. It is
// shorter than the daemon's own grace, so the shim is done before the daemon
// escalates.
const shimGrace = time.Second

// ShimMain is the lifeline shim: a tiny process between the daemon and a stdio
// server, so that a server's whole process tree ends with the daemon, even a
// SIGKILLed one. The parent-death signal reaches only the daemon's direct
// child, while e.g. `npx` runs the real server as a grandchild.
//
// The daemon re-executes itself with a hidden subcommand that calls
// ShimMain(args) with args = ["--", path, arg...] and returns its result as the
// exit code. The daemon starts the shim as a process-group leader with
// Pdeathsig=SIGTERM (see Spec.Shim). The shim runs the command in its own
// group, with its stdin, stdout and stderr, and then:
//
//   - when the command exits, it sends SIGTERM to the rest of the group, waits
//     a short grace for it to go, sends SIGKILL if needed, and exits with the
//     command's code (128+signal if it was killed by a signal);
//   - when it gets SIGTERM (the daemon died, or is stopping the server), it
//     does the same to the whole group and exits with 143.
//
// On Linux the shim is a child subreaper, so orphaned descendants are reaped
// by it and it knows when the whole tree is gone.
func ShimMain(args []string) int {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "plexus shim: usage: -- command [arg...]")
		return 2
	}
	// Never signal a group we do not lead (it could be the daemon's).
	if unix.Getpgrp() != os.Getpid() {
		if err := unix.Setpgid(0, 0); err != nil {
			fmt.Fprintf(os.Stderr, "plexus shim: setpgid: %v\n", err)
			return 1
		}
	}
	pgid := os.Getpid()
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
		fmt.Fprintf(os.Stderr, "plexus shim: %v\n", err)
		return 127
	}
	releaseStdio()

	r := startReaper(child.Pid)
	select {
	case code := <-r.childExit:
		endGroup(pgid, r.allGone)
		return code
	case <-sigs:
		endGroup(pgid, r.allGone)
		return 128 + int(syscall.SIGTERM)
	}
}

// endGroup sends SIGTERM to the group (the shim too, which has SIGTERM
// caught) and waits for every descendant to go. A group that outlives the
// grace gets SIGKILL, which ends the shim as well: the exit code is lost then,
// the processes are not.
func endGroup(pgid int, allGone <-chan struct{}) {
	unix.Kill(-pgid, unix.SIGTERM)
	t := time.NewTimer(shimGrace)
	defer t.Stop()
	select {
	case <-allGone:
		return
	case <-t.C:
	}
	unix.Kill(-pgid, unix.SIGKILL)
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
