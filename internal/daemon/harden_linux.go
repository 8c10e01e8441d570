package daemon

import (
	"log/slog"

	"golang.org/x/sys/unix"
)

// hardenProcess makes the daemon not dumpable: its /proc files (its
// memory, its environment, its open files) belong to root from then on,
// and no process of its own user may trace it. A stdio server runs as the
// daemon's user in a pod; without this it could read the store's key and
// the database's password out of the daemon (docs/team.md). The servers
// it starts are dumpable again: exec resets the flag.
func hardenProcess(log *slog.Logger) {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		log.Warn("could not make the daemon's memory unreadable to its user's other processes", "err", err)
	}
}
