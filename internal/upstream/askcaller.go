package upstream

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The caller of a call may be asked a question of Plexus's own — whether
// the user approves the call — the way a server's question mid-call
// reaches it: on its session's stream, or for a stateless client in an
// input_required result whose retry carries the answer (the Peer of each
// face and era does the carrying).

// ErrNoCaller is AskCaller's error when ctx carries no client (WithPeer):
// the call came through the settings API or the CLI.
var ErrNoCaller = errors.New("the call has no MCP client to ask")

// AskCaller puts a request of Plexus's own (elicitation/create) to the
// caller of ctx and returns its answer as the client wrote it.
func AskCaller(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	pc := peerFrom(ctx)
	if pc == nil {
		return nil, ErrNoCaller
	}
	return pc.peer.Ask(ctx, method, params)
}

// CallerCapabilities are what the caller of ctx declared; nil when ctx
// carries no client.
func CallerCapabilities(ctx context.Context) *mcp.ClientCapabilities {
	if pc := peerFrom(ctx); pc != nil {
		return pc.peer.Capabilities()
	}
	return nil
}

// CallerHasSession reports whether the caller of ctx is a client with a
// session of its own (its calls share one Client), not a stateless caller
// whose every call stands alone.
func CallerHasSession(ctx context.Context) bool {
	pc := peerFrom(ctx)
	if pc == nil {
		return false
	}
	k, ok := pc.peer.(clientKeyer)
	return ok && k.Client() != nil
}

// teller is a Peer that can send its client a notification of Plexus's
// own on the stream of the call in flight.
type teller interface {
	Tell(method string, params any)
}

// TellCaller sends the caller of ctx a notification of Plexus's own
// (notifications/elicitation/complete) on its call's stream; false when
// the caller has no stream to send it on (no client, or a stateless one,
// whose era has no such notification).
func TellCaller(ctx context.Context, method string, params any) bool {
	pc := peerFrom(ctx)
	if pc == nil {
		return false
	}
	t, ok := pc.peer.(teller)
	if ok {
		t.Tell(method, params)
	}
	return ok
}
