//go:build !linux

package execpages

// Shed is Linux's (execpages_linux.go).
func Shed() {}
