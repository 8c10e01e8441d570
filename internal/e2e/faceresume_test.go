package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/sse"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// Resumption through the face: a session-era client whose connection
// drops mid-call resumes its stream with Last-Event-ID and gets the
// answer — of a call forwarded as a frame and of one on the SDK's path.

// cutRelay is a TCP relay on 127.0.0.1 in front of addr whose connections
// a test can cut, as a network does; it counts the event ids it carried
// from the face.
type cutRelay struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	ids   atomic.Int64
}

func newCutRelay(t *testing.T, addr string) *cutRelay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &cutRelay{ln: ln}
	t.Cleanup(func() { ln.Close(); r.cut() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", addr)
			if err != nil {
				in.Close()
				continue
			}
			r.mu.Lock()
			r.conns = append(r.conns, in, out)
			r.mu.Unlock()
			go func() { io.Copy(out, in); out.Close() }()
			go r.down(in, out)
		}
	}()
	return r
}

// down copies the face's bytes to the client, counting event ids.
func (r *cutRelay) down(in, out net.Conn) {
	defer in.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := out.Read(buf)
		if n > 0 {
			r.ids.Add(int64(bytes.Count(buf[:n], []byte("\nid: "))))
			if _, werr := in.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// cut closes every connection the relay carries.
func (r *cutRelay) cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}

// TestResumeAfterDrop: the TypeScript SDK client calls a slow tool
// through the face, a relay cuts its connection mid-call, and the client
// resumes its stream with Last-Event-ID and gets the result — forwarded
// as a frame (a plain call) and on the SDK's path (a call that asks for
// progress).
func TestResumeAfterDrop(t *testing.T) {
	needConformance(t)
	e, base, token := peerEnv(t, peerServer{name: "up", args: []string{testenv.SlowServer(t)}})
	waitState(t, e, "up", "ready", 15*time.Second)
	for _, sdkPath := range []bool{false, true} {
		name := map[bool]string{false: "frame", true: "sdk"}[sdkPath]
		t.Run(name, func(t *testing.T) {
			relay := newCutRelay(t, strings.TrimPrefix(base, "http://"))
			args := []string{"--url", "http://" + relay.ln.Addr().String() + "/mcp/up", "--token", token, "--tool", "slow", "--ms", "3000"}
			if sdkPath {
				args = append(args, "--progress")
			}
			cmd := testenv.TSPeerCommand(t, "resume.ts", args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			lines := bufio.NewScanner(stdout)
			if !lines.Scan() || lines.Text() != "calling" {
				cmd.Wait()
				t.Fatalf("resume.ts: %q\n%s", lines.Text(), stderr.String())
			}
			// Cut once the call's first event id reached the client, or
			// after 1.5 s, mid-call either way.
			before := relay.ids.Load()
			for deadline := time.Now().Add(1500 * time.Millisecond); relay.ids.Load() == before && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			relay.cut()
			var out []string
			for lines.Scan() {
				out = append(out, lines.Text())
			}
			err = cmd.Wait()
			if err != nil || len(out) != 1 || out[0] != "ok slept 3000 ms" {
				t.Fatalf("after the cut: %v %q\n%s\n%s", err, out, stderr.String(), e.DaemonOutput())
			}
			if !strings.Contains(stderr.String(), "SSE stream disconnected") {
				t.Errorf("the client did not see its stream cut:\n%s", stderr.String())
			}
		})
	}
}

// rawSession is a session-era client written by hand, to see the face's
// events as they are on the wire.
type rawSession struct {
	t           *testing.T
	url, token  string
	id, version string
}

func newRawSession(t *testing.T, url, token, version string) *rawSession {
	t.Helper()
	s := &rawSession{t: t, url: url, token: token, version: version}
	resp := s.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if s.id = resp.Header.Get("Mcp-Session-Id"); s.id == "" {
		t.Fatalf("initialize: %s: no session", resp.Status)
	}
	resp = s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	return s
}

func (s *rawSession) request(method, body string) *http.Request {
	req, err := http.NewRequest(method, s.url, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", s.version)
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

func (s *rawSession) post(body string) *http.Response {
	s.t.Helper()
	resp, err := http.DefaultClient.Do(s.request("POST", body))
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

// resume sends a GET with Last-Event-ID last.
func (s *rawSession) resume(last string) *http.Response {
	s.t.Helper()
	req := s.request("GET", "")
	req.Header.Set("Last-Event-ID", last)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

// sseEvent is one event as the wire carried it.
type sseEvent struct{ name, id, data string }

// readEvents reads events from r until it ends or stop says so.
func readEvents(r io.Reader, stop func(sseEvent) bool) []sseEvent {
	var out []sseEvent
	events := sse.NewReader(r, 1<<20)
	for {
		e, err := events.NextAny()
		if err != nil {
			return out
		}
		ev := sseEvent{name: e.Type, id: e.ID, data: e.Data}
		out = append(out, ev)
		if stop != nil && stop(ev) {
			return out
		}
	}
}

// TestResumeReplaysMissedEvents: a GET with Last-Event-ID gets exactly
// the events after that id, once, in order, and then the end of the
// stream — a call on the SDK's path with progress, and one forwarded as a
// frame, of 2025-11-25 (a priming event first) and 2025-06-18 (none);
// a stream whose last event was delivered is freed, another
// session's stream is none of this session's, and MCP 2026-07-28 has no
// resumption: each gets a clear error and no event.
func TestResumeReplaysMissedEvents(t *testing.T) {
	e, base, token := peerEnv(t, peerServer{name: "up", args: []string{testenv.SlowServer(t)}})
	waitState(t, e, "up", "ready", 15*time.Second)
	url := base + "/mcp/up"
	s := newRawSession(t, url, token, "2025-11-25")
	other := newRawSession(t, url, token, "2025-11-25")
	// A client that has resumed a stream (here: tried to) keeps a call
	// whose POST dropped for its resumption; one that never did has let
	// the call go, as a server takes it (TestDroppedPOSTCancelsUpstream).
	assertNoResume(t, s, "NOSUCHSTREAM_0", "a stream never sent")

	t.Run("sdk", func(t *testing.T) {
		resp := s.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"steps","arguments":{"ms":150},"_meta":{"progressToken":"p"}}}`)
		seen := readEvents(resp.Body, func(ev sseEvent) bool { return strings.Contains(ev.data, `"progress":1`) })
		resp.Body.Close() // the connection drops after the first progress
		if len(seen) != 2 || seen[0].name != "prime" || seen[0].data != "" {
			t.Fatalf("before the drop: %+v", seen)
		}
		stream, _, _ := strings.Cut(seen[0].id, "_")
		if seen[1].id != stream+"_1" {
			t.Fatalf("the progress event's id %q, want %s_1", seen[1].id, stream)
		}
		time.Sleep(600 * time.Millisecond) // the call ends meanwhile: its events wait
		resp = s.resume(seen[1].id)
		got := readEvents(resp.Body, nil)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(got) != 3 {
			t.Fatalf("resumed: %s %+v\n%s", resp.Status, got, e.DaemonOutput())
		}
		for i, want := range []string{`"progress":2`, `"progress":3`, `"stepped"`} {
			if got[i].id != fmt.Sprintf("%s_%d", stream, i+2) || !strings.Contains(got[i].data, want) {
				t.Errorf("resumed event %d: %+v, want id %s_%d with %s", i, got[i], stream, i+2, want)
			}
		}
		if !strings.Contains(got[2].data, `"id":2`) {
			t.Errorf("the result %s is not the answer to request 2", got[2].data)
		}
		assertNoResume(t, s, seen[1].id, "a stream already delivered")
	})

	t.Run("sdk-2025-06-18", func(t *testing.T) {
		// No priming event in this era: the first event has the first id.
		old := newRawSession(t, url, token, "2025-06-18")
		assertNoResume(t, old, "NOSUCHSTREAM_0", "a stream never sent")
		resp := old.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"steps","arguments":{"ms":150},"_meta":{"progressToken":"p"}}}`)
		seen := readEvents(resp.Body, func(ev sseEvent) bool { return strings.Contains(ev.data, `"progress":1`) })
		resp.Body.Close()
		if len(seen) != 1 || seen[0].name != "message" || !strings.HasSuffix(seen[0].id, "_0") {
			t.Fatalf("before the drop: %+v", seen)
		}
		time.Sleep(600 * time.Millisecond)
		resp = old.resume(seen[0].id)
		got := readEvents(resp.Body, nil)
		resp.Body.Close()
		if len(got) != 3 || !strings.Contains(got[2].data, `"stepped"`) || !strings.HasSuffix(got[2].id, "_3") {
			t.Fatalf("resumed: %s %+v", resp.Status, got)
		}
	})

	t.Run("frame", func(t *testing.T) {
		resp := s.post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{"ms":800}}}`)
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("a slow frame call answers %s, want an event stream", ct)
		}
		seen := readEvents(resp.Body, func(sseEvent) bool { return true })
		resp.Body.Close()
		if len(seen) != 1 || seen[0].name != "prime" || !strings.HasSuffix(seen[0].id, "_0") {
			t.Fatalf("before the drop: %+v", seen)
		}
		assertNoResume(t, other, seen[0].id, "another session's stream")
		resp = s.resume(seen[0].id) // the call still runs: its answer comes on this stream
		got := readEvents(resp.Body, nil)
		resp.Body.Close()
		stream, _, _ := strings.Cut(seen[0].id, "_")
		if len(got) != 1 || got[0].id != stream+"_1" || !strings.Contains(got[0].data, `slept 800 ms`) || !strings.Contains(got[0].data, `"id":3`) {
			t.Fatalf("resumed: %s %+v", resp.Status, got)
		}
		assertNoResume(t, s, seen[0].id, "a stream already delivered")
	})

	t.Run("not-resumed", func(t *testing.T) {
		// A client that does not come back within the resume window has
		// let its call go, as a client that drops its POST does directly:
		// Plexus closes its own POST and tells the server nothing more, as
		// the server would have heard nothing more from the client (a
		// dropped connection is no cancellation; TestDroppedCallIsADropUpstream
		// compares it with direct).
		resp := s.post(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{"ms":60000}}}`)
		seen := readEvents(resp.Body, func(sseEvent) bool { return true })
		resp.Body.Close()
		if len(seen) != 1 || seen[0].name != "prime" {
			t.Fatalf("before the drop: %+v", seen)
		}
		time.Sleep(12 * time.Second) // the face's resume window (10 s) and a margin
		resp = s.post(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"cancelled","arguments":{}}}`)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Contains(body, []byte(`"text":"0"`)) {
			t.Errorf("the server was told of a call its client let go by dropping its POST (directly it hears nothing): %s", body)
		}
	})

	t.Run("short-call-is-json", func(t *testing.T) {
		resp := s.post(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow","arguments":{"ms":0}}}`)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" || !bytes.Contains(body, []byte(`slept 0 ms`)) {
			t.Errorf("a short frame call: %s %s\n%s", ct, body, e.DaemonOutput())
		}
	})

	t.Run("unknown", func(t *testing.T) {
		assertNoResume(t, s, "NOSUCHSTREAM_0", "a stream never sent")
		assertNoResume(t, s, "not-an-event-id", "a malformed id")
	})

	t.Run("2026", func(t *testing.T) {
		// Through a profile that offers 2026-07-28: a bare one of this
		// session-era server does not (TestBareProfileSpeaksItsServersEra).
		e.MustRun("settings", "set", "profiles.all", `{"servers":["up"],"naming":"plexus"}`)
		stateless := &rawSession{t: t, url: base + "/mcp/all", token: token, version: "2026-07-28"}
		resp := stateless.resume("X_0")
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(string(body), "no stream resumption") {
			t.Errorf("a 2026-07-28 GET with Last-Event-ID: %s %s", resp.Status, body)
		}
	})
}

