package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGiveUpMidAnswerKeepsTheConnection: a caller that gives up after a
// JSON answer's headers came and before its body did fails only its own
// request — a health check that timed out, a cancelled call — and the
// connection stays up for the next one, which waits out the same slow body
// and gets its answer. Both eras: a session-era server (the SDK's ping and
// call) and an MCP 2026-07-28 one (server/discover as the health check).
func TestGiveUpMidAnswerKeepsTheConnection(t *testing.T) {
	const bodyDelay = 400 * time.Millisecond
	for _, era := range []struct {
		name, version string
		stateless     bool
	}{
		{"2025-11-25", "2025-11-25", false},
		{"2026-07-28", "", true},
	} {
		t.Run(era.name, func(t *testing.T) {
			s := mcp.NewServer(&mcp.Implementation{Name: "slow-body", Version: "1"}, nil)
			s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answered"}}}, nil
			})
			sessionsEnded(t, s)
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
				&mcp.StreamableHTTPOptions{Stateless: era.stateless, JSONResponse: true})
			var slow atomic.Bool
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost && slow.Load() {
					body, _ := io.ReadAll(r.Body)
					r.Body = io.NopCloser(bytes.NewReader(body))
					var m struct {
						Method string `json:"method"`
					}
					json.Unmarshal(body, &m)
					if m.Method == "ping" || m.Method == "server/discover" || m.Method == "tools/call" {
						// The answer's headers go at once; its body (the
						// handler's own answer) after bodyDelay.
						rec := httptest.NewRecorder()
						h.ServeHTTP(rec, r)
						for k, vs := range rec.Header() {
							w.Header()[k] = vs
						}
						w.Header().Del("Content-Length")
						w.WriteHeader(rec.Code)
						w.(http.Flusher).Flush()
						select {
						case <-time.After(bodyDelay):
						case <-r.Context().Done():
							return
						}
						w.Write(rec.Body.Bytes())
						return
					}
				}
				h.ServeHTTP(w, r)
			}))
			defer ts.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			c, err := Connect(ctx, Spec{Name: "slow-body", Type: "http", URL: ts.URL, ProtocolVersion: era.version})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if era.stateless && c.ProtocolVersion() < "2026-07-28" {
				t.Fatalf("negotiated %s, want 2026-07-28", c.ProtocolVersion())
			}
			slow.Store(true)
			alive := func(after string) {
				t.Helper()
				select {
				case <-c.Done():
					t.Fatalf("%s, the connection ended: %v", after, c.Err())
				default:
				}
			}

			short, cancelShort := context.WithTimeout(ctx, bodyDelay/4)
			err = c.Ping(short)
			cancelShort()
			if err == nil || AnswerError(err) != nil {
				t.Fatalf("a health check given up before the answer's body came gave %v, want a failure", err)
			}
			time.Sleep(bodyDelay) // the server is done writing the abandoned answer
			alive("after a health check that timed out mid-answer")

			short, cancelShort = context.WithTimeout(ctx, bodyDelay/4)
			_, err = c.CallTool(short, "echo", nil)
			cancelShort()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("a call given up mid-answer gave %v, want context.DeadlineExceeded", err)
			}
			time.Sleep(bodyDelay)
			alive("after a call given up mid-answer")

			if err := c.Ping(ctx); err != nil {
				t.Fatalf("a patient health check: %v", err)
			}
			res, err := c.CallTool(ctx, "echo", nil)
			if err != nil {
				t.Fatalf("a patient call: %v", err)
			}
			if got := resultText(t, res); !strings.Contains(got, "answered") {
				t.Fatalf("a patient call: %q", got)
			}
			alive("after patient requests")
		})
	}
}
