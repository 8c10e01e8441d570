package face

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/tracing"
)

// sdkTraced are the requests the SDK serves for the face whose span no
// handler starts itself (resources/read and prompts/get start theirs in
// lists.go, a forwarded tools/call in call.go): the lists a profile has no
// rendered page for, completion, subscriptions, and the tools/call of
// Plexus's own tools — the meta tools' work, the control tools, a tool
// with x-mcp-header parameters.
var sdkTraced = map[string]bool{
	"tools/list": true, "resources/list": true, "resources/templates/list": true, "prompts/list": true,
	"completion/complete": true, "resources/subscribe": true, "resources/unsubscribe": true, "tools/call": true,
}

// traced starts the face's span of a request of sdkTraced, the child of
// the client's trace context (its _meta, else its HTTP headers); with
// tracing off it is one atomic load.
func (p *profile) traced(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if !tracing.On() || !sdkTraced[method] {
			return next(ctx, method, req)
		}
		c := tracing.Call{Method: method}
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
			c.Session = ss.ID()
		}
		// A list's params may be nil here (the SDK fills them in later).
		var meta map[string]any
		switch params := req.GetParams().(type) {
		case *mcp.CallToolParamsRaw:
			if params != nil {
				c.Tool, meta = params.Name, params.Meta
			}
		case *mcp.SubscribeParams:
			if params != nil {
				c.Resource, meta = params.URI, params.Meta
			}
		case *mcp.UnsubscribeParams:
			if params != nil {
				c.Resource, meta = params.URI, params.Meta
			}
		case *mcp.CompleteParams:
			if params != nil {
				meta = params.Meta
			}
		case *mcp.ListToolsParams:
			if params != nil {
				meta = params.Meta
			}
		case *mcp.ListResourcesParams:
			if params != nil {
				meta = params.Meta
			}
		case *mcp.ListResourceTemplatesParams:
			if params != nil {
				meta = params.Meta
			}
		case *mcp.ListPromptsParams:
			if params != nil {
				meta = params.Meta
			}
		}
		ctx, span := tracing.StartServer(ctx, tracing.FromMetaMap(meta, headerOf(req.GetExtra())), c)
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
			span.ToolError()
		}
		span.End(err, tracing.ErrType(err))
		return res, err
	}
}
