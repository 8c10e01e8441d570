//go:build unix && !linux && !darwin && !freebsd

package lifeline

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// canWalkTree: without /proc the shim reaches only its group.
const canWalkTree = false

// GroupAttr puts the child in its own process group. There is no parent-death
// signal here.
func GroupAttr(syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

func deathSigAttr(syscall.Signal) *syscall.SysProcAttr { return nil }

// WaitExitedNoReap cannot be done portably; the caller reaps first.
func WaitExitedNoReap(int) bool { return false }

// GroupAlive reports whether any process of group pgid exists (zombies too).
func GroupAlive(pgid int) bool {
	return !errors.Is(unix.Kill(-pgid, 0), unix.ESRCH)
}

// ProcessAlive reports whether pid exists (zombies too).
func ProcessAlive(pid int) bool {
	return !errors.Is(unix.Kill(pid, 0), unix.ESRCH)
}

// Descendants cannot be listed portably: only the shim's group is ended.
func Descendants(int) []int { return nil }

func becomeSubreaper() bool { return false }

func releaseStdio() {}
