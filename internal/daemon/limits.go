package daemon

import (
	"log/slog"
	"net"

	"github.com/plexus-mcp/plexus/internal/connlimit"
	"github.com/plexus-mcp/plexus/internal/rawio"
)

// The bounds of the daemon's listeners (package connlimit): the socket,
// the loopback address, a team replica's pod address, its internal
// channel (under its TLS) and --metrics-listen's address each hold at
// most connBudget connections, with limits of their own, so that no
// caller on TCP can take what the socket needs. The budget is an eighth
// of the open files the daemon may have — Go raises RLIMIT_NOFILE's soft
// limit to its hard limit at start (rlimit_*.go reads it) — so that the
// five together take at most five eighths, and the rest stays for the
// servers' pipes and connections and the daemon's files.

// socketReserve is how many file descriptors the socket keeps for
// accepting its clients when something else took them all.
const socketReserve = 16

// connBudget is how many connections one listener may hold: an eighth of
// the open files, at least 16, at most 4096.
func connBudget() int { return min(4096, max(16, openFiles()/8)) }

// limitSocket is the socket's listener under its limits. Its
// connections (`plexus mcp`'s calls among them) are read and written with
// raw system calls on Linux (package rawio).
func limitSocket(ln net.Listener, log *slog.Logger) *connlimit.Listener {
	lim := connlimit.Default(connBudget())
	lim.Reserve = socketReserve
	return connlimit.New(rawio.Listener(ln), "socket", lim, log)
}

// limitTCP is a TCP listener under its limits, its connections read and
// written as the socket's are.
func limitTCP(ln net.Listener, name string, log *slog.Logger) *connlimit.Listener {
	return connlimit.New(rawio.Listener(ln), name, connlimit.Default(connBudget()), log)
}
