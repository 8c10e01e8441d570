package testenv

import (
	"net"
	"net/http"
	"testing"
)

// ServeLoopback serves h over HTTP on 127.0.0.1 until the test ends and
// returns its MCP endpoint's URL (http://127.0.0.1:PORT/mcp; h sees every
// path).
func ServeLoopback(t testing.TB, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/mcp"
}
