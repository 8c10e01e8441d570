package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// startStream serves handler on the socket of a temporary home, for the
// routes that stream.
func startStream(t *testing.T, handler http.HandlerFunc) string {
	t.Helper()
	home := shortTempDir(t)
	srv := httptest.NewUnstartedServer(handler)
	l, err := net.Listen("unix", filepath.Join(home, SocketName))
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return home
}

// sseHeader answers as the daemon does before the first event: the headers,
// flushed, so that the client knows it is subscribed.
func sseHeader(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

// writeFlush writes each piece as its own flush, so that the client reads
// them in separate chunks: lines and line ends cut anywhere.
func writeFlush(w http.ResponseWriter, pieces ...string) {
	for _, p := range pieces {
		_, _ = io.WriteString(w, p)
		w.(http.Flusher).Flush()
	}
}

func TestEvents(t *testing.T) {
	big := strings.Repeat("x", 1<<20) // well over bufio's 64 KiB default
	release := make(chan struct{})
	home := startStream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/v1/events" || r.Header.Get("Accept") != "text/event-stream" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.String(), http.StatusBadRequest)
			return
		}
		sseHeader(w)
		<-release
		writeFlush(w,
			": keep-alive\n\n",
			"event: server\ndata: {\"seq\":1,\"type\":\"server\",\"server\":\"docs\",",
			"\"status\":{\"name\":\"docs\",\"state\":\"backoff\",\"restarts\":2}}\r",
			"\n\r\n",
			": keep-alive\r\n",
			"event: catalog\r\ndata: {\"seq\":2,\r\ndata: \"type\":\"catalog\"}\r\n\r\n",
			"event: stderr\ndata: {\"seq\":3,\"server\":\"docs\",\"line\":\""+big[:1000],
			big[1000:]+"\"}\n\n",
			// A type given by the event name alone.
			"event: server_removed\ndata: {\"seq\":4,\"server\":\"docs\"}\n\n",
			// Cut off by the end of the stream: never delivered.
			"event: catalog\ndata: {\"seq\":5}\n",
		)
	})
	c := New(home)
	// Events returns once the daemon has answered, before any event.
	s, err := c.Events(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	close(release)

	want := []apitype.Event{
		{Seq: 1, Type: apitype.EventServer, Server: "docs", Status: &apitype.ServerStatus{Name: "docs", State: "backoff", Restarts: 2}},
		{Seq: 2, Type: apitype.EventCatalog},
		{Seq: 3, Type: apitype.EventStderr, Server: "docs", Line: big},
		{Seq: 4, Type: apitype.EventServerRemoved, Server: "docs"},
	}
	for _, w := range want {
		ev, err := s.Next()
		if err != nil {
			t.Fatalf("event %d: %v", w.Seq, err)
		}
		if ev.Seq != w.Seq || ev.Type != w.Type || ev.Server != w.Server || ev.Line != w.Line ||
			!reflect.DeepEqual(ev.Status, w.Status) {
			t.Errorf("event %d = %+v, want %+v", w.Seq, ev, w)
		}
	}
	_, err = s.Next()
	if !errors.Is(err, ErrEventStreamClosed) || err.Error() != "the daemon closed the event stream" {
		t.Fatalf("at the end: %v", err)
	}
	if _, again := s.Next(); again != err {
		t.Errorf("after the end: %v", again)
	}
}

func TestEventsCanceled(t *testing.T) {
	home := startStream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		writeFlush(w, "event: catalog\ndata: {\"seq\":7,\"type\":\"catalog\"}\n\n")
		<-r.Context().Done() // the stream stays open until the client goes
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s, err := New(home).Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := s.Next(); err != nil || ev.Seq != 7 {
		t.Fatalf("first = %+v, %v", ev, err)
	}
	cancel()
	if _, err := s.Next(); !errors.Is(err, context.Canceled) {
		t.Errorf("after cancel: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

func TestEventsClose(t *testing.T) {
	home := startStream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		<-r.Context().Done()
	})
	s, err := New(home).Events(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Close()
	if _, err := s.Next(); err == nil {
		t.Error("Next after Close succeeded")
	}
}

func TestEventsBadEvent(t *testing.T) {
	home := startStream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		writeFlush(w, "data: not json\n\n", "event: catalog\ndata: {\"seq\":2}\n\n")
	})
	s, err := New(home).Events(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(); err == nil || !strings.Contains(err.Error(), `decoding a "message" event`) {
		t.Errorf("bad data: %v", err)
	}
	// The stream goes on.
	if ev, err := s.Next(); err != nil || ev.Seq != 2 || ev.Type != apitype.EventCatalog {
		t.Errorf("next = %+v, %v", ev, err)
	}
}

func TestEventsRefused(t *testing.T) {
	home := startStream(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":{"code":"not_found","message":"no route"}}`)
	})
	c := New(home)
	_, err := c.Events(t.Context())
	var ae *APIError
	if !errors.As(err, &ae) || ae.Body.Code != apitype.CodeNotFound {
		t.Errorf("404: %v", err)
	}

	_, err = New(shortTempDir(t)).Events(t.Context())
	if !errors.Is(err, ErrDaemonNotRunning) {
		t.Errorf("no daemon: %v", err)
	}
	if c.streams.Timeout != 0 {
		t.Error("the event stream has an overall timeout")
	}
}

