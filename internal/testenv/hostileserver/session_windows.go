package main

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// newSessionAttr starts a process detached from this one's console.
func newSessionAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.DETACHED_PROCESS}
}
