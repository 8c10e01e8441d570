package upstream

import (
	"context"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/era"
)

// A server whose settings pin a session-era version is still asked, once
// before its handshake, whether it speaks MCP 2026-07-28 of its own: the
// pin holds Plexus back, not the server, and what a client reaching the
// server directly meets depends on the server alone. A client of that era
// meets a server that speaks only the session era by falling back to
// initialize; a bare profile of the pinned server offers it the same
// (face/route.go), which only the server's own answer can tell it.
//
// Only a streamable HTTP server is asked, on a connection of its own. Over
// stdio the one connection is the handshake's, and a server that answers
// server/discover takes it as the start of its session: the go-sdk's then
// refuses the pinned initialize ("duplicate initialize") and exits. A
// pinned stdio server's own era stays unknown, and its bare profile offers
// every era, as before.

// OwnEra is the era the server speaks of its own accord: the version its
// handshake settled on, or for a pinned server what the probe before it
// found — the pinned version when the server refused server/discover (it
// speaks only the session era), era.Stateless when it answered; "" when
// that is not known (a server not over streamable HTTP, a probe that got
// no answer).
func (c *Conn) OwnEra() string {
	if c.ownEra != "" || c.pinned {
		return c.ownEra
	}
	return c.ProtocolVersion()
}

// probeEra asks a pinned streamable HTTP server, as a client of MCP
// 2026-07-28 would before its first request, whether it speaks that era;
// its answer is the Conn's ownEra.
func (c *Conn) probeEra(ctx context.Context, s Spec) {
	c.pinned = true
	if s.Type != "http" {
		return
	}
	c.ownEra = probeHTTP(ctx, s)
	c.log.Debug("pinned server's own era", "own", c.ownEra, "pinned", s.ProtocolVersion)
}

// probeHTTP connects to the server as the SDK's client does unpinned
// (server/discover, else initialize) on an HTTP client of its own, and
// closes that connection (a session it opened is deleted).
func probeHTTP(ctx context.Context, s Spec) string {
	u, err := url.Parse(s.URL)
	if err != nil {
		return ""
	}
	hc, _, release := remoteHTTPClient(s, u)
	defer release()
	cs, err := mcp.NewClient(s.ClientInfo, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc}, nil)
	if err != nil {
		return ""
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; era.IsSession(v) {
		return s.ProtocolVersion
	}
	return era.Stateless
}
