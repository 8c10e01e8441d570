// Package rawhttp is an HTTP/1.1 client for a single local server that
// makes each round trip in the caller's goroutine, on kept-alive
// connections. net/http's client hands every request to two goroutines of
// its own per connection (one writes, one reads), and on a proxy's hot path
// (the `plexus mcp` bridge, the load tool's raw client) those hand-offs
// cost more than the request. Requests are written here; responses are
// read with net/http's own parser (http.ReadResponse).
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
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Client reaches one server through Dial. The zero value is not usable:
// set Dial and Host.
type Client struct {
	// Dial opens a connection to the server (TCP on loopback, a unix
	// socket).
	Dial func(ctx context.Context) (net.Conn, error)
	// Host is the Host header of every request.
	Host string
	// MaxIdle bounds the connections kept for reuse; 0 means 16.
	MaxIdle int

	mu   sync.Mutex
	idle []*conn
}

type conn struct {
	c  net.Conn
	br *bufio.Reader
}

// Do sends one request and returns the response; its Body must be closed,
// which gives the connection back for reuse when the body was read to its
// end. ctx bounds the whole exchange, the body's reading included.
func (cl *Client) Do(ctx context.Context, method, path string, header http.Header, body []byte) (*http.Response, error) {
	req, err := encode(method, path, cl.Host, header, body)
	if err != nil {
		return nil, err
	}
	cn, reused, err := cl.get(ctx)
	if err != nil {
		return nil, err
	}
	if reused {
		// A kept connection the server closed meanwhile (it exited, or
		// dropped it as idle) fails the write on a unix socket, which
		// knows its peer is gone: then the request reached no one, and
		// goes again on a new connection. Once the request is written, a
		// failure is the caller's: the server may have acted on it.
		if _, err := cn.c.Write(req); err != nil {
			cn.c.Close()
			if cn, _, err = cl.dial(ctx); err != nil {
				return nil, err
			}
		} else {
			req = nil
		}
	}
	var cancelled bool
	var cmu sync.Mutex
	stop := context.AfterFunc(ctx, func() {
		cmu.Lock()
		cancelled = true
		cmu.Unlock()
		cn.c.SetDeadline(time.Now())
	})
	fail := func(err error) (*http.Response, error) {
		stop()
		cn.c.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if req != nil {
		if _, err := cn.c.Write(req); err != nil {
			return fail(err)
		}
	}
	resp, err := http.ReadResponse(cn.br, nil)
	if err != nil {
		return fail(fmt.Errorf("reading the response: %w", err))
	}
	resp.Body = &respBody{ReadCloser: resp.Body, done: func(eof bool) {
		reusable := stop() && eof && !resp.Close
		cmu.Lock()
		reusable = reusable && !cancelled
		cmu.Unlock()
		if reusable {
			cl.put(cn)
		} else {
			cn.c.Close()
		}
	}}
	return resp, nil
}

// body gives its connection back once, when closed.
type respBody struct {
	io.ReadCloser
	eof  bool
	once sync.Once
	done func(eof bool)
}

func (b *respBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	return n, err
}

func (b *respBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() { b.done(b.eof) })
	return err
}

// get returns a kept connection (reused), or a new one.
func (cl *Client) get(ctx context.Context) (cn *conn, reused bool, err error) {
	cl.mu.Lock()
	if n := len(cl.idle); n > 0 {
		cn := cl.idle[n-1]
		cl.idle = cl.idle[:n-1]
		cl.mu.Unlock()
		return cn, true, nil
	}
	cl.mu.Unlock()
	return cl.dial(ctx)
}

// DialError is a failure to connect: the request was not sent.
type DialError struct{ Err error }

func (e *DialError) Error() string { return e.Err.Error() }
func (e *DialError) Unwrap() error { return e.Err }

func (cl *Client) dial(ctx context.Context) (*conn, bool, error) {
	c, err := cl.Dial(ctx)
	if err != nil {
		return nil, false, &DialError{err}
	}
	return &conn{c: c, br: bufio.NewReaderSize(c, 16<<10)}, false, nil
}

func (cl *Client) put(cn *conn) {
	cn.c.SetDeadline(time.Time{})
	limit := cl.MaxIdle
	if limit <= 0 {
		limit = 16
	}
	cl.mu.Lock()
	if len(cl.idle) < limit {
		cl.idle = append(cl.idle, cn)
		cn = nil
	}
	cl.mu.Unlock()
	if cn != nil {
		cn.c.Close()
	}
}

// CloseIdle closes the connections kept for reuse.
func (cl *Client) CloseIdle() {
	cl.mu.Lock()
	idle := cl.idle
	cl.idle = nil
	cl.mu.Unlock()
	for _, cn := range idle {
		cn.c.Close()
	}
}

// encode writes a request with a Content-Length body. A method, path or
// header that would break the request's framing (a line break, a control
// character, a name that is not a token) is an error: header values often
// come from a client (a tool's name), and must not add headers.
func encode(method, path, host string, header http.Header, body []byte) ([]byte, error) {
	if !token(method) {
		return nil, fmt.Errorf("rawhttp: invalid method %q", method)
	}
	if _, err := url.ParseRequestURI(path); err != nil || path[0] != '/' || !field(path) || bytes.ContainsAny([]byte(path), " ") {
		return nil, fmt.Errorf("rawhttp: invalid path %q", path)
	}
	if !field(host) {
		return nil, fmt.Errorf("rawhttp: invalid host %q", host)
	}
	b := make([]byte, 0, 256+len(body))
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)
	for k, vs := range header {
		if !token(k) {
			return nil, fmt.Errorf("rawhttp: invalid header name %q", k)
		}
		if strings.EqualFold(k, "Content-Length") || strings.EqualFold(k, "Host") {
			continue
		}
		for _, v := range vs {
			if !field(v) {
				return nil, fmt.Errorf("rawhttp: the value of header %s holds a control character", k)
			}
			b = append(b, k...)
			b = append(b, ": "...)
			b = append(b, v...)
			b = append(b, "\r\n"...)
		}
	}
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	return append(b, body...), nil
}

// token reports whether s is an HTTP token (RFC 9110 §5.6.2). It runs
// for every header of every request, so it looks each byte up in a table.
func token(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !tchar[s[i]] {
			return false
		}
	}
	return true
}

// tchar holds the bytes a token may have: visible ASCII but delimiters.
var tchar = func() (t [256]bool) {
	for c := '!'; c < 0x7f; c++ {
		t[c] = !strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c)
	}
	return t
}()

// field reports whether s may be a field value: no control characters but
// horizontal tab (RFC 9110 §5.5).
func field(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
