package testenv

import "testing"

// ScriptServer builds the scripted MCP server (testenv/scriptserver) like
// the daemon (see BuildCommand) and returns its path: it plays the
// upstream side of a wire transcript exactly as written.
func ScriptServer(t testing.TB) string {
	t.Helper()
	return BuildCommand(t, "./internal/testenv/scriptserver")
}
