package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/jsonscan"
)

// fakeFace answers like the daemon's face: initialize in JSON with a
// session id, tools/list as an SSE stream, a GET stream with one
// notification, and 400 for a request without the session.
type fakeFace struct {
	mu      sync.Mutex
	seen    []string // method, session id, version of each POST
	deleted bool
}

func (f *fakeFace) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	case http.MethodDelete:
		f.mu.Lock()
		f.deleted = r.Header.Get("Mcp-Session-Id") == "s-1"
		f.mu.Unlock()
		return
	}
	body, _ := io.ReadAll(r.Body)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	json.Unmarshal(body, &m)
	f.mu.Lock()
	f.seen = append(f.seen, m.Method+"|"+r.Header.Get("Mcp-Session-Id")+"|"+r.Header.Get("Mcp-Protocol-Version"))
	f.mu.Unlock()
	switch {
	case m.Method == "initialize":
		w.Header().Set("Mcp-Session-Id", "s-1")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"f","version":"1"}}}`, m.ID)
	case r.Header.Get("Mcp-Session-Id") != "s-1":
		http.Error(w, "Bad Request: missing session id", http.StatusBadRequest)
	case m.ID == nil:
		w.WriteHeader(http.StatusAccepted)
	default:
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\n", m.ID)
		fmt.Fprintf(w, "data: \"result\":{\"tools\":[]}}\n\n")
	}
}

// lines collects what the bridge writes, one message a line.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lines) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Contains(l.buf.String(), s)
}

// TestBridge runs the bridge with its POSTs through net/http's client and
// through rawhttp (Dial set, as plexus mcp runs it).
func TestBridge(t *testing.T) {
	for _, raw := range []bool{false, true} {
		t.Run(fmt.Sprintf("raw=%v", raw), func(t *testing.T) { testBridge(t, raw) })
	}
}

func testBridge(t *testing.T, raw bool) {
	f := &fakeFace{}
	srv := httptest.NewServer(f)
	defer srv.Close()

	in, feed := io.Pipe()
	out := &lines{}
	var warned []string
	b := &Bridge{HTTP: srv.Client(), URL: srv.URL + "/mcp", Warn: func(format string, a ...any) { warned = append(warned, fmt.Sprintf(format, a...)) }}
	if raw {
		var d net.Dialer
		b.Dial = func(ctx context.Context) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", srv.Listener.Addr().String())
		}
	}
	done := make(chan error, 1)
	go func() { done <- b.Run(context.Background(), in, out) }()

	send := func(s string) { fmt.Fprintln(feed, s) }
	wait := func(s string) {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); !out.has(s); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("never got %s; output:\n%s", s, out.buf.String())
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"tools/list"}`) // before initialize: the face's refusal
	wait(`missing session id`)
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	wait(`"protocolVersion":"2025-11-25"`)
	wait(`notifications/tools/list_changed`) // the GET stream
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`this is not JSON`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	wait(`{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}` + "\n") // a multi-line data field, one line
	wait(`notifications/progress`)
	feed.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.deleted {
		t.Error("the session was not ended with DELETE")
	}
	want := []string{"tools/list||", "initialize||", "notifications/initialized|s-1|2025-11-25", "tools/list|s-1|2025-11-25"}
	if fmt.Sprint(f.seen) != fmt.Sprint(want) {
		t.Errorf("POSTs = %q, want %q", f.seen, want)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "parse error") {
		t.Errorf("warnings: %q", warned)
	}
}

// FuzzRelayEvents: whatever an event stream holds, each message written
// is one non-empty line.
func FuzzRelayEvents(f *testing.F) {
	f.Add([]byte("event: message\ndata: {\"a\":1}\n\n"))
	f.Add([]byte("data: a\ndata: b\n\ndata:\n\n: comment\nid: 3\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		var out bytes.Buffer
		b := &Bridge{}
		b.out = newWriter(&out)
		b.relayEvents(bytes.NewReader(stream), false)
		for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if out.Len() > 0 && (strings.TrimSpace(l) == "" || !json.Valid([]byte(l)) && strings.Contains(l, "\n")) {
				t.Fatalf("an empty or broken message in %q", out.String())
			}
		}
	})
}

