// Command scripthttp plays a wire-transcript script (the rules of
// testenv/scriptserver, see there) as a session-era server over streamable
// HTTP, for the transcripts whose upstream is remote
// (internal/e2e/transcript_test.go, section "upstream: http"):
//
//	scripthttp -addr 127.0.0.1:PORT -saw FILE SCRIPT
//
// It serves POST /mcp as such a server does: initialize opens a session
// (Mcp-Session-Id s1, s2, …) whose version is the one its rule answers; a
// later request must carry a session (else 400, "Server not initialized",
// as the TypeScript SDK answers) that is live (else 404, "Session not
// found") and, if it names a version in Mcp-Protocol-Version, a session-era
// one (else 400, as the TypeScript SDK 1.x answers a 2026-07-28 request). A request is
// answered by its rules' frames as an event stream; a frame that is a
// request of the server's is sent and its answer (POSTed back by the
// client) awaited. Notifications and answers get 202.
//
// Two frames are directives, not messages: "RESTART" forgets every
// session after the request's answer (the server restarted: the next
// request on an old session gets 404), and "HTTP NNN" answers the request
// with that status and no body.
//
// Every message received is appended to the -saw file, one a line, as
// "VERSION-HEADER MESSAGE" ("-" for no header), so a transcript can say
// what reached the server; a request with a W3C Traceparent header has
// " traceparent=VALUE" after its message.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/plexus-mcp/plexus/internal/sse"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	saw := flag.String("saw", "", "append every message received to `FILE`")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: scripthttp -addr ADDR -saw FILE SCRIPT")
		os.Exit(2)
	}
	rules, err := load(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	s := &server{rules: rules, sessions: map[string]string{}, waiting: map[string]chan json.RawMessage{}}
	if *saw != "" {
		f, err := os.OpenFile(*saw, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			log.Fatal(err)
		}
		s.saw = f
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("scripthttp listening on http://%s/mcp", ln.Addr())
	log.Fatal(http.Serve(ln, s))
}

type server struct {
	rules map[string][]string
	saw   io.Writer

	mu       sync.Mutex
	n        int                             // sessions opened
	sessions map[string]string               // id → negotiated version
	waiting  map[string]chan json.RawMessage // server request id → its answer
}

type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name           string          `json:"name"`
		InputResponses json.RawMessage `json:"inputResponses"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/mcp" {
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case http.MethodPost:
	case http.MethodDelete:
		return
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	version := r.Header.Get("Mcp-Protocol-Version")
	s.record(version, body, r.Header.Get("Traceparent"))
	var msg message
	if json.Unmarshal(body, &msg) != nil {
		http.Error(w, "not a JSON-RPC message", http.StatusBadRequest)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if msg.Method != "initialize" {
		s.mu.Lock()
		_, ok := s.sessions[sid]
		s.mu.Unlock()
		switch {
		case sid == "":
			http.Error(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Server not initialized"}}`, http.StatusBadRequest)
			return
		case !ok:
			http.Error(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}`, http.StatusNotFound)
			return
		case version != "" && !sessionEra[version]:
			http.Error(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: Unsupported protocol version: `+version+`"}}`, http.StatusBadRequest)
			return
		}
	}
	if msg.ID == nil || msg.Method == "" {
		// A notification, or the answer to a request of ours.
		if msg.ID != nil {
			s.mu.Lock()
			ch := s.waiting[string(msg.ID)]
			delete(s.waiting, string(msg.ID))
			s.mu.Unlock()
			if ch != nil {
				got := msg.Result
				if got == nil {
					got = msg.Error
				}
				ch <- got
			}
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	key := msg.Method
	if msg.Method == "tools/call" {
		key += " " + msg.Params.Name
	}
	frames, ok := s.rules[key+" answered"]
	if !ok || msg.Params.InputResponses == nil {
		frames, ok = s.rules[key]
	}
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"scripthttp: no rule for %s"}}`, msg.ID, key)
		return
	}
	if len(frames) > 0 && strings.HasPrefix(frames[0], "HTTP ") {
		code, _ := strconv.Atoi(strings.TrimPrefix(frames[0], "HTTP "))
		w.WriteHeader(code)
		return
	}
	if msg.Method == "initialize" {
		s.mu.Lock()
		s.n++
		sid = "s" + strconv.Itoa(s.n)
		s.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", sid)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	answer, restart := `""`, false
	for _, f := range frames {
		if f == "RESTART" {
			restart = true
			continue
		}
		f = strings.ReplaceAll(f, "{{id}}", string(msg.ID))
		f = strings.ReplaceAll(f, "{{answer}}", answer)
		var sent message
		json.Unmarshal([]byte(f), &sent)
		var ch chan json.RawMessage
		if sent.ID != nil && sent.Method != "" {
			ch = make(chan json.RawMessage, 1)
			s.mu.Lock()
			s.waiting[string(sent.ID)] = ch
			s.mu.Unlock()
		}
		if msg.Method == "initialize" && string(sent.ID) == string(msg.ID) {
			var res struct {
				Result struct {
					ProtocolVersion string `json:"protocolVersion"`
				} `json:"result"`
			}
			json.Unmarshal([]byte(f), &res)
			s.mu.Lock()
			s.sessions[sid] = res.Result.ProtocolVersion
			s.mu.Unlock()
		}
		w.Write(sse.AppendData(nil, "message", "", []byte(f)))
		if flusher != nil {
			flusher.Flush()
		}
		if ch != nil {
			select {
			case got := <-ch:
				b, _ := json.Marshal(string(got))
				answer = string(b)
			case <-r.Context().Done():
				return
			}
		}
	}
	if restart {
		s.mu.Lock()
		s.sessions = map[string]string{}
		s.mu.Unlock()
	}
}

// sessionEra are the versions a session-era server takes in
// Mcp-Protocol-Version (the TypeScript SDK 1.x's list): any other, a
// 2026-07-28 request among them, is answered 400.
var sessionEra = map[string]bool{"2024-11-05": true, "2025-03-26": true, "2025-06-18": true, "2025-11-25": true}

// record appends "VERSION MESSAGE" to the -saw file, and
// " traceparent=VALUE" when the request had that header.
func (s *server) record(version string, body []byte, traceparent string) {
	if s.saw == nil {
		return
	}
	if version == "" {
		version = "-"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var b bytes.Buffer
	if json.Compact(&b, body) != nil {
		b.Reset()
		b.Write(body)
	}
	if traceparent != "" {
		fmt.Fprintf(s.saw, "%s %s traceparent=%s\n", version, b.String(), traceparent)
		return
	}
	fmt.Fprintf(s.saw, "%s %s\n", version, b.String())
}

// load reads a script's rules (the syntax of testenv/scriptserver).
func load(path string) (map[string][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rules := map[string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for i := 1; sc.Scan(); i++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, frame, ok := strings.Cut(line, " -> ")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want METHOD[ TOOL] -> FRAME", path, i)
		}
		rules[strings.TrimSpace(key)] = append(rules[strings.TrimSpace(key)], strings.TrimSpace(frame))
	}
	return rules, sc.Err()
}
