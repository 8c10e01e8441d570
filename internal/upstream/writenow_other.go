//go:build !unix

package upstream

import "syscall"

// writeNow writes nothing where a pipe's write may block (Windows): the
// caller's watched write writes it all.
func writeNow(syscall.RawConn, []byte) int { return 0 }
