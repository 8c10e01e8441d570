//go:build !linux

package testenv

// portBand: the ports below the usual ephemeral ranges (Linux's 32768 and
// the IANA range's 49152).
func portBand() (lo, hi int) { return 20000, 32768 }

// portLock claims nothing outside Linux, which has no abstract sockets:
// the band alone keeps a port from the kernel's own picks.
func portLock(int) (release func(), ok bool) { return func() {}, true }

// portLocking: portLock claims nothing here.
const portLocking = false
