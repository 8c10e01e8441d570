// Package egress is the filtering proxy that is a sandboxed server's only
// way out of its network namespace. It speaks HTTP CONNECT (any TCP
// protocol, HTTPS included) and plain HTTP proxying, and forwards only to
// the host:port pairs it was given, matched by name as the client wrote
// them: the proxy resolves names itself, so the server needs no DNS. Every
// refusal is answered 403 and reported as "sandbox: denied connect to
// HOST:PORT".
package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// headerLimit bounds what a client may send before its request is complete.
const headerLimit = 64 << 10

// headerTimeout bounds the wait for a client's request.
const headerTimeout = 30 * time.Second

// dialTimeout bounds a connection to an allowed destination.
const dialTimeout = 15 * time.Second

// maxConns bounds the connections one proxy holds at once, its clients'
// and theirs upstream (each is one of the daemon's file descriptors); a
// client past it is answered 503.
const maxConns = 256

// Proxy forwards to an allow list. Its zero value is not usable: see New.
type Proxy struct {
	allow map[string]bool // normalized "host:port"
	// Denied is called with Plexus's own line about each refusal.
	denied func(string)
	// Dial connects to an allowed destination; net.Dialer's by default.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	ctx    context.Context // cancelled by Close: ends dials in progress
	cancel context.CancelFunc

	mu     sync.Mutex
	closed bool
	lns    []net.Listener
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

// New returns a proxy that forwards only to allow ("host:port" each) and
// reports each refusal to denied (which may be nil).
func New(allow []string, denied func(string)) (*Proxy, error) {
	p := &Proxy{allow: map[string]bool{}, denied: denied, conns: map[net.Conn]bool{}}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	for _, a := range allow {
		key, err := normalize(a)
		if err != nil {
			return nil, fmt.Errorf("egress: allowed destination %q: %w", a, err)
		}
		p.allow[key] = true
	}
	p.Dial = (&net.Dialer{Timeout: dialTimeout}).DialContext
	return p, nil
}

// normalize is host:port with the host in lower case and without a final
// dot, so that "API.github.com.:443" is "api.github.com:443".
func normalize(hostport string) (string, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", err
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return "", fmt.Errorf("bad port %q", port)
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" {
		return "", fmt.Errorf("no host")
	}
	if i := strings.IndexFunc(host, notHostChar); i >= 0 {
		return "", fmt.Errorf("host %q has a character %q no host name or address has", host, host[i])
	}
	return net.JoinHostPort(host, strconv.FormatUint(n, 10)), nil
}

// notHostChar: what neither a DNS name nor an IP address (with an IPv6
// zone) holds. Refusing it keeps a hostile client's bytes out of the log.
func notHostChar(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', '0' <= r && r <= '9', r == '.', r == '-', r == '_', r == ':', r == '%':
		return false
	}
	return true
}

// Allowed reports whether hostport is on the list.
func (p *Proxy) Allowed(hostport string) bool {
	key, err := normalize(hostport)
	return err == nil && p.allow[key]
}

// Serve accepts on ln until it or the proxy is closed. It always returns a
// non-nil error.
func (p *Proxy) Serve(ln net.Listener) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		ln.Close()
		return net.ErrClosed
	}
	p.lns = append(p.lns, ln)
	p.mu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		if !p.track(c, true) {
			c.Close()
			return net.ErrClosed
		}
		if p.count() > maxConns {
			refuse(c, http.StatusServiceUnavailable, fmt.Sprintf("sandbox proxy: more than %d connections at once", maxConns))
			p.track(c, false)
			c.Close()
			continue
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.track(c, false)
			defer c.Close()
			p.handle(c)
		}()
	}
}

// track adds (or removes) a connection that Close must end; false if the
// proxy is closed.
func (p *Proxy) track(c net.Conn, add bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !add {
		delete(p.conns, c)
		return true
	}
	if p.closed {
		return false
	}
	p.conns[c] = true
	return true
}

