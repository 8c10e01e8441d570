//go:build unix

package cli

import "syscall"

// detachedAttr starts a process in a session of its own.
func detachedAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