// assertNoResume checks that a GET with Last-Event-ID last is refused
// with a 400 that says why, and carries no event.
func assertNoResume(t *testing.T, s *rawSession, last, what string) {
	t.Helper()
	resp := s.resume(last)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "Last-Event-ID") || strings.Contains(string(body), "data:") {
		t.Errorf("resuming %s (%s): %s %q", what, last, resp.Status, body)
	}
}

// TestResumeStandaloneStream: the events of a session's standalone GET
// stream have ids too (stream "", so "_N"), and a GET with Last-Event-ID
// gets what the stream carried while the client was away, then the rest.
func TestResumeStandaloneStream(t *testing.T) {
	e, base, token := peerEnv(t, peerServer{name: "up", args: []string{testenv.SlowServer(t)}})
	waitState(t, e, "up", "ready", 15*time.Second)
	s := newRawSession(t, base+"/mcp", token, "2025-11-25")
	listChanged := func(ev sseEvent) bool { return strings.Contains(ev.data, "notifications/tools/list_changed") }

	ctx, cancel := context.WithCancel(t.Context())
	resp, err := http.DefaultClient.Do(s.request("GET", "").WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	e.MustRun("add", "two", "--", e.Bin, "example-server")
	seen := readEvents(resp.Body, listChanged)
	cancel() // the client's connection drops
	resp.Body.Close()
	if n := len(seen); n == 0 || !strings.HasPrefix(seen[n-1].id, "_") {
		t.Fatalf("the standalone stream: %+v", seen)
	}
	last := seen[len(seen)-1].id
	_, index, _ := strings.Cut(last, "_")

	e.MustRun("add", "three", "--", e.Bin, "example-server") // while the client is away
	resp = s.resume(last)
	defer resp.Body.Close()
	got := readEvents(resp.Body, listChanged)
	if resp.StatusCode != http.StatusOK || len(got) == 0 {
		t.Fatalf("resumed: %s %+v", resp.Status, got)
	}
	var i int
	fmt.Sscan(index, &i)
	if want := fmt.Sprintf("_%d", i+1); got[0].id != want {
		t.Errorf("the first event after %s is %q, want %s (no event lost, none twice)", last, got[0].id, want)
	}
}
