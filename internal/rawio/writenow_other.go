//go:build !unix

package rawio

import "syscall"

// WriteNow writes nothing where a pipe's write may block (Windows): the
// caller's write that waits writes it all.
func WriteNow(syscall.RawConn, []byte) int { return 0 }
