package host

import (
	"cmp"
	"encoding/json"
	"slices"

	"github.com/plexus-mcp/plexus/internal/catalog"
)

// Offer is what one server offers clients through Plexus, each definition
// as the server wrote it: a
// profile that passes the server on (bare) serves these bytes, and one
// that gathers several servers changes only what its naming needs
// (catalog's Offered methods).
type Offer struct {
	Server string
	// Tools are the server's tools that Plexus offers — filtered by its
	// enabledTools/disabledTools, checked, and not held back by pinning
	// (R-CAT-6) — in the server's order, each with its definition (Raw).
	Tools []catalog.Entry
	// Resources, Templates and Prompts are the server's, in its order.
	Resources []catalog.Resource
	Templates []catalog.Template
	Prompts   []catalog.Prompt
	// InitializeResult is the server's answer to its handshake
	// (initialize, or server/discover) as it wrote it, from its last
	// connection, and Capabilities the capabilities in it (nil if none):
	// what a bare profile advertises is what the server has.
	InitializeResult json.RawMessage
	Capabilities     json.RawMessage
}

// Offer returns what server offers now: the shared catalog's view of it
// (a session's own instance of a per-session server is not in it).
func (h *Host) Offer(server string) (Offer, error) {
	snap := h.snap.Load()
	srv, ok := snap.servers[server]
	if !ok {
		return Offer{}, &NotFoundError{What: "server", Name: server}
	}
	o := Offer{Server: server}
	for _, e := range snap.tools {
		if e.Server == server && e.Kind == catalog.KindTool {
			o.Tools = append(o.Tools, *e)
		}
	}
	slices.SortFunc(o.Tools, func(a, b catalog.Entry) int { return cmp.Compare(a.Index, b.Index) })
	cat := srv.Catalog()
	o.Resources, o.Templates, o.Prompts = cat.Resources, cat.Templates, cat.Prompts
	o.InitializeResult = srv.InitializeResult()
	o.Capabilities, _ = catalog.Member(o.InitializeResult, "capabilities")
	if string(o.Capabilities) == "null" {
		o.Capabilities = nil
	}
	return o, nil
}

// ServerEra is the protocol version server speaks with Plexus — its live
// connection's, else the one its last handshake settled on; "" while
// Plexus has not met it (or it answered server/discover, which names no
// one version) — and whether that version is the server's own choice,
// not a pin of its settings (protocolVersion), which may hold back a
// server that speaks a later era. Once the server has connected it is the
// era the server speaks of its own (upstream.Conn.OwnEra), kept while it
// restarts: of a pinned server, the pinned version when it speaks only the
// session era, era.Stateless when it speaks MCP 2026-07-28 too.
func (h *Host) ServerEra(server string) (version string, own bool) {
	srv, ok := h.snap.Load().servers[server]
	if !ok {
		return "", false
	}
	own = srv.Config().ProtocolVersion == ""
	if v := srv.OwnEra(); v != "" {
		return v, true
	}
	if conn, err := srv.Conn(); err == nil {
		return conn.ProtocolVersion(), own
	}
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	json.Unmarshal(srv.InitializeResult(), &r)
	return r.ProtocolVersion, own
}
