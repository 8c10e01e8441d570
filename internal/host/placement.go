package host

import (
	"context"
	"net/http"

	"github.com/plexus-mcp/plexus/internal/config"
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
// the server. Its headers are secrets, redacted from errors and logs.
func (r *Remote) apply(spec *upstream.Spec) {
	spec.Type = config.TypeHTTP
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
// because where it runs changed: it is swapped in at once (starting, or
// failed with why) and started in the background, and the server it
// replaces is stopped — a replica that no longer holds a server's lease
// stops running it.
func (h *Host) Replace(ctx context.Context, names []string) {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	if h.closing {
		return
	}
	for _, name := range names {
		snap := h.snap.Load()
		old, ok := snap.servers[name]
		if !ok || old.Config().Type != config.TypeStdio {
			continue
		}
		sc := old.Config()
		cfg := h.cfgLocked()
		fresh, err := h.newServer(name, sc, cfg)
		h.swap(name, fresh, cfg)
		old.Stop()
		if err == nil && sc.IsEnabled() && mcpEnabled(cfg) {
			h.startInBackground(ctx, fresh, cfg)
		}
	}
}
