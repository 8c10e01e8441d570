package daemon

import (
	"log/slog"
	"net/http"
	"reflect"
	"sync"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/connlimit"
	"github.com/plexus-mcp/plexus/internal/host"
	"github.com/plexus-mcp/plexus/internal/teamauth"
)

// teamSwitch puts the MCP face on the HTTP address behind the guard the
// settings ask for, at each request: the loopback token of the
// one-machine daemon, or, once a "team" section is set, the team's access
// tokens (teamauth). The protected resource's metadata is served only in
// team mode; otherwise its path goes where it always went (the web page).
type teamSwitch struct {
	h     *host.Host
	face  http.Handler // the face, unguarded
	route http.Handler // the face, or its internal channel's router (peer.go)
	token http.Handler // route behind the loopback token
	other http.Handler // what the metadata path is without team mode
	log   *slog.Logger

	mu     sync.Mutex
	res    *teamauth.Resource // of team; guarded by mu
	guard  http.Handler       // res.Guard(route); guarded by mu
	direct http.Handler       // res.Guard(face); guarded by mu
}

// resource is the protected resource of the live team setting, nil
// without one; it is made anew when the setting changes (its key cache
// with it).
func (s *teamSwitch) resource() (*teamauth.Resource, http.Handler) {
	res, guard, _ := s.guards()
	return res, guard
}

// guards are resource's, and the guard of the face without the router.
func (s *teamSwitch) guards() (*teamauth.Resource, http.Handler, http.Handler) {
	t := s.h.LiveConfig().Team
	if t == nil {
		return nil, nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.res == nil || !reflect.DeepEqual(s.res.Team(), *t) {
		s.res = teamauth.New(t, teamauth.Options{Log: s.log})
		// What a member's token admits is proven (connlimit).
		s.guard = s.res.Guard(connlimit.Proven(s.route))
		s.direct = s.res.Guard(connlimit.Proven(s.face))
		s.log.Info("team mode: the face takes the team's access tokens", "resource", t.Resource, "issuers", t.Issuers)
	}
	return s.res, s.guard, s.direct
}

// ServeHTTP serves /mcp and /mcp/NAME.
func (s *teamSwitch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, guard := s.resource(); guard != nil {
		guard.ServeHTTP(w, r)
		return
	}
	s.token.ServeHTTP(w, r)
}

// serveRouted serves /mcp and /mcp/NAME on the internal channel: a
// request another replica routed here because this one holds its
// session. The channel's credential admits the replica; in team mode the
// client's own token is checked here too, as if it had come directly.
// It never goes through the router again.
func (s *teamSwitch) serveRouted(w http.ResponseWriter, r *http.Request) {
	if _, _, direct := s.guards(); direct != nil {
		direct.ServeHTTP(w, r)
		return
	}
	s.face.ServeHTTP(w, r)
}

// callback serves a team member's browser coming back from an upstream
// login, in team mode.
func (s *teamSwitch) callback(w http.ResponseWriter, r *http.Request) {
	if res, _ := s.resource(); res != nil {
		s.h.ServeMemberRedirect(w, r)
		return
	}
	s.other.ServeHTTP(w, r)
}

// metadata serves the RFC 9728 document in team mode.
func (s *teamSwitch) metadata(w http.ResponseWriter, r *http.Request) {
	if res, _ := s.resource(); res != nil {
		res.ServeMetadata(w, r)
		return
	}
	s.other.ServeHTTP(w, r)
}

// handle adds what the switch serves to mux: the face, its metadata and
// the members' login callback.
func (s *teamSwitch) handle(mux *http.ServeMux) {
	mux.Handle("/mcp", s)
	mux.Handle("/mcp/", s)
	mux.HandleFunc(teamauth.MetadataPath, s.metadata)
	mux.HandleFunc(teamauth.MetadataPath+"/", s.metadata)
	mux.HandleFunc(config.TeamCallbackPath, s.callback)
}
