package testenv

import "testing"

// HostileServer builds the sandbox-attacking MCP server
// (testenv/hostileserver) like the daemon (see BuildCommand) and returns
// its path.
func HostileServer(t testing.TB) string {
	t.Helper()
	return BuildCommand(t, "./internal/testenv/hostileserver")
}
