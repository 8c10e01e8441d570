package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCallRefusedForItsCredential: a call the server refuses with HTTP 401
// (its key revoked while connected) was not processed: the error names
// the status and the credential to check, and is no "outcome unknown".
// A call after the connection broke on a health check's 401 is not lost
// either: not made, for the same refusal or the connection's end.
func TestCallRefusedForItsCredential(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "revokes", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		t.Error("a refused call ran")
		return &mcp.CallToolResult{}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var revoked atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if revoked.Load() && r.Method == http.MethodPost {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "key revoked", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	spec := Spec{Name: "revokes", Type: "http", URL: ts.URL, ProtocolVersion: "2025-11-25",
		Headers: http.Header{"X-Api-Key": {"key-1"}}, Secrets: []string{"key-1"}}

	c, err := Connect(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	revoked.Store(true)
	_, err = c.CallTool(ctx, "echo", nil)
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusUnauthorized || errors.Is(err, ErrTransportLost) {
		t.Fatalf("refused call: %v, want the HTTP 401 and no lost connection", err)
	}
	if !strings.Contains(err.Error(), "X-Api-Key") {
		t.Errorf("the error %q does not name the credential to check", err)
	}
	c.Close()

	revoked.Store(false)
	c, err = Connect(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	revoked.Store(true)
	if err := c.Ping(ctx); err == nil {
		t.Fatal("a refused health check passed")
	}
	_, err = c.CallTool(ctx, "echo", nil)
	if err == nil || errors.Is(err, ErrTransportLost) {
		t.Fatalf("a call after the refused health check: %v, want it not made", err)
	}
}

// goingServer connects to a streamable HTTP server whose first request
// gone is called after: then nothing listens there any more, and a new
// connection is refused. Each request goes on a connection of its own: a
// kept-alive one the server closed would take the POST unread (EOF),
// which is rightly "outcome unknown" — the server may have read it.
func goingServer(ctx context.Context, t *testing.T) (c *Conn, gone func()) {
	t.Helper()
	s := echoServer(t, nil, nil)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(func() {
		for ss := range s.Sessions() {
			ss.Close() // its DELETE could not reach it either
		}
		ts.Close()
	})
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	c, err := Connect(ctx, Spec{Name: "goes", Type: "http", URL: ts.URL, ProtocolVersion: "2025-11-25", HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, func() {
		ts.Listener.Close()
		ts.CloseClientConnections()
	}
}

// endsRefused checks that c ends, for its owner to show the server down
// and connect again on its schedule, with the refused connection.
func endsRefused(t *testing.T, c *Conn) {
	t.Helper()
	select {
	case <-c.Done():
		if !ConnRefused(c.Err()) {
			t.Errorf("the connection ended with %v, not the refused connection", c.Err())
		}
	case <-time.After(5 * time.Second):
		t.Error("the connection lives on though its server refuses connections")
	}
}

// TestCallToAServerGoneIsNotSent: a call whose POST could not reach the
// server at all — no connection could be made to it — was never sent: a
// known outcome (not connected), not "outcome unknown".
func TestCallToAServerGoneIsNotSent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, gone := goingServer(ctx, t)
	if _, err := c.CallTool(ctx, "echo", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	gone()
	_, err := c.CallTool(ctx, "echo", json.RawMessage(`{}`))
	if !errors.Is(err, ErrNotConnected) || errors.Is(err, ErrTransportLost) {
		t.Fatalf("a call no connection could be made for: %v; want not connected, never sent", err)
	}
	endsRefused(t, c)
}

// TestHealthCheckOfAServerGoneIsNotLost: a health check whose POST could
// not reach the server at all says so (not connected), as a call does,
// and the connection ends. Before, it said "connection to server lost,
// outcome unknown … connection refused" (in a team, the channel to a
// replica that had stopped).
func TestHealthCheckOfAServerGoneIsNotLost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, gone := goingServer(ctx, t)
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	gone()
	err := c.Ping(ctx)
	if !errors.Is(err, ErrNotConnected) || errors.Is(err, ErrTransportLost) {
		t.Fatalf("a health check no connection could be made for: %v; want not connected", err)
	}
	endsRefused(t, c)
}