func TestEventsNotAStream(t *testing.T) {
	home := startStream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{}`)
	})
	if _, err := New(home).Events(t.Context()); err == nil || !strings.Contains(err.Error(), "not an event stream") {
		t.Errorf("err = %v", err)
	}
}

func TestLogsReloadRestart(t *testing.T) {
	f := startFake(t, map[string]canned{
		"GET /v1/servers/my%20docs/logs":     {200, `{"server":"my docs","lines":["a","b"],"nextSeq":12}`},
		"POST /v1/reload":                    {200, `{"revision":9}`},
		"POST /v1/servers/my%20docs/restart": {200, `{"revision":9,"server":{"name":"my docs","state":"ready","tools":2}}`},
	})
	c := New(f.home)
	ll, err := c.Logs(t.Context(), "my docs")
	if err != nil || ll.Server != "my docs" || strings.Join(ll.Lines, ",") != "a,b" || ll.NextSeq != 12 {
		t.Errorf("logs = %+v, %v", ll, err)
	}
	wr, err := c.Reload(t.Context())
	if err != nil || wr.Revision != 9 {
		t.Errorf("reload = %+v, %v", wr, err)
	}
	wr, err = c.Restart(t.Context(), "my docs")
	if err != nil || wr.Server == nil || wr.Server.State != apitype.StateReady {
		t.Errorf("restart = %+v, %v", wr, err)
	}
}

func TestReloadProblems(t *testing.T) {
	f := startFake(t, map[string]canned{
		"POST /v1/reload": {400, `{"error":{"code":"bad_request","message":"invalid settings file","problems":[{"path":"mcp.servers.docs.url","message":"must be https"}]}}`},
	})
	_, err := New(f.home).Reload(t.Context())
	var ae *APIError
	if !errors.As(err, &ae) || err.Error() != "invalid settings file\n  mcp.servers.docs.url: must be https" {
		t.Errorf("err = %v", err)
	}
}

// parseAll reads every event of in, delivered in reads of at most chunk
// bytes, until the reader's error.
func parseAll(in []byte, chunk, maxEvent int) ([]sseEvent, error) {
	r := newSSEReader(&chunkReader{data: in, n: chunk}, maxEvent)
	var out []sseEvent
	for {
		ev, err := r.next()
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

// chunkReader returns at most n bytes per Read, as a network would.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.data)
	c.data = c.data[n:]
	return n, nil
}

func TestSSEReader(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []sseEvent
	}{
		{"LF", "event: a\ndata: 1\n\n", []sseEvent{{"a", "1"}}},
		{"CRLF", "event: a\r\ndata: 1\r\n\r\n", []sseEvent{{"a", "1"}}},
		{"CR", "event: a\rdata: 1\r\r", []sseEvent{{"a", "1"}}},
		{"multi-line data", "data: a\ndata:b\ndata\ndata:  c\n\n", []sseEvent{{"message", "a\nb\n\n c"}}},
		{"comments", ":hi\n: there\n\n:\ndata: x\n:mid\n\n", []sseEvent{{"message", "x"}}},
		{"no data, no event", "event: a\n\ndata: 1\n\n", []sseEvent{{"message", "1"}}},
		{"BOM", "\ufeffdata: 1\n\n", []sseEvent{{"message", "1"}}},
		{"unknown fields", "id: 3\nretry: 10\nfoo: bar\ndata: 1\n\n", []sseEvent{{"message", "1"}}},
		{"cut off", "data: 1\n\ndata: 2\n", []sseEvent{{"message", "1"}}},
		{"colon in value", "data: {\"a\":1}\n\n", []sseEvent{{"message", `{"a":1}`}}},
		{"empty data", "data:\n\n", []sseEvent{{"message", ""}}},
	} {
		for _, chunk := range []int{1, 2, 3, 4096} {
			got, err := parseAll([]byte(tc.in), chunk, MaxEventSize)
			if err != io.EOF {
				t.Errorf("%s/%d: err %v", tc.name, chunk, err)
			}
			if !equalEvents(got, tc.want) {
				t.Errorf("%s/%d: got %q, want %q", tc.name, chunk, got, tc.want)
			}
		}
	}
}

func TestSSEReaderTooLarge(t *testing.T) {
	// Over the limit in one line, and over it in several.
	for _, in := range []string{
		"data: 1\n\ndata: " + strings.Repeat("x", 200) + "\n\n",
		"data: 1\n\n" + strings.Repeat("data: "+strings.Repeat("x", 40)+"\n", 5) + "\n",
	} {
		got, err := parseAll([]byte(in), 7, 100)
		if !errors.Is(err, errEventTooLarge) || !equalEvents(got, []sseEvent{{"message", "1"}}) {
			t.Errorf("got %q, %v", got, err)
		}
	}
	// Exactly at the limit is fine.
	got, err := parseAll([]byte("data: "+strings.Repeat("x", 99)+"\n\n"), 7, 100)
	if err != io.EOF || len(got) != 1 {
		t.Errorf("at the limit: %d events, %v", len(got), err)
	}
}

func equalEvents(a, b []sseEvent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// lineEnd is what the standard allows to end a line; CRLF is tried first.
var lineEnd = regexp.MustCompile("\r\n|\r|\n")

// referenceSSE parses a whole stream at once, as the standard describes it,
// with none of the streaming reader's buffering: the oracle of FuzzSSE.
func referenceSSE(in string) []sseEvent {
	in = strings.TrimPrefix(in, "\ufeff")
	lines := lineEnd.Split(in, -1)
	lines = lines[:len(lines)-1] // the unfinished last line
	var out []sseEvent
	var typ string
	var data []string
	for _, line := range lines {
		switch {
		case line == "":
			if data != nil {
				if typ == "" {
					typ = "message"
				}
				out = append(out, sseEvent{typ, strings.Join(data, "\n")})
			}
			typ, data = "", nil
		case strings.HasPrefix(line, ":"):
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				typ = value
			case "data":
				data = append(data, value)
			}
		}
	}
	return out
}

// FuzzSSE checks the stream reader against the reference parser on any
// input cut into any chunks, and that data written as data lines is read
// back exactly. It must never panic.
func FuzzSSE(f *testing.F) {
	f.Add([]byte("event: server\ndata: {\"seq\":1}\n\n"), uint8(3))
	f.Add([]byte(": keep-alive\r\n\r\ndata: a\r\ndata: b\r\n\r\n"), uint8(0))
	f.Add([]byte("data: a\rdata: b\r\r\ndata: c\n\r\n"), uint8(1))
	f.Add([]byte("\ufeffdata:x\n\nevent\ndata\n\n:\n"), uint8(9))
	f.Add([]byte("data: line one\nline two\r\n"), uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		n := int(chunk)%64 + 1

		// Any stream: the same events as the reference.
		got, err := parseAll(in, n, MaxEventSize)
		if err != io.EOF {
			t.Fatalf("err %v", err)
		}
		if want := referenceSSE(string(in)); !equalEvents(got, want) {
			t.Fatalf("got %q\nwant %q", got, want)
		}

		// With a small limit: no panic, and what comes before the error
		// is what the reference has.
		small, err := parseAll(in, n, 16)
		if err != io.EOF && !errors.Is(err, errEventTooLarge) {
			t.Fatalf("small limit: err %v", err)
		}
		if want := referenceSSE(string(in)); len(small) > len(want) || !equalEvents(small, want[:len(small)]) {
			t.Fatalf("small limit: got %q, want a prefix of %q", small, want)
		}

		// in as the data of one event, between a keep-alive and a named
		// event: read back whole, its line ends made "\n".
		var b bytes.Buffer
		b.WriteString(": keep-alive\r\n")
		for _, line := range lineEnd.Split(string(in), -1) {
			b.WriteString("data: " + line + "\r\n")
		}
		b.WriteString("\r\nevent: next\ndata: end\n\n")
		got, err = parseAll(b.Bytes(), n, MaxEventSize)
		want := []sseEvent{{"message", lineEnd.ReplaceAllString(string(in), "\n")}, {"next", "end"}}
		if err != io.EOF || !equalEvents(got, want) {
			t.Fatalf("as data: got %q, %v\nwant %q", got, err, want)
		}
	})
}
