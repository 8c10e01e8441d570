package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestFirstStatusListsEveryServer: the daemon's first answer lists every
// configured server (starting, until it is ready with its catalog), so
// that a client that waits until every server is ready does not take an
// empty list for "all ready"; and a server shown ready has its tools.
func TestFirstStatusListsEveryServer(t *testing.T) {
	t.Parallel()
	const n = 3
	e := testenv.New(t)
	if err := os.MkdirAll(e.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{}
	for i := range n {
		cfg[fmt.Sprintf("s%d", i)] = map[string]any{"type": "stdio", "command": e.Bin, "args": []string{"example-server"}}
	}
	raw, err := json.Marshal(map[string]any{"mcp": map[string]any{"servers": cfg}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Home, "extensions.json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(e.Bin, "daemon", "--listen", "off")
	cmd.Env = append(os.Environ(), "PLEXUS_HOME="+e.Home)
	if err := testenv.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		<-exited
	})

	c := client.New(e.Home)
	deadline := time.Now().Add(30 * time.Second)
	first := true
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		st, err := c.Status(ctx)
		cancel()
		if err == nil {
			if first && len(st.Servers) != n {
				t.Fatalf("the first status lists %d servers, want %d", len(st.Servers), n)
			}
			first = false
			ready := 0
			for _, s := range st.Servers {
				if s.State == apitype.StateReady {
					if s.Tools == 0 {
						t.Fatalf("%s is ready with no tools", s.Name)
					}
					ready++
				}
			}
			if ready == n {
				return
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("daemon exited: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("servers not ready after 30s (last error %v)", err)
		}
		time.Sleep(time.Millisecond)
	}
}
