//go:build !linux

package testenv

import "testing"

// MountTmpfs skips the test: its tiny file system is mounted on Linux only.
func MountTmpfs(t testing.TB, _, _ string) {
	t.Helper()
	t.Skip("a tmpfs to fill is mounted on Linux only")
}
