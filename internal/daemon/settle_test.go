package daemon

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestSettleAfterServersStart: the daemon settles (frees what starting
// cost, and runs on SteadyProcs threads) once its servers have started —
// not before, and not never.
func TestSettleAfterServersStart(t *testing.T) {
	bin := testenv.Binary(t)
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"mcp": map[string]any{"servers": map[string]any{
		"example": map[string]any{"type": "stdio", "command": bin, "args": []string{"example-server"}}}}})
	if err := os.WriteFile(filepath.Join(home, "extensions.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan []apitype.ServerStatus, 1)
	procs := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(procs) })
	settled = func() {
		if n := runtime.GOMAXPROCS(0); n != 1 {
			t.Errorf("settled on %d threads, want SteadyProcs 1", n)
		}
		st, err := client.New(home).Status(context.Background())
		if err != nil {
			t.Errorf("status when settled: %v", err)
		}
		done <- st.Servers
	}
	t.Cleanup(func() { settled = nil })
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() {
		ran <- Run(ctx, Options{Home: home, Shim: []string{bin, "__plexus-shim"}, Listen: "off", SteadyProcs: 1})
	}()
	defer func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("daemon: %v", err)
		}
	}()
	select {
	case servers := <-done:
		if len(servers) != 1 || servers[0].State != apitype.StateReady {
			t.Errorf("settled with servers %+v, want example ready", servers)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not settle within 30s of starting one server")
	}
}
