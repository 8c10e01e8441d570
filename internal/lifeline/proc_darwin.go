package lifeline

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// canWalkTree: the process table (sysctl kern.proc.all) lists every
// process with its parent. macOS has no subreaper, so an orphan of a double
// fork is adopted by launchd and leaves the tree; only the shim's group
// still reaches it.
const canWalkTree = true

// GroupAttr puts the child in its own process group. macOS has no
// parent-death signal: the shim notices the daemon's death by its SIGTERM
// only when the daemon stops cleanly.
func GroupAttr(syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

func deathSigAttr(syscall.Signal) *syscall.SysProcAttr { return nil }

// WaitExitedNoReap is not offered by macOS's waitid; the caller reaps first.
func WaitExitedNoReap(int) bool { return false }

// sZomb is SZOMB of <sys/proc.h>: exited, not yet reaped.
const sZomb = 5

// GroupAlive reports whether a live (not zombie) process of group pgid exists.
func GroupAlive(pgid int) bool {
	if errors.Is(unix.Kill(-pgid, 0), unix.ESRCH) {
		return false
	}
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.pgrp", pgid)
	if err != nil {
		return true // unknown: the caller waits rather than assume it gone
	}
	for _, p := range procs {
		if p.Proc.P_stat != sZomb {
			return true
		}
	}
	return false
}

// ProcessAlive reports whether pid is a live (not zombie) process.
func ProcessAlive(pid int) bool {
	p, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	return err == nil && p.Proc.P_pid == int32(pid) && p.Proc.P_stat != sZomb
}

// Descendants lists the live descendants of root that are still below it.
func Descendants(root int) []int {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, p := range procs {
		if p.Proc.P_stat != sZomb {
			children[int(p.Eproc.Ppid)] = append(children[int(p.Eproc.Ppid)], int(p.Proc.P_pid))
		}
	}
	return walkChildren(children, root)
}

// becomeSubreaper: macOS has no subreaper.
func becomeSubreaper() bool { return false }
