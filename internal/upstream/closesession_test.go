package upstream

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// scriptedRoundTripper answers each request with the next step: the
// connection it claims to have used (reused or fresh, told to the
// request's trace as net/http would) and a failure or a 200.
type scriptedRoundTripper struct {
	steps []scriptedStep
	sent  []string // the methods sent, in order
}

type scriptedStep struct {
	reused bool
	fail   bool
}

func (s *scriptedRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	s.sent = append(s.sent, req.Method)
	step := s.steps[0]
	if len(s.steps) > 1 {
		s.steps = s.steps[1:]
	}
	if tr := httptrace.ContextClientTrace(req.Context()); tr != nil && tr.GotConn != nil {
		tr.GotConn(httptrace.GotConnInfo{Reused: step.reused})
	}
	if step.fail {
		return nil, io.EOF // what a kept-alive connection closed by the server gives
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
}

// TestEndSessionRetriesOnReusedConnections: a DELETE, or a POST of a
// notification, that fails on a kept-alive connection is sent again, on
// each reused connection it meets closed, up to endAttempts; one that
// fails on a fresh connection is not, and neither is a POST of a call (a
// call may have run).
func TestEndSessionRetriesOnReusedConnections(t *testing.T) {
	stale := scriptedStep{reused: true, fail: true}
	fresh := scriptedStep{}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`
	initialized := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	for _, tc := range []struct {
		name   string
		method string
		body   string
		steps  []scriptedStep
		sends  int
		ok     bool
	}{
		{"closed keep-alive, then fresh", http.MethodDelete, "", []scriptedStep{stale, fresh}, 2, true},
		{"two closed keep-alives", http.MethodDelete, "", []scriptedStep{stale, stale, fresh}, 3, true},
		{"fresh connection refused", http.MethodDelete, "", []scriptedStep{{fail: true}, fresh}, 1, false},
		{"reused connections closed for ever", http.MethodDelete, "", []scriptedStep{stale}, endAttempts, false},
		{"a call is never sent twice", http.MethodPost, call, []scriptedStep{stale, fresh}, 1, false},
		{"a POST without a body to read again", http.MethodPost, "", []scriptedStep{stale, fresh}, 1, false},
		{"a notification past two closed keep-alives", http.MethodPost, initialized, []scriptedStep{stale, stale, fresh}, 3, true},
		{"a notification's fresh connection refused", http.MethodPost, initialized, []scriptedStep{stale, {fail: true}, fresh}, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := &scriptedRoundTripper{steps: tc.steps}
			s := Spec{Type: "http", URL: "http://127.0.0.1:1/mcp"}
			origin, _ := url.Parse(s.URL)
			_, ht, _ := remoteHTTPClient(s, origin)
			ht.base = base
			ht.session = &sessionKeeper{}
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req, err := http.NewRequest(tc.method, s.URL, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set(sessionHeader, "s-1")
			resp, err := ht.RoundTrip(req)
			if (err == nil) != tc.ok {
				t.Errorf("err = %v, want success %v", err, tc.ok)
			}
			if resp != nil {
				resp.Body.Close()
			}
			if len(base.sent) != tc.sends {
				t.Errorf("sent %d times (%v), want %d", len(base.sent), base.sent, tc.sends)
			}
		})
	}
}

// TestCloseEndsSessionPastClosedKeepAlives: the server closes, unanswered,
// each DELETE that comes on a connection it served before (as if it had
// closed that kept-alive connection just as the DELETE went out); Close
// still ends the session, with the DELETE sent again on a fresh
// connection.
func TestCloseEndsSessionPastClosedKeepAlives(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "drops-keepalives", Version: "1"}, nil)
	sessionsEnded(t, s)
	// Answers in JSON: the SDK reads one to its end before the call
	// returns, and net/http keeps the connection for the next request
	// before that read ends; so Close's DELETE goes out on it.
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	type connKey struct{}
	var (
		mu                 sync.Mutex
		dropped, delivered int
	)
	streamOpen := make(chan struct{})
	sawStream := sync.OnceFunc(func() { close(streamOpen) })
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served := r.Context().Value(connKey{}).(*atomic.Int32).Add(1)
		if r.Method == http.MethodGet {
			sawStream()
		}
		if r.Method == http.MethodDelete {
			mu.Lock()
			if served > 1 {
				dropped++
			} else {
				delivered++
			}
			mu.Unlock()
			if served > 1 {
				conn, _, err := http.NewResponseController(w).Hijack()
				if err != nil {
					t.Errorf("hijack: %v", err)
					return
				}
				conn.Close()
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	ts.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, new(atomic.Int32))
	}
	ts.Start()
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Connect(ctx, Spec{Name: "drops-keepalives", Type: "http", URL: ts.URL, ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	// The standalone stream holds a connection of its own; once it is
	// open, nothing but the ping and the DELETE goes out.
	select {
	case <-streamOpen:
	case <-ctx.Done():
		t.Fatal("the standalone stream was never opened")
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close() // sessionsEnded then waits for the session to end
	mu.Lock()
	defer mu.Unlock()
	if delivered != 1 {
		t.Errorf("%d DELETEs delivered, want 1 (%d dropped)", delivered, dropped)
	}
	if dropped == 0 {
		t.Error("no DELETE came on a kept-alive connection: the retry was not exercised")
	}
}
