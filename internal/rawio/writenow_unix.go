//go:build unix && !linux

package rawio

import "syscall"

// WriteNow writes what of p the descriptor under rc takes without
// waiting (it is non-blocking, as os.Pipe's ends are): how many bytes, 0
// on any error, which a write that waits meets again.
func WriteNow(rc syscall.RawConn, p []byte) int {
	wrote := 0
	rc.Write(func(fd uintptr) bool {
		if n, err := syscall.Write(int(fd), p); err == nil && n > 0 {
			wrote = n
		}
		return true // never wait here
	})
	return wrote
}
