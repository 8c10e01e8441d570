package localapi

import "errors"

// maxAncestors bounds a walk up a process's parents: a real tree is a few
// dozen deep, and a loop (a parent pid reused by a younger process) ends
// here.
const maxAncestors = 1024

// errDescendant refuses a process the daemon started: whatever its
// servers run, sandboxed or not, never drives the daemon — not even to
// start another server (a sandboxed server once added an unsandboxed
// one through the socket).
var errDescendant = errors.New("the caller is a process the daemon started (a server, or a program a server ran): the daemon's own servers may not use its API")

// notDescendant refuses pid if it descends from the process self (the
// daemon); parent gives a process's parent pid, 0 for none. The daemon's
// own process is not its descendant (in-process clients: its tests). An
// ancestor that exits during the walk has its children moved to another
// parent: the walk then starts over, a few times, and a process that
// cannot be followed is refused.
func notDescendant(pid, self int, parent func(int) (int, error)) error {
	if pid == self {
		return nil
	}
	for range 3 {
		p, err := pid, error(nil)
		for range maxAncestors {
			var pp int
			if pp, err = parent(p); err != nil {
				break
			}
			if pp == self {
				return errDescendant
			}
			if pp <= 1 {
				return nil
			}
			p = pp
		}
		if err == nil || p == pid {
			break // a loop, or the peer itself is gone: no second try
		}
	}
	return errors.New("the caller's process cannot be checked")
}
