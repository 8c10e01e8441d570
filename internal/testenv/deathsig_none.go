//go:build unix && !linux && !freebsd

package testenv

import "syscall"

// deathSig does nothing: this system has no parent-death signal.
func deathSig(*syscall.SysProcAttr) {}
