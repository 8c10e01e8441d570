package host

import (
	"path/filepath"
	"testing"

	"github.com/plexus-mcp/plexus/internal/store"

	"github.com/plexus-mcp/plexus/internal/config"
)

// TestBearerTokenWithItsScheme: a bearer token stored as "Bearer TOKEN"
// (as some registry entries tell people to give it) is sent once, not as
// "Bearer Bearer TOKEN".
func TestBearerTokenWithItsScheme(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "home"))
	if err != nil {
		t.Fatal(err)
	}
	h := New(Options{Store: st})
	t.Cleanup(h.Close)
	sc := config.Server{Type: config.TypeHTTP, URL: "https://mcp.example.com/mcp", BearerTokenEnvVar: "TOKEN"}
	for stored, want := range map[string]string{"abc123": "Bearer abc123", "Bearer abc123": "Bearer abc123", "bearer abc123": "bearer abc123"} {
		lookup := func(string) (string, bool) { return stored, true }
		spec, err := h.resolve("x", sc, &config.File{}, lookup)
		if err != nil {
			t.Fatal(err)
		}
		if got := spec.Headers.Get("Authorization"); got != want {
			t.Errorf("stored %q: sent %q, want %q", stored, got, want)
		}
	}
}
