package upstream

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLateReadingServerIsInitializedOnce guards the double handshake of a
// slow server: one that starts reading its stdin well after the
// server/discover probe's bound (as a server behind a slow `npx` does)
// used to find the fallback initialize right behind the probe, answer
// both, and refuse the second initialization. The probe's time now starts
// when the server has read it: one handshake, and the server is ready
// within its startup timeout.
func TestLateReadingServerIsInitializedOnce(t *testing.T) {
	s := fakeSpec(t, "sdk")
	log := filepath.Join(t.TempDir(), "stdin")
	// The fake only starts reading 2.5 probe bounds after its launch, and
	// logs what it reads (itself: a reader in front of it, such as tee,
	// would empty the pipe before the server has read anything, and the
	// probe's time would then include the server's own start, which for a
	// race-built test binary on a loaded machine can exceed the bound).
	s.Argv = []string{"/bin/sh", "-c", `sleep 2.5; exec "$0"`, s.Argv[0]}
	s.Env["FAKE_STDIN_LOG"] = log
	s.DiscoverTimeout = time.Second
	s.StartupTimeout = 20 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Connect(ctx, s)
	if err != nil {
		t.Fatalf("a server that reads its stdin late did not start: %v", err)
	}
	defer c.Close()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), `"method":"initialize"`) + strings.Count(string(b), `"method":"server/discover"`); n != 1 {
		t.Errorf("the server got %d handshakes (server/discover or initialize), want 1:\n%.600s", n, b)
	}
}
