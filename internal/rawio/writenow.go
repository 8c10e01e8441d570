package rawio

import "syscall"

// A NowWriter writes to one descriptor what it takes without waiting: all
// of a message when its pipe or socket has room, which is the common case
// a caller tries first before a write that waits. It hands the poller the
// same function at each write, made once: a write allocates nothing. It
// is not for concurrent use.
type NowWriter struct {
	rc    syscall.RawConn
	fn    func(fd uintptr) bool
	p     []byte
	wrote int
}

// NewNowWriter writes to the descriptor under rc.
func NewNowWriter(rc syscall.RawConn) *NowWriter {
	w := &NowWriter{rc: rc}
	w.fn = w.writeFD
	return w
}

// Write writes what of p the descriptor takes now and returns how much:
// 0 on any error, which a write that waits meets again.
func (w *NowWriter) Write(p []byte) int {
	if len(p) == 0 {
		return 0
	}
	w.p, w.wrote = p, 0
	w.rc.Write(w.fn)
	n := w.wrote
	w.p = nil
	return n
}

// WriteNow writes what of p the descriptor under rc takes without
// waiting: a NowWriter's Write, once.
func WriteNow(rc syscall.RawConn, p []byte) int { return NewNowWriter(rc).Write(p) }
