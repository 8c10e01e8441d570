package daemon

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/client"
)

// shortHome is a home whose socket path fits the limit.
func shortHome(t *testing.T) string {
	dir, err := os.MkdirTemp("", "pxd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "home")
}

// runDaemon runs the daemon on home until the test ends, once it answers
// on its socket.
func runDaemon(t *testing.T, home, listen string) string {
	t.Helper()
	return runDaemonWith(t, Options{Home: home, Listen: listen})
}

// runDaemonWith is runDaemon with all of the daemon's options.
func runDaemonWith(t *testing.T, opts Options) string {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	c := client.New(opts.Home)
	for deadline := time.Now().Add(30 * time.Second); ; {
		sctx, scancel := context.WithDeadline(ctx, deadline)
		st, err := c.Status(sctx)
		scancel()
		if err == nil {
			return st.HTTPAddr
		}
		select {
		case err := <-done:
			t.Fatalf("Run: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not answer: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestNonLoopbackListenIsRefusedOutsideTeamMode(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "192.0.2.1:7780"} {
		err := Run(context.Background(), Options{Home: shortHome(t), Listen: addr})
		if err == nil || !strings.Contains(err.Error(), "only a loopback address") || !strings.Contains(err.Error(), "team mode") {
			t.Errorf("--listen %s outside team mode: %v, want refused", addr, err)
		}
	}
}

// TestNetworkListenServesOnlyTheFace: in team mode a replica listens on
// every address (reached here through 127.0.0.1, the only address a test
// sends to), and serves there the face behind the team's tokens, its
// metadata and the probes; nothing of the web page, the settings or the
// metrics.
func TestNetworkListenServesOnlyTheFace(t *testing.T) {
	home := shortHome(t)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := `{"mcp": {"servers": {}}, "team": {"resource": "https://plexus.example.com/mcp", "issuers": ["https://idp.example.com"]}}`
	if err := os.WriteFile(filepath.Join(home, "extensions.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	// Beside it a loopback address of its own, not the default one: that
	// may be a person's daemon on this machine.
	local := runDaemonWith(t, Options{Home: home, Listen: "0.0.0.0:" + port, LoopbackListen: "127.0.0.1:0"})
	base := "http://127.0.0.1:" + port
	token, err := os.ReadFile(filepath.Join(home, TokenName))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path   string
		status int
		body   string
	}{
		{"/healthz", 200, "ok\n"},
		{"/readyz", 200, "ok\n"},
		{"/", 404, ""},
		{"/metrics", 404, ""},
		{"/debug/pprof/", 404, ""},
		{"/v1/status", 404, ""},
		{"/mcp", 401, ""},
		{"/mcp/any", 401, ""},
		{"/.well-known/oauth-protected-resource/mcp", 200, `"resource":"https://plexus.example.com/mcp"`},
	} {
		var status int
		var body string
		// readiness follows the servers' settling: retry briefly.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			req, _ := http.NewRequest("GET", base+tc.path, nil)
			// The loopback token opens nothing here.
			req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			status, body = resp.StatusCode, string(b)
			if status == tc.status || tc.path != "/readyz" || time.Now().After(deadline) {
				break
			}
		}
		if status != tc.status || !strings.Contains(body, tc.body) {
			t.Errorf("GET %s: %d %q, want %d with %q", tc.path, status, body, tc.status, tc.body)
		}
	}

	// Beside it, the loopback address serves the web page and the
	// metrics, as on one machine.
	if host, _, _ := net.SplitHostPort(local); host != "127.0.0.1" || strings.HasSuffix(local, ":"+port) {
		t.Errorf("status reports %q as the HTTP address, want the loopback one", local)
	}
	for p, want := range map[string]int{"/": 200, "/metrics": 401, "/healthz": 200} {
		resp, err := http.Get("http://" + local + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s on loopback: %d, want %d", p, resp.StatusCode, want)
		}
	}

	// The team section removed: the face there is gone, not opened to the
	// loopback token.
	if err := os.WriteFile(filepath.Join(home, "extensions.json"), []byte(`{"mcp": {"servers": {}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := client.New(home).Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/mcp", "/.well-known/oauth-protected-resource/mcp"} {
		req, _ := http.NewRequest("POST", base+p, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("POST %s without team mode: %d, want 404", p, resp.StatusCode)
		}
	}
}

// TestLoopbackServesTheProbesToo: the one-machine daemon answers them on
// its loopback address, without its token.
func TestLoopbackServesTheProbesToo(t *testing.T) {
	addr := runDaemon(t, shortHome(t), "127.0.0.1:0")
	for _, p := range []string{"/healthz", "/readyz"} {
		var resp *http.Response
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			var err error
			if resp, err = http.Get("http://" + addr + p); err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode == 200 || time.Now().After(deadline) {
				break
			}
		}
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %d", p, resp.StatusCode)
		}
	}
}

// TestReadiness: not ready until the servers settled; the answer never
// says why. The database is not asked (e2e TestTeamDatabaseFaults: a
// replica stays ready through an outage).
func TestReadiness(t *testing.T) {
	h := &health{log: slog.New(slog.DiscardHandler)}
	check := func(want int) {
		t.Helper()
		for _, p := range []string{"/readyz", "/healthz"} {
			w := httptest.NewRecorder()
			mux := http.NewServeMux()
			h.handle(mux)
			mux.ServeHTTP(w, httptest.NewRequest("GET", p, nil))
			if p == "/healthz" {
				if w.Code != 200 {
					t.Errorf("healthz %d, want 200 whatever readiness is", w.Code)
				}
				continue
			}
			if w.Code != want || strings.Contains(w.Body.String(), "starting") {
				t.Errorf("readyz %d %q, want %d and nothing said", w.Code, w.Body, want)
			}
		}
	}
	check(503) // not settled
	h.settled.Store(true)
	check(200)
}
