package testenv

import (
	"math/rand/v2"
	"net"
	"strconv"
	"testing"
)

// FreePort returns a TCP port on 127.0.0.1 for a program the test starts
// (a server, PostgreSQL, HAProxy) to listen on, and keeps it the test's
// until the test ends, even while that program is stopped and started
// again on it.
//
// A port the kernel picked (listening on port 0, then closing) can be
// picked again by anyone before the program binds it: by another test
// process of the same go test run, or by the kernel for any listener on
// port 0 or outgoing connection. So the port comes from below the
// kernel's ephemeral range (portBand), which the kernel never hands out
// by itself, and is claimed against every other test process by a lock
// (portLock: on Linux an abstract socket, gone with its process) held
// until the test's cleanup.
func FreePort(t testing.TB) int {
	t.Helper()
	lo, hi := portBand()
	for range 500 {
		p := lo + rand.IntN(hi-lo)
		release, ok := portLock(p)
		if !ok {
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			release()
			continue
		}
		ln.Close()
		t.Cleanup(release)
		return p
	}
	// Nothing free in the band: a port of the kernel's, as before.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
