//go:build unix && !linux

package rawio

import "syscall"

// writeFD writes what of w.p the descriptor takes without waiting (it is
// non-blocking, as os.Pipe's ends are).
func (w *NowWriter) writeFD(fd uintptr) bool {
	if n, err := syscall.Write(int(fd), w.p); err == nil && n > 0 {
		w.wrote = n
	}
	return true // never wait here
}
