package client

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
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
