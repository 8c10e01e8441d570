//lint:file-ignore SA1019 Plexus relays what MCP 2026-07-28 deprecates (sampling, roots, logging) for the session-era clients and servers that still use it, through the deprecation window.

package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/recovery"
)

// fuzzServer is a session-era streamable HTTP server written by hand
// whose tool "fuzz" answers with what the fuzz input says: frame sent on
// the call's stream before the call's answer (mode 0), as the answer's
// whole body (1) or as its result (2); "$id" in it is the call's id. Its
// tool "echo" answers plainly.
type fuzzServer struct {
	mu    sync.Mutex
	mode  int
	frame []byte
}

func (s *fuzzServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusMethodNotAllowed) // no standalone stream
		}
		return
	}
	msg, call := readRequest(w, r, "fuzz-session")
	if !call {
		return
	}
	s.mu.Lock()
	mode, frame := s.mode, bytes.ReplaceAll(s.frame, []byte(`"$id"`), msg.ID) // the request's own id
	s.mu.Unlock()
	switch {
	case msg.Method == "initialize":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true},"logging":{}},"serverInfo":{"name":"fuzz","version":"1"}}}`, msg.ID)
	case msg.Method == "tools/list":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"fuzz","inputSchema":{"type":"object"}},{"name":"echo","inputSchema":{"type":"object"}}]}}`, msg.ID)
	case msg.Method == "tools/call" && msg.Params.Name == "fuzz" && mode == 1:
		w.Header().Set("Content-Type", "application/json")
		w.Write(frame)
	case msg.Method == "tools/call" && msg.Params.Name == "fuzz" && mode == 2:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, frame)
	case msg.Method == "tools/call" && msg.Params.Name == "fuzz":
		w.Header().Set("Content-Type", "text/event-stream")
		// Each line of the frame a data line: the event is the frame.
		io.WriteString(w, "data: "+strings.ReplaceAll(strings.ReplaceAll(string(frame), "\r", ""), "\n", "\ndata: ")+"\n\n")
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[]}}\n\n", msg.ID)
	case msg.Method == "tools/call":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"plain"}]}}`, msg.ID)
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, msg.ID)
	}
}

// rawRequest is what a hand-written server reads of a request: its id,
// its method and a tool call's name.
type rawRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string `json:"name"`
	} `json:"params"`
}

// readRequest reads the request r carries and sets the session header;
// a notification or a response is answered 202 here (call is false).
func readRequest(w http.ResponseWriter, r *http.Request, session string) (msg rawRequest, call bool) {
	body, _ := io.ReadAll(r.Body)
	json.Unmarshal(body, &msg)
	w.Header().Set("Mcp-Session-Id", session)
	if msg.ID == nil || msg.Method == "" {
		w.WriteHeader(http.StatusAccepted)
		return msg, false
	}
	return msg, true
}

// FuzzServerMessages: a server sends, mid-call, any message, or answers
// a call with any body or result. The daemon must not end (a panic on any
// goroutine ends the fuzzed process) nor log a bug of its own, and after
// any of them the connection serves the next call.
func FuzzServerMessages(f *testing.F) {
	for _, frame := range hostileFrames {
		f.Add(uint8(0), []byte(frame))
	}
	for _, frame := range []string{`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":{"x":1}}}`} {
		f.Add(uint8(0), []byte(frame))
	}
	f.Add(uint8(0), []byte(`{"jsonrpc":"2.0","id":"$id","result":{"content":7}}`))  // the answer, malformed, on the stream
	f.Add(uint8(0), []byte(`{"JSONRPC":"2.0","ID":"$id","RESULT":{"content":[]}}`)) // keys the SDK matches exactly
	f.Add(uint8(1), []byte(`[{"jsonrpc":"2.0","id":"$id","result":{"content":[]}}]`))
	for _, frame := range []string{`{"jsonrpc":"2.0","id":"$id","result":null}`, `{"jsonrpc":"2.0","id":"$id"}`, `{"jsonrpc":"2.0","id":"$id","error":null}`, `{"jsonrpc":"2.0","id":"$id","error":{"code":"x","data":[]}}`, `[]`, ``} {
		f.Add(uint8(1), []byte(frame))
	}
	for _, result := range []string{`null`, `7`, `{"content":null}`, `{"content":[{"type":7}]}`, `{"content":[null]}`,
		`{"content":[{"type":"resource_link"}],"structuredContent":[]}`, `{"isError":"yes","_meta":7}`, `{"resultType":"input_required","inputRequests":7}`} {
		f.Add(uint8(2), []byte(result))
	}
	srv := &fuzzServer{}
	ts := httptest.NewServer(srv)
	f.Cleanup(ts.Close)
	var log logBuffer
	f.Fuzz(func(t *testing.T, mode uint8, frame []byte) {
		// A connection hung by a message is a bug too: the process ends
		// with every goroutine's stack, the fuzzer keeping the input.
		hung := time.AfterFunc(90*time.Second, func() {
			pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
			panic(fmt.Sprintf("%q (mode %d) hung the connection for 90 s", frame, mode%3))
		})
		defer hung.Stop()
		srv.mu.Lock()
		srv.mode, srv.frame = int(mode%3), frame
		srv.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := Connect(ctx, Spec{Name: "fuzz", Type: "http", URL: ts.URL, ProtocolVersion: "2025-11-25", Logger: log.logger()})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		peer := &askPeer{capsPeer: capsPeer{&mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}, Sampling: &mcp.SamplingCapabilities{}}}}
		fctx, fcancel := context.WithTimeout(ctx, 2*time.Second)
		c.CallTool(WithPeer(fctx, peer, nil), "fuzz", nil)
		fcancel()
		// The connection serves the next call: what cannot be decoded is
		// dropped (unreadable.go).
		if _, err := c.CallTool(ctx, "echo", nil); err != nil {
			t.Errorf("a call after %q (mode %d): %v", frame, mode%3, err)
		}
		if l := log.String(); strings.Contains(l, recovery.Bug) {
			t.Errorf("%q (mode %d) reached a bug: %s", frame, mode%3, l)
		}
		log.mu.Lock()
		log.buf.Reset()
		log.mu.Unlock()
	})
}
