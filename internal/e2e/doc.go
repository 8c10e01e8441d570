// Package e2e holds the end-to-end tests: the real plexus binary, a real
// daemon on a temporary home, the CLI as a user runs it, and real MCP
// servers — the built-in example server, servers from the npm registry, and
// Go SDK servers over real HTTP on 127.0.0.1.
package e2e
