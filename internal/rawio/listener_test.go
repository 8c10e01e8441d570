//go:build linux

package rawio

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestListenerCancelsDroppedRequest: net/http serving a Listener's raw
// connections ends a request's context when its client drops the
// connection (net/http sees it in a read of its own while the handler
// runs: the daemon's face cancels a call that way), after serving
// requests one after another on the kept-alive connection.
func TestListenerCancelsDroppedRequest(t *testing.T) {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t)))
	if err != nil {
		t.Fatal(err)
	}
	rl := Listener(ln)
	ended := make(chan error, 1)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/wait" {
			<-r.Context().Done()
			ended <- r.Context().Err()
			return
		}
		fmt.Fprint(w, "ok")
	}), ConnState: func(c net.Conn, s http.ConnState) {
		if _, ok := c.(*conn); s == http.StateNew && !ok {
			t.Errorf("the server was given a %T, want a raw conn", c)
		}
		if nc, ok := c.(interface{ NetConn() net.Conn }); s == http.StateNew && (!ok || nc.NetConn() == nil) {
			t.Errorf("the raw conn does not name the connection it reads")
		}
	}}
	go srv.Serve(rl)
	defer srv.Close()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	for i := range 3 {
		fmt.Fprintf(c, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d on one connection: %v", i, err)
		}
		resp.Body.Close()
	}
	fmt.Fprintf(c, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
	c.Close()
	select {
	case err := <-ended:
		if err == nil {
			t.Error("the request's context ended without an error")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the request's context did not end when its client dropped the connection")
	}
}
