//go:build !linux

package main

import "errors"

// ptraceSibling: the sandbox whose ptrace ban this probes is Linux's.
func ptraceSibling() (string, error) {
	return "", errors.New("ptrace-sibling is probed on Linux only")
}
