package face

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/era"
)

// changeNotices are the notifications the SDK sends sessions of its own
// accord when the profile's lists or a resource change.
var changeNotices = map[string]bool{
	"notifications/tools/list_changed":     true,
	"notifications/prompts/list_changed":   true,
	"notifications/resources/list_changed": true,
	"notifications/resources/updated":      true,
}

// askedOnly drops the change notices the SDK would send a session unasked.
// The SDK sends a change to every session without InitializeParams as to
// one of the session era; but an MCP 2026-07-28 request's session has none
// from the moment the stateless handler binds it until the SDK reads the
// request's _meta. A change landing there reached a subscriptions/listen
// stream whatever its filter asked for (the conformance suite saw a
// tools/list_changed on a stream filtered to prompts: a profile's list
// changes a while after the server's, so the change of the suite's
// previous stream fell in the next one's opening). The SDK also picks the
// sessions to tell before it tells them, so a session it picked without
// InitializeParams may have them, of 2026-07-28, by the time the notice is
// sent (CI saw that leak too, under load). A 2026-07-28 session is told of
// a change only on a listen stream that asked for it — the SDK marks those
// notices with the stream's subscription id — and a session-era client has
// no use for one before initialize; otherwise the SDK's own rules decide.
func askedOnly(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if changeNotices[method] {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
				ip := ss.InitializeParams()
				if ip == nil {
					return nil, nil
				}
				if _, listened := paramsMeta(req)[mcp.MetaKeySubscriptionID]; era.IsStateless(ip.ProtocolVersion) && !listened {
					return nil, nil
				}
			}
		}
		return next(ctx, method, req)
	}
}
