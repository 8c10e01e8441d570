package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/tracing"
)

// CallTool calls a tool once. args is the JSON object of arguments (empty
// means {}). ctx bounds the call; when it is cancelled the SDK sends
// notifications/cancelled upstream and the error stays errors.Is
// context.Canceled / DeadlineExceeded. A connection lost meanwhile gives an
// error wrapping ErrTransportLost. Never retried.
func (c *Conn) CallTool(ctx context.Context, name string, args json.RawMessage) (_ *mcp.CallToolResult, err error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	if own, done := c.sessionFor(ctx); own != c {
		res, err := own.CallTool(ctx, name, args)
		done()
		return res, err
	}
	params := &mcp.CallToolParams{Name: name}
	ctx, token, end := c.calls.begin(ctx)
	defer end()
	pc := peerFrom(ctx)
	if pc != nil {
		params.InputResponses, params.RequestState = pc.input, pc.state
		params.Meta = c.meta(pc, token)
	}
	if t := bytes.TrimSpace(args); len(t) > 0 {
		if t[0] != '{' || !json.Valid(t) {
			return nil, fmt.Errorf("server %q: calling tool %q: arguments are not a JSON object", c.name, name)
		}
		params.Arguments = json.RawMessage(t)
	}
	var span *tracing.Span // nil: tracing is off
	if tracing.On() {
		ctx, span = tracing.StartClient(ctx, tracing.Call{Method: "tools/call", Tool: name, Server: c.name})
		defer func() { span.End(err, tracing.ErrType(err)) }()
		params.Meta = tracing.SetMeta(ctx, params.Meta)
	}
	ctx = c.withRefusal(ctx)
	res, err := c.session.CallTool(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("server %q: calling tool %q: %w", c.name, name, c.callError(ctx, err))
	}
	if res.IsError {
		span.ToolError()
	}
	if err := c.needsInput(pc, res.InputRequests != nil, "tool "+strconv.Quote(name)); err != nil {
		return nil, err
	}
	return res, nil
}

// ReadResource reads one resource.
func (c *Conn) ReadResource(ctx context.Context, uri string) (_ *mcp.ReadResourceResult, err error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	if own, done := c.sessionFor(ctx); own != c {
		res, err := own.ReadResource(ctx, uri)
		done()
		return res, err
	}
	ctx, token, end := c.calls.begin(ctx)
	defer end()
	params := &mcp.ReadResourceParams{URI: uri}
	pc := peerFrom(ctx)
	if pc != nil {
		params.InputResponses, params.RequestState = pc.input, pc.state
		params.Meta = c.meta(pc, token)
	}
	if tracing.On() {
		var span *tracing.Span
		ctx, span = tracing.StartClient(ctx, tracing.Call{Method: "resources/read", Resource: uri, Server: c.name})
		defer func() { span.End(err, tracing.ErrType(err)) }()
		params.Meta = tracing.SetMeta(ctx, params.Meta) // the server continues this span's trace
	}
	ctx = c.withRefusal(ctx)
	res, err := c.session.ReadResource(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("server %q: reading resource %q: %w", c.name, clip(uri, 200), c.callError(ctx, err))
	}
	if err := c.needsInput(pc, res.InputRequests != nil, "resource "+strconv.Quote(clip(uri, 200))); err != nil {
		return nil, err
	}
	return res, nil
}

// GetPrompt renders one prompt.
func (c *Conn) GetPrompt(ctx context.Context, name string, args map[string]string) (_ *mcp.GetPromptResult, err error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	if own, done := c.sessionFor(ctx); own != c {
		res, err := own.GetPrompt(ctx, name, args)
		done()
		return res, err
	}
	ctx, token, end := c.calls.begin(ctx)
	defer end()
	params := &mcp.GetPromptParams{Name: name, Arguments: args}
	pc := peerFrom(ctx)
	if pc != nil {
		params.InputResponses, params.RequestState = pc.input, pc.state
		params.Meta = c.meta(pc, token)
	}
	if tracing.On() {
		var span *tracing.Span
		ctx, span = tracing.StartClient(ctx, tracing.Call{Method: "prompts/get", Prompt: name, Server: c.name})
		defer func() { span.End(err, tracing.ErrType(err)) }()
		params.Meta = tracing.SetMeta(ctx, params.Meta)
	}
	ctx = c.withRefusal(ctx)
	res, err := c.session.GetPrompt(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("server %q: getting prompt %q: %w", c.name, name, c.callError(ctx, err))
	}
	if err := c.needsInput(pc, res.InputRequests != nil, "prompt "+strconv.Quote(name)); err != nil {
		return nil, err
	}
	return res, nil
}

// callError sorts a failed request into one of three outcomes:
//   - the caller's ctx ended: returned as is (errors.Is context.Canceled or
//     DeadlineExceeded still holds);
//   - the server answered with a JSON-RPC error: a known outcome;
//   - the server refused it (or the connection, before it was sent) with
//     HTTP 401 or 403: not processed, a *StatusError (refused.go);
//   - no connection to the server could be made for it: never sent, so
//     it wraps ErrNotConnected;
//   - anything else means no answer will come: the request may or may not
//     have been acted on, so it wraps ErrTransportLost (R-SES-5).
//
// The message is redacted; the chain is kept.
func (c *Conn) callError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return err
	}
	err = c.redact.Error(err)
	if pe := (*PeerError)(nil); errors.As(err, &pe) {
		return err
	}
	if serverAnswered(err) {
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			red := &jsonrpc.Error{Code: je.Code, Message: c.redact.String(je.Message)}
			if len(je.Data) > 0 {
				red.Data = json.RawMessage(c.redact.String(string(je.Data)))
			}
			return &answerError{rpc: red, err: err}
		}
		return err
	}
	if se := c.refusedBy(ctx); se != nil {
		return se // refused for its credential, so not processed (refused.go)
	}
	if unreached(ctx) {
		if ConnRefused(err) {
			c.end(fmt.Errorf("the server refused a new connection: %w", err)) // it is gone (refused.go)
		}
		return fmt.Errorf("%w: %w", ErrNotConnected, err) // its dial failed: never sent (refused.go)
	}
	return &lostError{err: err}
}