// count is the number of client connections open.
func (p *Proxy) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Close stops every listener and connection and waits for the handlers.
func (p *Proxy) Close() error {
	p.cancel()
	p.mu.Lock()
	p.closed = true
	for _, ln := range p.lns {
		ln.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return nil
}

// handle serves one client connection: one CONNECT tunnel, or one plain
// HTTP request (answered with Connection: close, so that a client cannot
// send the next request to another host over the same upstream connection).
func (p *Proxy) handle(c net.Conn) {
	lr := &io.LimitedReader{R: c, N: headerLimit}
	br := bufio.NewReader(lr)
	c.SetReadDeadline(time.Now().Add(headerTimeout))
	req, err := http.ReadRequest(br)
	if err != nil {
		refuse(c, http.StatusBadRequest, "sandbox proxy: bad request: "+err.Error())
		return
	}
	c.SetReadDeadline(time.Time{})
	lr.N = math.MaxInt64
	target, err := destination(req)
	if err != nil {
		refuse(c, http.StatusBadRequest, "sandbox proxy: "+err.Error())
		return
	}
	if !p.Allowed(target) {
		msg := "sandbox: denied connect to " + target
		if p.denied != nil {
			p.denied(msg)
		}
		refuse(c, http.StatusForbidden, msg)
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, dialTimeout)
	up, err := p.Dial(ctx, "tcp", target)
	cancel()
	if err != nil {
		refuse(c, http.StatusBadGateway, "sandbox proxy: "+err.Error())
		return
	}
	if !p.track(up, true) {
		up.Close()
		return
	}
	defer p.track(up, false)
	defer up.Close()
	if req.Method == http.MethodConnect {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			return
		}
		splice(c, br, up)
		return
	}
	req.RequestURI = ""
	req.Close = true
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	if err := req.Write(up); err != nil {
		return
	}
	io.Copy(c, up)
}

// destination is the host:port a request asks for: CONNECT's authority,
// or a plain request's absolute http URL (port 80 unless given).
func destination(req *http.Request) (string, error) {
	if req.Method == http.MethodConnect {
		if req.URL == nil || req.URL.Host == "" {
			return "", fmt.Errorf("CONNECT without host:port")
		}
		if _, err := normalize(req.URL.Host); err != nil {
			return "", fmt.Errorf("CONNECT %q: %v", req.URL.Host, err)
		}
		return req.URL.Host, nil
	}
	if req.URL == nil || !req.URL.IsAbs() || req.URL.Host == "" {
		return "", fmt.Errorf("not a proxy request (%s %s): use CONNECT or an absolute http URL", req.Method, req.RequestURI)
	}
	if req.URL.Scheme != "http" {
		return "", fmt.Errorf("%s URLs go through CONNECT", req.URL.Scheme)
	}
	host := req.URL.Host
	if req.URL.Port() == "" {
		host = net.JoinHostPort(req.URL.Hostname(), "80")
	}
	if _, err := normalize(host); err != nil {
		return "", fmt.Errorf("%q: %v", req.URL.Host, err)
	}
	return host, nil
}

// refuse answers a request that is not forwarded and ends the connection.
func refuse(c net.Conn, code int, msg string) {
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s\n",
		code, http.StatusText(code), len(msg)+1, msg)
}

// splice copies both ways until both sides are done. The end of one
// direction is passed on as a half-close (or a close, for a connection
// that has none), so that each side sees the other's EOF.
func splice(client net.Conn, fromClient io.Reader, up net.Conn) {
	done := make(chan struct{}, 2)
	pass := func(dst net.Conn, src io.Reader) {
		io.Copy(dst, src)
		if hc, ok := dst.(interface{ CloseWrite() error }); ok {
			hc.CloseWrite()
		} else {
			dst.Close()
		}
		done <- struct{}{}
	}
	go pass(up, fromClient)
	go pass(client, up)
	<-done
	<-done
}
