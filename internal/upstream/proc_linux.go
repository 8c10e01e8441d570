//go:build linux

package upstream

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// groupAttr puts the child in its own process group and has the kernel send
// it deathSig when the daemon dies.
func groupAttr(deathSig syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: deathSig}
}

// deathSigAttr only asks for deathSig when the parent dies.
func deathSigAttr(deathSig syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: deathSig}
}

// waitExitedNoReap blocks until pid has exited but leaves it a zombie, so that
// its pid (and group id) cannot be reused while we signal the group.
func waitExitedNoReap(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			return true
		}
		if !errors.Is(err, unix.EINTR) {
			return false
		}
	}
}

// groupAlive reports whether a process of group pgid is alive. A group with
// only zombies left is dead: kill(2) still finds zombies, so /proc is read to
// tell them apart.
func groupAlive(pgid int) bool {
	if err := unix.Kill(-pgid, 0); errors.Is(err, unix.ESRCH) {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		state, group, ok := procStat(e.Name())
		if ok && group == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// procStat reads the state and process group of a process from
// /proc/PID/stat: "pid (comm) state ppid pgrp ...", where comm may hold
// spaces and parentheses.
func procStat(pid string) (state byte, pgrp int, ok bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err = strconv.Atoi(string(f[2]))
	return f[0][0], pgrp, err == nil
}

// becomeSubreaper makes orphaned descendants children of this process, so the
// shim can reap them and learn when the whole tree is gone.
func becomeSubreaper() bool {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == nil
}

// releaseStdio points stdin and stdout at /dev/null, so that only the real
// server holds the daemon's pipes and the daemon sees EOF when it exits.
func releaseStdio() {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer null.Close()
	unix.Dup3(int(null.Fd()), 0, 0)
	unix.Dup3(int(null.Fd()), 1, 0)
}
