//go:build !linux

package sandbox

import (
	"runtime"
	"syscall"
)

// Detect reports no sandbox features: they are Linux's.
func Detect() Features { return Features{OS: runtime.GOOS} }

// Isolate does nothing off Linux; Missing refuses the sandbox there.
func Isolate(attr *syscall.SysProcAttr, p *Policy) {}
