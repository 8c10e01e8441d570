//go:build linux

package mcpbridge

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawIO reads and writes a descriptor that is non-blocking and in the
// runtime's poller (the bridge's stdin and stdout made pollable, its
// connections to the daemon) with raw system calls, waiting for it in the
// poller as the runtime would. A system call made the usual way tells the
// scheduler it enters the kernel, and that wakes the runtime's monitor
// (sysmon) whenever it sleeps because the process was idle; the monitor
// then polls every 20 µs until the process idles again. The bridge idles
// between bursts of messages thousands of times a second under a busy
// client, so each burst paid a thread wake-up and a few polls of the
// monitor beside the reads and writes it made (docs/performance.md). A
// read or write of a non-blocking descriptor never blocks, so it has no
// need of the scheduler's hand-off.
type rawIO struct{ rc syscall.RawConn }

// newRawIO returns a rawIO of s, or false if it has none.
func newRawIO(s interface {
	SyscallConn() (syscall.RawConn, error)
}) (*rawIO, bool) {
	rc, err := s.SyscallConn()
	if err != nil {
		return nil, false
	}
	return &rawIO{rc}, true
}

func (r *rawIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			m, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait in the poller
			}
			n, errno = int(m), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, errno
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (r *rawIO) Write(p []byte) (int, error) {
	var n int
	var errno syscall.Errno
	for n < len(p) && errno == 0 {
		err := r.rc.Write(func(fd uintptr) bool {
			for n < len(p) {
				m, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[n])), uintptr(len(p)-n))
				switch e {
				case 0:
					if m == 0 {
						errno = syscall.EIO // no progress: not a pipe or socket
						return true
					}
					n += int(m)
					continue
				case syscall.EINTR:
					continue
				case syscall.EAGAIN:
					return false // wait in the poller until it takes more
				}
				errno = e
				return true
			}
			return true
		})
		if err != nil {
			return n, err
		}
	}
	if errno != 0 {
		return n, errno
	}
	return n, nil
}

// rawConn is a connection to the daemon whose reads and writes are
// rawIO's; its deadlines and Close are the connection's own, and the
// poller's waits keep to them.
type rawConn struct {
	net.Conn
	rw *rawIO
}

func (c *rawConn) Read(p []byte) (int, error)  { return c.rw.Read(p) }
func (c *rawConn) Write(p []byte) (int, error) { return c.rw.Write(p) }

// rawConnOf returns c read and written through rawIO, or c itself if it
// has no descriptor of its own.
func rawConnOf(c net.Conn) net.Conn {
	s, ok := c.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return c
	}
	r, ok := newRawIO(s)
	if !ok {
		return c
	}
	return &rawConn{Conn: c, rw: r}
}

// rawFile returns f (a pollable copy made by pollable) read and written
// through rawIO.
func rawFile(f *os.File) io.ReadWriter {
	if r, ok := newRawIO(f); ok {
		return r
	}
	return f
}
