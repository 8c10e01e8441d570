package localapi

import (
	"errors"

	"golang.org/x/sys/unix"
)

// peerCred reads the uid and pid of the process at the other end, as it
// was when it connected (SO_PEERCRED). The pid is as the daemon's PID
// namespace sees it: 0 for a process outside it.
func peerCred(fd int) (uint32, int, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return 0, 0, err
	}
	return cred.Uid, int(cred.Pid), nil
}

// processAllowed checks the peer's process (peerproc_linux.go) while
// holding it by a pidfd: the one the kernel recorded at connect
// (SO_PEERPIDFD, Linux 6.5), else one opened by its pid. The process must
// still be alive once the check is done — so that its pid was not reused
// by another process meanwhile.
func processAllowed(fd, pid int, sameUID bool) error {
	pidfd, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PEERPIDFD)
	if err != nil && pid > 0 {
		pidfd, err = unix.PidfdOpen(pid, 0)
	}
	if err != nil {
		if pid <= 0 {
			return checkProcess(procRoot, pid, sameUID) // says why
		}
		if errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE) {
			return errors.New("the daemon has no file descriptor free to check the caller with: try again")
		}
		return errors.New("the caller's process is gone")
	}
	defer unix.Close(pidfd)
	if err := checkProcess(procRoot, pid, sameUID); err != nil {
		return err
	}
	if unix.PidfdSendSignal(pidfd, 0, nil, 0) != nil {
		return errors.New("the caller's process is gone")
	}
	return nil
}
