package face

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// changeNotices are the notifications the SDK sends sessions of its own
// accord when the profile's lists or a resource change.
var changeNotices = map[string]bool{
	"notifications/tools/list_changed":     true,
	"notifications/prompts/list_changed":   true,
	"notifications/resources/list_changed": true,
	"notifications/resources/updated":      true,
}

// askedOnly drops the change notices the SDK would send a session that has
// not introduced itself. The SDK sends a change to every session without
// InitializeParams as to one of the session era, unasked; but an MCP
// 2026-07-28 request's session has none from the moment the stateless
// handler binds it until the SDK reads the request's _meta. A change
// landing there reached a subscriptions/listen stream whatever its filter
// asked for (the conformance suite saw a tools/list_changed on a stream
// filtered to prompts: a profile's list changes a while after the server's,
// so the change of the suite's previous stream fell in the next one's
// opening). A session-era client has no use for one before initialize
// either; once a session is known, the SDK's own rules decide.
func askedOnly(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if changeNotices[method] {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.InitializeParams() == nil {
				return nil, nil
			}
		}
		return next(ctx, method, req)
	}
}
