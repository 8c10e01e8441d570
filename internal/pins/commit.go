package pins

import (
	"maps"
	"slices"

	"github.com/plexus-mcp/plexus/internal/catalog"
)

// Group commit of first-seen tools. Servers that connect together (the
// daemon's start) each bring tools seen for the first time, and each
// Check must wait until its pins are durable before it offers them. One
// write with an fsync per server, one after the other, made 20 servers
// ready ~200 ms after the slowest of them. Instead, a Check adds its pins
// to the open batch and waits for a write that holds them: the first
// waiter to get the writer's lock writes every batch waiting, and the
// pins that arrive during that write go together into the next.

// Pin saves the pins of server's tools seen for the first time, if any, in
// a write shared with the Pins and Checks under way, and returns its
// error. A server not trusted as t pins nothing.
func (s *Store) Pin(server string, t Trust, entries []catalog.Entry) error {
	s.mu.Lock()
	_, fresh := s.decideLocked(server, t, entries, nil)
	if len(fresh) == 0 {
		s.mu.Unlock()
		return nil
	}
	b := s.enqueueLocked(server, t, fresh)
	s.mu.Unlock()
	return s.commit(b)
}

// batch is the pins of tools seen for the first time, waiting to be
// written together.
type batch struct {
	servers map[string]batchServer
	done    chan struct{} // closed once written, or once the write failed
	err     error         // set before done is closed
}

// batchServer is one server's part of a batch: the trust its tools were
// checked under, and the tools to pin.
type batchServer struct {
	trust Trust
	tools map[string]Tool
}

// enqueueLocked adds server's fresh tools to a batch and returns the batch
// to wait for: the one being written if it holds them all already, else
// the open one.
func (s *Store) enqueueLocked(server string, t Trust, fresh map[string]hashed) *batch {
	if s.writing != nil && s.writing.holds(server, t, fresh) {
		return s.writing
	}
	if s.open == nil {
		s.open = &batch{servers: map[string]batchServer{}, done: make(chan struct{})}
	}
	bs, ok := s.open.servers[server]
	if !ok || bs.trust.Key() != t.Key() {
		bs = batchServer{trust: t, tools: map[string]Tool{}}
	}
	now := s.now().UTC()
	for name, h := range fresh {
		at := now
		if old, ok := s.f.Servers[server].Tools[name]; ok && old.Extra == nil && old.Hash == h.legacy {
			at = old.PinnedAt // brought up to date (decideLocked), not newly pinned
		}
		bs.tools[name] = Tool{Hash: h.hash, Definition: h.def, PinnedAt: at}
	}
	s.open.servers[server] = bs
	return s.open
}

// holds reports whether b pins each of fresh for server under trust t.
func (b *batch) holds(server string, t Trust, fresh map[string]hashed) bool {
	bs, ok := b.servers[server]
	if !ok || bs.trust.Key() != t.Key() {
		return false
	}
	for name, h := range fresh {
		if bs.tools[name].Hash != h.hash {
			return false
		}
	}
	return true
}

// commit waits until b is written and returns the write's error. If no
// one is writing it, the caller writes it, with everything else waiting.
func (s *Store) commit(b *batch) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	select {
	case <-b.done:
		return b.err
	default:
	}
	// b is not written, and only a holder of writeMu takes the open batch:
	// b is it.
	s.mu.Lock()
	s.open = nil
	next, changed := s.applyLocked(b)
	if !changed {
		s.mu.Unlock()
		close(b.done)
		return nil
	}
	s.writing = b
	next.Revision = s.f.Revision + 1
	s.mu.Unlock()

	// Written without mu, so that Checks meanwhile can fill the next batch.
	written, err := s.write(next)
	s.mu.Lock()
	if err == nil {
		s.touchChangedLocked(written)
		s.f = written
		for server := range b.servers {
			s.touchLocked(server)
		}
	}
	s.writing = nil
	s.mu.Unlock()
	b.err = err
	close(b.done)
	return err
}

// applyLocked returns the pins with b's added, and whether that changes
// anything. A tool pinned meanwhile keeps its pin (a different definition
// is then held back, as with any change); a server whose trust changed
// meanwhile — forgotten, or edited — gets nothing.
func (s *Store) applyLocked(b *batch) (*File, bool) {
	next := s.clone()
	changed := false
	taken := takenNames(next)
	// In the order of the servers' names, so that tools seen together get
	// the same names whichever server listed them first (names.go).
	for _, server := range slices.Sorted(maps.Keys(b.servers)) {
		bs := b.servers[server]
		if s.pendingLocked(server, bs.trust) != nil {
			continue
		}
		rec, recorded := next.Servers[server]
		if !recorded {
			// Trusted provisionally: its first pins record the approval
			// too. Only a server in the published set is checked, and the
			// host swaps one in only once its settings are saved.
			rec = s.approved(Server{}, bs.trust)
		}
		tools := maps.Clone(rec.Tools)
		if tools == nil {
			tools = map[string]Tool{}
		}
		adding := map[string]Tool{}
		for name, tool := range bs.tools {
			if old, pinned := tools[name]; !pinned || upgrades(old, tool, name) {
				adding[name] = tool
			}
		}
		nameNew(server, rec, adding, taken)
		maps.Copy(tools, adding)
		added := len(adding) > 0
		if added {
			rec.Tools = tools
			next.Servers[server] = rec
			changed = true
		}
	}
	return next, changed
}

// upgrades reports whether tool, about to be pinned, is the pin old (made
// before Extra was pinned) brought up to date: the same definition, with
// what else is passed on now recorded.
func upgrades(old, tool Tool, name string) bool {
	if old.Extra != nil || tool.Extra == nil {
		return false
	}
	d := tool.Definition
	d.Extra = nil
	return old.Hash == d.Hash(name)
}
