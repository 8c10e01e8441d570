//go:build linux

package upstream

import (
	"os"

	"golang.org/x/sys/unix"
)

// unreadBytes is how much of what was written to the pipe w the reader has
// not read yet (FIONREAD works on either end of a Linux pipe); 0 if it
// cannot tell.
func unreadBytes(w *os.File) int {
	rc, err := w.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	rc.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err == nil {
			n = v
		}
	})
	return n
}
