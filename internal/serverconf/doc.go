// Package serverconf is one server's settings as a front end builds them:
// the JSON shape of a server in extensions.json (R-CFG, docs/requirements.md) as a map, the keys
// and transports of that shape, the names of the managed variables a form
// stores secrets under, and the name a new server is suggested from its URL
// or command.
//
// Front ends (the CLI, the terminal UI) build settings here rather than with
// the daemon's config types: they depend on apitype and this package alone,
// and the daemon decodes strictly and reports every problem with its path,
// so a front end checks only what it can explain better than the daemon.
// It imports nothing of Plexus.
package serverconf
