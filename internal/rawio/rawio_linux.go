//go:build linux

package rawio

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// rawConner is what has a descriptor of its own: an *os.File, a
// *net.TCPConn or *net.UnixConn, a listener's connections.
type rawConner interface {
	SyscallConn() (syscall.RawConn, error)
}

// pollable returns s's raw connection if its descriptor is non-blocking
// (a raw read of a blocking one would hold its thread in the kernel
// without telling the scheduler, and every goroutine waiting for that
// thread with it); nil otherwise.
func pollable(s rawConner) syscall.RawConn {
	rc, err := s.SyscallConn()
	if err != nil {
		return nil
	}
	nonblock := false
	if rc.Control(func(fd uintptr) {
		fl, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nonblock = e == 0 && fl&syscall.O_NONBLOCK != 0
	}) != nil || !nonblock {
		return nil
	}
	return rc
}

// stream reads and writes one descriptor through its raw connection.
// Each direction keeps the function it hands the poller, made once: a
// closure made at each read would escape to the heap, two allocations a
// system call.
type stream struct {
	rc   syscall.RawConn
	fail func(op string, err error) error // gives an error the form of the descriptor's kind

	rmu  sync.Mutex // guards the read's fields; one read at a time
	rp   []byte
	rn   int
	rerr syscall.Errno
	rfn  func(fd uintptr) bool

	wmu  sync.Mutex // guards the write's fields; one write at a time
	wp   []byte
	wn   int
	werr syscall.Errno
	wfn  func(fd uintptr) bool
}

func newStream(rc syscall.RawConn, fail func(op string, err error) error) *stream {
	s := &stream{rc: rc, fail: fail}
	s.rfn, s.wfn = s.readFD, s.writeFD
	return s
}

// Read reads once, waiting in the poller while there is nothing to read;
// a read of 0 bytes is the end of the stream.
func (s *stream) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.rmu.Lock()
	s.rp, s.rn, s.rerr = p, 0, 0
	err := s.rc.Read(s.rfn)
	n, errno := s.rn, s.rerr
	s.rp = nil
	s.rmu.Unlock()
	switch {
	case err != nil: // the poller's: closed, past the deadline
		return 0, s.fail("read", err)
	case errno != 0:
		return 0, s.fail("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (s *stream) readFD(fd uintptr) bool {
	for {
		m, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&s.rp[0])), uintptr(len(s.rp)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // wait in the poller
		}
		s.rn, s.rerr = int(m), e
		return true
	}
}

// Write writes all of p, waiting in the poller while the descriptor
// takes no more.
func (s *stream) Write(p []byte) (int, error) {
	s.wmu.Lock()
	s.wp, s.wn, s.werr = p, 0, 0
	var err error
	for s.wn < len(p) && s.werr == 0 && err == nil {
		err = s.rc.Write(s.wfn)
	}
	n, errno := s.wn, s.werr
	s.wp = nil
	s.wmu.Unlock()
	switch {
	case err != nil:
		return n, s.fail("write", err)
	case errno != 0:
		return n, s.fail("write", errno)
	}
	return n, nil
}

func (s *stream) writeFD(fd uintptr) bool {
	for s.wn < len(s.wp) {
		var e syscall.Errno
		s.wn, e = writeOnce(fd, s.wp, s.wn)
		switch e {
		case 0, syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // wait in the poller until it takes more
		}
		s.werr = e
		return true
	}
	return true
}

// writeOnce writes p[n:] to fd once, without waiting: the new n.
func writeOnce(fd uintptr, p []byte, n int) (int, syscall.Errno) {
	m, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[n])), uintptr(len(p)-n))
	if e != 0 {
		return n, e
	}
	if m == 0 {
		return n, syscall.EIO // no progress: not a pipe or socket
	}
	return n + int(m), 0
}

// File returns f read and written with raw system calls if its descriptor
// is non-blocking and in the poller (os.Pipe's ends are; a descriptor
// made non-blocking before os.NewFile is), else f. Its errors are f's:
// *os.PathError, os.ErrClosed once f is closed, os.ErrDeadlineExceeded
// past f's deadline, io.EOF at the end. f.Fd must not be called after:
// it puts the descriptor in blocking mode.
func File(f *os.File) io.ReadWriter {
	rc := pollable(f)
	if rc == nil {
		return f
	}
	return newStream(rc, func(op string, err error) error {
		// The poller says a closed file is closing in words of its own,
		// which os turns into os.ErrClosed.
		if _, ferr := f.Read(nil); errors.Is(ferr, os.ErrClosed) {
			err = os.ErrClosed
		}
		return &os.PathError{Op: op, Path: f.Name(), Err: err}
	})
}

// writeFD writes what of w.p the descriptor takes without waiting — all
// of it when its pipe or socket has room. The descriptor must be
// non-blocking (os.Pipe's ends are): this is the one write here that is
// not checked for it, since a caller makes it for every message.
func (w *NowWriter) writeFD(fd uintptr) bool {
	for w.wrote < len(w.p) {
		n, e := writeOnce(fd, w.p, w.wrote)
		w.wrote = n
		if e != 0 && e != syscall.EINTR {
			break
		}
	}
	return true // never wait here
}

// conn is a connection read and written through its raw connection; its
// deadlines, Close and addresses are the connection's own.
type conn struct {
	net.Conn
	*stream
}

// Conn returns c read and written with raw system calls if it has a
// descriptor of its own (a *net.TCPConn, a *net.UnixConn), else c. Its
// errors are net's: *net.OpError around os.ErrDeadlineExceeded past a
// deadline, net.ErrClosed once closed, and io.EOF at the end. NetConn
// returns c.
func Conn(c net.Conn) net.Conn {
	s, ok := c.(rawConner)
	if !ok {
		return c
	}
	rc := pollable(s)
	if rc == nil {
		return c
	}
	return &conn{Conn: c, stream: newStream(rc, func(op string, err error) error {
		// As net's own read or write would give it: net/http counts a
		// read's *net.OpError as a common end of a connection, not a
		// fault to log.
		if errno, ok := err.(syscall.Errno); ok {
			err = os.NewSyscallError(op, errno)
		}
		la := c.LocalAddr()
		return &net.OpError{Op: op, Net: la.Network(), Source: la, Addr: c.RemoteAddr(), Err: err}
	})}
}

func (c *conn) Read(p []byte) (int, error)  { return c.stream.Read(p) }
func (c *conn) Write(p []byte) (int, error) { return c.stream.Write(p) }

// NetConn is the connection read and written, for checks of its peer.
func (c *conn) NetConn() net.Conn { return c.Conn }

// listener accepts connections read and written through Conn.
type listener struct{ net.Listener }

// Listener returns ln, whose accepted connections are Conn's.
func Listener(ln net.Listener) net.Listener { return listener{ln} }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return Conn(c), nil
}
