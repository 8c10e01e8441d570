//go:build unix

package main

import "syscall"

// newSessionAttr starts a process in a session of its own.
func newSessionAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
