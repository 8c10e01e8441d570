package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/audit"
	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/supervisor"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// Call calls a catalog entry by its Plexus name. Failures that belong to the
// call — the server is unavailable, the call timed out, the connection was
// lost mid-call — come back as error results with a machine-readable
// marker in _meta (apitype.MetaError, apitype.MetaOutcome), distinct from a
// tool's own error result. A call is never retried (R-SES-5): tools have
// side effects. The returned error is for requests that are wrong (an
// unknown name) or abandoned (the caller went away).
func (h *Host) Call(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	snap := h.snap.Load()
	ix, ok := snap.lookup(name)
	if !ok {
		if msg, held := snap.heldCall(name); held {
			return errorResult(msg, "held", ""), nil // R-CAT-6
		}
		return nil, &NotFoundError{What: "tool", Name: name}
	}
	return h.observed(ctx, snap, ix, name, args)
}

// observed makes a decoded call through the pipeline (pipeline.go).
func (h *Host) observed(ctx context.Context, snap *snapshot, ix indexed, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	out, err := h.run(ctx, snap, ix, PathDecoded, args, func(ctx context.Context, conn *upstream.Conn, within time.Duration) (callResult, error) {
		cctx, cancel := context.WithTimeout(ctx, within)
		defer cancel()
		res, err := invokeDecoded(cctx, conn, ix, name, args)
		if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("%w: %w", upstream.ErrTimedOut, err)
		}
		return callResult{res: res}, err
	})
	if err != nil {
		return nil, err
	}
	return out.decoded()
}

// outcomeOf names a call's outcome for the metrics.
func outcomeOf(res *mcp.CallToolResult, err error) string {
	switch {
	case err != nil:
		return "abandoned"
	case !res.IsError:
		return "ok"
	}
	if kind, ok := res.Meta[apitype.MetaError].(string); ok {
		return kind
	}
	return "tool_error"
}

// invokeDecoded is the decoded invoker: the SDK's client makes the call.
func invokeDecoded(ctx context.Context, conn *upstream.Conn, ix indexed, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	switch ix.entry.Kind {
	case catalog.KindTool:
		return conn.CallTool(ctx, ix.entry.Tool, args)
	case catalog.KindReadResource:
		return readResourceAsTool(ctx, conn, args)
	case catalog.KindGetPrompt:
		return getPromptAsTool(ctx, conn, args)
	}
	return nil, fmt.Errorf("catalog entry %s has unknown kind %q", name, ix.entry.Kind)
}

// callFailure classifies a failed call.
func callFailure(ctx context.Context, err error, srv *supervisor.Server, timeout time.Duration) (*mcp.CallToolResult, error) {
	var argErr *argumentError
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err() // the caller went away; the SDK sent notifications/cancelled
	case errors.Is(err, upstream.ErrTimedOut):
		return errorResult(fmt.Sprintf("the call to %s timed out after %s; cancellation was sent to the server, which may still have acted", srv.Name(), timeout), "timeout", ""), nil
	case neverSent(err):
		return errorResult(fmt.Sprintf("server unavailable: the call to %s was not made (%v); it moves to another replica within seconds", srv.Name(), err), "unavailable", ""), nil
	case errors.Is(err, upstream.ErrTransportLost):
		return errorResult(fmt.Sprintf("the connection to %s was lost during the call: its outcome is unknown, so check before calling again (%v)", srv.Name(), err), "transport_lost", "unknown"), nil
	case errors.Is(err, upstream.ErrNotConnected):
		return errorResult(fmt.Sprintf("server unavailable: %v", err), "unavailable", ""), nil
	case errors.As(err, &argErr):
		return errorResult(argErr.Error(), "invalid_arguments", ""), nil
	case upstream.HasPeer(ctx) && upstream.AnswerError(err) != nil:
		// An MCP client through the face gets the server's JSON-RPC
		// error as the server sent it (code and data matter to it).
		return nil, upstream.AnswerError(err)
	}
	return errorResult(fmt.Sprintf("%s answered with an error: %v", srv.Name(), err), "upstream", ""), nil
}

