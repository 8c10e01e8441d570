package testenv

import "testing"

// SockProbe builds the unix-socket probe (testenv/sockprobe) like the
// daemon (see BuildCommand) and returns its path.
func SockProbe(t testing.TB) string {
	t.Helper()
	return BuildCommand(t, "./internal/testenv/sockprobe")
}
