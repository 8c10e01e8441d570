package testenv

import (
	"os"
	"testing"
)

// NeedRoot skips the test, saying why, unless it runs as root. The tests
// that call it are named …AsRoot (a test of this package checks), so that
// `go test -run AsRoot` finds them; .ci/run runs as root and runs them all.
func NeedRoot(t testing.TB, why string) {
	t.Helper()
	if uid := os.Geteuid(); uid != 0 {
		t.Skipf("needs root: %s (running as uid %d; .ci/run runs as root)", why, uid)
	}
}
