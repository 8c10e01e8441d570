package face

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/era"
)

// The SDK's server runs on a connection the face owns, one per session:
// the face hands it the messages it is to serve (Read), and everything it
// writes comes back to the face (Write), which puts it on the stream of
// the request it answers or belongs to, or on the session's own stream.
// The SDK keeps what it is good at — initialize, the lists, prompts,
// resources, completion, subscriptions, Plexus's own tools — and knows
// nothing of HTTP: the session's table, its streams, each POST's life, its
// idle clock and its end are the face's (session.go, exchange.go).

// sdkConn is a session's connection to the SDK's server.
type sdkConn struct {
	s      *session
	in     chan jsonrpc.Message
	closed chan struct{}
	once   sync.Once
}

func newSDKConn(s *session) *sdkConn {
	return &sdkConn{s: s, in: make(chan jsonrpc.Message, 8), closed: make(chan struct{})}
}

// Connect is the mcp.Transport the SDK's server connects on.
func (c *sdkConn) Connect(context.Context) (mcp.Connection, error) { return c, nil }

// SupportsProtocolVersion: a session is of the session era (a stateless
// request never opens one).
func (c *sdkConn) SupportsProtocolVersion(v string) bool { return !era.IsStateless(v) }

func (c *sdkConn) SessionID() string { return c.s.id }

// Read is the next message for the SDK's server.
func (c *sdkConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.in:
		return msg, nil
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write takes what the SDK's server sends: the face delivers it.
func (c *sdkConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-c.closed:
		return errors.New("the session has ended")
	default:
	}
	return c.s.fromSDK(ctx, msg)
}

// Close ends the connection; the session ends with it.
func (c *sdkConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

// hand gives the SDK's server a message; false if the session ended.
func (c *sdkConn) hand(msg jsonrpc.Message) bool {
	select {
	case c.in <- msg:
		return true
	case <-c.closed:
		return false
	}
}

// exchangeKey carries, in the context of a request the SDK serves, the
// exchange that answers it, so that what its handler sends the client
// (a question, progress, a log message) rides that exchange's stream.
type exchangeKey struct{}

func withExchange(ctx context.Context, ex *exchange) context.Context {
	return context.WithValue(ctx, exchangeKey{}, ex)
}

func exchangeFrom(ctx context.Context) *exchange {
	ex, _ := ctx.Value(exchangeKey{}).(*exchange)
	return ex
}

// attach is the SDK server's outermost receiving middleware: it finds the
// exchange of the request (by the RequestExtra the face gave it) and puts
// it in the handler's context.
func (p *profile) attach(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
			if s := p.sessionByID(ss.ID()); s != nil {
				if ex := s.exchangeOf(req.GetExtra()); ex != nil {
					ctx = withExchange(ctx, ex)
				}
			}
		}
		return next(p.withSDKClient(ctx, req), method, req)
	}
}
