package lifeline

import (
	"errors"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// canWalkTree: as a reaper (procctl PROC_REAP_ACQUIRE) the shim can list
// every process below it, orphans of double forks included.
const canWalkTree = true

// GroupAttr puts the child in its own process group and has the kernel send
// it deathSig when the daemon dies (procctl PROC_PDEATHSIG_CTL, which Go
// sets up as it does Linux's prctl).
func GroupAttr(deathSig syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: deathSig}
}

func deathSigAttr(deathSig syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: deathSig}
}

// WaitExitedNoReap is not offered here; the caller reaps first.
func WaitExitedNoReap(int) bool { return false }

// GroupAlive reports whether any process of group pgid exists (zombies too).
func GroupAlive(pgid int) bool {
	return !errors.Is(unix.Kill(-pgid, 0), unix.ESRCH)
}

// ProcessAlive reports whether pid exists (zombies too).
func ProcessAlive(pid int) bool {
	return !errors.Is(unix.Kill(pid, 0), unix.ESRCH)
}

// procctl(2) commands and flags, from <sys/procctl.h>.
const (
	pPID               = 0 // P_PID of idtype_t
	procReapAcquire    = 2
	procReapGetPIDs    = 5
	reaperPIDInfoValid = 0x1
	reaperPIDInfoZomb  = 0x8
)

// reaperPIDInfo is struct procctl_reaper_pidinfo.
type reaperPIDInfo struct {
	pid   int32
	_     int32 // pi_subtree
	flags uint32
	_     [15]uint32
}

// reaperPIDs is struct procctl_reaper_pids.
type reaperPIDs struct {
	count uint32
	_     [15]uint32
	pids  *reaperPIDInfo
}

func procctl(cmd int, data unsafe.Pointer) error {
	_, _, e := unix.Syscall6(unix.SYS_PROCCTL, pPID, uintptr(os.Getpid()), uintptr(cmd), uintptr(data), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// becomeSubreaper makes the shim the reaper of its descendants: orphans
// become its children instead of init's.
func becomeSubreaper() bool { return procctl(procReapAcquire, nil) == nil }

// maxTree bounds the descendants Descendants lists at once; the shim asks
// again every few milliseconds, so a larger tree is reached over rounds.
const maxTree = 4096

// Descendants lists the live processes below the shim, which must be their
// reaper (becomeSubreaper). root is the shim itself.
func Descendants(root int) []int {
	if root != os.Getpid() {
		return nil
	}
	buf := make([]reaperPIDInfo, maxTree)
	req := reaperPIDs{count: maxTree, pids: &buf[0]}
	if procctl(procReapGetPIDs, unsafe.Pointer(&req)) != nil {
		return nil
	}
	var out []int
	for _, p := range buf {
		if p.flags&reaperPIDInfoValid != 0 && p.flags&reaperPIDInfoZomb == 0 {
			out = append(out, int(p.pid))
		}
	}
	return out
}
