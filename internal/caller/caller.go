// Package caller carries who is calling — in team mode, the user a
// validated access token names — with a request's context, from the face's
// guard through the face to the host's call pipeline, so that gates, logs
// and metrics can name the user. It holds no token: only what the token
// said about its user.
package caller

import (
	"context"
	"slices"
)

// Identity is a caller as its token names them.
type Identity struct {
	Issuer  string   // the authorization server that issued the token
	Subject string   // the token's sub
	User    string   // the configured user claim (sub, email, …)
	Groups  []string // the configured groups claim
}

type key struct{}

// With returns ctx carrying id.
func With(ctx context.Context, id Identity) context.Context {
	id.Groups = slices.Clone(id.Groups)
	return context.WithValue(ctx, key{}, id)
}

// From returns the caller ctx carries, if any: none on the one-machine
// daemon, where every caller is the user who runs it.
func From(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(key{}).(Identity)
	return id, ok
}

// TokenInfoKey is the key under which the face's guard puts the caller in
// the Extra of the MCP SDK's TokenInfo, which is how the caller reaches the
// SDK's request handlers.
const TokenInfoKey = "plexus/caller"
