package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// start runs a proxy on a loopback port for allow and returns its address
// and the denials it reported.
func start(t testing.TB, allow ...string) (string, *Proxy, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var denied []string
	p, err := New(allow, func(s string) { mu.Lock(); denied = append(denied, s); mu.Unlock() })
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(ln)
	t.Cleanup(func() { p.Close() })
	return ln.Addr().String(), p, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), denied...) }
}

// origin is a test HTTP server on 127.0.0.1 that answers its Host header.
func origin(t testing.TB) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "origin says hello to %s", r.Host)
	}))
	t.Cleanup(srv.Close)
	return srv, strings.TrimPrefix(srv.URL, "http://")
}

// connect sends CONNECT target through the proxy and, if it is
// established, a GET over the tunnel; it returns the status line and body.
func connect(t testing.TB, proxy, target string) (string, string) {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return resp.Status, string(b)
	}
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target)
	inner, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(inner.Body)
	return resp.Status, string(b)
}

func TestConnectAllowedAndDenied(t *testing.T) {
	_, addr := origin(t)
	_, port, _ := net.SplitHostPort(addr)
	_, other := origin(t)
	proxy, _, denied := start(t, addr)

	if status, body := connect(t, proxy, addr); !strings.HasPrefix(status, "200") || body != "origin says hello to "+addr {
		t.Errorf("allowed %s: %s %q", addr, status, body)
	}
	for _, target := range []string{
		"localhost:" + port, // the same port and machine, by another name
		"127.0.0.2:" + port, // the same port on another address
		other,               // another port on the allowed address
	} {
		status, body := connect(t, proxy, target)
		if !strings.HasPrefix(status, "403") || !strings.Contains(body, "sandbox: denied connect to "+target) {
			t.Errorf("%s: %s %q, want 403 and the denial", target, status, body)
		}
	}
	want := []string{"sandbox: denied connect to localhost:" + port, "sandbox: denied connect to 127.0.0.2:" + port, "sandbox: denied connect to " + other}
	if got := denied(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("denials reported: %q, want %q", got, want)
	}
}

func TestPlainHTTP(t *testing.T) {
	_, addr := origin(t)
	_, other := origin(t)
	proxy, _, _ := start(t, addr)
	pu, _ := url.Parse("http://" + proxy)
	// Go's client would not proxy a loopback URL from the environment;
	// an explicit proxy it uses for every URL.
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
	for i := range 2 { // twice: a second request must not ride the first's upstream connection
		resp, err := client.Get("http://" + addr + "/x")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "origin says hello to "+addr {
			t.Errorf("allowed, request %d: %s %q", i, resp.Status, b)
		}
		resp, err = client.Get("http://" + other + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || strings.Contains(string(b), "origin says") {
			t.Errorf("denied, request %d: %s %q", i, resp.Status, b)
		}
	}
}

func TestBadRequests(t *testing.T) {
	_, addr := origin(t)
	proxy, _, denied := start(t, addr)
	for name, raw := range map[string]string{
		"origin form":    "GET / HTTP/1.1\r\nHost: " + addr + "\r\n\r\n",
		"https URL":      "GET https://" + addr + "/ HTTP/1.1\r\nHost: " + addr + "\r\n\r\n",
		"no port":        "CONNECT example.com HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"escape in host": "CONNECT ex\x1b[2Jample.com:443 HTTP/1.1\r\n\r\n",
		"huge header":    "CONNECT " + addr + " HTTP/1.1\r\nX: " + strings.Repeat("a", headerLimit) + "\r\n\r\n",
		"not HTTP":       "\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n",
	} {
		c, err := net.Dial("tcp", proxy)
		if err != nil {
			t.Fatal(err)
		}
		go io.WriteString(c, raw)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		c.Close()
		if err != nil {
			t.Errorf("%s: no answer: %v", name, err)
			continue
		}
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %s, want 400", name, resp.Status)
		}
	}
	if d := denied(); len(d) != 0 {
		t.Errorf("bad requests were reported as denials: %q", d)
	}
}

func TestNewRefusesBadList(t *testing.T) {
	for _, a := range []string{"example.com", "example.com:0", "example.com:99999", ":443"} {
		if _, err := New([]string{a}, nil); err == nil {
			t.Errorf("New(%q) accepted it", a)
		}
	}
	p, err := New([]string{"API.GitHub.com.:443", "[::1]:8080"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for hp, want := range map[string]bool{"api.github.com:443": true, "api.github.com.:443": true, "api.github.com:80": false, "[::1]:8080": true, "[::1]:443": false, "github.com:443": false} {
		if got := p.Allowed(hp); got != want {
			t.Errorf("Allowed(%s) = %v", hp, got)
		}
	}
}

// Close ends an open tunnel and Serve.
func TestCloseEndsTunnels(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go io.Copy(io.Discard, c) // holds the tunnel open
		}
	}()
	proxy, p, _ := start(t, ln.Addr().String())
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\n", ln.Addr())
	br := bufio.NewReader(c)
	if resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("tunnel: %v %v", resp, err)
	}
	p.Close()
	if _, err := br.ReadByte(); err == nil {
		t.Error("the tunnel is still open after Close")
	}
}

// A request's credentials go nowhere but to the allowed origin: not into
// the denial line, not into the 403, and the proxy's own credentials are
// not passed on.
func TestCredentialsStay(t *testing.T) {
	const canary = "CANARY-TOKEN-5b7e"
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization")+"|"+r.Header.Get("Proxy-Authorization"))
		mu.Unlock()
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	proxy, _, denied := start(t, addr)
	send := func(dest string) string {
		c, err := net.Dial("tcp", proxy)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET http://%s/ HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nProxy-Authorization: Basic %s\r\n\r\n", dest, dest, canary, canary)
		b, _ := io.ReadAll(c)
		return string(b)
	}
	if out := send("evil.example:80"); strings.Contains(out, canary) || !strings.Contains(out, "403") {
		t.Errorf("denied answer: %q", out)
	}
	if d := strings.Join(denied(), "\n"); strings.Contains(d, canary) || d == "" {
		t.Errorf("denial lines: %q", d)
	}
	send(addr)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != "Bearer "+canary+"|" {
		t.Errorf("the origin saw %q, want its own Authorization and no Proxy-Authorization", seen)
	}
}
