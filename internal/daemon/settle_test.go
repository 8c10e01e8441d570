package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
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

// TestResettleAfterFaceRequests: the daemon settles again a second after
// the face served a request (what serving it mapped is given back), and
// not while requests keep coming less than a second apart.
func TestResettleAfterFaceRequests(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	resettled = func() { n.Add(1) }
	t.Cleanup(func() { resettled = nil })
	addr := runDaemonWith(t, Options{Home: home, Listen: "127.0.0.1:0"})
	token, err := os.ReadFile(filepath.Join(home, "token"))
	if err != nil {
		t.Fatal(err)
	}
	ping := func() {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	wait := func(want int32) {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); n.Load() < want; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("settled again %d times, want %d", n.Load(), want)
			}
		}
	}
	ping()
	wait(1)
	// Requests 100 ms apart for 1.5 s: no second without one, unless the
	// machine stalled this loop that long.
	before := n.Load()
	var longest time.Duration
	last := time.Now()
	for range 15 {
		ping()
		time.Sleep(100 * time.Millisecond)
		longest, last = max(longest, time.Since(last)), time.Now()
	}
	if got := n.Load(); got != before && longest < resettleDelay {
		t.Fatalf("settled again %d times while requests came at most %v apart", got-before, longest)
	}
	wait(before + 1)
}
