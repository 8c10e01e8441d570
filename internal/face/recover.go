package face

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recovered is the SDK server's outermost receiving middleware. The SDK
// serves each message on a goroutine of its own, where a panic would end
// the daemon — every session of every client, and every server it runs —
// for one message a client chose. A panic in serving a message (a bug,
// reached by what the client sent) is logged with its stack instead, and
// a request is answered with an internal error.
func (p *profile) recovered(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if r := recover(); r != nil {
				p.f.log.Error("face: serving a message failed: a bug in plexus; the session goes on",
					"profile", p.name, "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "plexus: internal error"}
			}
		}()
		return next(ctx, method, req)
	}
}
