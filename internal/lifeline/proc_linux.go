//go:build linux

package lifeline

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// canWalkTree: /proc lists every process with its parent.
const canWalkTree = true

// GroupAttr puts the child in its own process group and has the kernel send
// it deathSig when the daemon dies.
func GroupAttr(deathSig syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: deathSig}
}

// deathSigAttr only asks for deathSig when the parent dies.
func deathSigAttr(deathSig syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: deathSig}
}

// WaitExitedNoReap blocks until pid has exited but leaves it a zombie, so that
// its pid (and group id) cannot be reused while we signal the group.
func WaitExitedNoReap(pid int) bool {
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

// GroupAlive reports whether a process of group pgid is alive. A group with
// only zombies left is dead: kill(2) still finds zombies, so /proc is read to
// tell them apart.
func GroupAlive(pgid int) bool {
	if err := unix.Kill(-pgid, 0); errors.Is(err, unix.ESRCH) {
		return false
	}
	found := false
	eachProcess(func(_ int, s stat) bool {
		found = s.pgrp == pgid && s.live()
		return !found
	})
	return found
}

// ProcessAlive reports whether pid is a live (not zombie) process.
func ProcessAlive(pid int) bool {
	s, ok := readStat(strconv.Itoa(pid))
	return ok && s.live()
}

// Descendants lists the live descendants of root: its children, theirs,
// and so on, whatever their session or group.
func Descendants(root int) []int {
	children := map[int][]int{}
	eachProcess(func(pid int, s stat) bool {
		if s.live() {
			children[s.ppid] = append(children[s.ppid], pid)
		}
		return true
	})
	return walkChildren(children, root)
}

// stat is what Plexus reads of /proc/PID/stat.
type stat struct {
	state byte
	ppid  int
	pgrp  int
}

func (s stat) live() bool { return s.state != 'Z' && s.state != 'X' }

// eachProcess calls f for every process in /proc until f returns false.
func eachProcess(f func(pid int, s stat) bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if s, ok := readStat(e.Name()); ok && !f(pid, s) {
			return
		}
	}
}

// readStat reads the state, parent and process group of a process from
// /proc/PID/stat: "pid (comm) state ppid pgrp ...", where comm may hold
// spaces and parentheses.
func readStat(pid string) (stat, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return stat{}, false
	}
	return parseStat(b)
}

func parseStat(b []byte) (stat, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return stat{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgrp, err2 := strconv.Atoi(string(f[2]))
	if err1 != nil || err2 != nil {
		return stat{}, false
	}
	return stat{state: f[0][0], ppid: ppid, pgrp: pgrp}, true
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
