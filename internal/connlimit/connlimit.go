// Package connlimit bounds what the connections of one of the daemon's
// listeners may hold of it, so that callers without a credential cannot
// keep its file descriptors, goroutines and time from its clients
// (docs/security.md, T6: requests that trickled their bodies a byte a
// second were held for ever, and enough of them left the daemon no file
// descriptor to accept its own CLI with, on the socket too).
//
// A connection is unproven until one of its requests has passed a guard
// — the token, the web page's session, a team member's token, a
// replica's credential: each guard calls Prove, or wraps what it admits in
// Proven. For each listener:
//
//   - at most MaxUnproven connections are unproven at once: a new one
//     closes the oldest. A client's connection is proven by its first
//     request, within milliseconds of being accepted; a flood's never is.
//   - at most MaxConns are open at once: beyond, a new connection closes
//     the oldest unproven one, or, when every one is proven, is closed.
//   - a request's headers must arrive within HeaderTimeout; its body
//     within BodyTimeout, or ProvenBodyTimeout once a guard passed it; a
//     connection waits IdleTimeout for its next request; and each write
//     of an answer must be taken within WriteTimeout — so that a reader
//     that stops reading holds nothing for long, while a stream that is
//     merely quiet is not cut.
//
// The listener that must never starve (the socket) also keeps Reserve file
// descriptors, given up when accepting fails for the lack of one, so that
// its clients are answered even when something else exhausted them.
package connlimit

import (
	"container/list"
	"context"
	"errors"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Limits are one listener's bounds.
type Limits struct {
	MaxConns    int // open at once
	MaxUnproven int // open at once without a request that passed a guard

	HeaderTimeout     time.Duration // a request's line and headers
	BodyTimeout       time.Duration // a request's body, before a guard passed it
	ProvenBodyTimeout time.Duration // a request's body, after
	IdleTimeout       time.Duration // between requests
	WriteTimeout      time.Duration // each write of an answer

	Reserve int // file descriptors kept for accepting when there are none
}

// Default are the limits of a listener that may hold maxConns connections.
// A body is 16 MiB at most (a tool call's arguments): five minutes take it
// over the slowest link a member of a team may call from.
func Default(maxConns int) Limits {
	return Limits{
		MaxConns:          maxConns,
		MaxUnproven:       min(128, max(4, maxConns/4)),
		HeaderTimeout:     10 * time.Second,
		BodyTimeout:       10 * time.Second,
		ProvenBodyTimeout: 5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		WriteTimeout:      time.Minute,
	}
}

// Listener is a net.Listener whose connections keep l's limits.
type Listener struct {
	net.Listener
	lim  Limits
	name string
	log  *slog.Logger

	mu       sync.Mutex // guards the fields below
	open     int
	unproven list.List // of *conn, oldest first
	spares   []*os.File
	shed     int       // connections closed by the limits since the last warning
	warned   time.Time // of the last warning
}

// New returns ln under lim; name names it in the log.
func New(ln net.Listener, name string, lim Limits, log *slog.Logger) *Listener {
	l := &Listener{Listener: ln, lim: lim, name: name, log: log}
	l.refill()
	return l
}

// Server returns the http.Server that serves h on l: l's timeouts, h
// behind the deadlines of each request, and connContext (if not nil)
// after l's own.
func (l *Listener) Server(h http.Handler, errorLog *log.Logger, connContext func(context.Context, net.Conn) context.Context) *http.Server {
	return &http.Server{
		Handler:           l.handler(h),
		ReadHeaderTimeout: l.lim.HeaderTimeout,
		IdleTimeout:       l.lim.IdleTimeout,
		ErrorLog:          errorLog,
		ConnContext: func(ctx context.Context, nc net.Conn) context.Context {
			if c := own(nc); c != nil {
				ctx = context.WithValue(ctx, connKey{}, c)
			}
			if connContext != nil {
				ctx = connContext(ctx, nc)
			}
			return ctx
		},
	}
}

// own is nc's connection of a Listener, also under a wrapper that names
// what it wraps (a *tls.Conn of tls.NewListener over a Listener: the
// internal channel's); nil if it is none.
func own(nc net.Conn) *conn {
	for {
		if c, ok := nc.(*conn); ok {
			return c
		}
		w, ok := nc.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		nc = w.NetConn()
	}
}

// Close closes the listener and gives up its reserve.
func (l *Listener) Close() error {
	l.mu.Lock()
	for _, f := range l.spares {
		f.Close()
	}
	l.spares = nil
	l.mu.Unlock()
	return l.Listener.Close()
}

// Accept accepts a connection within the limits (closing the oldest
// unproven one to make room), using the reserve when the daemon has no
// file descriptor left.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			if l.release(err) {
				continue
			}
			return nil, err
		}
		l.refill()
		if c := l.admit(nc); c != nil {
			return c, nil
		}
	}
}

