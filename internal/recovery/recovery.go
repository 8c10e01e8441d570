// Package recovery keeps a bug that one message reaches from ending the
// daemon. The MCP SDK serves each message on a goroutine of its own, and
// Plexus answers a server's requests and makes a client's calls on
// goroutines of their own; an unrecovered panic in any of them ends the
// process — every client's sessions and every server it runs — for one
// message a client or a server chose. There a panic is logged with its
// stack instead (the line says Bug) and fails that one message or call
// with an internal error.
//
// Only goroutines that serve one message or one call are guarded so.
// A long-lived goroutine that owns state (a connection's read loop, a
// session's watcher, the face's event follower) is not: a panic there
// would leave its state half-changed, and ending the process is then the
// honest outcome.
package recovery

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bug is in the log line of every panic recovered: tests and fuzz
// targets look for it.
const Bug = "a bug in plexus"

// Internal is the error a message or call that panicked fails with.
var Internal = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "plexus: internal error"}

// Catch, deferred, recovers a panic of the goroutine, logs it as what
// with its stack and attrs, and sets *err (if err is not nil) to Internal.
func Catch(log *slog.Logger, what string, err *error, attrs ...any) {
	r := recover()
	if r == nil {
		return
	}
	log.Error(what+" failed: "+Bug+"; the rest goes on",
		slices.Concat(attrs, []any{"panic", fmt.Sprint(r), "stack", string(debug.Stack())})...)
	if err != nil {
		*err = Internal
	}
}

// Do returns fn's result; if fn panics, the zero T and Internal (see Catch).
func Do[T any](log *slog.Logger, what string, fn func() (T, error), attrs ...any) (res T, err error) {
	defer Catch(log, what, &err, attrs...)
	return fn()
}

// Middleware is an SDK server's or client's outermost receiving
// middleware: a panic in serving one message fails that message (a
// request is answered with Internal).
func Middleware(log *slog.Logger, what string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			defer Catch(log, what, &err, "method", method)
			return next(ctx, method, req)
		}
	}
}
