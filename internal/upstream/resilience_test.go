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
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// echoServer is an SDK server with an echo tool and a slow one that
// returns once its context ends or release is closed.
func echoServer(t *testing.T, started chan<- string, release <-chan struct{}) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	obj := map[string]any{"type": "object"}
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: obj}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if started != nil {
			started <- "slow"
		}
		select {
		case <-ctx.Done():
		case <-release:
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slow done"}}}, nil
	})
	return s
}

// postedMethod is the JSON-RPC method (and the tool's name of a
// tools/call) of a POST's body, which is put back for the handler.
func postedMethod(r *http.Request) (method, tool string) {
	if r.Method != http.MethodPost {
		return "", ""
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	json.Unmarshal(body, &m)
	return m.Method, m.Params.Name
}

// TestListenAnswerThatNeverEndsHoldsNothing: an MCP 2026-07-28 server
// whose answer to subscriptions/listen never ends — its headers come, its
// body never does — or never even begins holds neither the connect nor
// the calls after it nor the connection's close.
func TestListenAnswerThatNeverEndsHoldsNothing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		headers bool // the answer's headers come
	}{{"headers then nothing", true}, {"nothing at all", false}} {
		t.Run(tc.name, func(t *testing.T) {
			s := echoServer(t, nil, nil)
			sessionsEnded(t, s)
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
			stuck := make(chan struct{})
			var listens atomic.Int32
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Mcp-Method") == "subscriptions/listen" {
					listens.Add(1)
					if tc.headers {
						w.Header().Set("Content-Type", "application/json")
						w.WriteHeader(http.StatusOK)
						w.Write([]byte(`{"jsonrpc":"2.0",`))
						w.(http.Flusher).Flush()
					}
					select {
					case <-r.Context().Done():
					case <-stuck:
					}
					return
				}
				h.ServeHTTP(w, r)
			}))
			defer ts.Close()
			defer close(stuck)

			const startup = 5 * time.Second
			type result struct {
				c   *Conn
				err error
			}
			done := make(chan result, 1)
			begun := time.Now()
			go func() {
				c, err := Connect(context.Background(), Spec{Name: "listen", Type: "http", URL: ts.URL, StartupTimeout: startup})
				done <- result{c, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(startup + 10*time.Second):
				t.Fatalf("Connect still waits %s after its %s startup timeout", 10*time.Second, startup)
			}
			if r.err != nil {
				t.Fatalf("Connect: %v", r.err)
			}
			if took := time.Since(begun); took > startup/2 {
				t.Errorf("Connect took %s: the listen held it", took)
			}
			// The listen goes on beside the connection, which did not
			// wait for it.
			if v := r.c.ProtocolVersion(); v < "2026-07-28" || !waitFor(30*time.Second, func() bool { return listens.Load() > 0 }) {
				t.Fatalf("negotiated %s, %d listens: the test tests nothing", v, listens.Load())
			}
			if _, err := r.c.CallTool(t.Context(), "echo", json.RawMessage(`{"x":1}`)); err != nil {
				t.Errorf("call: %v", err)
			}
			closed := make(chan struct{})
			go func() { r.c.Close(); close(closed) }()
			select {
			case <-closed:
			case <-time.After(10 * time.Second):
				t.Fatal("Close waits for the listen stream")
			}
		})
	}
}

// TestRefusedNotificationIsNoLostConnection: a server that answers a
// notification Plexus posts (here the cancellation of a call) with a 4xx
// has refused it, no more: the connection stays, and so do other calls
// (before, the SDK took the 400 for a broken connection, and the server
// was restarted). A 4xx with a plain body to a
// request is that request's answer, not a lost connection either.
func TestRefusedNotificationIsNoLostConnection(t *testing.T) {
	started := make(chan string, 1)
	release := make(chan struct{})
	s := echoServer(t, started, release)
	sessionsEnded(t, s)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var refused atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method, tool := postedMethod(r)
		if method == "notifications/cancelled" || (method == "tools/call" && tool == "refused") {
			refused.Add(1)
			http.Error(w, "not taken here", http.StatusBadRequest)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the connection's close, which mustConnect's cleanup does
	c := mustConnect(t, Spec{Name: "refuses", Type: "http", URL: ts.URL, ProtocolVersion: "2025-11-25", StartupTimeout: 10 * time.Second})
	// The server never heard of the cancellation: its call runs until
	// released, before the connection's close ends its session.
	t.Cleanup(sync.OnceFunc(func() { close(release) }))

	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "slow", nil)
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	if !waitFor(30*time.Second, func() bool { return refused.Load() == 1 }) {
		t.Fatal("the server never got the cancellation")
	}
	_, err := c.CallTool(t.Context(), "refused", nil)
	if err == nil || AnswerError(err) == nil || errors.Is(err, ErrTransportLost) || !strings.Contains(err.Error(), "HTTP 400") {
		t.Errorf("a call refused with HTTP 400: %v, want the refusal as its answer", err)
	}
	time.Sleep(100 * time.Millisecond) // what the SDK would do with the refusals, it has done
	select {
	case <-c.Done():
		t.Fatalf("the connection ended: %v", c.Err())
	default:
	}
	if _, err := c.CallTool(t.Context(), "echo", json.RawMessage(`{"after":"refusals"}`)); err != nil {
		t.Errorf("a call after the refusals: %v", err)
	}
}