// FuzzPeek: the head of any line is read as encoding/json reads it, or
// the line is refused; never a panic.
func FuzzPeek(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"a":1}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a","method":"resources/read","params":{"uri":"file:///\u0041","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		h, err := peek(line)
		if err == nil && h == nil {
			t.Fatal("nil head without an error")
		}
		ref, rerr := decodeHead(line)
		if err != nil {
			return // refused: the client gets a parse error
		}
		if bytes.Count(bytes.ToLower(line), []byte(`"method"`)) != bytes.Count(line, []byte(`"method"`)) ||
			bytes.Count(bytes.ToLower(line), []byte(`"name"`)) != bytes.Count(line, []byte(`"name"`)) ||
			bytes.Count(bytes.ToLower(line), []byte(`"uri"`)) != bytes.Count(line, []byte(`"uri"`)) ||
			bytes.Count(bytes.ToLower(line), []byte(`"id"`)) != bytes.Count(line, []byte(`"id"`)) ||
			bytes.Count(bytes.ToLower(line), []byte(`"params"`)) != bytes.Count(line, []byte(`"params"`)) ||
			bytes.Count(bytes.ToLower(line), []byte(`"_meta"`)) != bytes.Count(line, []byte(`"_meta"`)) {
			return // encoding/json matches keys whatever their case; the scan does not
		}
		if rerr != nil {
			return // a shape encoding/json refuses (a number for a method) is the face's to refuse
		}
		if string(h.ID) != string(ref.ID) || h.Method != ref.Method || h.Name != ref.Name || h.version != ref.version {
			t.Fatalf("%q: peek %+v, encoding/json %+v", line, h, ref)
		}
	})
}

// TestBridgeKeepsOrder: a client that pipelines (initialize, initialized
// and tools/list written at once, without waiting for answers) has its
// messages reach the face in the order it wrote them, even when the face
// is slow to answer initialize: nothing written after initialize or a
// notification overtakes it.
func TestBridgeKeepsOrder(t *testing.T) {
	for _, raw := range []bool{false, true} {
		t.Run(fmt.Sprintf("raw=%v", raw), func(t *testing.T) {
			f := &fakeFace{}
			slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
					time.Sleep(50 * time.Millisecond) // initialize takes a while
				}
				f.ServeHTTP(w, r)
			})
			srv := httptest.NewServer(slow)
			defer srv.Close()
			out := &lines{}
			b := &Bridge{HTTP: srv.Client(), URL: srv.URL + "/mcp"}
			if raw {
				var d net.Dialer
				b.Dial = func(ctx context.Context) (net.Conn, error) {
					return d.DialContext(ctx, "tcp", srv.Listener.Addr().String())
				}
			}
			in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
`)
			if err := b.Run(context.Background(), in, out); err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			want := []string{"initialize||", "notifications/initialized|s-1|2025-11-25", "tools/list|s-1|2025-11-25"}
			if fmt.Sprint(f.seen) != fmt.Sprint(want) {
				t.Errorf("POSTs = %q, want %q", f.seen, want)
			}
			if !out.has(`{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`) {
				t.Errorf("tools/list was not answered:\n%s", out.buf.String())
			}
		})
	}
}

// slowStreamFace is a fakeFace whose GET stream is answered only after a
// pause, and that counts the GETs answered (before their answer leaves).
type slowStreamFace struct {
	fakeFace
	answered atomic.Int32
}

func (f *slowStreamFace) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		time.Sleep(300 * time.Millisecond)
		f.answered.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	}
	f.fakeFace.ServeHTTP(w, r)
}

// TestInitializeAnsweredWithStreamOpen: the client gets the answer to
// initialize only once the face has answered the session's GET stream, so
// that a client killed right after it has a stream whose drop the face
// sees (and ends the session for).
func TestInitializeAnsweredWithStreamOpen(t *testing.T) {
	f := &slowStreamFace{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	in, feed := io.Pipe()
	out := &lines{}
	b := &Bridge{HTTP: srv.Client(), URL: srv.URL + "/mcp"}
	done := make(chan error, 1)
	go func() { done <- b.Run(context.Background(), in, out) }()
	fmt.Fprintln(feed, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	for end := time.Now().Add(10 * time.Second); !out.has(`"protocolVersion":"2025-11-25"`); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("no answer to initialize")
		}
	}
	if n := f.answered.Load(); n != 1 {
		t.Errorf("the client got the answer to initialize with %d GET streams answered, want 1", n)
	}
	feed.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestStatelessCancel: a 2026-07-28 client cancels a
// request with notifications/cancelled, as that era's stdio transport
// does; over HTTP, where the face takes it, a request is cancelled by
// closing its POST, and a notification would reach nothing. The bridge
// ends the named request's POST and sends no notification.
func TestStatelessCancel(t *testing.T) {
	for _, raw := range []bool{false, true} {
		t.Run(fmt.Sprintf("raw=%v", raw), func(t *testing.T) {
			closed := make(chan string, 1)
			stop := make(chan struct{})
			var posts atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				posts.Add(1)
				body, _ := io.ReadAll(r.Body)
				if bytes.Contains(body, []byte("notifications/cancelled")) {
					t.Errorf("the notification reached the face: %s", body)
					w.WriteHeader(http.StatusAccepted)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				select { // a long call, until its POST closes
				case <-r.Context().Done():
					closed <- r.Header.Get("Mcp-Method")
				case <-stop:
				}
			}))
			defer srv.Close()
			defer close(stop)
			in, feed := io.Pipe()
			b := &Bridge{HTTP: srv.Client(), URL: srv.URL + "/mcp"}
			if raw {
				var d net.Dialer
				b.Dial = func(ctx context.Context) (net.Conn, error) {
					return d.DialContext(ctx, "tcp", srv.Listener.Addr().String())
				}
			}
			done := make(chan error, 1)
			go func() { done <- b.Run(context.Background(), in, &lines{}) }()
			meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
			fmt.Fprintln(feed, `{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"sleep",`+meta+`}}`)
			for end := time.Now().Add(5 * time.Second); posts.Load() == 0; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(end) {
					t.Fatal("the call never reached the face")
				}
			}
			fmt.Fprintln(feed, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"user"}}`)
			select {
			case method := <-closed:
				if method != "tools/call" {
					t.Errorf("closed a POST of %q", method)
				}
			case <-time.After(5 * time.Second):
				t.Error("the cancelled request's POST is still open")
			}
			feed.Close()
		})
	}
}

