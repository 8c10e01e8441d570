package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCancelReachesServer: a caller that gives up (a client gone away)
// cancels its call upstream with notifications/cancelled, on both call
// paths, over stdio and HTTP; the server's handler sees it and the
// connection lives on.
func TestCancelReachesServer(t *testing.T) {
	cancelled := make(chan struct{}, 4)
	started := make(chan struct{}, 4)
	s := mcp.NewServer(&mcp.Implementation{Name: "cancel", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			cancelled <- struct{}{}
			return nil, ctx.Err()
		case <-time.After(20 * time.Second):
			return &mcp.CallToolResult{}, nil
		}
	})
	sessionsEnded(t, s)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(h)
	defer ts.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	httpConn, err := Connect(ctx, Spec{Name: "cancel", Type: "http", URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer httpConn.Close()
	stdioConn := mustConnect(t, fakeSpec(t, "sdk"))

	calls := map[string]func(*Conn, context.Context) error{
		"decoded": func(c *Conn, ctx context.Context) error { _, err := c.CallTool(ctx, "slow", nil); return err },
		"forwarded": func(c *Conn, ctx context.Context) error {
			_, err := c.CallRaw(ctx, map[string]json.RawMessage{"name": json.RawMessage(`"slow"`)})
			return err
		},
	}
	for _, path := range []string{"decoded", "forwarded"} {
		t.Run("http/"+path, func(t *testing.T) {
			cctx, ccancel := context.WithCancel(ctx)
			errc := make(chan error, 1)
			go func() { errc <- calls[path](httpConn, cctx) }()
			select {
			case <-started:
			case <-time.After(10 * time.Second):
				t.Fatal("slow never started")
			}
			ccancel()
			if err := <-errc; !errors.Is(err, context.Canceled) || errors.Is(err, ErrTransportLost) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			select {
			case <-cancelled:
			case <-time.After(30 * time.Second):
				t.Fatal("the server never saw notifications/cancelled")
			}
		})
		t.Run("stdio/"+path, func(t *testing.T) {
			cctx, ccancel := context.WithCancel(ctx)
			errc := make(chan error, 1)
			n := len(stdioConn.Stderr())
			go func() { errc <- calls[path](stdioConn, cctx) }()
			if !waitFor(10*time.Second, func() bool {
				return countStderr(stdioConn, "slow started") > countIn(stdioConn.Stderr()[:n], "slow started")
			}) {
				t.Fatal("slow never started")
			}
			ccancel()
			if err := <-errc; !errors.Is(err, context.Canceled) || errors.Is(err, ErrTransportLost) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if !waitFor(30*time.Second, func() bool {
				return countStderr(stdioConn, "slow cancelled") > countIn(stdioConn.Stderr()[:n], "slow cancelled")
			}) {
				t.Fatalf("the server never saw notifications/cancelled; stderr: %q", stdioConn.Stderr())
			}
		})
	}
	for _, c := range []*Conn{httpConn, stdioConn} {
		select {
		case <-c.Done():
			t.Fatalf("a cancelled call ended the connection: %v", c.Err())
		default:
		}
	}
}

func countStderr(c *Conn, s string) int { return countIn(c.Stderr(), s) }

func countIn(lines []string, s string) int {
	n := 0
	for _, l := range lines {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

// TestCancelKeepsA2026Server: a call given up on a server of MCP
// 2026-07-28 over streamable HTTP leaves the connection live. The SDK's
// client POSTs notifications/cancelled without the Mcp-Method header
// that era requires, which the server refuses with 400 and the SDK took
// for a broken connection; that era cancels by closing the request.
func TestCancelKeepsA2026Server(t *testing.T) {
	started := make(chan struct{}, 2)
	s := mcp.NewServer(&mcp.Implementation{Name: "strict", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Second):
			return &mcp.CallToolResult{}, nil
		}
	})
	s.AddTool(&mcp.Tool{Name: "quick", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "still here"}}}, nil
	})
	sessionsEnded(t, s)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true}))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, err := Connect(ctx, Spec{Name: "strict", Type: "http", URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v := c.ProtocolVersion(); v < "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28", v)
	}
	cctx, ccancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { _, err := c.CallTool(cctx, "slow", nil); errc <- err }()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("slow never started")
	}
	ccancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	res, err := c.CallTool(ctx, "quick", nil)
	if err != nil {
		t.Fatalf("after a cancelled call: %v", err)
	}
	if got := resultText(t, res); !strings.Contains(got, "still here") {
		t.Fatalf("after a cancelled call: %q", got)
	}
	select {
	case <-c.Done():
		t.Fatalf("a cancelled call ended the connection: %v", c.Err())
	default:
	}
}
