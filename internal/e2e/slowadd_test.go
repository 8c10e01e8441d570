package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestSlowAddDoesNotBlockOtherWrites guards head-of-line blocking of the
// settings: while `plexus add` waits for a server that is slow to start
// (held until the test lets it go), a secret and another server are saved,
// and the slow add, once its server is up, keeps them (its save is applied
// to the settings as they are then, not to those it started from).
func TestSlowAddDoesNotBlockOtherWrites(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.StartDaemon()
	dir := t.TempDir()
	mark, release := filepath.Join(dir, "launched"), filepath.Join(dir, "release")
	done := make(chan testenv.Result, 1)
	go func() {
		done <- e.Run("", "add", "slow", "--", "/bin/sh", "-c",
			`touch "$1"; while [ ! -e "$2" ]; do sleep 0.02; done; exec "$0" example-server`, e.Bin, mark, release)
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
	// The other writes finish while the slow server is still held: were
	// they queued behind the slow add, they would wait for the release.
	writes := make(chan string, 1)
	go func() {
		if r := e.Run("value-of-other\n", "secret", "set", "OTHER_KEY"); r.Code != 0 {
			writes <- "secret set: " + r.Stderr
			return
		}
		if r := e.Run("", "add", "quick", "--no-verify", "--", e.Bin, "example-server"); r.Code != 0 {
			writes <- "add quick: " + r.Stderr
			return
		}
		writes <- ""
	}()
	select {
	case msg := <-writes:
		if msg != "" {
			t.Error(msg)
		}
	case <-time.After(time.Minute):
		t.Error("a secret and another server were not saved in a minute while a slow add was starting its server")
	}
	select {
	case r := <-done:
		t.Fatalf("the slow add finished before its server was let go: %+v", r)
	default:
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
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
