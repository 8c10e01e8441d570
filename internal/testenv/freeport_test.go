package testenv

import (
	"net"
	"strconv"
	"testing"
)

// TestFreePortStaysTheTests: a port FreePort gave is free to listen on,
// outside what the kernel hands out by itself, and claimed against every
// other FreePort (of this process or another) until the test ends.
func TestFreePortStaysTheTests(t *testing.T) {
	lo, hi := portBand()
	var p int
	t.Run("claim", func(t *testing.T) {
		p = FreePort(t)
		if p < lo || p >= hi {
			t.Fatalf("port %d is outside the band [%d, %d)", p, lo, hi)
		}
		if release, ok := portLock(p); ok {
			release()
			if portLocking {
				t.Fatalf("port %d could be claimed again while its test runs", p)
			}
		}
		for range 50 {
			if q := FreePort(t); q == p {
				t.Fatalf("FreePort gave %d twice in one test", p)
			}
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("the port is not free to listen on: %v", err)
		}
		ln.Close()
	})
	// The subtest's cleanup gave it back.
	release, ok := portLock(p)
	if !ok && portLocking {
		t.Fatalf("port %d is still claimed after its test ended", p)
	}
	release()
}
