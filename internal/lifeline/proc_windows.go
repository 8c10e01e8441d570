package lifeline

import (
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// GroupAttr starts the child in a process group of its own, so that the
// console's Ctrl+C reaches the daemon, not its servers. The tree is held by
// the shim's Job Object (shim_windows.go), not by signals.
func GroupAttr(syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// WaitExitedNoReap: Windows has no zombies to keep; the caller waits.
func WaitExitedNoReap(int) bool { return false }

// GroupAlive is false once the leader is gone: the leader is the shim, and
// its Job Object has killed the rest with it.
func GroupAlive(int) bool { return false }

// ProcessAlive reports whether pid is a running process.
func ProcessAlive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	const stillActive = 259
	return windows.GetExitCodeProcess(h, &code) == nil && code == stillActive
}

// Descendants are not listed on Windows: the job holds them.
func Descendants(int) []int { return nil }

// SignalGroup ends the process pid, whatever sig: Windows has no signals
// between processes. The daemon has already closed the server's stdin,
// the stop an MCP server is asked to honour first; killing the shim closes
// its job, which takes the tree.
func SignalGroup(pid int, _ syscall.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
		p.Release()
	}
}

// SignalName names the two signals the daemon uses.
func SignalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return ""
}
