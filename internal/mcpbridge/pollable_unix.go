//go:build unix

package mcpbridge

import (
	"os"

	"golang.org/x/sys/unix"
)

// pollable returns a file of its own on the pipe or socket f is — as an
// editor hands a server its stdin and stdout, in blocking mode — set
// non-blocking, so that the Go runtime waits for it in its network poller.
// A blocking read or write holds a thread in the kernel, and while one
// does the runtime's monitor (sysmon) wakes every 20 µs or so to hand that
// thread's processor to another thread: under a busy client that was the
// largest part of the bridge's CPU (docs/performance.md). A terminal or a
// regular file is left as it is (a terminal's mode is the shell's too),
// and so is f when any step fails. done closes the copy and puts the
// blocking mode back: the mode belongs to the open file, which the
// process that made the pipe may share.
func pollable(f *os.File) (_ *os.File, done func()) {
	fd := int(f.Fd()) // f.Fd puts f itself in blocking mode: it is not read from any more
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return f, func() {}
	}
	if m := st.Mode & unix.S_IFMT; m != unix.S_IFIFO && m != unix.S_IFSOCK {
		return f, func() {}
	}
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return f, func() {}
	}
	if err := unix.SetNonblock(dup, true); err != nil {
		unix.Close(dup)
		return f, func() {}
	}
	nf := os.NewFile(uintptr(dup), f.Name()) // non-blocking: in the poller
	return nf, func() {
		nf.Close()
		unix.SetNonblock(fd, false)
	}
}
