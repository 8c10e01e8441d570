package face

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/caller"
	"github.com/plexus-mcp/plexus/internal/config"
)

// Team mode (R-TEAM-2). The daemon's guard (package teamauth) has checked
// the caller's token and put the caller in the request's context; here the
// face admits the caller to a profile by its users and groups, and hands
// the caller on with each call. A request without a caller comes over the
// socket, from the machine's own user, and is not gated.

// admit reports why a caller may not use profile name, or "" if they may.
// In team mode /mcp serves only the profile named "default": the implicit
// profile of every server would show every member every server.
func admit(cfg *config.File, name string, id caller.Identity) string {
	lookup := name
	if lookup == "" {
		lookup = "default"
	}
	p, ok := cfg.MCP.Profiles[lookup]
	switch {
	case !ok && name == "":
		return `in team mode /mcp serves the profile named "default", and there is none: define mcp.profiles.default (with its users or groups), or use /mcp/NAME`
	case !ok:
		return "" // not found: the profile lookup says so
	case !p.Admits(id.User, id.Groups):
		return "this profile is not open to you: neither your user nor your groups are among mcp.profiles." + lookup + ".users and .groups"
	}
	return ""
}

// refuseCaller answers a caller a profile does not admit.
func refuseCaller(w http.ResponseWriter, why string) {
	http.Error(w, "plexus: "+why, http.StatusForbidden)
}

// withCaller carries the caller of an SDK request (its TokenInfo, which
// the guard filled) into ctx, for the host's call pipeline. The SDK's
// handler context of a session holds the values of the request that opened
// it, whose user the SDK holds every later request to; this names the
// request's own caller all the same, rather than rely on that.
func withCaller(ctx context.Context, extra *mcp.RequestExtra) context.Context {
	if extra == nil || extra.TokenInfo == nil {
		return ctx
	}
	if id, ok := extra.TokenInfo.Extra[caller.TokenInfoKey].(caller.Identity); ok {
		return caller.With(ctx, id)
	}
	return ctx
}

// userOf names a request's caller for the frame path's session check: ""
// without one.
func userOf(r *http.Request) string {
	id, ok := caller.From(r.Context())
	if !ok {
		return ""
	}
	return id.Issuer + " " + id.User
}
