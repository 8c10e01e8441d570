//go:build !linux && !freebsd

package testenv

// onStarterThread runs f: without a parent-death signal, the thread that
// starts a child does not matter.
func onStarterThread(f func() error) error { return f() }
