package face

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/era"
)

// A bare profile of one server is that server, as far as its clients can
// tell: it declares the server's capabilities as the server wrote them in
// its handshake (host.Offer), not the SDK's reading of what the profile
// registered — which declared what the server lacked (completions,
// logging) and left out what it had until a first item of it came (issue
// 43, point 11).

// serverCaps is a bare profile's receiving middleware: its answer to
// initialize and server/discover carries the server's capabilities.
func (p *profile) serverCaps(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || res == nil || (method != "initialize" && method != "server/discover") {
			return res, err
		}
		o, oerr := p.f.h.Offer(p.def.servers[0])
		if oerr != nil || len(o.Capabilities) == 0 {
			return res, err
		}
		return capsAnswer{Result: res, caps: o.Capabilities, discover: method == "server/discover"}, nil
	}
}

// capsAnswer is a handshake's answer with the capabilities caps.
type capsAnswer struct {
	mcp.Result
	caps     json.RawMessage
	discover bool // a stateless era's answer, which says it is complete
}

func (a capsAnswer) MarshalJSON() ([]byte, error) {
	b, err := marshalSDK(a.Result)
	if err != nil {
		return nil, err
	}
	if b, err = catalog.WithMember(b, "capabilities", a.caps); err != nil {
		return nil, err
	}
	if a.discover {
		// The SDK marks its own answer complete after its middleware,
		// which reaches this one's no more.
		b = era.ForClient(era.Stateless, b)
	}
	return b, nil
}

// A bare profile speaks its server's era too. In front of a server that
// speaks only the session era (it answered Plexus's server/discover with
// an error, and initialize) it offers no MCP 2026-07-28: a client of that
// era is refused as the server would refuse it, falls back to initialize
// as it does when it reaches the server directly, and from then on meets
// what it meets there (ping, logging/setLevel, progress and questions of
// the session). A server whose settings pin a session-era version is not
// such a server: the pin holds Plexus back, not the server, which a
// client reaching it directly may well speak 2026-07-28 with (the peer
// matrix's go-sdk, mcp-go and TypeScript 2.x servers do), so the profile
// offers every era and translates, as a profile that gathers servers
// always does (internal/era).

// sessionServer is the session-era version a bare profile's server chose
// to speak; "" for any other profile, a pinned server, or while the
// server's era is not known (then the profile offers every era).
func (p *profile) sessionServer() string {
	if !p.def.external || p.def.naming != config.NamingBare || len(p.def.servers) != 1 {
		return ""
	}
	if v, own := p.f.h.ServerEra(p.def.servers[0]); own && era.IsSession(v) {
		return v
	}
	return ""
}

// refuseStateless answers a stateless-era request to a profile whose
// server speaks version: 400 with a JSON-RPC error that is not the era's
// "unsupported protocol version" (which tells a client of that era that
// the server is of it too, and some then do not fall back), so that every
// client falls back to initialize, as before a session-era server.
func (p *profile) refuseStateless(w http.ResponseWriter, env envelope, version string) (path, reason string) {
	msg := fmt.Sprintf("Bad Request: %s speaks MCP %s, which opens a session: send initialize (this profile does not offer MCP %s)",
		p.def.servers[0], version, era.Stateless)
	writeJSON(w, http.StatusBadRequest, errorAnswer(orNull(env.id), &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg}))
	return pathRefused, reasonServerEra
}
