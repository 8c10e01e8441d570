package upstream

import (
	"context"
	"errors"
)

// A client of a session-era server over HTTP (mcp-go's, over streamable
// HTTP and legacy SSE) lets a call go by dropping its POST, with no
// notifications/cancelled: all a server it reaches directly sees of it is
// the closed POST, and most run the call on. Through Plexus the face sees
// the drop, and cancels the call's context with ErrClientDropped as its
// cause: then a remote server sees only Plexus's POST closed, as it would
// have seen the client's, and no notifications/cancelled it would not
// have got. A stdio server has no POST to close, so it is told as before
// (a client reaching it directly over stdio, the same mcp-go's, sends
// one).

// ErrClientDropped is the cause (context.Cause) of a call's cancellation
// when its client dropped its connection rather than cancelled the call.
var ErrClientDropped = errors.New("the client's connection dropped")

// dropped reports whether ctx is a call whose client dropped it.
func dropped(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), ErrClientDropped)
}
