package testenv

import (
	"fmt"
	"net"
	"os"
)

// portBand is where FreePort looks: the ports just below the kernel's
// ephemeral range (net.ipv4.ip_local_port_range), which it assigns to
// listeners on port 0 and outgoing connections; above the range when
// there is no room below it.
func portBand() (lo, hi int) {
	eLo, eHi := 32768, 60999
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		fmt.Sscan(string(b), &eLo, &eHi)
	}
	if eLo-1 >= 12000 {
		return eLo - 12000, eLo
	}
	if eHi < 65000 {
		return eHi + 1, 65536
	}
	return 1024, 65536
}

// portLock claims port p for this test process against every other one
// that uses FreePort: an abstract Unix socket named after the port, which
// only one process can hold, and which the kernel removes when its holder
// exits (no file is left behind). release gives it back.
func portLock(p int) (release func(), ok bool) {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: fmt.Sprintf("@plexus-test-port-%d", p), Net: "unix"})
	if err != nil {
		return nil, false
	}
	return func() { ln.Close() }, true
}

// portLocking: portLock claims ports here.
const portLocking = true
