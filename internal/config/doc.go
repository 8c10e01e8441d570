// Package config is the schema of extensions.json and everything that can be
// checked about it without looking at the outside world: a strict decoder that
// reports every problem at once with its key path, validation of names, URLs
// and secret references, a deterministic encoder, and $VAR placeholder
// expansion.
//
// It is pure: no I/O and no environment lookups (callers pass a lookup
// function), and it imports nothing else of Plexus, so the daemon, the CLI and
// importers share one definition of a valid configuration.
//
// Secrets are named, never inlined (R-CFG-3), and error messages never
// echo values that could be secrets: URL query values, userinfo, header text,
// or strings that were supposed to be variable names.
package config
