package upstream

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestIdleConnectionClosedFirst: a server that closes a connection idle
// for its keep-alive time (Node's http server: 5 s) resets a request
// written as it closes — a call Plexus then reports as lost, its outcome
// unknown. The fake does that to every request on a connection idle 4.5 s
// or more; Plexus's connection to it must have closed before then, so the
// call after a 4.5 s pause goes on a new connection and is answered.
func TestIdleConnectionClosedFirst(t *testing.T) {
	f := newRemoteFake(t, false)
	var mu sync.Mutex
	idleSince := map[net.Conn]time.Time{}
	dropped := 0
	inner := f.srv.Config.Handler
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch st {
		case http.StateIdle:
			idleSince[c] = time.Now()
		case http.StateActive:
		default:
			delete(idleSince, c)
		}
	}
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := r.Context().Value(connKey{}).(net.Conn)
		mu.Lock()
		since, reused := idleSince[c]
		stale := reused && time.Since(since) >= 4500*time.Millisecond
		if stale {
			dropped++
		}
		mu.Unlock()
		if stale { // the server's keep-alive time ran out as the request came
			c.Close()
			return
		}
		inner.ServeHTTP(w, r)
	})
	srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, c)
	}
	srv.Start() // 127.0.0.1 only
	t.Cleanup(srv.Close)
	spec := f.spec("http", true)
	spec.URL = strings.Replace(spec.URL, f.srv.URL, srv.URL, 1)
	c := mustConnect(t, spec)
	call := func(text string) {
		t.Helper()
		res, err := c.CallTool(context.Background(), "echo", json.RawMessage(`{"t":"`+text+`"}`))
		if err != nil || resultText(t, res) != `{"t":"`+text+`"}` {
			t.Fatalf("%s: %v, %v", text, res, err)
		}
	}
	call("first")
	time.Sleep(4600 * time.Millisecond) // the pause is what is tested
	call("after a pause")
	mu.Lock()
	defer mu.Unlock()
	if dropped != 0 {
		t.Errorf("%d requests went on a connection idle past the server's keep-alive time", dropped)
	}
}

type connKey struct{}
