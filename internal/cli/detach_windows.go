package cli

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// detachedAttr starts a process without a console and outside the
// caller's Ctrl+C group.
func detachedAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.DETACHED_PROCESS | windows.CREATE_NEW_PROCESS_GROUP}
}
