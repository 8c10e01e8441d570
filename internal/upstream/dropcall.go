package upstream

import (
	"context"
	"sync/atomic"
)

// A client of a session-era server over HTTP (mcp-go's, over streamable
// HTTP and legacy SSE) lets a call go by dropping its POST, with no
// notifications/cancelled: all a server it reaches directly sees of it is
// the closed POST, and most run the call on. Through Plexus the face sees
// the drop, and cancels the call's context marked by Droppable: then a
// remote server sees only Plexus's POST closed, as it would have seen the
// client's, and no notifications/cancelled it would not have got. A
// stdio server has no POST to close, so it is told as before (a client
// reaching it directly over stdio, the same mcp-go's, sends one).

type dropKey struct{}

// Droppable returns ctx marked so that drop, called before ctx is
// cancelled, says that the call's client dropped its connection rather
// than cancelled the call.
func Droppable(ctx context.Context) (_ context.Context, drop func()) {
	f := new(atomic.Bool)
	return context.WithValue(ctx, dropKey{}, f), func() { f.Store(true) }
}

// dropped reports whether ctx is a call whose client dropped it.
func dropped(ctx context.Context) bool {
	f, _ := ctx.Value(dropKey{}).(*atomic.Bool)
	return f != nil && f.Load()
}
