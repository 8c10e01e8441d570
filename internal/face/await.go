package face

import (
	"context"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/jsonscan"
)

// startWait bounds how long a call waits for a starting server's tools.
const startWait = 15 * time.Second

// awaitTool holds a tools/call for a name the profile does not offer
// while one of the profile's servers is still starting — the daemon just
// started (an editor's `plexus mcp` brought it back, or the service
// manager did) and a client calls a tool it knew from before — or, in a
// team, is arriving on this replica (host.Arriving: its place is being
// settled, a replica that just started is connecting to where it runs,
// or it moves) — until the name is offered, no server of the profile is
// starting or arriving any more, or startWait (an arriving server's
// startup timeout, if longer). Without it such a call fails with "unknown
// tool" a moment before the tool is there. A name that is offered costs
// one lookup; while every server of the profile is up, a name none
// offers fails at once.
func (p *profile) awaitTool(ctx context.Context, params []byte) {
	var name string
	jsonscan.Members(params, func(k, v []byte) bool {
		if string(k) == "name" {
			if s, ok := jsonscan.String(v); ok {
				name = string(s)
			}
			return false
		}
		return true
	})
	if name == "" || p.offers(name) || p.catchUp(name) {
		return
	}
	until, pending := p.pending()
	if !pending {
		return
	}
	events, stop := p.f.h.Subscribe()
	defer stop()
	deadline := time.NewTimer(max(startWait, time.Until(until)))
	defer deadline.Stop()
	// The face adds a server's tools after the event that says it is
	// ready: look again now and then, not only at events.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !p.offers(name) && pending {
		select {
		case <-events:
		case <-tick.C:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
		_, pending = p.pending()
	}
	// The servers are up: their tools are in the catalog, and the face
	// may not have added them yet.
	if !p.offers(name) {
		p.sync()
	}
}

// catchUp syncs the profile now if the host's catalog is newer than the
// one the profile last synced from — a server showed ready, with its tools
// in the catalog, and the face has not added them yet: the event that says
// so is still on its way, or waits out follow's folding of a burst — and
// reports whether name is offered then. While the profile is up to date it
// costs one comparison, so a client that calls names that do not exist
// does not make the profile sync each time.
func (p *profile) catchUp(name string) bool {
	p.syncMu.Lock()
	current := p.synced == p.f.h.CatalogVersion()
	p.syncMu.Unlock()
	if current {
		return false
	}
	p.sync()
	return p.offers(name)
}

// offers reports whether the profile offers a tool of that name.
func (p *profile) offers(name string) bool {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	_, ok := p.toolRoute[name]
	return ok
}

// pending reports whether a server of the profile is starting, enabled
// and not started yet (a server waiting for a person's approval is not:
// only that person starts it), or arriving (host.Arriving), and the
// latest time an arriving one is waited for.
func (p *profile) pending() (until time.Time, pending bool) {
	_, servers := p.f.h.Servers()
	for _, s := range servers {
		if !p.def.has(s.Name) {
			continue
		}
		if s.State == apitype.StateStarting || s.Enabled && s.State == apitype.StateStopped && !s.NeedsApproval {
			pending = true
		} else if t, ok := p.f.h.Arriving(s.Name); ok {
			pending = true
			if t.After(until) {
				until = t
			}
		}
	}
	return until, pending
}
