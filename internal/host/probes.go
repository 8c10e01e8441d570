package host

import (
	"context"
	"sync"
	"time"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/supervisor"
)

// probes track the servers that were left out because they could not be
// started or prepared. There is no timer (R-SES-4): on activity — a call, a
// listing — each left-out server whose probe is due is tried again, first
// retryMs after it was left out, then at doubling intervals capped at
// 20 × retryMs. A server switched off is never probed.
type probes struct {
	mu    sync.Mutex
	state map[*supervisor.Server]*probe // guarded by mu
}

type probe struct {
	due      time.Time
	interval time.Duration
	inFlight bool
}

// leftOut schedules the first probe of a server that could not be started.
func (h *Host) leftOut(srv *supervisor.Server, cfg *config.File) {
	if h.needsApproval(srv) {
		return // only a person's approval starts it (R-CAT-6)
	}
	if srv.State() == supervisor.StateNeedsLogin {
		return // only a login starts it (Host.verifyLogin, loginChanged)
	}
	retry := ms(cfg.MCP.RetryMs, config.DefaultRetryMs)
	due := time.Now().Add(retry)
	h.probes.mu.Lock()
	if h.probes.state == nil {
		h.probes.state = map[*supervisor.Server]*probe{}
	}
	h.probes.state[srv] = &probe{due: due, interval: retry}
	h.probes.mu.Unlock()
	srv.SetNextTry(due)
}

func (h *Host) retry() time.Duration {
	return ms(h.snap.Load().cfg.MCP.RetryMs, config.DefaultRetryMs)
}

// Activity is called on session activity. It probes the left-out servers
// that are due, in the background; one found up joins the catalog, which
// announces "capabilities changed".
func (h *Host) Activity() {
	now := time.Now()
	h.reapIdleSessions(now)
	snap := h.snap.Load()
	h.probes.mu.Lock()
	var due []*supervisor.Server
	for srv, p := range h.probes.state {
		if _, current := snap.servers[srv.Name()]; !current || snap.servers[srv.Name()] != srv {
			delete(h.probes.state, srv) // replaced or removed meanwhile
			continue
		}
		if !p.inFlight && !now.Before(p.due) {
			p.inFlight = true
			due = append(due, srv)
		}
	}
	h.probes.mu.Unlock()
	for _, srv := range due {
		h.bg.Add(1)
		go func() {
			defer h.bg.Done()
			h.probe(srv)
		}()
	}
}

// probe prepares the server afresh (its credentials may have been set
// since) and tries to start it; if it comes up it replaces the left-out one.
func (h *Host) probe(old *supervisor.Server) {
	snap := h.snap.Load()
	sc := old.Config()
	fresh, err := h.newServer(old.Name(), sc, snap.cfg)
	if err == nil {
		err = fresh.Start(context.Background())
	}
	if err != nil {
		fresh.Stop()
		h.log.Info("probe: server still down", "server", old.Name(), "err", err)
		retry := h.retry()
		var due time.Time
		h.probes.mu.Lock()
		if p, ok := h.probes.state[old]; ok {
			p.interval = min(2*p.interval, 20*retry)
			p.due = time.Now().Add(p.interval)
			p.inFlight = false
			due = p.due
		}
		h.probes.mu.Unlock()
		old.MarkFailed(err)
		if !due.IsZero() {
			old.SetNextTry(due)
		}
		return
	}
	h.probes.mu.Lock()
	delete(h.probes.state, old)
	h.probes.mu.Unlock()

	// Swap it in unless the settings replaced the server meanwhile.
	h.applyMu.Lock()
	h.serversMu.Lock()
	current := h.servers[old.Name()] == old
	h.serversMu.Unlock()
	if !current {
		h.applyMu.Unlock()
		fresh.Stop()
		return
	}
	h.swap(old.Name(), fresh, h.cfgLocked())
	h.applyMu.Unlock()
	old.Stop()
	h.log.Info("probe: server is back", "server", old.Name())
}

// cfgLocked returns the configuration the servers were built from; the
// caller holds applyMu, so it cannot change.
func (h *Host) cfgLocked() *config.File {
	h.serversMu.Lock()
	defer h.serversMu.Unlock()
	return h.cfg
}
