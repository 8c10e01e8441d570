package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// unreadableEvents are events a broken or hostile server sends, as written
// on the wire ("$id" is the id of the call they answer): whether a call
// they answer fails, and whether they can be a JSON answer's body too.
var unreadableEvents = []struct {
	name, event string
	fails       bool // answering a call, they fail it; else they answer it
}{
	{"version only", `data: {"jsonrpc":"2.0"}`, true},
	{"empty batch", `data: []`, true},
	{"null", `data: null`, true},
	{"error of a number", `data: {"jsonrpc":"2.0","id":$id,"error":7}`, true},
	{"cut off", `data: {"jsonrpc":"2.0","id":`, true},
	{"secret", `data: not JSON s3cret-canary`, true},
	{"too deep", `data: {"jsonrpc":"2.0","id":$id,"result":{"content":[],"x":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}}`, true},
	// Messages the SDK would not read as they are, passed on readable.
	{"keys in capitals", `data: {"JSONRPC":"2.0","ID":$id,"RESULT":{"content":[{"type":"text","text":"capitals"}]}}`, false},
	{"batch", `data: [{"jsonrpc":"2.0","id":$id,"result":{"content":[{"type":"text","text":"batch"}]}}]`, false},
	{"line without a colon", "garbage\ndata: {\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"colon\"}]}}", false},
}

// garbageServer is a session-era streamable HTTP server written by hand,
// or a legacy SSE one (sse): its tool "garbage" answers with the event
// the test sets, on the call's stream, as the body of a JSON answer (json)
// or (legacy SSE) on the one stream; on a call's stream, the answer
// follows it if the test says so, or else the stream ends.
// Its tool "echo" answers plainly. Its standalone stream sends what the
// test puts on it.
type garbageServer struct {
	sse        bool
	inits      atomic.Int32  // initialize requests: a new connection each
	gets       atomic.Int32  // standalone (or legacy SSE) streams opened
	standalone chan string   // events for the standalone or legacy stream
	stop       chan struct{} // closed when the test ends: streams end
	mu         sync.Mutex
	json       bool   // guarded by mu; answer "garbage" with a JSON body
	answer     bool   // guarded by mu; answer the call after event
	event      string // guarded by mu
}

func (s *garbageServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		s.gets.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		if s.sse {
			io.WriteString(w, "event: endpoint\ndata: /message\n\n")
		}
		w.(http.Flusher).Flush()
		for {
			select {
			case ev := <-s.standalone:
				io.WriteString(w, ev+"\n\n")
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			case <-s.stop:
				return
			}
		}
	}
	if r.Method != http.MethodPost {
		return
	}
	msg, call := readRequest(w, r, "garbage-session")
	if !call {
		return
	}
	s.mu.Lock()
	event := strings.ReplaceAll(s.event, "$id", string(msg.ID))
	asJSON, answerAfter := s.json, s.answer
	s.mu.Unlock()
	answer := ""
	switch {
	case msg.Method == "initialize":
		s.inits.Add(1)
		answer = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{"subscribe":true}},"serverInfo":{"name":"garbage","version":"1"}}`
	case msg.Method == "tools/list":
		answer = `{"tools":[{"name":"garbage","inputSchema":{"type":"object"}},{"name":"echo","inputSchema":{"type":"object"}}]}`
	case msg.Method == "tools/call" && msg.Params.Name == "garbage" && s.sse:
		w.WriteHeader(http.StatusAccepted)
		s.standalone <- event
		return
	case msg.Method == "tools/call" && msg.Params.Name == "garbage" && asJSON:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, strings.TrimPrefix(event, "data: "))
		return
	case msg.Method == "tools/call" && msg.Params.Name == "garbage":
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, event+"\n\n")
		w.(http.Flusher).Flush()
		if answerAfter {
			io.WriteString(w, fmt.Sprintf(`data: {"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"after"}]}}`, msg.ID)+"\n\n")
		}
		return
	case msg.Method == "tools/call":
		answer = `{"content":[{"type":"text","text":"plain"}]}`
	default:
		answer = `{}`
	}
	out := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, answer)
	if s.sse {
		w.WriteHeader(http.StatusAccepted)
		s.standalone <- "data: " + out
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, out)
}

