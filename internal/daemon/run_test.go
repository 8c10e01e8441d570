package daemon

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/client"
)

// TestRunWaitsForItsGoroutines: when Run returns, every goroutine it
// started has ended — the servers of the socket and the loopback address,
// and settle — so that nothing of a stopped daemon runs on.
func TestRunWaitsForItsGoroutines(t *testing.T) {
	dir, err := os.MkdirTemp("", "pxd") // short: the socket path has a limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	home := filepath.Join(dir, "home")
	for round := range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- Run(ctx, Options{Home: home, Listen: "127.0.0.1:0"}) }()
		c := client.New(home)
		for deadline := time.Now().Add(30 * time.Second); ; {
			sctx, scancel := context.WithDeadline(ctx, deadline)
			_, err := c.Status(sctx)
			scancel()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the daemon did not answer: %v", err)
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		for _, g := range strings.Split(stacks, "\n\n") {
			if strings.Contains(g, "net/http.(*Server).Serve(") || strings.Contains(g, "daemon.settle(") || strings.Contains(g, "daemon.Run.func") {
				t.Fatalf("round %d: a goroutine of Run outlived it:\n%s", round, g)
			}
		}
	}
}
