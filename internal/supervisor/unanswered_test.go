package supervisor

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// TestUnansweredRemoteIsLost: a server over streamable HTTP that stops
// answering its health checks — its requests hang, or nothing listens at
// its address any more — is lost after KeepAliveMisses checks in a row,
// and said to be so ("keepalive failed"), in both eras: a failed HTTP
// request is no answer, though the SDK reports it as a JSON-RPC error of
// its own ("rejected by transport").
func TestUnansweredRemoteIsLost(t *testing.T) {
	for _, era := range []struct {
		name, version string
		stateless     bool
	}{
		{"2025-11-25", "2025-11-25", false},
		{"2026-07-28", "", true},
	} {
		for _, fault := range []string{"hangs", "gone"} {
			t.Run(era.name+"/"+fault, func(t *testing.T) {
				srv := mcp.NewServer(&mcp.Implementation{Name: "fading", Version: "1"}, nil)
				h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: era.stateless})
				var hang atomic.Bool
				release := make(chan struct{})
				ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if hang.Load() {
						select {
						case <-r.Context().Done():
						case <-release:
						}
						return
					}
					h.ServeHTTP(w, r)
				}))
				defer ts.Close()
				defer close(release) // before ts.Close, which waits for the handlers
				sc := config.Server{Type: config.TypeHTTP, URL: ts.URL, KeepAliveMs: 100}
				p := PolicyFor(sc)
				p.KeepAliveMisses = 2
				p.Initial = time.Hour // the lost server is not tried again while the test looks
				s := New(Params{Name: "fading", Config: sc, Spec: upstream.Spec{Name: "fading", Type: "http", URL: ts.URL, ProtocolVersion: era.version}, Policy: p})
				defer s.Stop()
				if err := s.Start(context.Background()); err != nil {
					t.Fatal(err)
				}
				if st := s.Status(); st.State != StateReady {
					t.Fatalf("state %s after start", st.State)
				}
				switch fault {
				case "hangs":
					hang.Store(true)
				case "gone":
					ts.CloseClientConnections()
					ts.Listener.Close()
				}
				deadline := time.Now().Add(10 * time.Second)
				for {
					st := s.Status()
					if st.State != StateReady {
						if !strings.Contains(st.LastError, "keepalive failed") {
							t.Fatalf("the server is %s with last error %q, want it lost for its keepalive", st.State, st.LastError)
						}
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("still %s 10s after the server stopped answering (keep-alive 100ms, 2 misses)", st.State)
					}
					time.Sleep(20 * time.Millisecond)
				}
			})
		}
	}
}
