package upstream

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
)

// A request refused for its credential (HTTP 401 or 403) was not
// processed: the server answered before acting on it. The SDK's client
// takes such an answer for a broken connection, and a request it had not
// sent yet when another request of the connection was so refused fails
// with that request's error. Both are known outcomes — the server did
// nothing — not "outcome unknown": the transport marks the refusal on the
// request's context, and callError reports the status, for the host to
// say that a login is needed or which credential to check.

type refusalKey struct{}

// refusalMark follows one call through the transport.
type refusalMark struct {
	sent    atomic.Bool                 // the call reached the transport
	refused atomic.Pointer[StatusError] // the server's 401 or 403 to it
	// unreached: no connection to the server could be made for it (its
	// dial failed), so not a byte of it went out.
	unreached atomic.Bool
}

// withRefusal marks ctx, the context of a call about to be sent, on a
// remote connection (a stdio one has no HTTP status to meet).
func (c *Conn) withRefusal(ctx context.Context) context.Context {
	if c.lastRefusal == nil {
		return ctx
	}
	return context.WithValue(ctx, refusalKey{}, &refusalMark{})
}

func refusalFrom(ctx context.Context) *refusalMark {
	r, _ := ctx.Value(refusalKey{}).(*refusalMark)
	return r
}

// credentialRefused reports whether code refuses a request's credential.
func credentialRefused(code int) bool {
	return code == http.StatusUnauthorized || code == http.StatusForbidden
}

// refusedBy returns the status that refused the call of ctx (marked by
// withRefusal) for its credential: the one it met or, for a call never
// sent, the one that broke the connection before it; nil if the call was
// not so refused.
func (c *Conn) refusedBy(ctx context.Context) *StatusError {
	r := refusalFrom(ctx)
	if r == nil {
		return nil
	}
	if se := r.refused.Load(); se != nil {
		return se
	}
	if r.sent.Load() || c.lastRefusal == nil {
		return nil
	}
	return c.lastRefusal()
}

// markRefusal records on req's call (if marked) that it reached the
// transport, and, once resp is known, whether the server refused its
// credential (also for the connection: lastRefusal).
func (t *headerTransport) markRefusal(req *http.Request, resp *http.Response) {
	if req.Method != http.MethodPost {
		return
	}
	r := refusalFrom(req.Context())
	if resp == nil {
		if r != nil {
			r.sent.Store(true)
		}
		return
	}
	if resp.StatusCode >= 300 && !credentialRefused(resp.StatusCode) {
		return
	}
	var se *StatusError
	if credentialRefused(resp.StatusCode) {
		se = t.withCheck(&StatusError{StatusCode: resp.StatusCode, URL: SanitizeURL(req.URL.String()), WWWAuthenticate: resp.Header.Get("WWW-Authenticate")})
		if r != nil {
			r.refused.Store(se)
		}
	}
	t.mu.Lock()
	t.refused = se
	t.mu.Unlock()
}

// lastRefusal is the 401 or 403 that refused the last POST answered, if
// it was refused so: the SDK's client takes it for a broken connection.
// (Not the transport's last failure: a DELETE's success forgets that.)
func (t *headerTransport) lastRefusal() *StatusError {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.refused
}

// withCheck is se with, for a 401, which credential the server refused.
func (t *headerTransport) withCheck(se *StatusError) *StatusError {
	if se.StatusCode != http.StatusUnauthorized {
		return se
	}
	e := *se
	e.Check = t.refusedCredential()
	return &e
}

// markUnreached records on req's call (if marked) that err, its POST's
// failure, left the server unreached: the connection to it could not be
// made (a dial, or the proxy's CONNECT), so the server never saw it.
// net/http sends a POST that met a kept-alive connection closed under it
// again on a new one when nothing of it was written, so a dial failure is
// this request's only try.
func markUnreached(req *http.Request, err error) {
	r := refusalFrom(req.Context())
	if r == nil || req.Method != http.MethodPost {
		return
	}
	var op *net.OpError
	if errors.As(err, &op) && (op.Op == "dial" || op.Op == "proxyconnect") {
		r.unreached.Store(true)
	}
}

// unreached reports whether the call of ctx (marked by withRefusal) never
// reached the server: a known outcome, nothing done.
func unreached(ctx context.Context) bool {
	r := refusalFrom(ctx)
	return r != nil && r.unreached.Load()
}

// ConnRefused reports whether err is a connection to the server refused
// at once (ECONNREFUSED: nothing listens at its address any more). The
// server is gone, not slow: its connection ends then, rather than after
// pings missed over a minute and a half, so that it is shown down and
// reconnected on the restart schedule.
func ConnRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}
