package upstream

import (
	"context"
	"encoding/json"
	"fmt"
)

// Forward sends the server a request of any method as the client wrote
// it — params as bytes, in their order, with every member Plexus does not
// know — and returns the server's result as the bytes it wrote: for a
// proxy that passes a server on (a bare profile), so that a method Plexus
// has no code for (the tasks extension's tasks/get, tasks/result,
// tasks/list, tasks/cancel, or one of a later spec) reaches the server as
// it would directly. To an MCP 2026-07-28 server the request carries the
// era's _meta where the client's params have none (eraMeta). Errors are
// classified as a call's: the caller's ctx, a JSON-RPC answer
// (AnswerError), or ErrTransportLost. Never retried.
func (c *Conn) Forward(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	if own, done := c.sessionFor(ctx); own != c {
		res, err := own.Forward(ctx, method, params)
		done()
		return res, err
	}
	ctx, _, end := c.calls.begin(ctx)
	defer end()
	body, err := forwardParams(params, c.eraMeta())
	if err != nil {
		return nil, fmt.Errorf("server %q: %s: %w", c.name, method, err)
	}
	res, err := c.request(ctx, method, body)
	if err != nil {
		return nil, fmt.Errorf("server %q: %s: %w", c.name, method, c.callError(ctx, err))
	}
	return res, nil
}

// forwardParams are a forwarded request's params: the client's, with meta
// as their _meta if they have none and meta is set. Params that are no
// JSON object (or none) stand as they are, or as {} with meta.
func forwardParams(params json.RawMessage, meta map[string]any) (json.RawMessage, error) {
	if len(params) > 0 && !json.Valid(params) {
		return nil, fmt.Errorf("params are not valid JSON")
	}
	if meta == nil {
		if len(params) == 0 {
			return json.RawMessage(`{}`), nil
		}
		return params, nil
	}
	var members map[string]json.RawMessage
	if len(params) == 0 || string(params) == "null" {
		members = map[string]json.RawMessage{}
	} else if json.Unmarshal(params, &members) != nil {
		return params, nil // not an object: the server says what it makes of it
	}
	if _, ok := members["_meta"]; ok {
		return params, nil
	}
	m, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	members["_meta"] = m
	return json.Marshal(members)
}
