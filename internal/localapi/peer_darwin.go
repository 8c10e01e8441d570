package localapi

import (
	"os"

	"golang.org/x/sys/unix"
)

// peerCred reads the peer's uid (xucredUID) and its pid (LOCAL_PEERPID).
func peerCred(fd int) (uint32, int, error) {
	uid, err := xucredUID(fd)
	if err != nil {
		return 0, 0, err
	}
	pid, err := unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	if err != nil {
		return 0, 0, err
	}
	return uid, pid, nil
}

// processAllowed refuses a process the daemon started, by walking the
// peer's parents (kern.proc.pid); macOS has no namespaces to compare.
// Compiled here, never run: written for macOS, where an orphan goes to
// launchd, so that a parent pid is never a reused one.
func processAllowed(_ int, pid int, _ bool) error {
	return notDescendant(pid, os.Getpid(), func(p int) (int, error) {
		kp, err := unix.SysctlKinfoProc("kern.proc.pid", p)
		if err != nil {
			return 0, err
		}
		return int(kp.Eproc.Ppid), nil
	})
}
