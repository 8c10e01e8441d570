package connlimit

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// short are limits a test can wait out.
func short(maxConns, maxUnproven int) Limits {
	return Limits{MaxConns: maxConns, MaxUnproven: maxUnproven,
		HeaderTimeout: 300 * time.Millisecond, BodyTimeout: 300 * time.Millisecond, ProvenBodyTimeout: 5 * time.Second,
		IdleTimeout: 2 * time.Second, WriteTimeout: 300 * time.Millisecond}
}

// serve serves h on 127.0.0.1 under lim and returns the address. A
// request whose header X-Token is "ok" passes the guard.
func serve(t *testing.T, lim Limits, h http.Handler) (string, *Listener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := New(ln, "test", lim, slog.New(slog.DiscardHandler))
	guard := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Token") == "ok" {
			Prove(r.Context())
		}
		h.ServeHTTP(w, r)
	})
	srv := l.Server(guard, nil, nil)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), l
}

// closedWithin waits for the server to close c (a read that ends with
// EOF or a reset) and reports after how long; d bounds the wait.
func closedWithin(t *testing.T, c net.Conn, d time.Duration) (time.Duration, bool) {
	t.Helper()
	start := time.Now()
	c.SetReadDeadline(start.Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return time.Since(start), false
	}
	return time.Since(start), true
}

func dial(t *testing.T, addr, first string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if first != "" {
		if _, err := c.Write([]byte(first)); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

const tricklePost = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"

// TestTricklingBodyIsCut: a body that comes a byte at a time is cut at
// BodyTimeout, whether the handler reads it or refused the request
// without reading it (the server reads what is left before the next
// request); so are headers that never end.
func TestTricklingBodyIsCut(t *testing.T) {
	t.Parallel()
	readAll := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.ReadAll(r.Body) })
	refuse := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401) })
	for name, h := range map[string]http.Handler{"read": readAll, "refused": refuse} {
		addr, _ := serve(t, short(100, 100), h)
		c := dial(t, addr, tricklePost)
		go func() {
			for range 20 {
				time.Sleep(100 * time.Millisecond)
				c.Write([]byte(" "))
			}
		}()
		if took, ok := closedWithin(t, c, 3*time.Second); !ok || took > 2*time.Second {
			t.Errorf("%s: a trickled body held the connection %s (closed: %v), want about 300 ms", name, took, ok)
		}
	}
	addr, _ := serve(t, short(100, 100), readAll)
	c := dial(t, addr, "GET / HTTP/1.1\r\nHost: x\r\n")
	if took, ok := closedWithin(t, c, 3*time.Second); !ok || took > 2*time.Second {
		t.Errorf("headers that never end held the connection %s (closed: %v)", took, ok)
	}
}

// TestProvenBodyGetsItsTime: once a guard passed the request, its body
// may take ProvenBodyTimeout, and the handler gets all of it.
func TestProvenBodyGetsItsTime(t *testing.T) {
	t.Parallel()
	got := make(chan string, 1)
	addr, _ := serve(t, short(100, 100), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- string(b)
	}))
	c := dial(t, addr, "POST / HTTP/1.1\r\nHost: x\r\nX-Token: ok\r\nContent-Length: 8\r\n\r\n")
	for _, b := range "slowbody" {
		time.Sleep(100 * time.Millisecond) // 800 ms in all, over BodyTimeout
		c.Write([]byte(string(b)))
	}
	select {
	case b := <-got:
		if b != "slowbody" {
			t.Fatalf("the handler read %q", b)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler did not get the body")
	}
}

// TestQuietStreamsAreNotCut: an answer streamed for longer than every
// timeout — after a body read to its end, and without one — keeps its
// request's context and its connection, as long as the client reads.
func TestQuietStreamsAreNotCut(t *testing.T) {
	t.Parallel()
	var cancelled atomic.Int32
	addr, _ := serve(t, short(100, 100), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 4 {
			select {
			case <-r.Context().Done():
				cancelled.Add(1)
				return
			case <-time.After(400 * time.Millisecond): // over every timeout but Idle
			}
			io.WriteString(w, "data: "+string(rune('0'+i))+"\n\n")
			w.(http.Flusher).Flush()
		}
	}))
	var wg sync.WaitGroup
	for _, req := range []string{
		"GET / HTTP/1.1\r\nHost: x\r\nX-Token: ok\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: x\r\nX-Token: ok\r\nContent-Length: 2\r\n\r\n{}",
		"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", // unproven
	} {
		c := dial(t, addr, req)
		wg.Go(func() {
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Error(err)
				return
			}
			b, err := io.ReadAll(resp.Body)
			if err != nil || strings.Count(string(b), "data:") != 4 {
				t.Errorf("%q: the stream gave %q, %v", strings.SplitN(req, "\r\n", 2)[0], b, err)
			}
		})
	}
	wg.Wait()
	if n := cancelled.Load(); n > 0 {
		t.Errorf("%d streams had their context cancelled", n)
	}
}

