package testenv

import "testing"

var faultServer = builtCommand{pkg: "./internal/testenv/faultserver", name: "faultserver"}

// FaultServer builds the fault-injecting MCP server (testenv/faultserver)
// once per test process and returns its path. See its package comment for
// the flags.
func FaultServer(t testing.TB) string {
	t.Helper()
	return faultServer.get(t)
}
