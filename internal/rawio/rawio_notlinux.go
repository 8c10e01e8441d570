//go:build !linux

package rawio

import (
	"io"
	"net"
	"os"
)

// File returns f: elsewhere than on Linux, where rawio_linux.go is
// tested, files are read and written as they are.
func File(f *os.File) io.ReadWriter { return f }

// Conn returns c.
func Conn(c net.Conn) net.Conn { return c }

// Listener returns ln.
func Listener(ln net.Listener) net.Listener { return ln }
