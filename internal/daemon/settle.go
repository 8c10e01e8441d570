package daemon

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/execpages"
	"github.com/plexus-mcp/plexus/internal/host"
)

// settleTimeout bounds how long settle waits for the servers to start.
const settleTimeout = time.Minute

// settle waits until none of the servers is starting (or settleTimeout),
// then gives back what starting them cost: the garbage of decoding their
// catalogs is collected and the freed memory returned to the system at
// once (not over minutes, as the runtime would), and the executable's
// pages touched only to start are unmapped again (execpages.Shed). A
// daemon spends its life idle between calls: its footprint should be that
// of its steady state. With procs, the daemon's Go code then runs on that
// many threads: starting servers decodes catalogs and gains from every
// core, while proxying calls waits on pipes and sockets, and there a
// second thread costs more in wake-ups than it gives (docs/performance.md).
func settle(ctx context.Context, h *host.Host, procs int) {
	events, stop := h.Subscribe()
	defer stop()
	deadline := time.NewTimer(settleTimeout)
	defer deadline.Stop()
	for starting(h) {
		select {
		case <-events:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
	}
	if procs > 0 {
		runtime.GOMAXPROCS(procs)
	}
	debug.FreeOSMemory()
	execpages.Shed()
	if settled != nil {
		settled()
	}
}

// settled, if set, is called when settle is done, and resettled each
// time resettle is (tests).
var settled, resettled func()

// starting reports whether a server is starting, or enabled and not yet
// started (stopped: its start has not begun; not one waiting for a
// person's approval, which only that starts).
func starting(h *host.Host) bool {
	_, servers := h.Servers()
	for _, s := range servers {
		if s.State == apitype.StateStarting || s.Enabled && s.State == apitype.StateStopped && !s.NeedsApproval {
			return true
		}
	}
	return false
}

// resettleDelay is how long after the last change the daemon settles
// again: a burst of changes (a reload, editors opening their sessions and
// listing, calls, many sessions expiring) settles once, after its last;
// a daemon that serves without a second's pause does not settle.
const resettleDelay = time.Second

// resettle settles again after every change once the daemon has settled
// first: servers added, restarted or removed, requests the face served
// and client sessions that ended, and any change made through the API (settings, say, which
// neither starts a server nor changes the catalog). Each leaves garbage that an idle daemon would otherwise
// keep for minutes — it allocates too little to run the collector — and
// maps code it runs only for the change (decoding a catalog, rendering
// pages), so the garbage is returned and those pages are shed again: its
// footprint stays that of its steady state (docs/performance.md).
func resettle(ctx context.Context, h *host.Host, served <-chan struct{}, lastServed func() time.Time, changed <-chan struct{}) {
	events, stop := h.Subscribe()
	defer stop()
	var due <-chan time.Time
	var last time.Time // the last change heard of (a request's: lastServed)
	var settledAt time.Time
	listen := served // nil while due is set: a request then wakes nobody
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			switch ev.Type {
			case apitype.EventServer, apitype.EventServerRemoved, apitype.EventCatalog:
			default:
				continue // a stderr line, say: nothing to give back
			}
		case <-listen:
			if !lastServed().After(settledAt) {
				continue // a poke from before the last settling
			}
			listen = nil
			if due == nil {
				due = time.After(resettleDelay)
			}
			continue
		case <-changed:
		case <-due:
			// Requests kept coming: wait until a second after the last.
			if quiet := time.Since(latest(last, lastServed())); quiet < resettleDelay {
				due = time.After(resettleDelay - quiet)
				continue
			}
			due, listen, settledAt = nil, served, time.Now()
			if !starting(h) {
				debug.FreeOSMemory()
				execpages.Shed()
				if resettled != nil {
					resettled()
				}
			}
			continue
		}
		last = time.Now()
		due = time.After(resettleDelay)
	}
}

// latest is the later of a and b.
func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
