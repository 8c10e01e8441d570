package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/plexus-mcp/plexus/internal/era"
)

// Each era's health check. A session-era server answers ping. MCP
// 2026-07-28 removed ping (and the session it checked); what a stateless
// server must answer to any client at any time is server/discover, which
// carries the era's _meta (protocol version, client info, capabilities)
// like every 2026 request.

// Ping checks that the server answers, for health probes: ping for a
// session-era server, server/discover for an MCP 2026-07-28 one. A server
// that refuses the check (a JSON-RPC error answer, or over HTTP a 4xx
// other than 401, 403 and a lost session's 404) has answered: the error
// is then an AnswerError, not ErrTransportLost.
func (c *Conn) Ping(ctx context.Context) error {
	if err := c.usable(); err != nil {
		return err
	}
	// Marked as a call is, so that one that could not reach the server
	// (its dial refused) says so, not "outcome unknown" (refused.go).
	ctx = c.withRefusal(context.WithValue(ctx, keepAliveKey{}, true))
	var err error
	if m := c.eraMeta(); m != nil {
		_, err = c.request(ctx, "server/discover", map[string]any{"_meta": m})
	} else {
		err = c.session.Ping(ctx, nil)
	}
	if err != nil {
		return fmt.Errorf("server %q: health check: %w", c.name, c.callError(ctx, err))
	}
	return nil
}

// HeardSince reports whether the server sent anything after t — an
// answer, a notification, a request of its own — on any of its streams,
// its clients' own sessions (clientsession.go) included: a server that
// does so while a health check waits is busy, not hung.
func (c *Conn) HeardSince(t time.Time) bool {
	n := c.heard.Load()
	if c.stdio != nil {
		n = max(n, c.stdio.heard.Load())
	}
	if n > t.UnixNano() {
		return true
	}
	cs := c.clients
	if cs == nil {
		return false
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, s := range cs.byKey {
		select {
		case <-s.ready: // conn is set, or nil
		default:
			continue
		}
		if s.conn != nil && s.conn.heard.Load() > t.UnixNano() {
			return true
		}
	}
	return false
}

// eraMeta is the _meta every request of Plexus's own carries to an MCP
// 2026-07-28 server (its protocol version, Plexus as the client, and no
// capabilities: a health check or a listing asks nothing of a user); nil
// for a session-era server.
func (c *Conn) eraMeta() map[string]any {
	v := c.ProtocolVersion()
	if !era.IsStateless(v) {
		return nil
	}
	return era.RequestMeta(v, era.Caller{Info: c.clientInfo})
}

// keepAliveKey marks the context of a health check, so that the HTTP
// transport can tell its refusal from a broken connection.
type keepAliveKey struct{}

func isKeepAlive(ctx context.Context) bool { v, _ := ctx.Value(keepAliveKey{}).(bool); return v }

// request sends one request on the routed connection, as Plexus wrote it,
// and waits for its answer (told apart from the SDK's own by its id, as a
// frame-forwarded call's is). On ctx's end the server is told
// (notifications/cancelled).
func (c *Conn) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	rc := c.route
	if rc == nil {
		return nil, fmt.Errorf("no routed connection")
	}
	body, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	id := newFrameID()
	rid, _ := jsonrpc.MakeID(id)
	ch, err := rc.frames.expect(id, time.Time{})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotConnected, err)
	}
	if err := rc.Connection.Write(ctx, &jsonrpc.Request{ID: rid, Method: method, Params: body}); err != nil {
		rc.frames.forget(id)
		if ctx.Err() != nil {
			c.sendCancel(ctx, id) // the POST may have reached the server
		}
		return nil, err
	}
	select {
	case a := <-ch:
		if a.err != nil {
			return nil, a.err
		}
		return a.result, nil
	case <-ctx.Done():
		rc.frames.forget(id)
		c.sendCancel(ctx, id)
		return nil, ctx.Err()
	case <-c.done:
		rc.frames.forget(id)
		return nil, &lostError{err: c.Err()}
	}
}

// cancelWriteTimeout bounds the sending of a cancellation, so that a
// server that does not take it cannot hold the caller.
const cancelWriteTimeout = 5 * time.Second

// sendCancel tells the server that the caller gave up on request id, as
// the SDK does for its own requests — unless the caller dropped it
// (ErrClientDropped) and the server is remote.
func (c *Conn) sendCancel(ctx context.Context, id string) {
	if c.stdio == nil && dropped(ctx) {
		return // the closed POST is all the server would have seen (dropcall.go)
	}
	c.sendCancelFor(ctx, id, ctx.Err().Error())
}

// sendCancelFor tells the server the request id is cancelled, for reason.
func (c *Conn) sendCancelFor(ctx context.Context, id, reason string) {
	p, _ := json.Marshal(map[string]any{"requestId": id, "reason": reason})
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelWriteTimeout)
	defer cancel()
	c.route.Write(wctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: p}) // as the server's era takes it
}

// refusedCheck turns an HTTP refusal of a request (a 4xx whose body is no
// JSON-RPC answer: a health check, a call, a listing) into a JSON-RPC error
// answer, with the status in its message. Without it the SDK's streamable
// client treats the refusal as a broken connection and fails every call
// on it, and the server is restarted; with it the refusal is what it is,
// an answer, to that request alone. 401 and 403 (credentials) and 404
// with a session (the session is gone) stay as they are: those are real
// losses (refusal, remote.go).
func refusedCheck(req *http.Request, resp *http.Response) *http.Response {
	if !refusal(req, resp) || req.GetBody == nil {
		return resp
	}
	code := resp.StatusCode
	rb, err := req.GetBody()
	if err != nil {
		return resp
	}
	sent, _ := io.ReadAll(io.LimitReader(rb, 1<<16))
	msg, err := jsonrpc.DecodeMessage(sent)
	call, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok || !call.IsCall() {
		return resp
	}
	got, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if m, err := jsonrpc.DecodeMessage(got); err == nil {
		if r, ok := m.(*jsonrpc.Response); ok && r.Error != nil && r.ID == call.ID {
			resp.Body = io.NopCloser(bytes.NewReader(got)) // already an answer
			return resp
		}
	}
	text := fmt.Sprintf("the server refused the request with HTTP %d %s", code, http.StatusText(code))
	if m := jsonMessage(got); m != "" {
		text += ": " + m
	}
	b, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: call.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: text}})
	out := *resp
	out.Header = resp.Header.Clone()
	out.Header.Set("Content-Type", "application/json")
	out.Header.Del("Content-Length")
	out.ContentLength = int64(len(b))
	out.Body = io.NopCloser(bytes.NewReader(b))
	return &out
}

// jsonMessage is error.message of a JSON-RPC error body such as
// {"jsonrpc":"2.0","error":{...},"id":null}, cut short; else "".
func jsonMessage(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return clip(e.Error.Message, 200)
}