// localCodes are the codes of the SDK's own jsonrpc.Error sentinels, which
// wrap transport failures (a POST whose response was cut off is "rejected by
// transport") rather than carry an answer from the server. Plexus's own
// (unreadableError) is told by its code and message both: a server may
// answer with any code of the range it shares.
var localCodes = map[int64]bool{
	-32003: true, // client is closing
	-32004: true, // server is closing
	-32005: true, // rejected by transport
}

// serverAnswered reports whether err carries a JSON-RPC error that the server
// sent, which means the request was answered: a known outcome.
func serverAnswered(err error) bool {
	switch e := err.(type) {
	case nil:
		return false
	case *jsonrpc.Error:
		if !localCodes[e.Code] && !(e.Code == codeUnreadable && e.Message == unreadableMessage) {
			return true
		}
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return serverAnswered(u.Unwrap())
	case interface{ Unwrap() []error }:
		return slices.ContainsFunc(u.Unwrap(), serverAnswered)
	}
	return false
}

// lostError is a request whose answer will never come.
type lostError struct{ err error }

func (e *lostError) Error() string   { return ErrTransportLost.Error() + ": " + e.err.Error() }
func (e *lostError) Unwrap() []error { return []error{ErrTransportLost, e.err} }

// notifier passes list_changed notifications to the host without blocking
// the SDK's message handling: posts are coalesced per kind and delivered on
// one goroutine, in order.
type notifier struct {
	fn   func(kind string)
	wake chan struct{}
	quit chan struct{}
	done chan struct{}

	mu      sync.Mutex
	pending []string // guarded by mu; kinds posted and not yet delivered
}

func newNotifier(fn func(string)) *notifier {
	n := &notifier{fn: fn, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	if fn == nil {
		close(n.done)
		return n
	}
	go n.run()
	return n
}

func (n *notifier) post(kind string) {
	if n.fn == nil {
		return
	}
	n.mu.Lock()
	if !slices.Contains(n.pending, kind) {
		n.pending = append(n.pending, kind)
	}
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *notifier) run() {
	defer close(n.done)
	for {
		select {
		case <-n.quit:
			return
		case <-n.wake:
		}
		n.mu.Lock()
		kinds := n.pending
		n.pending = nil
		n.mu.Unlock()
		for _, k := range kinds {
			n.fn(k)
		}
	}
}

// stop ends delivery and waits for a callback in progress.
func (n *notifier) stop() {
	if n.fn != nil {
		close(n.quit)
	}
	<-n.done
}

// Complete forwards completion/complete; its _meta is Plexus's, as the
// server's era needs it (a client's _meta of another era would make the
// SDK send that era's headers).
func (c *Conn) Complete(ctx context.Context, p *mcp.CompleteParams) (_ *mcp.CompleteResult, err error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	if own, done := c.sessionFor(ctx); own != c {
		res, err := own.Complete(ctx, p)
		done()
		return res, err
	}
	cp := *p
	cp.Meta = c.meta(peerFrom(ctx), nil)
	if tracing.On() {
		var span *tracing.Span
		ctx, span = tracing.StartClient(ctx, tracing.Call{Method: "completion/complete", Server: c.name})
		defer func() { span.End(err, tracing.ErrType(err)) }()
		cp.Meta = tracing.SetMeta(ctx, cp.Meta)
	}
	res, err := c.session.Complete(ctx, &cp)
	if err != nil {
		return nil, fmt.Errorf("server %q: completion: %w", c.name, c.callError(ctx, err))
	}
	return res, nil
}

// Subscribe asks the server for updates of a resource.
func (c *Conn) Subscribe(ctx context.Context, uri string) (err error) {
	if err := c.usable(); err != nil {
		return err
	}
	params := &mcp.SubscribeParams{URI: uri}
	if tracing.On() {
		var span *tracing.Span
		ctx, span = tracing.StartClient(ctx, tracing.Call{Method: "resources/subscribe", Resource: uri, Server: c.name})
		defer func() { span.End(err, tracing.ErrType(err)) }()
		params.Meta = tracing.SetMeta(ctx, params.Meta)
	}
	if err := c.session.Subscribe(ctx, params); err != nil {
		return fmt.Errorf("server %q: subscribing to %q: %w", c.name, clip(uri, 200), c.callError(ctx, err))
	}
	return nil
}

// Unsubscribe ends a Subscribe.
func (c *Conn) Unsubscribe(ctx context.Context, uri string) (err error) {
	if err := c.usable(); err != nil {
		return err
	}
	params := &mcp.UnsubscribeParams{URI: uri}
	if tracing.On() {
		var span *tracing.Span
		ctx, span = tracing.StartClient(ctx, tracing.Call{Method: "resources/unsubscribe", Resource: uri, Server: c.name})
		defer func() { span.End(err, tracing.ErrType(err)) }()
		params.Meta = tracing.SetMeta(ctx, params.Meta)
	}
	if err := c.session.Unsubscribe(ctx, params); err != nil {
		return fmt.Errorf("server %q: unsubscribing from %q: %w", c.name, clip(uri, 200), c.callError(ctx, err))
	}
	return nil
}
