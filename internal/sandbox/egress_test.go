//go:build linux

package sandbox

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// hand sends f to the egress socket as the launcher does and reports
// whether the daemon acknowledged it.
func hand(t *testing.T, sock string, f *os.File) bool {
	t.Helper()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, _, err := c.WriteMsgUnix([]byte("1"), unix.UnixRights(int(f.Fd())), nil); err != nil {
		t.Fatal(err)
	}
	var ack [1]byte
	_, err = c.Read(ack[:])
	return err == nil
}

// The daemon's side of a host:port list: it serves the listening socket
// the launcher hands it, forwarding only to the list, and says so for
// what it refuses.
func TestEgressHandoff(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "allowed") }))
	defer srv.Close()
	target := strings.TrimPrefix(srv.URL, "http://")
	p := &Policy{Network: Network{Mode: NetworkList, Allow: []HostPort{{"127.0.0.1", uint16(srv.Listener.Addr().(*net.TCPAddr).Port)}}}}
	var mu sync.Mutex
	var denied []string
	eg, err := StartEgress(p, func(s string) { mu.Lock(); denied = append(denied, s); mu.Unlock() })
	if err != nil {
		t.Fatal(err)
	}
	defer eg.Close()
	if p.ProxySocket == "" || len(p.ProxySocket) > 100 {
		t.Fatalf("ProxySocket %q", p.ProxySocket)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := ln.(*net.TCPListener).File()
	ln.Close()
	if !hand(t, p.ProxySocket, f) {
		t.Fatal("the daemon did not acknowledge the proxy socket")
	}
	f.Close()
	if _, err := os.Stat(p.ProxySocket); !os.IsNotExist(err) {
		t.Errorf("the handoff socket is still there: %v", err)
	}
	get := func(dest string) string {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n", dest, dest)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.Status + " " + strings.TrimSpace(string(b))
	}
	if got := get(target); got != "200 OK allowed" {
		t.Errorf("allowed: %s", got)
	}
	if got := get("evil.example:80"); !strings.HasPrefix(got, "403") {
		t.Errorf("denied: %s", got)
	}
	eg.Close()
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("the proxy still listens after Close")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(denied) != 1 || denied[0] != "sandbox: denied connect to evil.example:80 (not on the server's list; --allow-net evil.example:80 allows it, through Plexus's proxy)" {
		t.Errorf("denials: %q", denied)
	}
}

// A handoff of something that is not a listening TCP socket is refused:
// the launcher gets no acknowledgement and does not start the server.
func TestEgressRefusesOtherFiles(t *testing.T) {
	p := &Policy{Network: Network{Mode: NetworkList, Allow: []HostPort{{"h", 1}}}}
	eg, err := StartEgress(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eg.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if hand(t, p.ProxySocket, r) {
		t.Error("a pipe was taken as the proxy socket")
	}
	// Closing an egress that never got its socket ends its goroutine.
	eg2, err := StartEgress(&Policy{Network: Network{Mode: NetworkList}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	eg2.Close()
	if eg, err := StartEgress(&Policy{Network: Network{Mode: NetworkNone}}, nil); eg != nil || err != nil {
		t.Errorf("network none: %v, %v", eg, err)
	}
}