// admit tracks nc, or closes it when every place is taken by a proven
// connection.
func (l *Listener) admit(nc net.Conn) *conn {
	l.mu.Lock()
	var evict *conn
	if l.unproven.Len() >= l.lim.MaxUnproven || l.open >= l.lim.MaxConns {
		if front := l.unproven.Front(); front != nil {
			evict = front.Value.(*conn)
			l.forgetLocked(evict)
		}
	}
	full := l.open >= l.lim.MaxConns
	var c *conn
	if !full {
		c = &conn{Conn: nc, l: l}
		c.elem = l.unproven.PushBack(c)
		l.open++
	}
	l.shedLocked(evict != nil || full)
	l.mu.Unlock()
	if evict != nil {
		evict.Conn.Close()
	}
	if full {
		nc.Close()
	}
	return c
}

// shedLocked counts a connection the limits closed, and says so in the
// log at most once a minute: a flood, or limits too low for the clients.
func (l *Listener) shedLocked(shed bool) {
	if !shed {
		return
	}
	l.shed++
	if now := time.Now(); now.Sub(l.warned) >= time.Minute {
		l.log.Warn("connections closed to keep the listener's limits: callers without a credential hold too many",
			"listener", l.name, "closed", l.shed, "max_conns", l.lim.MaxConns, "max_unproven", l.lim.MaxUnproven)
		l.shed, l.warned = 0, now
	}
}

func (l *Listener) forgetLocked(c *conn) {
	if c.gone {
		return
	}
	c.gone = true
	l.open--
	if c.elem != nil {
		l.unproven.Remove(c.elem)
		c.elem = nil
	}
}

// release gives up the reserve after err, a failure to accept for the
// lack of a file descriptor, and reports whether there was one to give.
func (l *Listener) release(err error) bool {
	if !errors.Is(err, syscall.EMFILE) && !errors.Is(err, syscall.ENFILE) {
		return false
	}
	l.mu.Lock()
	spares := l.spares
	l.spares = nil
	l.mu.Unlock()
	for _, f := range spares {
		f.Close()
	}
	if len(spares) > 0 {
		l.log.Warn("out of file descriptors: the listener's reserve is used to accept", "listener", l.name, "reserve", len(spares))
	}
	return len(spares) > 0
}

// refill takes the reserve back, as far as there are file descriptors.
func (l *Listener) refill() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.spares) < l.lim.Reserve {
		f, err := os.Open(os.DevNull)
		if err != nil {
			return
		}
		l.spares = append(l.spares, f)
	}
}

// conn is an accepted connection and its place in the limits.
type conn struct {
	net.Conn
	l      *Listener
	proven atomic.Bool
	elem   *list.Element // in l.unproven while unproven; guarded by l.mu
	gone   bool          // no longer counted; guarded by l.mu
	req    request       // the request being served (request.go)
}

func (c *conn) Close() error {
	c.l.mu.Lock()
	c.l.forgetLocked(c)
	c.l.mu.Unlock()
	err := c.Conn.Close()
	c.l.refill() // with the descriptor just freed, if the reserve was used
	return err
}

// NetConn is the accepted connection, for checks of its peer.
func (c *conn) NetConn() net.Conn { return c.Conn }

func (c *conn) prove() {
	if c.proven.Swap(true) {
		return
	}
	c.l.mu.Lock()
	if c.elem != nil {
		c.l.unproven.Remove(c.elem)
		c.elem = nil
	}
	c.l.mu.Unlock()
}

type connKey struct{}

// Prove records that the request of ctx passed a guard: its connection
// leaves the unproven, and its body gets ProvenBodyTimeout. A request not
// served by a Listener's server is left as it is.
func Prove(ctx context.Context) {
	if c, ok := ctx.Value(connKey{}).(*conn); ok {
		c.prove()
		c.req.prove()
	}
}

// Proven is h, whose requests have passed a guard (Prove).
func Proven(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Prove(r.Context())
		h.ServeHTTP(w, r)
	})
}
