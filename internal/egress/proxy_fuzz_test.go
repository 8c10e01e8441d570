package egress

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// FuzzRequest feeds a client's bytes to the proxy: whatever they are, it
// dials only allowed destinations, and what it reports is its own line.
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		"CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n",
		"CONNECT API.example.com.:443 HTTP/1.1\r\n\r\nhello",
		"CONNECT evil.example:443 HTTP/1.1\r\n\r\n",
		"GET http://api.example.com:443/x HTTP/1.1\r\nHost: other\r\n\r\n",
		"GET http://api.example.com/ HTTP/1.1\r\n\r\n",
		"GET http://user@evil.example@api.example.com:443/ HTTP/1.1\r\n\r\n",
		"CONNECT [::1]:443 HTTP/1.1\r\n\r\n",
		"CONNECT api.example.com:443\r\n\r\n",
		"POST http://api.example.com:443/ HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var mu sync.Mutex
		var dialed []string
		p, err := New([]string{"api.example.com:443"}, func(msg string) {
			if !strings.HasPrefix(msg, "sandbox: denied connect to ") || strings.ContainsAny(msg, "\r\n\x1b") {
				t.Errorf("denial line %q", msg)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		p.Dial = func(_ context.Context, _, addr string) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, addr)
			mu.Unlock()
			// An upstream that answers at once and hangs up.
			a, b := net.Pipe()
			go io.Copy(io.Discard, b)
			go func() {
				io.WriteString(b, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
				b.Close()
			}()
			return a, nil
		}
		client, server := net.Pipe()
		done := make(chan struct{})
		go func() { defer close(done); p.handle(server); server.Close() }()
		go func() { io.WriteString(client, raw); client.Close() }()
		go io.Copy(io.Discard, client)
		<-done
		for _, d := range dialed {
			if !p.Allowed(d) {
				t.Fatalf("dialed %q, which is not allowed, for %q", d, raw)
			}
		}
	})
}