// restartingServer is a session-era SDK server behind one URL that can be
// restarted: a new server, which knows none of the old one's sessions.
type restartingServer struct {
	t       *testing.T
	ts      *httptest.Server
	started chan string
	release chan struct{}

	mu    sync.Mutex
	s     *mcp.Server
	h     http.Handler
	calls []map[string]int // guarded by mu: per incarnation, what it processed: tools/call by tool, initialize…
}

// statusWriter notes the status a handler answers with.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) { w.code = code; w.ResponseWriter.WriteHeader(code) }
func (w *statusWriter) Flush()               { w.ResponseWriter.(http.Flusher).Flush() }

func newRestartingServer(t *testing.T) *restartingServer {
	rs := &restartingServer{t: t, started: make(chan string, 4), release: make(chan struct{})}
	rs.restart()
	rs.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method, tool := postedMethod(r)
		rs.mu.Lock()
		h, i := rs.h, len(rs.calls)-1
		rs.mu.Unlock()
		count := func() {
			rs.mu.Lock()
			defer rs.mu.Unlock()
			switch method {
			case "tools/call":
				rs.calls[i][tool]++
			case "initialize", "notifications/initialized", "logging/setLevel":
				rs.calls[i][method]++
			}
		}
		if method == "tools/call" && tool == "slow" {
			count() // it runs until released: counted as it begins
			h.ServeHTTP(w, r)
			return
		}
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(sw, r)
		if sw.code != http.StatusNotFound { // a request refused for an unknown session was not processed
			count()
		}
	}))
	t.Cleanup(rs.ts.Close)
	t.Cleanup(func() { close(rs.release) })
	return rs
}

// restart replaces the server by a new one; the old one's sessions end
// with it.
func (rs *restartingServer) restart() {
	s := echoServer(rs.t, rs.started, rs.release)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	rs.mu.Lock()
	old := rs.s
	rs.s, rs.h = s, h
	rs.calls = append(rs.calls, map[string]int{})
	rs.mu.Unlock()
	if old != nil {
		for ss := range old.Sessions() {
			go ss.Close() // a call of its may still run, until released
		}
	}
}

// closed closes c and checks that the live server holds no session
// then: the renewed session was ended too.
func (rs *restartingServer) closed(c *Conn) {
	rs.t.Helper()
	c.Close()
	rs.mu.Lock()
	s := rs.s
	rs.mu.Unlock()
	if !waitFor(10*time.Second, func() bool {
		n := 0
		for range s.Sessions() {
			n++
		}
		return n == 0
	}) {
		rs.t.Error("the server still holds a session after the connection closed")
	}
}

// count is how often incarnation i was sent what.
func (rs *restartingServer) count(i int, what string) int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.calls[i][what]
}

