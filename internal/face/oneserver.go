package face

import (
	"net/http"

	"github.com/plexus-mcp/plexus/internal/config"
)

// ServeServer serves server alone, as a bare profile would (its own tool
// names, its own instructions, none of Plexus's tools): how a replica of
// a team that runs a stdio server offers it to the other replicas over
// the internal channel, which reach it as an ordinary streamable HTTP
// upstream (R-TEAM-3). The caller has checked that the request may have
// it (this replica holds its lease). A server this replica's settings do
// not have yet — another replica saved it a moment ago, and this one is
// applying the change — is served with no tools until it has, and its
// list changes are announced as for any server.
func (f *Face) ServeServer(w http.ResponseWriter, r *http.Request, server string) {
	cfg := f.h.LiveConfig()
	def := definition{servers: []string{server}, naming: config.NamingBare, external: true, channel: true,
		idle: cfg.MCP.Face.SessionIdle(), cap: cfg.MCP.Face.SessionCap()}
	// A key no profile of the settings can have: their names have no "/".
	key := "/server/" + server
	f.mu.Lock()
	p, ok := f.profiles[key]
	if !ok || !p.def.same(def) {
		if ok {
			p.close()
		}
		p = newProfile(f, key, def)
		f.profiles[key] = p
	}
	f.mu.Unlock()
	p.forward(w, r)
}
