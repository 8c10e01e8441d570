//go:build unix

package daemon

import "golang.org/x/sys/unix"

// openFiles is how many files the daemon may have open (RLIMIT_NOFILE,
// which the Go runtime raised to the hard limit at start); 1024 if it
// cannot be read.
func openFiles() int {
	var l unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &l); err != nil || l.Cur == unix.RLIM_INFINITY {
		return 1024
	}
	return int(min(l.Cur, 1<<20))
}
