//go:build darwin || freebsd

package lifeline

import (
	"os"

	"golang.org/x/sys/unix"
)

// releaseStdio points stdin and stdout at /dev/null, so that only the real
// server holds the daemon's pipes.
func releaseStdio() {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer null.Close()
	unix.Dup2(int(null.Fd()), 0)
	unix.Dup2(int(null.Fd()), 1)
}
