package supervisor

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// TestUnansweredRemoteIsLost: a server over streamable HTTP that stops
// answering its health checks — its requests hang — is lost after
// KeepAliveMisses checks in a row, and said to be so ("keepalive
// failed"), in both eras: a failed HTTP request is no answer, though the
// SDK reports it as a JSON-RPC error of its own ("rejected by
// transport"). One at whose address nothing listens any more is gone, not
// hung: lost at the first check the connection is refused to, and said
// to be so ("connection refused").
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
				want := "keepalive failed"
				if fault == "gone" {
					p.KeepAliveMisses = 1000 // only the refusal can lose it while the test looks
					want = "connection refused"
				}
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
				deadline := time.Now().Add(30 * time.Second)
				for {
					st := s.Status()
					if st.State != StateReady {
						if !strings.Contains(st.LastError, want) {
							t.Fatalf("the server is %s with last error %q, want it lost: %s", st.State, st.LastError, want)
						}
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("still %s 30s after the server stopped answering (keep-alive 100ms, %d misses)", st.State, p.KeepAliveMisses)
					}
					time.Sleep(20 * time.Millisecond)
				}
			})
		}
	}
}

// TestBusyRemoteIsNotLost: a server answering calls while its health
// checks time out — a loaded one, whose ping waits behind the calls — is
// busy, not hung: it is not lost for its keepalive, and the calls it is
// answering are not lost with it (a loaded Node server was, in a run of
// the peer matrix, its calls failing "connection lost, outcome unknown").
func TestBusyRemoteIsNotLost(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "busy", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: &jsonschema.Schema{Type: "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	var slowPings atomic.Bool
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "ping" && slowPings.Load() {
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
			return next(ctx, method, req)
		}
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(h)
	defer ts.Close()
	sc := config.Server{Type: config.TypeHTTP, URL: ts.URL, KeepAliveMs: 400}
	p := PolicyFor(sc)
	p.KeepAliveMisses = 3
	p.Initial = time.Hour
	s := New(Params{Name: "busy", Config: sc, Spec: upstream.Spec{Name: "busy", Type: "http", URL: ts.URL, ProtocolVersion: "2025-11-25"}, Policy: p})
	defer s.Stop()
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	conn, err := s.Conn()
	if err != nil {
		t.Fatal(err)
	}
	slowPings.Store(true)
	// Three checks of 200 ms each unanswered in a row lose an idle
	// server within 1.6 s (main lost this one after 1.4 s); calls run
	// for longer, four at a time.
	var failed atomic.Int64
	var wg sync.WaitGroup
	end := time.Now().Add(2400 * time.Millisecond)
	for range 4 {
		wg.Go(func() {
			for time.Now().Before(end) {
				if _, err := conn.CallTool(t.Context(), "echo", json.RawMessage(`{}`)); err != nil {
					failed.Add(1)
					return
				}
			}
		})
	}
	wg.Wait()
	if st := s.Status(); st.State != StateReady || st.Restarts != 0 || failed.Load() != 0 {
		t.Fatalf("state %s, %d restarts, %d call loops failed (last error %q); want the busy server kept", st.State, st.Restarts, failed.Load(), st.LastError)
	}
}
