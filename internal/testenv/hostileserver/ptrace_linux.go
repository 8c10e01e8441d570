package main

import (
	"fmt"
	"os/exec"
	"strconv"
	"syscall"
)

// ptraceSibling starts a sibling and attaches to it with ptrace, which a
// sandbox must forbid.
func ptraceSibling() (string, error) {
	sib := exec.Command("/bin/sleep", "30")
	if err := sib.Start(); err != nil {
		return "", err
	}
	defer func() { sib.Process.Kill(); sib.Wait() }()
	if err := syscall.PtraceAttach(sib.Process.Pid); err != nil {
		return "", fmt.Errorf("ptrace attach to sibling %d: %w", sib.Process.Pid, err)
	}
	syscall.PtraceDetach(sib.Process.Pid)
	return "attached to sibling " + strconv.Itoa(sib.Process.Pid), nil
}
