//go:build unix

package lifeline

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// SignalGroup sends sig to every process of group pgid.
func SignalGroup(pgid int, sig syscall.Signal) {
	unix.Kill(-pgid, sig)
}

// SignalName is sig's name ("SIGTERM"), or "" for an unknown signal.
func SignalName(sig syscall.Signal) string { return unix.SignalName(sig) }
