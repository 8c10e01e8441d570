//go:build unix

package upstream

import "syscall"

// writeNow writes what of data the pipe under rc takes without waiting
// (its file is non-blocking, as os.Pipe's are): how many bytes, 0 on any
// error, which the caller's watched write meets again.
func writeNow(rc syscall.RawConn, data []byte) int {
	wrote := 0
	rc.Write(func(fd uintptr) bool {
		if n, err := syscall.Write(int(fd), data); err == nil && n > 0 {
			wrote = n
		}
		return true // never wait here
	})
	return wrote
}
