package host

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/plexus-mcp/plexus/internal/caller"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/supervisor"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// Placement says where each stdio server of a team runs (R-TEAM-3): on
// this replica, or on the one that holds its lease, whose face serves
// that server alone over the internal channel (internal/peer).
type Placement interface {
	// Place returns nil when this replica runs server, else where it
	// runs; an error when no replica runs it now.
	Place(server string) (*Remote, error)
}

// Remote is a stdio server that another replica runs: the URL of that
// replica's face for it, and the headers that let this one in (secret).
type Remote struct {
	Replica string
	URL     string
	Headers http.Header
	// Transport, if set, carries the requests (the channel's: never
	// through a proxy).
	Transport http.RoundTripper
}

// SetPlacement has the stdio servers run where pl says; set it before
// Start.
func (h *Host) SetPlacement(pl Placement) { h.opts.Placement = pl }

// placed is where server runs: nil for here.
func (h *Host) placed(server string) (*Remote, error) {
	if h.opts.Placement == nil {
		return nil, nil
	}
	return h.opts.Placement.Place(server)
}

// apply makes spec a streamable HTTP connection to the replica that runs
// the server. Its headers are secrets, redacted from errors and logs. A
// pinned protocol version is the owner's business with its process: the
// replicas speak MCP 2026-07-28 between them, whose every request names
// its member (a session-era session would be one member's).
func (r *Remote) apply(spec *upstream.Spec) {
	spec.Type = config.TypeHTTP
	spec.ProtocolVersion = ""
	spec.RunsOn = r.Replica
	spec.URL = r.URL
	spec.Headers = r.Headers.Clone()
	if r.Transport != nil {
		spec.HTTPClient = &http.Client{Transport: r.Transport}
	}
	for _, vs := range r.Headers {
		spec.Secrets = append(spec.Secrets, vs...)
	}
}

// Replace builds each of names anew from its unchanged configuration,
// because where it runs changed. The server it replaces serves on until
// the new one is ready (make before break), so that its tools never leave
// the catalog while it moves: the new one is started in the background,
// tried again every replaceRetry while it cannot start (the replica it
// moved to is still starting it), and swapped in once it is up, or
// failed after replaceWait; the old one runs on for retireAfter, so that
// calls in flight on it end. The old one is stopped at once only when
// there is nothing to keep: it is not ready, or it is this replica's own
// process and this replica may no longer run it. A server whose new place
// is not known yet, while its old one is a ready connection to another
// replica, is left as it is until it is.
func (h *Host) Replace(ctx context.Context, names []string) {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	if h.closing {
		return
	}
	for _, name := range names {
		old, ok := h.snap.Load().servers[name]
		if !ok || old.Config().Type != config.TypeStdio {
			continue
		}
		sc := old.Config()
		cfg := h.cfgLocked()
		if h.replacing == nil {
			h.replacing = map[string]uint64{}
		}
		h.replacing[name]++ // a replacement under way is superseded
		gen := h.replacing[name]
		fresh, err := h.newServer(name, sc, cfg)
		ready := old.State() == supervisor.StateReady
		enabled := sc.IsEnabled() && mcpEnabled(cfg)
		switch {
		case err != nil && ready && old.RunsOn() != "":
			fresh.Stop() // nowhere known yet: the connection serves on
		case err != nil || !enabled || !ready:
			h.swap(name, fresh, cfg)
			old.Stop()
			if err == nil && enabled {
				h.startInBackground(ctx, fresh, cfg)
			}
		default:
			h.bg.Add(1)
			go h.replaceWhenReady(ctx, name, gen, old, fresh)
		}
	}
}

// Make before break: how long a replacement is tried, and how often.
const (
	replaceWait  = 20 * time.Second
	replaceRetry = 200 * time.Millisecond
)

// replaceWhenReady starts fresh, trying again while it cannot start, and
// swaps it in for old once it is up (or given up on), unless a later
// replacement or a change of the settings came first.
func (h *Host) replaceWhenReady(ctx context.Context, name string, gen uint64, old, fresh *supervisor.Server) {
	defer h.bg.Done()
	defer h.arriving.Delete(old)
	deadline := time.Now().Add(replaceWait)
	current := func() bool {
		return !h.closing && h.replacing[name] == gen && h.snap.Load().servers[name] == old
	}
	var err error
	for {
		if err = fresh.Start(ctx); err == nil || time.Now().After(deadline) {
			break
		}
		if ctx.Err() != nil { // the daemon is stopping: the old one serves to the end
			fresh.Stop()
			return
		}
		fresh.Stop()
		select {
		case <-ctx.Done():
		case <-time.After(replaceRetry):
		}
		h.applyMu.Lock()
		if !current() {
			h.applyMu.Unlock()
			return
		}
		var nerr error
		fresh, nerr = h.newServer(name, old.Config(), h.cfgLocked())
		h.applyMu.Unlock()
		if nerr != nil {
			err = nerr
			break
		}
	}
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	if !current() {
		fresh.Stop()
		return
	}
	cfg := h.cfgLocked()
	h.swap(name, fresh, cfg)
	h.retire(ctx, old)
	if err != nil {
		h.log.Warn("server failed to start where it moved", "server", name, "err", err)
		h.leftOut(fresh, cfg)
	}
}

