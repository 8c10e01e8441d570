package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const querySecret = "query-s3cret-91bd"

// remoteFake is an SDK server behind HTTP on 127.0.0.1 that wants a bearer
// token and records the headers it gets.
type remoteFake struct {
	srv         *httptest.Server
	started     chan struct{} // a "slow" call has begun
	releaseSlow func()        // ends "slow" calls

	mu      sync.Mutex
	apiKeys []string // guarded by mu; X-Api-Key of each request
}

func newRemoteFake(t *testing.T, sse bool) *remoteFake {
	f := &remoteFake{started: make(chan struct{}, 1)}
	release := make(chan struct{})
	f.releaseSlow = sync.OnceFunc(func() { close(release) })
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1.0"}, &mcp.ServerOptions{PageSize: 1})
	obj := map[string]any{"type": "object"}
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: obj}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f.started <- struct{}{}
		select {
		case <-ctx.Done():
		case <-release: // the server-side context may outlive a dropped connection
		}
		return nil, errors.New("slow ended")
	})
	sessionsEnded(t, s)
	var h http.Handler
	if sse {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
	} else {
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.apiKeys = append(f.apiKeys, r.Header.Get("X-Api-Key"))
		f.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+canary {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://example/.well-known"`)
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	f.srv = httptest.NewServer(mux) // 127.0.0.1 only
	t.Cleanup(f.srv.Close)
	t.Cleanup(f.releaseSlow) // runs first
	return f
}

func (f *remoteFake) spec(typ string, withToken bool) Spec {
	s := Spec{
		Name:           "remote",
		Type:           typ,
		URL:            f.srv.URL + "/mcp?team=dev&key=" + querySecret,
		Headers:        http.Header{"X-Api-Key": {"api-key-1"}},
		StartupTimeout: 10 * time.Second,
		Secrets:        []string{canary},
	}
	if withToken {
		s.Headers.Set("Authorization", "Bearer "+canary)
	}
	return s
}

func TestHTTPConnectAndCall(t *testing.T) {
	f := newRemoteFake(t, false)
	callerTransport := &http.Transport{}
	defer callerTransport.CloseIdleConnections()
	caller := &http.Client{Transport: callerTransport}
	s := f.spec("http", true)
	s.HTTPClient = caller
	c := mustConnect(t, s)

	if caller.Transport != callerTransport {
		t.Error("the caller's http.Client was modified")
	}
	if c.ProtocolVersion() == "" || c.PID() != 0 {
		t.Errorf("ProtocolVersion %q, PID %d", c.ProtocolVersion(), c.PID())
	}
	if n := len(c.Discovery().Tools); n != 2 {
		t.Errorf("%d tools over pages of 1, want 2", n)
	}
	res, err := c.CallTool(context.Background(), "echo", json.RawMessage(`{"a":"b"}`))
	if err != nil || resultText(t, res) != `{"a":"b"}` {
		t.Fatalf("echo = %v, %v", res, err)
	}
	f.mu.Lock()
	for _, k := range f.apiKeys {
		if k != "api-key-1" {
			t.Errorf("request without the configured header: X-Api-Key %q", k)
		}
	}
	f.mu.Unlock()
	c.Close()
	if !errors.Is(c.Err(), ErrClosed) {
		t.Errorf("Err = %v", c.Err())
	}
}

func TestHTTPUnauthorized(t *testing.T) {
	for _, typ := range []string{"http", "sse"} {
		t.Run(typ, func(t *testing.T) {
			f := newRemoteFake(t, typ == "sse")
			s := f.spec(typ, false)
			s.Headers.Set("Authorization", "Bearer wrong-"+canary)
			_, err := Connect(context.Background(), s)
			var se *StatusError
			if !errors.As(err, &se) || se.StatusCode != http.StatusUnauthorized || !strings.Contains(se.WWWAuthenticate, "resource_metadata") {
				t.Fatalf("err = %v, want a 401 StatusError", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "401") || !strings.Contains(msg, "key=REDACTED") {
				t.Errorf("error does not name the status and the sanitized URL: %s", msg)
			}
			if strings.Contains(msg, querySecret) || strings.Contains(msg, canary) {
				t.Errorf("secret in error: %s", msg)
			}
		})
	}
}

func TestHTTPNotFoundAndRefused(t *testing.T) {
	f := newRemoteFake(t, false)
	s := f.spec("http", true)
	s.URL = f.srv.URL + "/nope?key=" + querySecret
	_, err := Connect(context.Background(), s)
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusNotFound || strings.Contains(err.Error(), querySecret) {
		t.Errorf("404: err = %v", err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s.URL = "http://" + addr + "/mcp?key=" + querySecret
	_, err = Connect(context.Background(), s)
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), addr+"/mcp?key=REDACTED") {
		t.Errorf("refused: err = %v", err)
	}
	if err != nil && strings.Contains(err.Error(), querySecret) {
		t.Errorf("secret in error: %v", err)
	}
}

func TestSSEConnectAndCall(t *testing.T) {
	f := newRemoteFake(t, true)
	c := mustConnect(t, f.spec("sse", true))
	if n := len(c.Discovery().Tools); n != 2 {
		t.Errorf("%d tools, want 2", n)
	}
	res, err := c.CallTool(context.Background(), "echo", json.RawMessage(`{}`))
	if err != nil || resultText(t, res) != `{}` {
		t.Fatalf("echo = %v, %v", res, err)
	}
}

func TestHTTPConnectionDropMidCall(t *testing.T) {
	f := newRemoteFake(t, false)
	c := mustConnect(t, f.spec("http", true))
	errc := make(chan error, 1)
	go func() {
		_, err := c.CallTool(context.Background(), "slow", nil)
		errc <- err
	}()
	select {
	case <-f.started:
	case <-time.After(10 * time.Second):
		t.Fatal("slow call never arrived")
	}
	f.srv.CloseClientConnections()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrTransportLost) || errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want ErrTransportLost", err)
		}
		if strings.Contains(err.Error(), querySecret) {
			t.Errorf("secret in error: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("call did not fail after the connection dropped")
	}
	// The SDK server keeps the handler running; until it ends, the session's
	// DELETE on Close would wait for its 5s timeout.
	f.releaseSlow()
}

// TestRefusedHealthCheckIsAnAnswer: a server that refuses ping with an
// HTTP 400 and a plain-text body has answered it; the connection stays up
// and calls still work.
func TestRefusedHealthCheckIsAnAnswer(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "no-ping", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	sessionsEnded(t, s)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte(`"method":"ping"`)) {
				http.Error(w, "pings not welcome here", http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Connect(ctx, Spec{Name: "no-ping", Type: "http", URL: ts.URL, ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 3 {
		err := c.Ping(ctx)
		var answered *jsonrpc.Error
		if !errors.As(err, &answered) || errors.Is(err, ErrTransportLost) {
			t.Fatalf("refused ping gave %v, want a JSON-RPC error answer", err)
		}
		if !strings.Contains(err.Error(), "HTTP 400") {
			t.Fatalf("error %q does not name the refusal", err)
		}
	}
	select {
	case <-c.Done():
		t.Fatalf("the connection ended: %v", c.Err())
	default:
	}
	if _, err := c.CallTool(ctx, "echo", nil); err != nil {
		t.Fatalf("call after refused pings: %v", err)
	}
}
