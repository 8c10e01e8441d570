//lint:file-ignore SA1019 Plexus relays what MCP 2026-07-28 deprecates (sampling, roots, logging) for the session-era clients and servers that still use it, through the deprecation window.

package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/era"
	"github.com/plexus-mcp/plexus/internal/recovery"
)

// routeTransport answers a server's elicitation, sampling and roots requests on
// the connection itself, before the SDK's client sees them: Plexus is a
// proxy, so it hands the request to the client whose call caused it as the
// server wrote it, and the answer back as that client wrote it. The SDK's
// client would check the request against its own reading of the schema
// rules first, and refuse some that the MCP clients downstream accept
// (SEP-1330 titled multi-select enums, for one).
type routeTransport struct {
	inner mcp.Transport
	c     *Conn
}

func (t routeTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	rc := &routeConn{Connection: conn, c: t.c}
	t.c.route = rc
	if t.c.stdio != nil {
		// The stdio read loop routes them, in order with frame answers
		// (stdioconn.go): whatever wraps the connection between.
		t.c.stdio.route.Store(rc)
	}
	return rc, nil
}

type routeConn struct {
	mcp.Connection
	c      *Conn
	frames frameCalls // frame calls (frame.go) awaiting their answers
}

// Write sends a message to the server, as its era takes it: over
// streamable HTTP a stateless (2026-07-28) server is told a request is
// cancelled by the request's close, which the transport does, and refuses
// a notifications/cancelled POSTed to it (400), which the SDK would then
// take for a lost connection; so that notification, the SDK's or Plexus's
// own, is not sent there.
func (r *routeConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && !req.IsCall() && req.Method == "notifications/cancelled" &&
		era.CancelsByClosing(r.c.negotiated(), r.c.stdio == nil) {
		return nil
	}
	return r.Connection.Write(ctx, msg)
}

func (r *routeConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := r.Connection.Read(ctx)
		if err != nil {
			// The SDK's reader ends on any error: no answer will come.
			r.frames.streamEnded(err)
			return msg, err
		}
		r.c.heard.Store(time.Now().UnixNano())
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			if resp, ok := msg.(*jsonrpc.Response); ok && r.frames.deliver(resp) {
				continue
			}
			return msg, nil
		}
		if !r.handle(ctx, req) {
			return msg, nil
		}
	}
}

// handle routes a server's elicitation, sampling and roots request, or its
// progress or log notification, to its caller; false for anything else.
func (r *routeConn) handle(ctx context.Context, req *jsonrpc.Request) bool {
	switch {
	case req.IsCall() && AskMethods[req.Method] != "":
		go r.answer(req, r.owner(ctx))
	case !req.IsCall() && (req.Method == "notifications/progress" || req.Method == "notifications/message"):
		// In stream order, so that they reach the caller before the
		// call's answer does (the SDK would hand them to handlers on
		// goroutines of their own, after the call may have ended).
		r.notify(ctx, req)
	case !req.IsCall() && req.Method == "notifications/elicitation/complete" && paramless(req.Params):
		// The SDK lets its params be missing, then reads its
		// elicitationId from the nil pointer: it panicked on its
		// goroutine, and the daemon ended. Without params it says nothing.
		r.c.log.Debug("server sent a notification without params; dropped", "method", req.Method)
	default:
		return false
	}
	return true
}

// paramless: params absent or null.
func paramless(params json.RawMessage) bool {
	p := bytes.TrimSpace(params)
	return len(p) == 0 || string(p) == "null"
}

// owner is the client a message that came in ctx goes to whole: on a
// client's own session, what the server sends on the session's standalone
// stream goes to that client's standalone stream (nil: route it).
func (r *routeConn) owner(ctx context.Context) Peer {
	if r.c.owner != nil && ctx.Value(standaloneKey{}) != nil {
		return r.c.owner
	}
	return nil
}

// notify sends a progress or log notification to the caller it belongs to.
func (r *routeConn) notify(ctx context.Context, req *jsonrpc.Request) {
	own := r.owner(ctx)
	if req.Method == "notifications/progress" {
		var p mcp.ProgressNotificationParams
		if json.Unmarshal(req.Params, &p) != nil {
			return
		}
		pc := r.c.calls.byToken(p.ProgressToken)
		if pc == nil || pc.token == nil {
			return // not a call of ours, or its caller asked for no progress
		}
		p.ProgressToken = pc.token
		if own != nil {
			own.Progress(ctx, &p)
			return
		}
		pc.peer.Progress(pc.ctx, &p)
		return
	}
	var p mcp.LoggingMessageParams
	if json.Unmarshal(req.Params, &p) != nil {
		return
	}
	every := r.c.sendsEveryLevel(string(p.Level)) // logs.go
	if own != nil {
		own.Log(withEveryLevel(ctx, every), &p)
		return
	}
	if pc := r.c.calls.taggedCall(req); pc != nil {
		pc.peer.Log(withEveryLevel(pc.ctx, every), &p) // it came on that call's stream
		return
	}
	peer, callCtx, err := r.c.calls.route(ctx, "log message", 0)
	if err != nil {
		_, n := r.c.calls.liveCaller()
		if n == 0 {
			if late := r.c.calls.lateFor(); late != nil {
				late.Log(withEveryLevel(ctx, every), &p) // after its call's answer
				return
			}
		}
		r.c.log.Debug("server log message with no call to send it to", "level", p.Level, "logger", p.Logger, "err", err)
		if n > 1 {
			r.c.lostLogs.add(r.c.log, err) // a client missed it: say so where a user looks
		}
		return
	}
	peer.Log(withEveryLevel(callCtx, every), &p)
}

// answer routes one request — to own, if set — and writes the answer
// back to the server.
func (r *routeConn) answer(req *jsonrpc.Request, own Peer) {
	ctx := context.Background()
	what := AskMethods[req.Method]
	resp := &jsonrpc.Response{ID: req.ID}
	// On a goroutine of its own: a panic in routing it fails this request.
	result, err := recovery.Do(r.c.log, "upstream: answering a server's request", func() (json.RawMessage, error) {
		if own != nil {
			return own.Ask(ctx, req.Method, era.AskParams(req.Params))
		}
		return r.forward(ctx, req, what)
	}, "method", req.Method)
	switch {
	case err != nil:
		r.c.log.Warn(what+" not answered", "err", err)
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		if je := (*jsonrpc.Error)(nil); errors.As(err, &je) {
			resp.Error = je
		}
	case len(result) == 0 || !json.Valid(result):
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "plexus: the client answered the " + what + " with no valid result"}
	default:
		resp.Result = result
	}
	if err := r.Connection.Write(ctx, resp); err != nil {
		r.c.log.Warn("answering the server's "+what, "err", err)
	}
}

// forward hands the request to the client of the call it belongs to, its
// params as the server wrote them.
func (r *routeConn) forward(ctx context.Context, req *jsonrpc.Request, what string) (json.RawMessage, error) {
	if pc := r.c.calls.taggedCall(req); pc != nil {
		return pc.peer.Ask(pc.ctx, req.Method, era.AskParams(req.Params)) // it came on that call's stream
	}
	p, callCtx, err := r.c.calls.route(ctx, what, routeGrace)
	if err != nil {
		return nil, err
	}
	return p.Ask(callCtx, req.Method, era.AskParams(req.Params))
}
