package testenv

import "testing"

var hostileServer = builtCommand{pkg: "./internal/testenv/hostileserver", name: "hostileserver"}

// HostileServer builds the sandbox-attacking MCP server
// (testenv/hostileserver) once per test process and returns its path.
func HostileServer(t testing.TB) string {
	t.Helper()
	return hostileServer.get(t)
}