// TestLostSessionIsRenewed: a remote server that restarted answers 404
// for the session it no longer knows; Plexus opens a new session and
// sends the refused request again on it — the server never processed it
// — so the call succeeds, once, on the same connection (before, it failed
// as "connection lost, outcome unknown").
func TestLostSessionIsRenewed(t *testing.T) {
	rs := newRestartingServer(t)
	var logs logBuffer
	changed := make(chan string, 4)
	c := mustConnect(t, Spec{Name: "restarts", Type: "http", URL: rs.ts.URL, ProtocolVersion: "2025-11-25",
		StartupTimeout: 10 * time.Second, Logger: logs.logger(), OnListChanged: func(kind string) { changed <- kind }})
	if _, err := c.CallTool(t.Context(), "echo", json.RawMessage(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	// A client asked for log messages: the new session must be set to
	// the same level (Plexus sets none at connect).
	c.WantLogs(t.Context(), "info")
	if !waitFor(30*time.Second, func() bool { return rs.count(0, "logging/setLevel") == 1 }) {
		n := rs.count(0, "logging/setLevel")
		t.Fatalf("the first session got logging/setLevel %d times, want once", n)
	}
	rs.restart()
	res, err := c.CallTool(t.Context(), "echo", json.RawMessage(`{"n":2}`))
	if err != nil {
		t.Fatalf("the call after the server restarted: %v", err)
	}
	if got := resultText(t, res); got != `{"n":2}` {
		t.Errorf("echo = %s", got)
	}
	// A handler counts once it has answered, a moment after its client
	// has the answer.
	setUp := func() bool {
		return rs.count(1, "echo") == 1 && rs.count(1, "initialize") == 1 && rs.count(1, "notifications/initialized") == 1 &&
			rs.count(1, "logging/setLevel") == 1
	}
	waitFor(30*time.Second, setUp)
	if n := rs.count(1, "echo"); n != 1 {
		t.Errorf("the restarted server got the call %d times, want once", n)
	}
	if !setUp() {
		t.Errorf("the new session was not opened and set up as the first was: %v; first %v\n%s", rs.calls[1], rs.calls[0], logs.String())
	}
	// The server restarted: what it offers is listed again.
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Error("no list refresh after the session was renewed")
	}
	// A second restart: the renewed session is lost in turn, and the
	// refused call goes out on the newest one.
	rs.restart()
	if res, err := c.CallTool(t.Context(), "echo", json.RawMessage(`{"n":3}`)); err != nil {
		t.Fatalf("the call after the second restart: %v", err)
	} else if got := resultText(t, res); got != `{"n":3}` {
		t.Errorf("echo = %s", got)
	}
	select {
	case <-c.Done():
		t.Fatalf("the connection ended: %v", c.Err())
	default:
	}
	if !strings.Contains(logs.String(), "no longer knew the session") {
		t.Errorf("no log line about the renewed session: %s", logs.String())
	}
	// And again: the renewed session is the one used from now on.
	for i := range 3 {
		if _, err := c.CallTool(t.Context(), "echo", json.RawMessage(`{}`)); err != nil {
			t.Fatalf("call %d on the renewed session: %v", i, err)
		}
	}
	if n := rs.count(1, "initialize"); n != 1 {
		t.Errorf("%d initializes for one restart", n)
	}
	rs.closed(c)
}

// TestClosingALostSessionOpensNoOther: the DELETE that ends a session
// the restarted server no longer knows is answered 404, which is its
// answer: no new session is opened only to be ended.
func TestClosingALostSessionOpensNoOther(t *testing.T) {
	rs := newRestartingServer(t)
	c := mustConnect(t, Spec{Name: "restarts", Type: "http", URL: rs.ts.URL, ProtocolVersion: "2025-11-25", StartupTimeout: 10 * time.Second})
	if _, err := c.CallTool(t.Context(), "echo", json.RawMessage(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	rs.restart()
	c.Close()
	if n := rs.count(1, "initialize"); n != 0 {
		t.Errorf("closing the lost session opened %d new ones on the restarted server", n)
	}
}

// TestCallInFlightWhenServerRestartsIsNotSentAgain: a call that may have
// run — in flight when the server went down — is never sent again: its
// outcome is unknown, and the restarted server never sees it.
func TestCallInFlightWhenServerRestartsIsNotSentAgain(t *testing.T) {
	rs := newRestartingServer(t)
	c := mustConnect(t, Spec{Name: "restarts", Type: "http", URL: rs.ts.URL, ProtocolVersion: "2025-11-25", StartupTimeout: 10 * time.Second})
	errc := make(chan error, 1)
	go func() {
		_, err := c.CallTool(t.Context(), "slow", nil)
		errc <- err
	}()
	select {
	case <-rs.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow call never arrived")
	}
	rs.restart()
	rs.ts.CloseClientConnections()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrTransportLost) {
			t.Fatalf("the call in flight: %v, want ErrTransportLost", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the call in flight never ended")
	}
	if n := rs.count(1, "slow"); n != 0 {
		t.Errorf("the restarted server got the call that may have run %d times", n)
	}
	rs.closed(c)
}

// TestListenDeliversListChanges: the subscriptions/listen stream that
// Plexus feeds to the SDK (listen, remote.go) brings an MCP 2026-07-28
// server's list changes as it did when the SDK read the answer itself.
func TestListenDeliversListChanges(t *testing.T) {
	s := echoServer(t, nil, nil)
	sessionsEnded(t, s)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close)
	changed := make(chan string, 4)
	c := mustConnect(t, Spec{Name: "changes", Type: "http", URL: ts.URL, StartupTimeout: 10 * time.Second,
		OnListChanged: func(kind string) { changed <- kind }})
	if v := c.ProtocolVersion(); v < "2026-07-28" {
		t.Fatalf("negotiated %s", v)
	}
	deadline := time.After(10 * time.Second)
	for i := 0; ; i++ {
		// Added until the change is heard: the listen stream may not be
		// open yet when the first is announced.
		s.AddTool(&mcp.Tool{Name: "added" + string(rune('a'+i)), InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		select {
		case kind := <-changed:
			if kind != "tools" {
				t.Errorf("kind = %q", kind)
			}
			return
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			t.Fatal("no list change heard through subscriptions/listen")
		}
	}
}
