package upstream

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NotifyCaller sends the caller of ctx (WithPeer) a progress notification
// of Plexus's own — a server started on demand that the call waits for —
// if the caller asked for progress; it reports whether it did.
func NotifyCaller(ctx context.Context, progress float64, message string) bool {
	pc, _ := ctx.Value(peerKey{}).(*peerCall)
	if pc == nil || pc.token == nil {
		return false
	}
	pc.peer.Progress(ctx, &mcp.ProgressNotificationParams{ProgressToken: pc.token, Progress: progress, Message: message})
	return true
}