// TestUnreadableMessageKeepsConnection: a remote server sends, on a call's
// event stream, as a call's JSON answer, on its standalone stream (and
// over legacy SSE on its one stream), each of unreadableEvents. Each is
// dropped, or ends the call it answers at once (its outcome unknown) when
// nothing follows it, and the next call is answered on the same
// connection: the server is not connected to again. The SDK took each
// for a broken connection. On a call's stream ("stream-answered"), the
// answer that follows the event answers the call, as over stdio: before,
// the event failed the call.
func TestUnreadableMessageKeepsConnection(t *testing.T) {
	for _, place := range []string{"stream", "stream-answered", "json", "standalone", "legacy-sse"} {
		t.Run(place, func(t *testing.T) {
			srv := &garbageServer{sse: place == "legacy-sse", standalone: make(chan string), stop: make(chan struct{})}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			defer close(srv.stop)
			var log logBuffer
			s := Spec{Name: "garbage", Type: "http", URL: ts.URL, ProtocolVersion: "2025-11-25", Logger: log.logger(),
				Headers: http.Header{"Authorization": {"Bearer s3cret-canary"}}}
			if srv.sse {
				s.Type, s.URL = "sse", ts.URL+"/sse"
			}
			c := mustConnect(t, s)
			defer c.Close() // before the server stops: the SDK's reader ends on the Conn's close, not on a stream cut off
			var seen sync.Map
			c.WatchResources("test", func(uri string) { seen.Store(uri, true) })
			for i, ev := range unreadableEvents {
				ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
				switch place {
				case "standalone", "legacy-sse":
					// Dropped, and the stream goes on to the next event.
					done := fmt.Sprintf("done-%d", i)
					srv.standalone <- strings.ReplaceAll(ev.event, "$id", `"nobody"`)
					srv.standalone <- `data: {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"` + done + `"}}`
					if !waitFor(30*time.Second, func() bool { _, ok := seen.Load(done); return ok }) {
						t.Fatalf("%s: the stream did not go on", ev.name)
					}
				case "json":
					if !strings.HasPrefix(ev.event, "data: ") {
						cancel()
						continue // not a body
					}
					fallthrough
				default:
					srv.mu.Lock()
					srv.event, srv.json, srv.answer = ev.event, place == "json", place == "stream-answered"
					srv.mu.Unlock()
					res, err := c.CallTool(ctx, "garbage", nil)
					switch {
					case ctx.Err() != nil:
						t.Fatalf("%s: the call waited for its deadline: %v", ev.name, err)
					case place == "stream-answered" && ev.fails:
						if err != nil || resultText(t, res) != "after" {
							t.Errorf("%s, then the answer: %v, %v; want the answer", ev.name, res, err)
						}
					case ev.fails && !errors.Is(err, ErrTransportLost):
						t.Errorf("%s: %v, %v; want a call lost, its outcome unknown", ev.name, res, err)
					case !ev.fails && err != nil:
						t.Errorf("%s: %v", ev.name, err)
					}
				}
				res, err := c.CallTool(ctx, "echo", nil)
				cancel()
				if err != nil || resultText(t, res) != "plain" {
					t.Fatalf("the call after %s: %v, %v", ev.name, res, err)
				}
			}
			if n, g := srv.inits.Load(), srv.gets.Load(); n != 1 || g != 1 {
				t.Errorf("%d connections, %d streams opened; want the one of each", n, g)
			}
			l := log.String()
			if !strings.Contains(l, `"server":"garbage"`) || !strings.Contains(l, "no JSON-RPC message") {
				t.Errorf("no log line names the server and what it sent:\n%s", l)
			}
			if strings.Contains(l, "s3cret-canary") {
				t.Errorf("a secret reached the log:\n%s", l)
			}
		})
	}
}
