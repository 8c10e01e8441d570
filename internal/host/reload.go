package host

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/store"
	"github.com/plexus-mcp/plexus/internal/supervisor"
)

// Reload re-reads extensions.json and applies it as one transaction
// (R-SES-2): a file that does not decode changes nothing; otherwise every
// new or changed server is prepared and started beside the running set, in
// parallel; unchanged servers are kept, not restarted; then one swap, and
// only after it the replaced and removed servers are stopped. A server that
// cannot start is left out with its reason, and the others load (R-SES-3).
//
// The servers start without applyMu held, as a verification start does
// (commitServer): each may take its startup timeout, and other writes —
// the face's settings, a secret, an accepted tool — must not wait for
// them. If the settings changed meanwhile, nothing is
// applied and the error says so.
func (h *Host) Reload(ctx context.Context) (int64, error) {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()

	return h.reload(ctx)
}

// reload is Reload with applyMu held.
func (h *Host) reload(ctx context.Context) (int64, error) {
	path := filepath.Join(h.opts.Store.Home(), store.ConfigFile)
	read, exists, err := h.opts.Store.ReadConfigFile()
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	data := read
	if !exists {
		data = []byte("{}")
	}
	next, err := config.Decode(data)
	if err != nil {
		return 0, err
	}
	cur := h.opts.Store.Config()
	next.Revision = cur.Revision
	if reflect.DeepEqual(normalized(cur), normalized(next)) {
		// Nothing to apply, but the file is read: saves may go over it.
		if err := h.opts.Store.AcceptConfigFile(read, exists); err != nil {
			return 0, err
		}
		h.settingsChanged()
		// A shared store's version carries its own revision, which the
		// store has taken.
		if committed := h.opts.Store.Config(); committed.Revision != cur.Revision {
			h.serversMu.Lock()
			h.cfg = committed
			h.serversMu.Unlock()
			h.publish()
			return committed.Revision, nil
		}
		return cur.Revision, nil
	}

	h.serversMu.Lock()
	running := make(map[string]*supervisor.Server, len(h.servers))
	for k, v := range h.servers {
		running[k] = v
	}
	h.serversMu.Unlock()

	servers := map[string]*supervisor.Server{}
	var fresh []*supervisor.Server
	var wg sync.WaitGroup
	var failedMu sync.Mutex
	var failed []*supervisor.Server
	for name, sc := range next.MCP.Servers {
		run := sc.IsEnabled() && mcpEnabled(next)
		if old, ok := running[name]; ok && reflect.DeepEqual(old.Config(), sc) && run == (mcpEnabled(cur) && old.Config().IsEnabled()) {
			servers[name] = old
			continue
		}
		srv, err := h.newServer(name, sc, next)
		servers[name] = srv
		fresh = append(fresh, srv)
		switch {
		case !run, err == nil && srv.State() == supervisor.StateIdle:
		case err != nil:
			failedMu.Lock()
			failed = append(failed, srv)
			failedMu.Unlock()
		default:
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := srv.Start(ctx); err != nil {
					h.log.Warn("reload: server left out", "server", name, "err", err)
					failedMu.Lock()
					failed = append(failed, srv)
					failedMu.Unlock()
				}
			}()
		}
	}
	h.applyMu.Unlock()
	wg.Wait()
	h.applyMu.Lock()
	if err := h.stillCurrent(cur, next, servers, running); err != nil {
		for _, srv := range fresh {
			srv.Stop()
		}
		if errors.Is(err, errAppliedMeanwhile) {
			return h.opts.Store.Config().Revision, nil
		}
		return 0, err
	}

	rev, err := h.opts.Store.CommitReload(cur.Revision, next, read, exists)
	if err != nil {
		for _, srv := range fresh {
			srv.Stop()
		}
		return 0, err
	}
	committed := h.opts.Store.Config()
	h.settingsChanged()

	// A connection to another replica that failed (that replica is still
	// starting the process: a server just added, changed or moved) is
	// tried again as Replace does (until ctx ends: the daemon's, from
	// Follow), and a call of its tools waits meanwhile (Arriving) from the
	// moment it is in the set. Left to the probes alone, which try on a
	// client's activity mcp.retryMs (30 s) later, its tools were unknown
	// on this replica all that while.
	for _, srv := range failed {
		if srv.RunsOn() != "" {
			h.arrive(srv)
		}
	}
	h.serversMu.Lock()
	old := h.servers
	h.servers = servers
	h.cfg = committed
	h.serversMu.Unlock()
	h.publish()
	for _, srv := range failed {
		h.leftOut(srv, committed)
		if srv.RunsOn() != "" && !h.retryPlacedLocked(ctx, srv) {
			h.arriving.Delete(srv)
		}
	}
	for name, srv := range old {
		if servers[name] != srv {
			srv.Stop()
		}
	}
	h.log.Info("settings reloaded", "revision", rev, "started", len(fresh), "left_out", len(failed))
	return rev, nil
}