// retireAfter is how long a server replaced by Replace runs on once
// swapped out, so that the calls in flight on it end rather than lose
// their connection (a call sent there finishes there).
const retireAfter = 5 * time.Second

// retire stops old retireAfter from now, or at once when ctx ends (the
// daemon stops).
func (h *Host) retire(ctx context.Context, old *supervisor.Server) {
	h.bg.Add(1)
	go func() {
		defer h.bg.Done()
		select {
		case <-ctx.Done():
		case <-time.After(retireAfter):
		}
		old.Stop()
	}()
}

// retryPlaced tries again, as Replace does, a connection to a server
// another replica runs that failed at its start: that replica is
// starting the process (it refuses until it runs it), or the lease is
// moving. Not tried again, it would wait for a client's activity. It
// reports whether it did (failed is then Arriving until that ends).
func (h *Host) retryPlaced(ctx context.Context, failed *supervisor.Server) bool {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	return h.retryPlacedLocked(ctx, failed)
}

// retryPlacedLocked is retryPlaced with applyMu held.
func (h *Host) retryPlacedLocked(ctx context.Context, failed *supervisor.Server) bool {
	if failed.RunsOn() == "" || ctx.Err() != nil {
		return false
	}
	name := failed.Name()
	if h.closing || h.snap.Load().servers[name] != failed {
		return false
	}
	if h.replacing == nil {
		h.replacing = map[string]uint64{}
	}
	h.replacing[name]++
	fresh, err := h.newServer(name, failed.Config(), h.cfgLocked())
	if err != nil {
		fresh.Stop()
		return false
	}
	h.arrive(failed)
	h.bg.Add(1)
	go h.replaceWhenReady(ctx, name, h.replacing[name], failed, fresh)
	return true
}

// PlacementError is Placement's error for a server no replica runs this
// moment, as newServer reports it: its place is being settled (or the
// shared database did not answer the claim of a server being added).
// Nothing was saved by a change that met it; trying again is the remedy.
type PlacementError struct{ Err error }

func (e *PlacementError) Error() string { return e.Err.Error() }
func (e *PlacementError) Unwrap() error { return e.Err }

// arrive marks srv as Arriving for its startup timeout from now, and
// forgets the marks that ran out (the servers replaced, removed or given
// up on since): there are never more than the marks of that long.
func (h *Host) arrive(srv *supervisor.Server) {
	now := time.Now()
	h.arriving.Range(func(k, until any) bool {
		if now.After(until.(time.Time)) {
			h.arriving.Delete(k)
		}
		return true
	})
	h.arriving.Store(srv, now.Add(ms(srv.Config().StartupTimeoutMs, config.DefaultStartupTimeoutMs)))
}

// Arriving reports whether server's tools are on their way to this
// replica although it does not serve them now, and until when: a stdio
// server of a team whose place is being settled — no replica holds its
// lease this moment (one takes it within seconds: Placement's error), or
// the connection to the replica that runs it is being made, or made again
// while that replica starts the process (retryPlaced). A call of one of
// its tools waits for them (the face's awaitTool) rather than fail as
// unknown, for the server's startup timeout at most. A server that failed
// for any other reason, or is still unplaced after that long, is not
// arriving: a call of its tools fails at once.
func (h *Host) Arriving(server string) (time.Time, bool) {
	srv, ok := h.snap.Load().servers[server]
	if !ok {
		return time.Time{}, false
	}
	until, ok := h.arriving.Load(srv)
	if !ok || time.Now().After(until.(time.Time)) {
		return time.Time{}, false
	}
	return until.(time.Time), true
}

// RunsHere reports whether this replica runs server's process itself and
// it is ready: the only way it serves that server to the others.
func (h *Host) RunsHere(server string) bool {
	srv, ok := h.snap.Load().servers[server]
	return ok && srv.RunsOn() == "" && srv.State() == supervisor.StateReady
}

// Admitted reports whether a member may use server: in team mode, some
// profile that lists it admits the member (by user or group). The replica
// that runs a server checks a member another replica forwards a call of,
// as that replica did.
func (h *Host) Admitted(id caller.Identity, server string) bool {
	cfg := h.LiveConfig()
	if cfg.Team == nil {
		return true
	}
	for _, p := range cfg.MCP.Profiles {
		if slices.Contains(p.Servers, server) && p.Admits(id.User, id.Groups) {
			return true
		}
	}
	return false
}

// neverSent reports whether a failed call is one the connection to
// another replica says it never delivered (peer.NotSent: the dial or the
// handshake failed, or that replica refused it before serving it, not
// running the server any more): a call not made, whose outcome is known.
func neverSent(err error) bool {
	var ns interface{ NotSent() bool }
	return errors.As(err, &ns) && ns.NotSent()
}
