package rawhttp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// server counts the connections it was given.
func server(t *testing.T, h http.HandlerFunc) (*Client, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	var d net.Dialer
	cl := &Client{Host: addr, Dial: func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }}
	t.Cleanup(cl.CloseIdle)
	return cl, &conns
}

func read(t *testing.T) func(*http.Response, error) string {
	return func(resp *http.Response, err error) string { t.Helper(); return readBody(t, resp, err) }
}

func readBody(t *testing.T, resp *http.Response, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, b)
}

func TestRoundTripsReuseOneConnection(t *testing.T) {
	cl, conns := server(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s %s %s", r.Method, r.URL.Path, r.Host, r.Header.Get("X-A"), b)
	})
	for i := range 5 {
		got := read(t)(cl.Do(t.Context(), "POST", "/mcp", http.Header{"X-A": {"v"}}, []byte(fmt.Sprint(i))))
		if want := fmt.Sprintf("200 POST /mcp %s v %d", cl.Host, i); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 5 requests in a row, want 1", n)
	}
}

// A chunked answer (an event stream) read to its end also gives its
// connection back; one left unread does not.
func TestChunkedAndUnreadBodies(t *testing.T) {
	cl, conns := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush()
		}
	})
	if got := read(t)(cl.Do(t.Context(), "GET", "/", nil, nil)); got != "200 data: 0\n\ndata: 1\n\ndata: 2\n\n" {
		t.Fatalf("chunked: %q", got)
	}
	resp, err := cl.Do(t.Context(), "GET", "/", nil, nil)
	if err != nil || conns.Load() != 1 {
		t.Fatalf("second request: %v, %d connections", err, conns.Load())
	}
	resp.Body.Close() // unread
	read(t)(cl.Do(t.Context(), "GET", "/", nil, nil))
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections; an unread body's connection must not be reused", n)
	}
}

func TestCancelMidResponse(t *testing.T) {
	release := make(chan struct{})
	cl, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
			<-release
		}
		w.Write([]byte("ok"))
	})
	defer close(release)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	resp, err := cl.Do(ctx, "GET", "/slow", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Ended with the body half read (not by a timer, which a loaded
	// machine could pass before the headers came).
	go func() {
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil {
		t.Fatal("reading past the request's end succeeded")
	}
	if got := read(t)(cl.Do(t.Context(), "GET", "/", nil, nil)); got != "200 ok" {
		t.Errorf("after a cancelled request: %q", got)
	}
}

func TestServerClosesConnection(t *testing.T) {
	cl, conns := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.Write([]byte("bye"))
	})
	for range 3 {
		if got := read(t)(cl.Do(t.Context(), "GET", "/", nil, nil)); got != "200 bye" {
			t.Fatal(got)
		}
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections, want 3 (each closed by the server)", n)
	}
}

// A header value from a client (a tool's name) cannot add a header or
// end the request early.
func TestNoInjection(t *testing.T) {
	cl, conns := server(t, func(w http.ResponseWriter, r *http.Request) { t.Errorf("request reached the server: %v", r.Header) })
	for _, tc := range []struct {
		method, path string
		h            http.Header
	}{
		{"POST", "/", http.Header{"Mcp-Name": {"x\r\nAuthorization: Bearer stolen"}}},
		{"POST", "/", http.Header{"Mcp-Name": {"x\nY: 1"}}},
		{"POST", "/", http.Header{"Bad Name": {"v"}}},
		{"POST", "/", http.Header{"A": {"nul\x00"}}},
		{"GET /x HTTP/1.1\r\n", "/", nil},
		{"POST", "/ x", nil},
		{"POST", "/\r\n", nil},
	} {
		if _, err := cl.Do(t.Context(), tc.method, tc.path, tc.h, nil); err == nil || !strings.Contains(err.Error(), "rawhttp: invalid") && !strings.Contains(err.Error(), "control character") {
			t.Errorf("%q %q %v: %v", tc.method, tc.path, tc.h, err)
		}
	}
	if conns.Load() != 0 {
		t.Error("a refused request opened a connection")
	}
}

func TestDialError(t *testing.T) {
	cl := &Client{Host: "x", Dial: func(context.Context) (net.Conn, error) { return nil, errors.New("no daemon") }}
	_, err := cl.Do(t.Context(), "GET", "/", nil, nil)
	var de *DialError
	if err == nil || err.Error() != "no daemon" || !errors.As(err, &de) {
		t.Errorf("dial error: %v", err)
	}
}

// TestKeptConnectionClosed: a server that exits (or drops an idle
// connection) between two requests leaves a kept connection that fails
// its write; the request goes on a new connection instead of failing, and
// is served once.
func TestKeptConnectionClosed(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var served atomic.Int32
	closed := make(chan struct{}, 3)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				// One request, answered as if the connection were kept,
				// then closed: the server went away.
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err == nil {
					io.Copy(io.Discard, req.Body)
					served.Add(1)
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				}
				c.Close()
				closed <- struct{}{}
			}()
		}
	}()
	cl := &Client{Host: "x", Dial: func(ctx context.Context) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}
	for i := range 3 {
		resp, err := cl.Do(t.Context(), "POST", "/mcp", nil, []byte(`{}`))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		// The server has closed the kept connection before the next
		// request: what the test is about, not a request that was sent
		// and then cut (which must fail, as it may have been served).
		select {
		case <-closed:
		case <-time.After(30 * time.Second):
			t.Fatalf("request %d: the server did not close its connection", i)
		}
	}
	if n := served.Load(); n != 3 {
		t.Errorf("served %d requests, want 3 (each once)", n)
	}
}

func FuzzEncode(f *testing.F) {
	f.Add("POST", "/mcp", "Mcp-Name", "echo", []byte(`{}`))
	f.Add("GET", "/x\r\n", "A\r\n", "v\n", []byte(nil))
	f.Fuzz(func(t *testing.T, method, path, k, v string, body []byte) {
		b, err := encode(method, path, "h", http.Header{k: {v}}, body)
		if err != nil {
			return
		}
		// What is written parses as one request, with that header once.
		req, err := http.ReadRequest(bufioReader(b))
		if err != nil {
			t.Fatalf("%q does not parse: %v", b, err)
		}
		if req.Method != method || req.ContentLength != int64(len(body)) {
			t.Fatalf("%q: method %q, length %d", b, req.Method, req.ContentLength)
		}
		for name := range req.Header {
			if name != http.CanonicalHeaderKey(k) && name != "Content-Length" {
				t.Fatalf("%q: header %q appeared", b, name)
			}
		}
	})
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

// TestTokenBytes: a header name may hold exactly RFC 9110's tchar bytes.
func TestTokenBytes(t *testing.T) {
	const tchars = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	for c := 0; c < 256; c++ {
		want := strings.IndexByte(tchars, byte(c)) >= 0
		if got := token(string([]byte{byte(c)})); got != want {
			t.Errorf("token(%q) = %v, want %v", byte(c), got, want)
		}
	}
}
