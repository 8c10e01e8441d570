package upstream

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pinnedTransport keeps a connection in the session era (Spec.
// ProtocolVersion): the SDK's server/discover is answered here with
// "method not found", so it falls back to initialize, which then asks for
// the pinned version.
type pinnedTransport struct {
	inner   mcp.Transport
	version string
}

func (t pinnedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pinnedConn{Connection: c, version: t.version, injected: make(chan jsonrpc.Message, 1), closed: make(chan struct{})}, nil
}

type pinnedConn struct {
	mcp.Connection
	version  string
	injected chan jsonrpc.Message

	once      sync.Once
	in        chan readResult
	closeOnce sync.Once
	closed    chan struct{}
}

func (c *pinnedConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

func (c *pinnedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		switch req.Method {
		case methodDiscover:
			c.injected <- &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
				Message: "plexus: this server is pinned to protocol version " + c.version}}
			return nil
		case "initialize":
			var params map[string]json.RawMessage
			if json.Unmarshal(req.Params, &params) == nil {
				params["protocolVersion"], _ = json.Marshal(c.version)
				if b, err := json.Marshal(params); err == nil {
					cp := *req
					cp.Params = b
					msg = &cp
				}
			}
		}
	}
	return c.Connection.Write(ctx, msg)
}

// Read returns an injected answer, else the next message from the server.
// One goroutine reads the server so that an injected answer is never
// stuck behind a blocked read.
func (c *pinnedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	c.once.Do(func() {
		c.in = make(chan readResult)
		go func() {
			for {
				m, err := c.Connection.Read(context.Background())
				select {
				case c.in <- readResult{m, err}:
				case <-c.closed:
					return
				}
				if err != nil {
					return
				}
			}
		}()
	})
	select {
	case m := <-c.injected:
		return m, nil
	case r := <-c.in:
		return r.msg, r.err
	case <-c.closed:
		return nil, mcp.ErrConnectionClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
