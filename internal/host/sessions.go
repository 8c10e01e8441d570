package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/supervisor"
)

// sessionIdle ends a session nobody used for this long; checked on
// activity, never by a timer, and at most once every reapEvery (the check
// goes through every session: on each call it was a cost that grew with
// the clients).
const (
	sessionIdle = time.Hour
	reapEvery   = time.Minute
)

// Session is one client's view of the catalog (R-SES-1): the servers
// switched on for it, its own instances of "per-session" servers
// (R-PROTO-3), and its turns. While a turn runs its catalog does not
// change under the model: a server that comes back joins at the end of the
// turn, and the session is then told "capabilities changed" (R-SES-4).
type Session struct {
	ID      string
	Created time.Time
	h       *Host

	mu        sync.Mutex // guards the fields below
	off       map[string]bool
	inTurn    bool
	frozen    map[string]bool // catalog names visible while in a turn
	pending   bool            // the catalog changed during the turn
	instances map[string]*supervisor.Server
	lastUsed  time.Time
	ended     bool
	notify    chan struct{} // a deferred "capabilities changed" is due
	// approvedTools are the tools the user approved for the rest of the
	// session (gate.go).
	approvedTools map[string]bool
}

// sessions holds the live sessions.
type sessions struct {
	mu        sync.Mutex
	byID      map[string]*Session
	reapAfter atomic.Int64 // Unix ns before which no reaping is due
}

// NewSession creates a session with the given servers switched off for it,
// and starts its own instances of the per-session servers.
func (h *Host) NewSession(ctx context.Context, off []string) (*Session, error) {
	snap := h.snap.Load()
	for _, name := range off {
		if _, ok := snap.servers[name]; !ok {
			return nil, &NotFoundError{What: "server", Name: name}
		}
	}
	id := make([]byte, 16)
	rand.Read(id)
	s := &Session{ID: hex.EncodeToString(id), Created: time.Now(), h: h, off: map[string]bool{},
		instances: map[string]*supervisor.Server{}, lastUsed: time.Now(), notify: make(chan struct{}, 1)}
	for _, name := range off {
		s.off[name] = true
	}
	for _, name := range snap.names {
		sc := snap.servers[name].Config()
		if s.off[name] || sc.Instance != config.InstancePerSession || !sc.IsEnabled() || !mcpEnabled(snap.cfg) {
			continue
		}
		srv, err := h.newServer(name, sc, snap.cfg)
		if err == nil {
			err = srv.Start(ctx)
		}
		if err != nil {
			h.log.Warn("session: per-session server left out", "session", s.ID, "server", name, "err", err)
		}
		s.instances[name] = srv
	}
	h.sessions.mu.Lock()
	if h.sessions.byID == nil {
		h.sessions.byID = map[string]*Session{}
	}
	h.sessions.byID[s.ID] = s
	h.sessions.mu.Unlock()
	h.log.Info("session created", "session", s.ID, "off", off, "instances", len(s.instances))
	return s, nil
}

// Session returns a live session.
func (h *Host) Session(id string) (*Session, error) {
	h.sessions.mu.Lock()
	defer h.sessions.mu.Unlock()
	s, ok := h.sessions.byID[id]
	if !ok {
		return nil, &NotFoundError{What: "session", Name: id}
	}
	return s, nil
}

// EndSession ends a session and stops its own instances.
func (h *Host) EndSession(id string) error {
	h.sessions.mu.Lock()
	s, ok := h.sessions.byID[id]
	delete(h.sessions.byID, id)
	h.sessions.mu.Unlock()
	if !ok {
		return &NotFoundError{What: "session", Name: id}
	}
	s.end()
	return nil
}

func (s *Session) end() {
	s.mu.Lock()
	s.ended = true
	inst := s.instances
	s.instances = nil
	s.mu.Unlock()
	for _, srv := range inst {
		srv.Stop()
	}
}

// endSessions ends every session (daemon shutdown).
func (h *Host) endSessions() {
	h.sessions.mu.Lock()
	all := h.sessions.byID
	h.sessions.byID = nil
	h.sessions.mu.Unlock()
	for _, s := range all {
		s.end()
	}
}

// reapIdleSessions ends sessions nobody used for sessionIdle.
func (h *Host) reapIdleSessions(now time.Time) {
	after := h.sessions.reapAfter.Load()
	if now.UnixNano() < after || !h.sessions.reapAfter.CompareAndSwap(after, now.Add(reapEvery).UnixNano()) {
		return
	}
	h.sessions.mu.Lock()
	var idle []*Session
	for id, s := range h.sessions.byID {
		s.mu.Lock()
		if now.Sub(s.lastUsed) > sessionIdle {
			idle = append(idle, s)
			delete(h.sessions.byID, id)
		}
		s.mu.Unlock()
	}
	h.sessions.mu.Unlock()
	for _, s := range idle {
		h.log.Info("session ended: idle", "session", s.ID)
		s.end()
	}
}

