package testenv

import "testing"

// FaultServer builds the fault-injecting MCP server (testenv/faultserver)
// like the daemon (see BuildCommand) and returns its path. See its package
// comment for the flags.
func FaultServer(t testing.TB) string {
	t.Helper()
	return BuildCommand(t, "./internal/testenv/faultserver")
}