// TestBridgeRereadsTokenOn401: a token changed under a running bridge
// (the daemon made a new one) costs the client nothing: the POST refused
// with the old one goes again with the token read anew.
func TestBridgeRereadsTokenOn401(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	token := "Bearer old"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ok := r.Header.Get("Authorization") == token
		mu.Unlock()
		if !ok {
			http.Error(w, "a token is required", http.StatusUnauthorized)
			return
		}
		quickFace{}.ServeHTTP(w, r)
	}))
	defer srv.Close()
	var d net.Dialer
	var reread atomic.Int32
	b := &Bridge{HTTP: srv.Client(), URL: srv.URL + "/mcp", Header: http.Header{"Authorization": {"Bearer old"}},
		Dial: func(ctx context.Context) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", srv.Listener.Addr().String())
		},
		Reauth: func() http.Header {
			reread.Add(1)
			mu.Lock()
			defer mu.Unlock()
			return http.Header{"Authorization": {token}}
		}}
	in, feed := io.Pipe()
	out := &lines{}
	done := make(chan error, 1)
	go func() { done <- b.Run(context.Background(), in, out) }()
	fmt.Fprintln(feed, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	for end := time.Now().Add(10 * time.Second); !out.has(`"id":1,"result"`); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no answer with the first token; output:\n%s", out.buf.String())
		}
	}
	mu.Lock()
	token = "Bearer new" // the daemon made a new token
	mu.Unlock()
	fmt.Fprintln(feed, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`)
	for end := time.Now().Add(10 * time.Second); !out.has(`"id":2,"result"`); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no answer after the token changed; output:\n%s", out.buf.String())
		}
	}
	feed.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := reread.Load(); n != 1 {
		t.Errorf("the token was read again %d times, want 1", n)
	}
}

// quickFace answers every call at once, in JSON, on a session it names
// at initialize, and offers no GET stream: what is left of a call through
// the bridge is the bridge's own work (and this server's).
type quickFace struct{}

func (quickFace) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var id []byte
	var method string
	jsonscan.Members(body, func(k, v []byte) bool {
		switch string(k) {
		case "id":
			id = v
		case "method":
			s, _ := jsonscan.String(v)
			method = string(s)
		}
		return true
	})
	w.Header().Set("Content-Type", "application/json")
	switch {
	case method == "initialize":
		w.Header().Set("Mcp-Session-Id", "s-1")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"f","version":"1"}}}`, id)
	case id == nil:
		w.WriteHeader(http.StatusAccepted)
	default:
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"x"}]}}`, id)
	}
}
