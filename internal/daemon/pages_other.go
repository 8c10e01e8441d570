//go:build !linux

package daemon

// shedStartupPages is Linux's (pages_linux.go).
func shedStartupPages() {}
