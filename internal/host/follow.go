package host

import (
	"context"
	"sync"

	"github.com/plexus-mcp/plexus/internal/oauth"
	"github.com/plexus-mcp/plexus/internal/pins"
	"github.com/plexus-mcp/plexus/internal/store"
	"github.com/plexus-mcp/plexus/internal/supervisor"
)

// Follow applies the changes that other daemons sharing the store make,
// until ctx is done: a change of the settings is applied as Reload does
// (prepare beside the running set, one swap, then stop what went), and
// the secrets, tokens and pins are read again. On a store that is not
// shared (files) it follows hand edits of extensions.json instead, which
// are applied only by a person's reload (watchHandEdits).
//
// Notices are coalesced: while one change is being applied, the notices
// that arrive are remembered and applied together afterwards, each
// document read as it is then.
func (h *Host) Follow(ctx context.Context) error {
	docs := h.opts.Store.Docs()
	if !docs.Shared() {
		return h.watchHandEdits(ctx)
	}
	var mu sync.Mutex
	pending := map[string]bool{}
	wake := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-wake:
			}
			mu.Lock()
			names := pending
			pending = map[string]bool{}
			mu.Unlock()
			h.applyShared(ctx, names)
		}
	}()
	err := docs.Follow(ctx, func(name string) {
		mu.Lock()
		pending[name] = true
		mu.Unlock()
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	<-done
	return err
}

// applyShared reads again the documents named ("" for all of them).
func (h *Host) applyShared(ctx context.Context, names map[string]bool) {
	all := names[""]
	if all || names[store.CredsFile] {
		if err := h.opts.Store.RefreshCreds(); err != nil {
			h.log.Warn("shared store: secrets not read again", "err", err)
		}
	}
	if (all || names[oauth.FileName]) && h.oauth != nil {
		if err := h.oauth.Refresh(); err != nil {
			h.log.Warn("shared store: OAuth tokens not read again", "err", err)
		}
	}
	if all || names[pins.FileName] {
		h.refreshPins(ctx)
	}
	if all || names[store.ConfigFile] {
		before := h.opts.Store.Config().Revision
		rev, err := h.Reload(ctx)
		switch {
		case err != nil:
			h.log.Warn("shared store: settings not applied", "err", err)
		case rev != before:
			h.log.Info("shared store: settings applied", "revision", rev, "was", before)
		}
	}
}

// refreshPins reads the pins again and starts the servers that were held
// for approval and that another replica's approval now trusts (a server
// added through another replica is saved before its approval is). A
// server counts as held if the gate refused it when it was prepared, not
// by the pins before this refresh: a save of this replica's own pins may
// already have taken in the other replica's approval (pins.json is
// merged, not overwritten), leaving nothing new for this refresh to read.
func (h *Host) refreshPins(ctx context.Context) {
	if err := h.pins.store.Refresh(); err != nil {
		h.log.Warn("shared store: pins not read again", "err", err)
		return
	}
	h.publish()
	live := h.snap.Load().servers
	h.pins.gated.Range(func(k, _ any) bool {
		srv := k.(*supervisor.Server)
		if live[srv.Name()] != srv {
			h.pins.gated.Delete(srv) // replaced since
			return true
		}
		if h.needsApproval(srv) {
			return true
		}
		h.pins.gated.Delete(srv)
		if err := h.Restart(ctx, srv.Name()); err != nil {
			h.log.Warn("shared store: approved server not started", "server", srv.Name(), "err", err)
			// Another replica that runs it may be starting its process
			// (it refuses until it runs it): tried again as a reload
			// tries such a server, not left out until a client's
			// activity brings the probes.
			if cur := h.snap.Load().servers[srv.Name()]; cur != nil {
				h.retryPlaced(ctx, cur)
			}
		}
		return true
	})
}
