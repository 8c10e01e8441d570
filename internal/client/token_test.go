package client

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestClientSendsTheToken: every request carries the token the home
// holds — the typed calls, the MCP client, the bridge's header — and
// after the daemon refused it (the file was made anew) the next request
// reads it again.
func TestClientSendsTheToken(t *testing.T) {
	home := shortTempDir(t)
	write := func(tok string) {
		if err := os.WriteFile(filepath.Join(home, TokenName), []byte(tok+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("first")
	var mu sync.Mutex
	want, got := "first", []string{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r.Header.Get("Authorization"))
		if r.Header.Get("Authorization") != "Bearer "+want {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":{"code":"unauthorized","message":"refused: a token is required"}}`))
			return
		}
		w.Write([]byte(`{"version":"x"}`))
	}))
	l, err := net.Listen("unix", filepath.Join(home, SocketName))
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)

	c := New(home)
	if _, err := c.Status(t.Context()); err != nil {
		t.Fatal(err)
	}
	url, hc := c.MCP("")
	if resp, err := hc.Post(url, "application/json", nil); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the MCP client: %v %v", resp, err)
	}
	if h := c.AuthHeader().Get("Authorization"); h != "Bearer first" {
		t.Fatalf("AuthHeader = %q", h)
	}
	mu.Lock()
	want = "second"
	mu.Unlock()
	write("second")
	if _, err := c.Status(t.Context()); err == nil {
		t.Fatal("a refused token was not refused")
	}
	if _, err := c.Status(t.Context()); err != nil {
		t.Fatalf("after a refusal the token is not read again: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	wantSeen := []string{"Bearer first", "Bearer first", "Bearer first", "Bearer second"}
	if len(got) != len(wantSeen) {
		t.Fatalf("the daemon saw %q, want %q", got, wantSeen)
	}
	for i := range got {
		if got[i] != wantSeen[i] {
			t.Fatalf("the daemon saw %q, want %q", got, wantSeen)
		}
	}
}
