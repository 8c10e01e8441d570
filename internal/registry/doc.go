// Package registry is the daemon's client of an MCP registry — the
// official one at registry.modelcontextprotocol.io, or a company's own
// that serves the same REST API (/v0.1/servers, cursor paging) — and the
// translator of a registry entry's server.json into a Plexus server.
//
// Everything here reads outside input: answers are bounded in size and
// time, decoded and checked before they are used or cached (cache.go), and
// a server.json becomes a configuration only by the rules of translate.go,
// which runs packages through npx, uvx or dnx without a shell, refuses what
// Plexus cannot run (containers, bundles) with the reason, and keeps every
// secret out of the configuration and off command lines: a secret is a
// managed variable the configuration refers to by name.
package registry
