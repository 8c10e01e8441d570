// Package face is Plexus as an MCP server (R-FACE): one endpoint that
// editors and agents register, so that they all share the daemon's servers,
// logins and supervision.
//
// The daemon serves it as streamable HTTP at /mcp (the default profile) and
// /mcp/NAME (profile NAME), on its loopback address behind the token guard
// (in team mode the team's, which admits callers by profile: team.go) and
// on the unix socket, where `plexus mcp` forwards a stdio client to it.
// Both protocol eras are served at once (R-PROTO-1): a request that carries
// a Mcp-Session-Id, or that does not announce MCP 2026-07-28, belongs to a
// session, which the face owns whole (session.go: its table, its POSTs'
// answers and streams, replay, idle and end); a 2026-07-28 request is
// stateless (route.go).
//
// Each profile is one SDK server whose tools, resources and prompts mirror
// the profile's slice of the catalog, kept in step with the host's events
// (list changes reach clients as notifications); it runs on a connection
// the face gives each session (sdkconn.go). The face forwards tool calls
// itself (call.go), in the era the client reads (package era). Each
// session gets a host session of its own on its first call; the upstream
// connection sends the elicitation, sampling, progress and log messages a
// call causes back to the client that made it (R-PROTO-2).
package face

import (
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/caller"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/host"
)

// Path is where the face is served; profiles are under Path + "/".
const Path = "/mcp"

// Face serves every profile.
type Face struct {
	h       *host.Host
	log     *slog.Logger
	version string

	mu       sync.Mutex
	profiles map[string]*profile // by profile name; "" is the default
	stop     func()

	caps peerCaps // the stateless callers' capabilities (wait.go)

	ended  chan struct{} // poked after a request or a session's end (Activity)
	active atomic.Int64  // when it was last poked, Unix ns (LastActive)
	replay *replayBuffer // the session-era streams' events (replay.go)

	observe Observer // told each request's path; nil: none (forward.go)

	sessionID func() string // mints protocol session ids; nil: the SDK's
}

// NameSessions has every protocol session id minted by mint (a team's
// replica names itself in them: internal/peer); set it before the face
// serves.
func (f *Face) NameSessions(mint func() string) { f.sessionID = mint }

// Observe has o told the path and reason of every request; set it before
// the face serves.
func (f *Face) Observe(o Observer) { f.observe = o }

// Activity is poked after the face served a request and when a client
// session ended, so that the daemon can give back, once it is quiet again,
// what serving mapped and what the sessions held (it settles). A poke
// that finds nobody waiting is dropped: a waiter that stops receiving
// while it waits out a quiet second reads LastActive when the second is
// up, and the face's requests meanwhile wake nobody (a wake a call was
// 2 – 3 % of the daemon's CPU at 16 callers).
func (f *Face) Activity() <-chan struct{} { return f.ended }

// LastActive is when Activity was last poked (zero: never).
func (f *Face) LastActive() time.Time {
	if ns := f.active.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

func (f *Face) poke() {
	f.active.Store(time.Now().UnixNano())
	select {
	case f.ended <- struct{}{}:
	default:
	}
}

// New returns the face of h; Close ends it.
func New(h *host.Host, log *slog.Logger, version string) *Face {
	if version == "" {
		version = "(devel)"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
			version = bi.Main.Version
		}
	}
	f := &Face{h: h, log: log, version: version, profiles: map[string]*profile{}, ended: make(chan struct{}, 1),
		replay: newReplayBuffer()}
	events, cancel := h.Subscribe()
	f.stop = cancel
	go f.follow(events)
	return f
}

// Close ends every downstream session.
func (f *Face) Close() {
	f.stop()
	f.mu.Lock()
	defer f.mu.Unlock()
	for name, p := range f.profiles {
		p.close()
		delete(f.profiles, name)
	}
}

// ServeHTTP serves /mcp and /mcp/NAME.
func (f *Face) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, Path)
	if !ok || (name != "" && name[0] != '/') {
		http.NotFound(w, r)
		return
	}
	name = strings.Trim(name, "/")
	if id, ok := caller.From(r.Context()); ok {
		if why := admit(f.h.LiveConfig(), name, id); why != "" {
			f.log.Warn("face: a team member refused a profile", "profile", name, "user", id.User)
			refuseCaller(w, why)
			return
		}
	}
	p, err := f.profile(name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	p.forward(w, r)
}

