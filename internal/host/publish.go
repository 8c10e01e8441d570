package host

import (
	"crypto/sha256"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/pins"
	"github.com/plexus-mcp/plexus/internal/policy"
	"github.com/plexus-mcp/plexus/internal/supervisor"
)

// publishing coalesces publishes: when many servers change at once (the
// daemon's start), each asks for a publish, and one round serves every
// request made before it began.
type publishing struct {
	mu        sync.Mutex // held by the round under way; taken before serversMu
	requested atomic.Int64
	done      int64 // guarded by mu: the requests the current snapshot serves
	// unrecorded says why the new tools of a server could not be pinned in
	// the last round: they stay held back, saying so, while the next round
	// tries again. Guarded by mu.
	unrecorded map[string]error
}

// serverChanged is the OnChange callback of srv: it hashes srv's tools for
// pinning in srv's own goroutine, in parallel with the other servers',
// before the publish that needs them.
func (h *Host) serverChanged(srv *supervisor.Server) {
	h.pins.store.Prepare(srv.Entries())
	h.publish()
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
// the pins (pins.Store.Pin) — and builds it again.
func (h *Host) publish() {
	req := h.pub.requested.Add(1)
	h.pub.mu.Lock()
	defer h.pub.mu.Unlock()
	if h.pub.done >= req {
		return // a round that began after this request has served it
	}
	upto := h.pub.requested.Load()
	h.serversMu.Lock()
	unpinned := h.rebuildLocked(h.pub.unrecorded)
	h.serversMu.Unlock()
	if len(unpinned) > 0 {
		errs := h.pinFirstSight(unpinned)
		h.serversMu.Lock()
		h.rebuildLocked(errs)
		h.serversMu.Unlock()
		h.pub.unrecorded = errs
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

// rebuildLocked publishes a new snapshot and returns the servers that have
// tools not pinned yet: their pins are to be saved. Such a server is left
// out (it is starting), unless unrecorded says why its new tools could not
// be pinned: then they are held back with that error. The caller holds
// serversMu.
func (h *Host) rebuildLocked(unrecorded map[string]error) (unpinned []*supervisor.Server) {
	s := &snapshot{version: h.snap.Load().version + 1, cfg: h.cfg, servers: make(map[string]*supervisor.Server, len(h.servers)),
		auth: h.authStatus, sandboxByDefault: h.opts.SandboxByDefault, states: make(map[string]string, len(h.servers)), fps: make(map[string][32]byte, len(h.servers))}
	if prev := h.snap.Load(); prev.cfg == h.cfg {
		s.policy = prev.policy
	} else {
		s.policy = policy.Compile(h.cfg.MCP.Policy)
	}
	// The naming scheme first: a change of it makes every decision below
	// stale (pins.Store.Version).
	h.pins.store.SetHashedNames(h.cfg.MCP.Names == config.NamesHashed)
	decided := make(map[string]decided, len(h.servers))
	runs := make([][]catalog.Entry, 0, len(h.servers))
	total := 0
	for name, srv := range h.servers {
		s.servers[name] = srv
		s.names = append(s.names, name)
		// The state before the entries: a server is ready only once its
		// entries are installed, so "ready" here comes with its catalog.
		s.states[name] = srv.State()
		dc := h.decide(name, srv, nil)
		if dc.unpinned {
			unpinned = append(unpinned, srv)
			s.states[name] = supervisor.StateStarting
			if err := unrecorded[name]; err != nil {
				// Tried before and failed: held back, saying why, rather
				// than starting again at every publish.
				dc = h.decide(name, srv, err)
				s.states[name] = srv.State()
			}
		}
		decided[name] = dc
		s.pins.record(name, dc.d)
		s.fps[name] = dc.fp
		runs = append(runs, dc.d.Offered)
		total += len(dc.d.Offered)
	}
	h.pins.decided = decided
	sort.Strings(s.names)
	s.tools = mergeByName(runs, total)
	s.eventSeq.Store(h.events.last())
	h.snap.Store(s)
	h.emitChangesLocked(s)
	s.eventSeq.Store(h.events.last())
	return unpinned
}

// CatalogVersion is the version of the catalog the host serves now: it
// grows with every rebuild (a server's tools in or out, a state changed,
// a pin decided). A reader that noted the version before reading the
// catalog knows, by comparing, whether a newer one is there — before the
// event that announces it has reached it.
func (h *Host) CatalogVersion() uint64 { return h.snap.Load().version }

// decided is what pinning made of one server's entries, kept for the next
// rebuild: with many servers, most publishes change one of them, and
// deciding, hashing and sorting 5,000 tools each time is what made the
// daemon slow to start.
type decided struct {
	srv      *supervisor.Server
	entries  []catalog.Entry // decided over, compared by identity: entries are replaced, never changed
	version  int64           // the pins' version of the server
	d        pins.Decision   // d.Offered sorted by name
	unpinned bool
	fp       [32]byte // the offered entries, for the catalog event
}

// decide runs srv's entries through the pins, or returns the decision of
// the last rebuild if nothing it depends on changed. The caller holds
// serversMu.
func (h *Host) decide(name string, srv *supervisor.Server, saveErr error) decided {
	entries := srv.Entries()
	version := h.pins.store.Version(name) // before Decide: a change meanwhile makes it stale
	if c, ok := h.pins.decided[name]; ok && saveErr == nil && c.srv == srv && c.version == version && sameEntries(c.entries, entries) {
		return c
	}
	d, unpinned := h.pins.store.Decide(name, pins.TrustOf(srv.Config()), entries, saveErr)
	if !slices.IsSortedFunc(d.Offered, byName) {
		d.Offered = slices.Clone(d.Offered)
		slices.SortStableFunc(d.Offered, byName)
	}
	c := decided{srv: srv, entries: entries, version: version, d: d, unpinned: unpinned, fp: catalogFingerprint(d.Offered)}
	if saveErr != nil {
		c.srv = nil // a decision made with an error is not kept
	}
	return c
}

func byName(a, b catalog.Entry) int { return strings.Compare(a.Name, b.Name) }

func sameEntries(a, b []catalog.Entry) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// catalogFingerprint identifies what of a server's offered entries sessions
// see, for the "catalog changed" event.
func catalogFingerprint(entries []catalog.Entry) [32]byte {
	sum := sha256.New()
	for _, e := range entries {
		for _, f := range [][]byte{[]byte(e.Name), []byte(e.Description), e.InputSchema, e.OutputSchema, e.Raw} {
			sum.Write(f)
			sum.Write([]byte{0})
		}
	}
	return [32]byte(sum.Sum(nil))
}

// mergeByName merges runs sorted by name into one sorted list of their
// total entries. It points into the runs, which are never changed in place:
// a copy of every entry would be kept for as long as the snapshot is.
func mergeByName(runs [][]catalog.Entry, total int) []*catalog.Entry {
	out := make([]*catalog.Entry, 0, total)
	for {
		best := -1
		for i, r := range runs {
			if len(r) > 0 && (best < 0 || r[0].Name < runs[best][0].Name) {
				best = i
			}
		}
		if best < 0 {
			return out
		}
		out = append(out, &runs[best][0])
		runs[best] = runs[best][1:]
	}
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
