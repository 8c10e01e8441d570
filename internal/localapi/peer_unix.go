//go:build unix

package localapi

import (
	"errors"
	"os"
	"strconv"
)

// peerAllowed admits a peer whose uid is the daemon's own, or root's, and
// whose process the platform's check admits (processAllowed: not one the
// daemon started, not in namespaces of its own).
func peerAllowed(fd uintptr) error {
	uid, pid, err := peerCred(int(fd))
	if err != nil {
		return errors.New("the caller's identity cannot be checked")
	}
	if int(uid) != os.Getuid() && uid != 0 {
		return errors.New("uid " + strconv.FormatUint(uint64(uid), 10) + " is not the daemon's user")
	}
	return processAllowed(int(fd), pid, int(uid) == os.Getuid())
}
