package testenv

import "testing"

var scriptServer = builtCommand{pkg: "./internal/testenv/scriptserver", name: "scriptserver"}

// ScriptServer builds the scripted MCP server (testenv/scriptserver) once
// per test process and returns its path: it plays the upstream side of a
// wire transcript exactly as written.
func ScriptServer(t testing.TB) string {
	t.Helper()
	return scriptServer.get(t)
}