func errorResult(msg, kind, outcome string) *mcp.CallToolResult {
	meta := mcp.Meta{apitype.MetaError: kind}
	if outcome != "" {
		meta[apitype.MetaOutcome] = outcome
	}
	return &mcp.CallToolResult{
		Meta:    meta,
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: msg}},
	}
}

type argumentError struct{ msg string }

func (e *argumentError) Error() string { return e.msg }

func readResourceAsTool(ctx context.Context, conn *upstream.Conn, args json.RawMessage) (*mcp.CallToolResult, error) {
	var a struct {
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(orEmpty(args), &a); err != nil || a.URI == "" {
		return nil, &argumentError{`read_resource needs {"uri": "..."}`}
	}
	rr, err := conn.ReadResource(ctx, a.URI)
	if err != nil {
		return nil, err
	}
	res := &mcp.CallToolResult{}
	for _, c := range rr.Contents {
		res.Content = append(res.Content, &mcp.EmbeddedResource{Resource: c})
	}
	return res, nil
}

func getPromptAsTool(ctx context.Context, conn *upstream.Conn, args json.RawMessage) (*mcp.CallToolResult, error) {
	var a struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}
	if err := json.Unmarshal(orEmpty(args), &a); err != nil || a.Name == "" {
		return nil, &argumentError{`get_prompt needs {"name": "...", "arguments": {...}}`}
	}
	pr, err := conn.GetPrompt(ctx, a.Name, a.Arguments)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	res := &mcp.CallToolResult{}
	for _, m := range pr.Messages {
		if t, ok := m.Content.(*mcp.TextContent); ok {
			fmt.Fprintf(&b, "%s: %s\n", m.Role, t.Text)
			continue
		}
		res.Content = append(res.Content, m.Content)
	}
	res.Content = append([]mcp.Content{&mcp.TextContent{Text: b.String()}}, res.Content...)
	return res, nil
}

func orEmpty(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage(`{}`)
	}
	return b
}

// ReadResource reads a resource of a server.
func (h *Host) ReadResource(ctx context.Context, server, uri string) (res *mcp.ReadResourceResult, err error) {
	start := time.Now()
	defer func() { h.auditServed(ctx, audit.KindResourceRead, server, uri, nil, res, err, time.Since(start)) }()
	if err := h.gateServed(ctx, server, catalog.KindReadResource, map[string]string{"uri": uri}); err != nil {
		return nil, err
	}
	conn, done, err := h.UseServer(ctx, server)
	if err != nil {
		return nil, err
	}
	defer done()
	return conn.ReadResource(ctx, uri)
}

// GetPrompt gets a prompt of a server.
func (h *Host) GetPrompt(ctx context.Context, server, name string, args map[string]string) (res *mcp.GetPromptResult, err error) {
	start := time.Now()
	defer func() { h.auditServed(ctx, audit.KindPromptGet, server, name, args, res, err, time.Since(start)) }()
	if err := h.gateServed(ctx, server, catalog.KindGetPrompt, promptSummary(name, args)); err != nil {
		return nil, err
	}
	conn, done, err := h.UseServer(ctx, server)
	if err != nil {
		return nil, err
	}
	defer done()
	return conn.GetPrompt(ctx, name, args)
}

func (h *Host) conn(server string) (*upstream.Conn, error) {
	srv, ok := h.snap.Load().servers[server]
	if !ok {
		return nil, &NotFoundError{What: "server", Name: server}
	}
	return srv.Conn()
}

// ServerConn is the live connection to a server's shared instance, for
// requests the catalog does not model (completion, subscriptions).
func (h *Host) ServerConn(server string) (*upstream.Conn, error) { return h.conn(server) }