// errAppliedMeanwhile says that the settings a reload read were applied by
// another (a second reload of the same file) while it started servers.
var errAppliedMeanwhile = errors.New("applied meanwhile")

// stillCurrent checks, with applyMu held again after a reload's servers
// started without it, that the reload still applies: the daemon is not
// stopping, and the settings and the servers kept are as they were when
// the reload read them. A kept server that another write replaced by one
// of the same settings (a restart) is taken in its place in servers.
func (h *Host) stillCurrent(cur, next *config.File, servers, running map[string]*supervisor.Server) error {
	if h.closing {
		return errors.New("the daemon is stopping: nothing was applied")
	}
	if now := h.opts.Store.Config(); now.Revision != cur.Revision {
		if reflect.DeepEqual(normalized(now), normalized(next)) {
			return errAppliedMeanwhile
		}
		return errors.New("the settings were changed by another write while the reload was starting servers; nothing was applied: run `plexus reload` again")
	}
	h.serversMu.Lock()
	defer h.serversMu.Unlock()
	for name, srv := range servers {
		if running[name] != srv {
			continue // started by this reload
		}
		now, ok := h.servers[name]
		if !ok || !reflect.DeepEqual(now.Config(), srv.Config()) {
			return fmt.Errorf("server %s was changed by another write while the reload was starting servers; nothing was applied: run `plexus reload` again", name)
		}
		servers[name] = now
	}
	return nil
}

// normalized returns f as the decoder would read it back, without its
// revision, for comparison.
func normalized(f *config.File) *config.File {
	c := f.Clone()
	c.Revision = 0
	if b, err := config.Encode(c); err == nil {
		if d, err := config.Decode(b); err == nil {
			d.Revision = 0
			return d
		}
	}
	return c
}

// Restart restarts a server now. A server in backoff is tried at once with
// its failure count reset; a running or failed one is started afresh beside
// the current one and swapped in only if it comes up.
func (h *Host) Restart(ctx context.Context, name string) error {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	snap := h.snap.Load()
	srv, ok := snap.servers[name]
	if !ok {
		return &NotFoundError{What: "server", Name: name}
	}
	sc := srv.Config()
	if !sc.IsEnabled() || !mcpEnabled(snap.cfg) {
		return fmt.Errorf("%s is switched off: switch it on with `plexus enable %s`", name, name)
	}
	if srv.Status().State == supervisor.StateBackoff {
		srv.Restart()
		return nil
	}
	fresh, err := h.newServer(name, sc, snap.cfg)
	if err != nil {
		return err
	}
	if err := fresh.Start(ctx); err != nil {
		fresh.Stop()
		se := &StartError{Server: name, Err: err, Restart: true}
		if st := srv.State(); st != supervisor.StateReady && st != supervisor.StateStarting {
			// Nothing runs on: the status says the new error at once,
			// rather than the old one until the next retry.
			se.NotRunning = true
			srv.MarkFailed(err)
		}
		return se
	}
	h.swap(name, fresh, h.cfgLocked())
	srv.Stop()
	return nil
}
