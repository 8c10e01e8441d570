//go:build darwin || freebsd

package localapi

import (
	"errors"

	"golang.org/x/sys/unix"
)

// xucredVersion is XUCRED_VERSION of <sys/ucred.h>, 0 on both systems.
const xucredVersion = 0

// xucredUID reads the effective uid the peer had when it connected
// (LOCAL_PEERCRED, what getpeereid(3) reads).
func xucredUID(fd int) (uint32, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return 0, err
	}
	if cred.Version != xucredVersion {
		return 0, errors.New("unknown xucred version")
	}
	return cred.Uid, nil
}
