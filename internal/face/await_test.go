package face

import (
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "extensions.json"), []byte(`{"mcp": {"face": {"allowExternalCall": true}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	bin := testenv.Binary(t)
	h := host.New(host.Options{Store: st, Shim: []string{bin, "__plexus-shim"}})
	t.Cleanup(h.Close)
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
