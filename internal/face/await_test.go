package face

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/host"
	"github.com/plexus-mcp/plexus/internal/store"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestCallMeetsNewToolBeforeItsEvent: a server's tools are in the host's
// catalog the moment it is ready, but the face learns of them from an
// event, handled on its own goroutine a while later (later still on a busy
// machine). A call that names such a tool in between must get the tool,
// not "unknown tool". Here the face gets no events at all (its
// subscription is ended before the server is added), so only the catalog's
// version can tell the profile that it is behind.
func TestCallMeetsNewToolBeforeItsEvent(t *testing.T) {
	st := testStore(t, []byte(`{"mcp": {"face": {"allowExternalCall": true}}}`))
	bin := testenv.Binary(t)
	h := host.New(host.Options{Store: st, Shim: []string{bin, "__plexus-shim"}})
	t.Cleanup(h.Close)
	f, cs := faceClient(t, h)

	f.stop() // no event reaches the face from here on
	cfg, _ := json.Marshal(map[string]any{"type": "stdio", "command": bin, "args": []string{"example-server"}})
	if _, err := h.PutServer(t.Context(), host.PutRequest{Name: "ex", Config: cfg, Create: true}); err != nil {
		t.Fatal(err)
	}
	entries, _, err := h.Tools("")
	if err != nil {
		t.Fatal(err)
	}
	var echo string
	for _, e := range entries {
		if e.Server == "ex" && e.Tool == "echo" {
			echo = e.Name
		}
	}
	if echo == "" {
		t.Fatalf("no echo tool of ex in the host's catalog: %+v", entries)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "here"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("the call of %s: %+v", echo, res)
	}
	if text, _ := res.Content[0].(*mcp.TextContent); text == nil || text.Text != "here" {
		t.Fatalf("the call of %s answered %+v", echo, res.Content[0])
	}
}

// testStore is a store on a new home whose extensions.json is cfg.
func testStore(t testing.TB, cfg []byte) *store.Store {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "extensions.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// faceClient is a face on h served over HTTP, and a client's session
// with it.
func faceClient(t *testing.T, h *host.Host) (*Face, *mcp.ClientSession) {
	f := New(h, slog.New(slog.DiscardHandler), "test")
	t.Cleanup(f.Close)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	client := mcp.NewClient(&mcp.Implementation{Name: "await-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return f, cs
}

// unplaced is a team's Placement for a test: no replica runs a server
// (its lease is moving) until here is set, then this replica does.
type unplaced struct{ here atomic.Bool }

func (u *unplaced) Place(string) (*host.Remote, error) {
	if u.here.Load() {
		return nil, nil
	}
	return nil, errors.New("no replica runs it now: it moves to another replica within seconds")
}

// TestCallWaitsForAServerBeingPlaced: on a replica that just started,
// a stdio server whose lease no replica holds this moment (the replica
// that ran it is stopping and handed it over) is failed, "no replica runs
// it now", until a replica takes the lease; a balancer sends the replica
// calls meanwhile. A call of its tool waits for it and is served once it
// runs, rather than answered "unknown tool" at once (TestTeamSpread's
// calls got that through a rolling restart: 202 in one run under load);
// once every server is up, a name none offers still fails at once.
func TestCallWaitsForAServerBeingPlaced(t *testing.T) {
	bin := testenv.Binary(t)
	cfg, _ := json.Marshal(map[string]any{"mcp": map[string]any{
		"face":    map[string]any{"allowExternalCall": true},
		"servers": map[string]any{"ex": map[string]any{"type": "stdio", "command": bin, "args": []string{"example-server"}}},
	}})
	st := testStore(t, cfg)
	pl := &unplaced{}
	h := host.New(host.Options{Store: st, Shim: []string{bin, "__plexus-shim"}, Placement: pl})
	t.Cleanup(h.Close)
	h.Start(t.Context())
	if _, servers := h.Servers(); len(servers) != 1 || servers[0].State != apitype.StateFailed {
		t.Fatalf("ex before any replica runs it: %+v", servers)
	}
	_, cs := faceClient(t, h)
	echo := catalog.ReadableName("ex", "echo")
	call := func(ctx context.Context, name string) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "here"}})
	}

	// While it is being placed, the call waits: the caller's own deadline
	// ends it, not "unknown tool".
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	res, err := call(ctx, echo)
	cancel()
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call of %s while no replica runs ex: %+v, %v; want it to wait (here until the caller's deadline)", echo, res, err)
	}

	// A call waiting when a replica takes the lease is served.
	done := make(chan error, 1)
	go func() {
		res, err := call(t.Context(), echo)
		if err == nil && (res.IsError || len(res.Content) != 1) {
			err = fmt.Errorf("answered %+v", res)
		}
		done <- err
	}()
	pl.here.Store(true)
	h.Replace(t.Context(), []string{"ex"})
	if err := <-done; err != nil {
		t.Fatalf("a call of %s waiting while ex was placed: %v", echo, err)
	}

	// Every server up: a name none offers fails at once.
	if _, err := call(t.Context(), catalog.ReadableName("ex", "nosuch")); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("a call of a tool ex does not have: %v, want unknown tool", err)
	}
}
