package upstream

import (
	"context"

	"github.com/plexus-mcp/plexus/internal/era"
)

// Whose filter a server's log message passes. Directly, a client gets
// what its server sends: a server that honours logging/setLevel sends
// nothing below the client's level, and one that does not (fastmcp, the
// TypeScript SDK over stdio, …) sends every level whatever the client
// set. Through Plexus the session-era connection is shared, asked for
// the lowest level any client set (WantLogs), so the face filters each
// client's messages at that client's level — right for a server that
// honours levels, and wrong for one that does not: its clients got less
// than directly. So the connection watches: a message below the level
// the server was asked for shows that the server does not filter, and
// from then on each of its messages reaches its caller whatever level the
// caller set, as directly. A 2026-07-28 server is told each caller's
// level with the request, so what it sends for a call is what it would
// send that caller directly: never filtered again. A remote server's
// client with a session of its own (clientsession.go) has that session
// set to its own level, as directly.

// sendsEveryLevel reports whether the server's log message of level
// reaches its caller whatever level the caller set.
func (c *Conn) sendsEveryLevel(level string) bool {
	if era.IsStateless(c.negotiated()) || c.everyLevel.Load() {
		return true
	}
	rank, known := logRank[level]
	if floor := c.logFloor.Load(); known && floor > 0 && int32(rank) < floor-1 {
		c.everyLevel.Store(true)
		c.log.Debug("the server sends log messages below the level it was asked for: its messages reach every caller unfiltered", "level", level)
		return true
	}
	return false
}

type everyLevelKey struct{}

// withEveryLevel marks a log message's context when the server sends
// every level (sendsEveryLevel).
func withEveryLevel(ctx context.Context, every bool) context.Context {
	if !every {
		return ctx
	}
	return context.WithValue(ctx, everyLevelKey{}, true)
}

// EveryLevel reports whether a Peer's Log is given a message the server
// sent unfiltered by the caller's level (sendsEveryLevel): the caller is
// to get it whatever level it set, as it would directly.
func EveryLevel(ctx context.Context) bool {
	every, _ := ctx.Value(everyLevelKey{}).(bool)
	return every
}
