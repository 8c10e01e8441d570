//go:build !linux

package mcpbridge

import (
	"io"
	"net"
	"os"
)

// rawConnOf returns c: elsewhere than on Linux, where rawio_linux.go is
// tested, connections are read and written as they are.
func rawConnOf(c net.Conn) net.Conn { return c }

// rawFile returns f.
func rawFile(f *os.File) io.ReadWriter { return f }
