package host

import (
	"context"
	"fmt"
	"reflect"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/creds"
)

// ImportRequest adds servers and the managed secrets they reference, as
// found in another client's configuration.
type ImportRequest struct {
	Servers map[string]config.Server
	Secrets map[string]string
	DryRun  bool
}

// ImportResult says what an import did (or, for a dry run, would do).
type ImportResult struct {
	Revision int64
	// Added are the servers added; Unchanged were already there, identical.
	Added, Unchanged []string
	// Conflicts are servers whose name is taken by a different server.
	Conflicts []string
	// SecretsSet are the managed variables set; SecretsKept already held
	// the same value.
	SecretsSet, SecretsKept []string
}

// Import applies an import. The secrets are saved before the servers that
// reference them, so a crash between the two saves leaves at most unused
// secrets, never a server whose secret is missing. Imported servers are
// saved without being verified (they may need a secret that is only in the
// other client's environment) and started in the background; one that
// cannot start is left out and probed later, like any other.
func (h *Host) Import(ctx context.Context, req ImportRequest) (ImportResult, error) {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	var res ImportResult

	cur := h.opts.Store.Config()
	next := cur.Clone()
	if next.MCP.Servers == nil {
		next.MCP.Servers = map[string]config.Server{}
	}
	for name, sc := range req.Servers {
		old, exists := cur.MCP.Servers[name]
		switch {
		case exists && reflect.DeepEqual(normalizedServer(old), normalizedServer(sc)):
			res.Unchanged = append(res.Unchanged, name)
		case exists:
			res.Conflicts = append(res.Conflicts, name)
		default:
			next.MCP.Servers[name] = sc
			res.Added = append(res.Added, name)
		}
	}
	if err := config.Validate(next); err != nil {
		return res, err
	}
	secrets := h.opts.Store.Creds()
	changed := false
	for k, v := range req.Secrets {
		if !creds.ValidName(k) {
			return res, fmt.Errorf("%q is not a valid variable name", k)
		}
		if old, ok := secrets.Env[k]; ok && old == v {
			res.SecretsKept = append(res.SecretsKept, k)
			continue
		}
		if _, ok := secrets.Env[k]; ok {
			return res, fmt.Errorf("the managed variable %s already holds a different value: import refused so that nothing is overwritten; remove it with `plexus secret rm %s` or rename the server's variable", k, k)
		}
		secrets.Env[k] = v
		res.SecretsSet = append(res.SecretsSet, k)
		changed = true
	}
	res.Revision = cur.Revision
	if req.DryRun {
		return res, nil
	}
	if changed {
		if _, err := h.opts.Store.CommitCreds(secrets.Revision, secrets); err != nil {
			return res, err
		}
	}
	if len(res.Added) == 0 {
		return res, nil
	}
	undo, err := h.approveImported(res.Added, next)
	if err != nil {
		return res, err
	}
	rev, err := h.opts.Store.CommitConfig(cur.Revision, next)
	if err != nil {
		undo()
		return res, err
	}
	res.Revision = rev
	committed := h.opts.Store.Config()
	for _, name := range res.Added {
		sc := committed.MCP.Servers[name]
		srv, err := h.newServer(name, sc, committed)
		old := h.swap(name, srv, committed)
		if old != nil {
			old.Stop()
		}
		run := sc.IsEnabled() && mcpEnabled(committed)
		switch {
		case run && err != nil:
			h.leftOut(srv, committed)
		case run:
			h.startInBackground(context.WithoutCancel(ctx), srv, committed)
		}
	}
	return res, nil
}

// normalizedServer is sc as it would read back from the file.
func normalizedServer(sc config.Server) config.Server {
	f := &config.File{MCP: config.MCP{Servers: map[string]config.Server{"x": sc}}}
	return normalized(f).MCP.Servers["x"]
}
