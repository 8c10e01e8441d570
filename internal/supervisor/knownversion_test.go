package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// TestStartOnDemandSkipsTheProbe: a stdio server whose cached handshake
// answer names a session-era version is started on demand in that version
// (its spec pins it, so no server/discover probe goes first); one that
// answered in 2026-07-28, one whose configuration pins a version, and a
// remote server are started as configured.
func TestStartOnDemandSkipsTheProbe(t *testing.T) {
	for _, tc := range []struct {
		name, typ, init, pinned, want string
	}{
		{"session era", "stdio", `{"protocolVersion":"2025-06-18","capabilities":{}}`, "", "2025-06-18"},
		{"stateless era", "stdio", `{"protocolVersion":"2026-07-28","capabilities":{}}`, "", ""},
		{"pinned by its configuration", "stdio", `{"protocolVersion":"2025-06-18"}`, "2024-11-05", "2024-11-05"},
		{"no version", "stdio", `{"capabilities":{}}`, "", ""},
		{"remote", "http", `{"protocolVersion":"2025-06-18"}`, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, called := "", false
			s := New(Params{Name: "s", Config: config.Server{Type: tc.typ, Command: "x", URL: "http://127.0.0.1:1"},
				Spec:   upstream.Spec{Name: "s", Type: tc.typ, ProtocolVersion: tc.pinned},
				Cached: &Cached{Init: json.RawMessage(tc.init)},
				connect: func(_ context.Context, spec upstream.Spec) (*upstream.Conn, error) {
					got, called = spec.ProtocolVersion, true
					return nil, errors.New("not started in this test")
				}})
			defer s.Stop()
			if st := s.State(); st != StateIdle {
				t.Fatalf("built from its cached catalog in state %s, want idle", st)
			}
			if _, _, err := s.Use(context.Background(), nil); err == nil {
				t.Fatal("a start that failed was a use")
			}
			if !called || got != tc.want {
				t.Fatalf("started (%v) with protocol version %q, want %q", called, got, tc.want)
			}
		})
	}
}
