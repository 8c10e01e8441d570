package host

import (
	"sort"
	"sync"
	"sync/atomic"

	"github.com/plexus-mcp/plexus/internal/pins"
	"github.com/plexus-mcp/plexus/internal/supervisor"
)

// publishing coalesces publishes: when many servers change at once (the
// daemon's start), each asks for a publish, and one round serves every
// request made before it began.
type publishing struct {
	mu        sync.Mutex // held by the round under way; taken before serversMu
	requested atomic.Int64
	done      int64 // guarded by mu: the requests the current snapshot serves
}

// publish rebuilds the snapshot from the current server set; when it
// returns, the snapshot reflects every change made before it was called.
// It is the OnChange callback of every server, so it must not hold
// applyMu.
//
// A tool seen for the first time is offered only once its pin is on disk
// (R-CAT-6). A round builds the snapshot without the servers that have
// such tools (they show as starting), pins those servers' tools outside
// serversMu — servers that list their tools together share one write of
// the pins (pins.Store.Check) — and builds it again.
func (h *Host) publish() {
	req := h.pub.requested.Add(1)
	h.pub.mu.Lock()
	defer h.pub.mu.Unlock()
	if h.pub.done >= req {
		return // a round that began after this request has served it
	}
	upto := h.pub.requested.Load()
	h.serversMu.Lock()
	unpinned := h.rebuildLocked(nil)
	h.serversMu.Unlock()
	if len(unpinned) > 0 {
		errs := h.pinFirstSight(unpinned)
		h.serversMu.Lock()
		h.rebuildLocked(errs)
		h.serversMu.Unlock()
	}
	h.pub.done = upto
}

// pinFirstSight pins the tools seen for the first time of servers, all at
// once so that they share a write, and returns why a server's could not
// be pinned.
func (h *Host) pinFirstSight(servers []*supervisor.Server) map[string]error {
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, srv := range servers {
		wg.Go(func() { errs[i] = h.pins.store.Pin(srv.Name(), pins.TrustOf(srv.Config()), srv.Entries()) })
	}
	wg.Wait()
	out := map[string]error{}
	for i, err := range errs {
		if err != nil {
			out[servers[i].Name()] = err
		}
	}
	return out
}

// rebuildLocked publishes a new snapshot and returns the servers it left
// out because they have tools not pinned yet: their pins are to be saved.
// A server in unrecorded has its new tools held back with that error
// instead. The caller holds serversMu.
func (h *Host) rebuildLocked(unrecorded map[string]error) (unpinned []*supervisor.Server) {
	s := &snapshot{cfg: h.cfg, servers: make(map[string]*supervisor.Server, len(h.servers)), index: map[string]indexed{},
		auth: h.authStatus, states: make(map[string]string, len(h.servers))}
	for name, srv := range h.servers {
		s.servers[name] = srv
		s.names = append(s.names, name)
		// The state before the entries: a server is ready only once its
		// entries are installed, so "ready" here comes with its catalog.
		s.states[name] = srv.State()
		offered, complete := s.pins.filter(h.pins.store, name, srv, unrecorded[name])
		if !complete {
			unpinned = append(unpinned, srv)
			s.states[name] = supervisor.StateStarting
		}
		for _, e := range offered {
			s.index[e.Name] = indexed{entry: e, server: srv}
			s.tools = append(s.tools, e)
		}
	}
	sort.Strings(s.names)
	sort.Slice(s.tools, func(i, j int) bool { return s.tools[i].Name < s.tools[j].Name })
	h.snap.Store(s)
	h.emitChangesLocked(s)
	return unpinned
}

// publishedState is the state of server name shown with snapshot s: the
// live state, except that a server the snapshot does not have as ready yet
// is still starting — its catalog is not published, so a client that
// waits for "ready" could not call its tools yet.
func (s *snapshot) publishedState(name, live string) string {
	if live == supervisor.StateReady && s.states[name] != supervisor.StateReady {
		return supervisor.StateStarting
	}
	return live
}
