package recovery

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMiddlewareAnswersAPanic wants a panic in serving one message logged
// with its stack and the message failed with Internal, not the process
// ended; what does not panic passes through.
func TestMiddlewareAnswersAPanic(t *testing.T) {
	var log bytes.Buffer
	mw := Middleware(slog.New(slog.NewTextHandler(&log, nil)), "test: serving a message")
	h := mw(func(context.Context, string, mcp.Request) (mcp.Result, error) {
		panic("a bug reached")
	})
	res, err := h(context.Background(), "tools/call", &mcp.ServerRequest[*mcp.CallToolParamsRaw]{})
	if res != nil || !errors.Is(err, Internal) {
		t.Fatalf("answer: %v, %v", res, err)
	}
	if s := log.String(); !strings.Contains(s, "a bug reached") || !strings.Contains(s, "recovery_test.go") ||
		!strings.Contains(s, "method=tools/call") || !strings.Contains(s, Bug) {
		t.Errorf("log: %s", s)
	}
	h = mw(func(context.Context, string, mcp.Request) (mcp.Result, error) { return &mcp.CallToolResult{}, nil })
	if res, err := h(context.Background(), "tools/call", &mcp.ServerRequest[*mcp.CallToolParamsRaw]{}); res == nil || err != nil {
		t.Errorf("a plain answer: %v, %v", res, err)
	}
}

// TestDoFailsTheCall: a function that panics returns the zero value and
// Internal; one that does not, what it returned.
func TestDoFailsTheCall(t *testing.T) {
	var log bytes.Buffer
	l := slog.New(slog.NewTextHandler(&log, nil))
	res, err := Do(l, "test: a call", func() ([]byte, error) {
		panic("a bug reached")
	}, "call", "x")
	if res != nil || !errors.Is(err, Internal) || !strings.Contains(log.String(), "call=x") {
		t.Fatalf("a panicking call: %q, %v; log %s", res, err, log.String())
	}
	want := errors.New("its own error")
	if res, err := Do(l, "test: a call", func() ([]byte, error) { return []byte("ok"), want }); string(res) != "ok" || err != want {
		t.Errorf("a plain call: %q, %v", res, err)
	}
}
