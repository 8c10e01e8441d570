// Package sandbox confines a stdio MCP server with what the Linux kernel
// offers without a container runtime: Landlock for files, TCP ports and IPC
// scopes, a user, PID and (for network "none") network namespace, a seccomp
// filter, no new privileges, no capabilities, and resource limits.
//
// It has two halves. The daemon side ([Policy], [Detect], [Policy.Missing],
// [Isolate], [LauncherArgs]) turns a server's sandbox settings into the
// namespaces its first process starts in and the argv of the launcher. The
// launcher ([Main], the hidden subcommand [Command] of the plexus binary)
// runs inside those namespaces, applies the limits, the seccomp filter and
// the Landlock rules to itself, and then executes the server: everything the
// server starts inherits them. A sandbox that cannot be applied is never
// dropped: the launcher exits with an error instead of running the server.
//
// docs/sandbox.md says what is enforced and what is not.
package sandbox
