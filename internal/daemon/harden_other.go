//go:build !linux

package daemon

import "log/slog"

// hardenProcess does nothing here: the servers of a team run on Linux.
func hardenProcess(*slog.Logger) {}
