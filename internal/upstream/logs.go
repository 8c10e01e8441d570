package upstream

import (
	"context"
	"log/slog"
	"sync"
	"time"

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

// logDropEvery is how often at most a connection says at Info level that
// its server's log messages reached no client.
const logDropEvery = time.Minute

// logDrops counts a server's log messages that reached no client because
// they were sent outside any call while calls of two or more clients were
// in flight: which client's they are cannot be known, and one of them
// missed them. Each is a Debug line; the first, and then one a minute at
// most, is an Info line with how many since the last, so that a user who
// misses a server's logs finds why in the daemon's log. (A message long
// after every call is for no caller: a Debug line only.)
type logDrops struct {
	mu   sync.Mutex
	n    int
	last time.Time
}

// add counts one message lost for why and says so if it is time.
func (d *logDrops) add(log *slog.Logger, why error) {
	d.mu.Lock()
	d.n++
	if !d.last.IsZero() && time.Since(d.last) < logDropEvery {
		d.mu.Unlock()
		return
	}
	n := d.n
	d.n, d.last = 0, time.Now()
	d.mu.Unlock()
	log.Info("server log messages reached no client", "count", n, "why", why.Error(), "every", logDropEvery)
}
