package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestSlowAddDoesNotBlockOtherWrites guards head-of-line blocking of the
// settings: while `plexus add` waits for a server that is slow to start,
// a secret and another server are saved at once, and the slow add, once
// its server is up, keeps them (its save is applied to the settings as
// they are then, not to those it started from).
func TestSlowAddDoesNotBlockOtherWrites(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.StartDaemon()
	const delay = 4 * time.Second
	mark := filepath.Join(t.TempDir(), "launched")
	done := make(chan testenv.Result, 1)
	go func() {
		done <- e.Run("", "add", "slow", "--", "/bin/sh", "-c", `touch "$1"; sleep 4; exec "$0" example-server`, e.Bin, mark)
	}()
	// Wait until the slow server's verification start is under way.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(mark); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow server was never launched")
		}
	}
	start := time.Now()
	if r := e.Run("value-of-other\n", "secret", "set", "OTHER_KEY"); r.Code != 0 {
		t.Fatalf("secret set: %s", r.Stderr)
	}
	e.MustRun("add", "quick", "--no-verify", "--", e.Bin, "example-server")
	limit := delay / 2
	if testenv.Race() {
		limit = delay * 3 / 4 // every step is slower under the race detector; still well short of the start
	}
	if took := time.Since(start); took > limit {
		t.Errorf("a secret and another server took %s to save while a slow add was starting its server", took.Round(time.Millisecond))
	}
	select {
	case <-done:
		t.Fatal("the slow add finished before the other writes: the test did not overlap them")
	default:
	}
	r := <-done
	if r.Code != 0 {
		t.Fatalf("the slow add failed: %s", r.Stderr)
	}
	list := servers(t, e)
	for _, name := range []string{"slow", "quick"} {
		if list[name].Name == "" {
			t.Errorf("server %s is missing after the slow add: %v", name, list)
		}
	}
	mustContain(t, "secret ls", e.MustRun("secret", "ls"), "OTHER_KEY")
}