// touch records activity of the session and of the host.
func (s *Session) touch() {
	s.mu.Lock()
	s.lastUsed = time.Now()
	s.mu.Unlock()
	s.h.Activity()
}

// live returns the session's catalog as it is now: the entries of its
// servers, from its own instance for a per-session server.
func (s *Session) live(snap *snapshot) []indexed {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []indexed
	for _, name := range snap.names {
		if s.off[name] {
			continue
		}
		srv := snap.servers[name]
		if inst, ok := s.instances[name]; ok {
			srv = inst
		}
		for _, e := range s.h.offered(snap, name, srv) {
			out = append(out, indexed{entry: e, server: srv})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].entry.Name < out[j].entry.Name })
	return out
}

// Tools returns the session's catalog. During a turn it is the catalog the
// turn started with (minus what disappeared): nothing joins mid-turn.
func (s *Session) Tools() []catalog.Entry {
	s.touch()
	items := s.visible(s.h.snap.Load())
	out := make([]catalog.Entry, len(items))
	for i, it := range items {
		out[i] = it.entry
	}
	return out
}

func (s *Session) visible(snap *snapshot) []indexed {
	items := s.live(snap)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.inTurn {
		return items
	}
	var out []indexed
	for _, it := range items {
		if s.frozen[it.entry.Name] {
			out = append(out, it)
		} else {
			s.pending = true // it joins at the end of the turn
		}
	}
	return out
}

// Call calls a tool of the session's catalog.
func (s *Session) Call(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	s.touch()
	ctx = inSession(ctx, s.ID) // what its kept results belong to (results.go)
	snap := s.h.snap.Load()
	if ix, ok := s.find(snap, name); ok {
		return s.h.observed(ctx, snap, ix, name, args)
	}
	for _, it := range s.visible(snap) {
		if it.entry.Name == name {
			return s.h.observed(ctx, snap, it, name, args)
		}
	}
	if msg, held := snap.heldCall(name); held {
		return errorResult(msg, "held", ""), nil // R-CAT-6
	}
	return nil, &NotFoundError{What: "tool", Name: name}
}

// Turn marks the start ("submit") or the end ("end") of a turn. At the end
// the servers that came up during the turn join, and if the catalog changed
// the session is told "capabilities changed".
func (s *Session) Turn(event string) error {
	s.touch()
	snap := s.h.snap.Load()
	switch event {
	case "submit":
		names := map[string]bool{}
		for _, it := range s.live(snap) {
			names[it.entry.Name] = true
		}
		s.mu.Lock()
		if !s.inTurn {
			s.inTurn, s.frozen, s.pending = true, names, false
		}
		s.mu.Unlock()
	case "end":
		live := s.live(snap)
		s.mu.Lock()
		changed := s.pending
		for _, it := range live {
			if !s.frozen[it.entry.Name] {
				changed = true
			}
		}
		s.inTurn, s.frozen, s.pending = false, nil, false
		s.mu.Unlock()
		if changed {
			select {
			case s.notify <- struct{}{}:
			default:
			}
		}
	default:
		return fmt.Errorf("unknown turn event %q: use \"submit\" or \"end\"", event)
	}
	return nil
}

// Deferred is signalled when a "capabilities changed" that was held back
// during a turn is due.
func (s *Session) Deferred() <-chan struct{} { return s.notify }

// InTurn reports whether a turn is running.
func (s *Session) InTurn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inTurn
}

// Concerns reports whether an event is about this session's servers.
func (s *Session) Concerns(ev apitype.Event) bool {
	if ev.Server == "" {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.off[ev.Server]
}

// Info describes the session for the API.
func (s *Session) Info() apitype.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := apitype.Session{ID: s.ID, Created: s.Created, InTurn: s.inTurn}
	if face := s.h.snap.Load().cfg.MCP.Face; face != nil {
		info.AllowExternalCall, info.AllowWrite = face.AllowExternalCall, face.AllowWrite
	}
	for name := range s.off {
		info.Off = append(info.Off, name)
	}
	for name := range s.instances {
		info.Instances = append(info.Instances, name)
	}
	slices.Sort(info.Off)
	slices.Sort(info.Instances)
	return info
}
