//go:build unix && !linux

package upstream

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// groupAttr puts the child in its own process group. There is no parent-death
// signal outside Linux.
func groupAttr(syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

func deathSigAttr(syscall.Signal) *syscall.SysProcAttr { return nil }

// waitExitedNoReap cannot be done portably; the caller reaps first.
func waitExitedNoReap(int) bool { return false }

// groupAlive reports whether any process of group pgid exists (zombies too).
func groupAlive(pgid int) bool {
	return !errors.Is(unix.Kill(-pgid, 0), unix.ESRCH)
}

func becomeSubreaper() bool { return false }

func releaseStdio() {}