// TestReaderThatStopsReadingIsLetGo: an answer the client does not read
// fails its write after WriteTimeout, and the handler returns.
func TestReaderThatStopsReadingIsLetGo(t *testing.T) {
	t.Parallel()
	done := make(chan error, 1)
	addr, _ := serve(t, short(100, 100), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("x", 64<<10))
		for range 1 << 12 { // 256 MiB: more than any socket buffers
			if _, err := w.Write(chunk); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}))
	dial(t, addr, "GET / HTTP/1.1\r\nHost: x\r\nX-Token: ok\r\n\r\n") // and never read
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("256 MiB were written to a client that reads nothing")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler is still writing to a client that reads nothing")
	}
}

// TestUnprovenAreBoundedOldestFirst: beyond MaxUnproven, each new
// connection closes the oldest unproven one; a proven one stays.
func TestUnprovenAreBoundedOldestFirst(t *testing.T) {
	t.Parallel()
	// Idle connections that the header timeout does not close meanwhile,
	// however slow the machine: only the limit closes one here.
	lim := short(100, 3)
	lim.HeaderTimeout = time.Minute
	addr, l := serve(t, lim, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	proven := dial(t, addr, "GET / HTTP/1.1\r\nHost: x\r\nX-Token: ok\r\n\r\n")
	br := bufio.NewReader(proven)
	if _, err := http.ReadResponse(br, nil); err != nil {
		t.Fatal(err)
	}
	var idle []net.Conn
	for range 3 {
		idle = append(idle, dial(t, addr, ""))
	}
	waitOpen(t, l, 4)
	dial(t, addr, "")
	if _, ok := closedWithin(t, idle[0], 2*time.Second); !ok {
		t.Fatal("the oldest unproven connection was not closed for a new one")
	}
	for _, c := range idle[1:] {
		if _, ok := closedWithin(t, c, 100*time.Millisecond); ok {
			t.Fatal("a newer unproven connection was closed")
		}
	}
	// The proven one still serves.
	proven.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	if _, err := http.ReadResponse(br, nil); err != nil {
		t.Fatalf("a proven connection was closed: %v", err)
	}
}

// TestFullOfProvenRefusesNew: when MaxConns proven connections are open,
// a new one is closed at once, and they keep serving.
func TestFullOfProvenRefusesNew(t *testing.T) {
	t.Parallel()
	addr, l := serve(t, short(2, 2), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	var brs []*bufio.Reader
	var cs []net.Conn
	for range 2 {
		c := dial(t, addr, "GET / HTTP/1.1\r\nHost: x\r\nX-Token: ok\r\n\r\n")
		br := bufio.NewReader(c)
		if _, err := http.ReadResponse(br, nil); err != nil {
			t.Fatal(err)
		}
		cs, brs = append(cs, c), append(brs, br)
	}
	extra := dial(t, addr, "")
	if _, ok := closedWithin(t, extra, 2*time.Second); !ok {
		t.Fatal("a connection beyond MaxConns was kept")
	}
	for i, c := range cs {
		c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		if _, err := http.ReadResponse(brs[i], nil); err != nil {
			t.Fatalf("proven connection %d: %v", i, err)
		}
	}
	for _, c := range cs {
		c.Close()
	}
	waitOpen(t, l, 0)
}

func waitOpen(t *testing.T, l *Listener, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		l.mu.Lock()
		open := l.open
		l.mu.Unlock()
		if open == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections open, want %d", open, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestUnderTLS: a Listener under tls.NewListener (the internal channel
// between replicas) keeps its limits: a request that passed the guard
// proves its connection, and an unproven one's trickled body is cut.
func TestUnderTLS(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := New(ln, "test", short(100, 100), slog.New(slog.DiscardHandler))
	ts := httptest.NewUnstartedServer(nil)
	ts.Listener = l
	ts.Config = l.Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Token") == "ok" {
			Prove(r.Context())
		}
		io.ReadAll(r.Body)
	}), nil, nil)
	ts.StartTLS()
	t.Cleanup(ts.Close)

	req, _ := http.NewRequest("GET", ts.URL, nil)
	req.Header.Set("X-Token", "ok")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	l.mu.Lock()
	open, unproven := l.open, l.unproven.Len()
	l.mu.Unlock()
	if open != 1 || unproven != 0 {
		t.Fatalf("after a request the guard passed over TLS: %d open, %d of them unproven; want 1, 0", open, unproven)
	}

	// Unproven, a body that trickles.
	c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(tricklePost))
	go func() {
		for range 20 {
			time.Sleep(100 * time.Millisecond)
			c.Write([]byte(" "))
		}
	}()
	if took, ok := closedWithin(t, c, 3*time.Second); !ok || took > 2*time.Second {
		t.Errorf("over TLS, a trickled body held the connection %s (closed: %v), want about 300 ms", took, ok)
	}
}