// profile returns the live profile name, built anew when its definition or
// the face's gates changed.
func (f *Face) profile(name string) (*profile, error) {
	cfg := f.h.LiveConfig()
	def, err := resolveProfile(cfg, name)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := f.profiles[name]; ok && p.def.same(def) {
		return p, nil
	} else if ok {
		f.log.Info("face profile changed: its sessions end", "profile", name)
		p.close()
	}
	p := newProfile(f, name, def)
	f.profiles[name] = p
	return p, nil
}

// follow keeps every profile's lists in step with the catalog. Bursts of
// events (a reload restarts many servers) are folded into one sync.
func (f *Face) follow(events <-chan apitype.Event) {
	var due <-chan time.Time
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return
			}
			switch ev.Type {
			case apitype.EventCatalog, apitype.EventServer, apitype.EventServerRemoved, apitype.EventHeld:
				if due == nil {
					due = time.After(20 * time.Millisecond)
				}
			}
		case <-due:
			due = nil
			f.mu.Lock()
			ps := make([]*profile, 0, len(f.profiles))
			for _, p := range f.profiles {
				ps = append(ps, p)
			}
			f.mu.Unlock()
			for _, p := range ps {
				p.sync()
				for k := range listKinds {
					p.rendered(listKind(k)) // now, not on the next client's time
				}
			}
		}
	}
}

// definition is a profile as the face serves it.
type definition struct {
	servers   []string // nil: every server
	naming    string
	metaTools bool
	control   bool          // Plexus's own tools offered
	external  bool          // mcp.face.allowExternalCall
	write     bool          // mcp.face.allowWrite
	idle      time.Duration // a protocol session's life without a request
	cap       int           // live protocol sessions at most
	// channel: served to another team replica (ServeServer), which speaks
	// MCP 2026-07-28 to it for every member alike and translates for its
	// own clients: never a mirror of the server's era.
	channel bool
}

func (d definition) same(o definition) bool {
	return slices.Equal(d.servers, o.servers) && (d.servers == nil) == (o.servers == nil) &&
		d.naming == o.naming && d.metaTools == o.metaTools && d.control == o.control && d.external == o.external && d.write == o.write && d.channel == o.channel &&
		d.idle == o.idle && d.cap == o.cap
}

func (d definition) has(server string) bool {
	return d.servers == nil || slices.Contains(d.servers, server)
}

// resolveProfile finds profile name ("" is the default: every server, or
// the profile named "default" if there is one).
func resolveProfile(cfg *config.File, name string) (definition, error) {
	var d definition
	if face := cfg.MCP.Face; face != nil {
		// The control plane's writes (adding and editing servers, which
		// run as the daemon's user) are never a team member's.
		d.external, d.write = face.AllowExternalCall, face.AllowWrite && cfg.Team == nil
	}
	d.idle, d.cap = cfg.MCP.Face.SessionIdle(), cfg.MCP.Face.SessionCap()
	d.naming = config.NamingPlexus
	d.control = true
	lookup := name
	if lookup == "" {
		lookup = "default"
	}
	p, ok := cfg.MCP.Profiles[lookup]
	if !ok {
		if name == "" {
			return d, nil
		}
		return d, &host.NotFoundError{What: "profile", Name: name}
	}
	d.servers = append([]string{}, p.Servers...)
	if p.Naming != "" {
		d.naming = p.Naming
	}
	d.metaTools = p.MetaTools
	// In team mode Plexus's own tools, which show every server's state,
	// are offered only where a profile asks for them.
	d.control = d.naming != config.NamingBare && cfg.Team == nil
	if p.ControlTools != nil {
		d.control = *p.ControlTools
	}
	return d, nil
}

// newServer is the SDK server of one profile.
func (f *Face) newServer(opts *mcp.ServerOptions) *mcp.Server {
	if f.sessionID != nil {
		opts.GetSessionID = f.sessionID
	}
	s := mcp.NewServer(f.impl(), opts)
	s.AddSendingMiddleware(askedOnly) // notices.go
	return s
}

// impl is the face as an MCP server names itself.
func (f *Face) impl() *mcp.Implementation {
	return &mcp.Implementation{Name: "plexus", Title: "Plexus", Version: f.version}
}
