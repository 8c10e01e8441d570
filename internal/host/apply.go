package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"

	"os"
	"slices"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/creds"
	"github.com/plexus-mcp/plexus/internal/store"
	"github.com/plexus-mcp/plexus/internal/supervisor"
)

// PutRequest is an add or a replace of one server.
type PutRequest struct {
	Name string
	// Config is the server's JSON as in extensions.json.
	Config json.RawMessage
	// Based is the revision the edit is based on; 0 skips the check.
	Based int64
	// Create refuses to replace an existing server; otherwise the server
	// must exist.
	Create bool
	// NoVerify saves without starting the server first.
	NoVerify bool
	// Secrets are form values by variable name: "" keeps the stored value,
	// "-" removes it, anything else replaces it (see apitype).
	Secrets map[string]string
	// NeedsApproval marks an edit that is not a person's (the MCP face):
	// it approves nothing, and a server whose definition it changes is
	// saved but not started until a person approves it (R-CAT-6).
	NeedsApproval bool
}

// DecodeServer decodes one server's JSON strictly, reporting problems with
// their full key path (mcp.servers.NAME.…), exactly as in the file.
func DecodeServer(name string, raw json.RawMessage) (config.Server, error) {
	key, _ := json.Marshal(name)
	doc := fmt.Sprintf(`{"mcp":{"servers":{%s:%s}}}`, key, raw)
	if len(raw) == 0 {
		doc = fmt.Sprintf(`{"mcp":{"servers":{%s:null}}}`, key)
	}
	f, err := config.Decode([]byte(doc))
	if err != nil {
		return config.Server{}, err
	}
	return f.MCP.Servers[name], nil
}

// PutServer adds or replaces a server as one transaction: the new server is
// started beside the running set; only if it starts, initializes and is
// discovered is the configuration saved and the new server swapped in, and
// the one it replaces stopped. Otherwise nothing changed and the error says
// why (a *StartError). It returns the new revision.
func (h *Host) PutServer(ctx context.Context, req PutRequest) (int64, error) {
	sc, err := DecodeServer(req.Name, req.Config)
	if err != nil {
		return 0, err
	}
	if err := sandboxRefusal(runtime.GOOS, req.Name, sc); err != nil {
		return 0, err
	}
	h.applyMu.Lock()
	defer h.applyMu.Unlock()

	cur := h.opts.Store.Config()
	if err := checkBased(cur, req.Based); err != nil {
		return 0, err
	}
	old, exists := cur.MCP.Servers[req.Name]
	switch {
	case req.Create && exists:
		return 0, &ExistsError{Name: req.Name}
	case !req.Create && !exists:
		return 0, &NotFoundError{What: "server", Name: req.Name}
	case exists && reflect.DeepEqual(old, sc) && !changesSecrets(req.Secrets):
		return cur.Revision, nil // unchanged servers are kept, not restarted
	}
	next := cur.Clone()
	if next.MCP.Servers == nil {
		next.MCP.Servers = map[string]config.Server{}
	}
	next.MCP.Servers[req.Name] = sc
	if _, err := h.formSecrets(req.Name, sc, req.Secrets); err != nil {
		return 0, err
	}
	var before *config.Server
	if exists {
		before = &old
	}
	approval := h.approveEdit(&req, old, exists, sc)
	rev, err := h.commitServer(ctx, req.Name, next, before, req.NoVerify, req.Secrets)
	if err != nil {
		approval.abort()
		return 0, err
	}
	return rev, approval.commit()
}

func changesSecrets(m map[string]string) bool {
	for _, v := range m {
		if v != "" {
			return true
		}
	}
	return false
}

// formSecrets applies a form's secret fields to a copy of the managed
// environment; nil if they change nothing (R-API-3).
func (h *Host) formSecrets(server string, sc config.Server, form map[string]string) (*creds.File, error) {
	if !changesSecrets(form) {
		return nil, nil
	}
	refs := sc.VarNames()
	next := h.opts.Store.Creds()
	for name, v := range form {
		if !slices.Contains(refs, name) {
			return nil, fmt.Errorf("the secret %s is not referenced by server %s: reference it in the settings ({\"env\": \"%s\"}) or leave it out", name, server, name)
		}
		switch v {
		case "":
			// blank: keep what is stored
		case "-":
			delete(next.Env, name)
			delete(next.Owners, name)
		default:
			next.Env[name] = v
			if next.Owners == nil {
				next.Owners = map[string]string{}
			}
			next.Owners[name] = server
		}
	}
	return next, nil
}

// SetEnabled switches a server on (verifying that it starts) or off.
func (h *Host) SetEnabled(ctx context.Context, name string, on bool, based int64) (int64, error) {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	cur := h.opts.Store.Config()
	if err := checkBased(cur, based); err != nil {
		return 0, err
	}
	sc, ok := cur.MCP.Servers[name]
	if !ok {
		return 0, &NotFoundError{What: "server", Name: name}
	}
	if sc.IsEnabled() == on {
		return cur.Revision, nil
	}
	next := cur.Clone()
	sc.Enabled = nil // enabled is the default; keep the file minimal
	if !on {
		off := false
		sc.Enabled = &off
	}
	before := cur.MCP.Servers[name]
	next.MCP.Servers[name] = sc
	return h.commitServer(ctx, name, next, &before, false, nil)
}

// commitServer prepares the server as configured in next (resolving
// through the form's secrets, if the save carries any), saves secrets and
// then next, and swaps the server in. The caller holds applyMu; before is
// the server's entry that next replaces (nil for a new server).
//
// The verification start runs without applyMu: it may take up to the
// server's startup timeout, and writes to other servers and secrets must
// not wait for it. Afterwards the edit is applied to the settings and
// secrets as they are then; if the server itself was changed, added or
// removed meanwhile, the save is refused as a conflict.
//
// The secrets are saved first: a crash between the two saves leaves the new
// values stored and the old settings in place, never settings that
// reference a secret that was not saved.
func (h *Host) commitServer(ctx context.Context, name string, next *config.File, before *config.Server, noVerify bool, form map[string]string) (int64, error) {
	if err := config.Validate(next); err != nil {
		return 0, err
	}
	// A hand edit not yet applied would be lost by the save: refuse before
	// anything starts.
	if err := h.opts.Store.CheckUnchanged(); err != nil {
		return 0, err
	}
	sc := next.MCP.Servers[name]
	secrets, err := h.formSecrets(name, sc, form)
	if err != nil {
		return 0, err
	}
	run := sc.IsEnabled() && mcpEnabled(next)
	lookup := h.lookup
	if secrets != nil {
		lookup = func(v string) (string, bool) {
			if val, ok := secrets.Env[v]; ok {
				return val, true
			}
			return os.LookupEnv(v)
		}
	}
	srv, prepErr := h.newServerWith(name, sc, next, lookup)
	if prepErr != nil && run && !noVerify {
		return 0, prepErr // a missing variable: nothing saved
	}
	adding := false // announced as being added (announceAdding)
	if run && prepErr == nil && !noVerify {
		// A server that asks for an OAuth login is saved all the same: the
		// login needs it saved, and its status says what to do.
		// A server with credentials of its own (an API key header) that
		// answers 401 has the wrong key: that is refused as before.
		adding = before == nil && h.announceAdding(name, srv)
		h.applyMu.Unlock()
		err := srv.Start(ctx)
		h.applyMu.Lock()
		if err != nil && !(h.needsLogin(name, err) && (len(sc.Headers) == 0 || sc.OAuth != nil)) {
			srv.Stop()
			h.announceAddGone(name, adding)
			return 0, &StartError{Server: name, Err: err, Stderr: srv.Status().Stderr}
		}
		if next, secrets, err = h.rebase(name, sc, before, form); err != nil {
			srv.Stop()
			h.announceAddGone(name, adding)
			return 0, err
		}
	}
	var oldSecrets *creds.File
	if secrets != nil {
		oldSecrets = h.opts.Store.Creds()
		if _, err := h.opts.Store.CommitCreds(secrets.Revision, secrets); err != nil {
			srv.Stop()
			h.announceAddGone(name, adding)
			return 0, err
		}
	}
	rev, err := h.opts.Store.CommitConfig(next.Revision, next)
	if err != nil {
		srv.Stop()
		h.announceAddGone(name, adding)
		if oldSecrets != nil {
			// Put the secrets back as they were, so that nothing changed.
			if _, rerr := h.opts.Store.CommitCreds(0, oldSecrets); rerr != nil {
				h.log.Error("restoring secrets after a failed save failed", "server", name, "err", rerr)
			}
		}
		return 0, err
	}
	next.Revision = rev
	old := h.swap(name, srv, next)
	if old != nil {
		old.Stop()
	}
	// A server that could not be prepared stays failed with the reason:
	// it is never started without its variables.
	if run && noVerify && prepErr != nil {
		h.leftOut(srv, next) // probed again on activity, e.g. once the secret is set
	}
	if run && noVerify && prepErr == nil {
		h.startInBackground(context.WithoutCancel(ctx), srv, next)
	}
	return rev, nil
}

// rebase applies an edit of server name (its new entry sc, replacing
// before) to the settings and secrets as they are now, after a
// verification start ran without applyMu (held again by the caller).
func (h *Host) rebase(name string, sc config.Server, before *config.Server, form map[string]string) (*config.File, *creds.File, error) {
	if h.closing {
		return nil, nil, errors.New("the daemon is stopping: nothing was saved")
	}
	cur := h.opts.Store.Config()
	now, exists := cur.MCP.Servers[name]
	switch {
	case before == nil && exists:
		return nil, nil, &ExistsError{Name: name}
	case before != nil && (!exists || !reflect.DeepEqual(now, *before)):
		return nil, nil, fmt.Errorf("server %s was changed by another edit while this one was starting it; nothing was saved: see `plexus ls` and redo the edit", name)
	}
	next := cur.Clone()
	if next.MCP.Servers == nil {
		next.MCP.Servers = map[string]config.Server{}
	}
	next.MCP.Servers[name] = sc
	if err := config.Validate(next); err != nil {
		return nil, nil, err
	}
	secrets, err := h.formSecrets(name, sc, form)
	return next, secrets, err
}

// DeleteServer removes a server and stops it; it returns once the server's
// processes are reaped.
func (h *Host) DeleteServer(name string, based int64) (int64, error) {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	cur := h.opts.Store.Config()
	if err := checkBased(cur, based); err != nil {
		return 0, err
	}
	if _, ok := cur.MCP.Servers[name]; !ok {
		return 0, &NotFoundError{What: "server", Name: name}
	}
	next := cur.Clone()
	delete(next.MCP.Servers, name)
	rev, err := h.opts.Store.CommitConfig(cur.Revision, next)
	if err != nil {
		return 0, err
	}
	next.Revision = rev
	if old := h.swap(name, nil, next); old != nil {
		old.Stop()
	}
	if err := h.catalogs.Forget(name); err != nil {
		h.log.Warn("catalog cache: a removed server's entry was not dropped", "server", name, "err", err)
	}
	// Its pins go with it: a server added later under the name is new.
	if _, err := h.pins.store.Forget(name); err != nil {
		return rev, fmt.Errorf("server %s was removed, but its pins were not: %w", name, err)
	}
	// Its own secrets go with it (R-API-3) — after the settings stopped
	// referencing them, so that a crash in between leaves unused secrets,
	// never a server without its secret.
	if err := h.dropOwnedSecrets(name, next); err != nil {
		return rev, fmt.Errorf("server %s was removed, but its secrets were not: %w", name, err)
	}
	// And its OAuth tokens and registration (R-API-3).
	if h.oauth != nil {
		if err := h.oauth.Forget(name); err != nil {
			return rev, fmt.Errorf("server %s was removed, but its OAuth tokens were not: %w", name, err)
		}
	}
	return rev, nil
}

// dropOwnedSecrets deletes the secrets owned by server that no remaining
// server references.
func (h *Host) dropOwnedSecrets(server string, cfg *config.File) error {
	c := h.opts.Store.Creds()
	used := map[string]bool{}
	for _, sc := range cfg.MCP.Servers {
		for _, v := range sc.VarNames() {
			used[v] = true
		}
	}
	changed := false
	for v, owner := range c.Owners {
		if owner == server && !used[v] {
			delete(c.Env, v)
			delete(c.Owners, v)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	_, err := h.opts.Store.CommitCreds(c.Revision, c)
	return err
}

// swap installs srv under name (nil removes it) and publishes; it returns
// the server it replaced.
func (h *Host) swap(name string, srv *supervisor.Server, cfg *config.File) *supervisor.Server {
	h.serversMu.Lock()
	old := h.servers[name]
	if srv == nil {
		delete(h.servers, name)
	} else {
		h.servers[name] = srv
	}
	h.cfg = cfg
	h.serversMu.Unlock()
	h.publish()
	return old
}

func checkBased(cur *config.File, based int64) error {
	if based != 0 && based != cur.Revision {
		return &store.ConflictError{File: store.ConfigFile, Based: based, Current: cur.Revision}
	}
	return nil
}

// SetSecret sets a managed variable. The value is never logged or returned.
func (h *Host) SetSecret(name, value string, based int64) (int64, error) {
	if !creds.ValidName(name) {
		return 0, fmt.Errorf("%q is not a valid variable name: use letters, digits and _, not starting with a digit", name)
	}
	if value == "" {
		return 0, fmt.Errorf("the value of %s is empty: to remove it, use `plexus secret rm %s`", name, name)
	}
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	next := h.opts.Store.Creds()
	next.Env[name] = value
	return h.opts.Store.CommitCreds(based, next)
}

// DeleteSecret removes a managed variable.
func (h *Host) DeleteSecret(name string, based int64) (int64, error) {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	next := h.opts.Store.Creds()
	if _, ok := next.Env[name]; !ok {
		return 0, &NotFoundError{What: "secret", Name: name}
	}
	delete(next.Env, name)
	return h.opts.Store.CommitCreds(based, next)
}

// announceAdding shows a server being added in the event stream while its
// first start checks it, before it is saved: an open terminal UI or web
// page lists it at once as starting, with its start's output (its stderr
// lines are announced as they come). It reports whether it announced.
func (h *Host) announceAdding(name string, srv *supervisor.Server) bool {
	h.serversMu.Lock()
	defer h.serversMu.Unlock()
	if _, ok := h.servers[name]; ok {
		return false
	}
	st := serverStatus(srv, h.opts.SandboxByDefault)
	st.State, st.Since = apitype.StateStarting, time.Now()
	h.events.emit(apitype.Event{Type: apitype.EventServer, Server: name, Status: &st})
	return true
}

// announceAddGone takes a server whose add failed off the event stream's
// followers, if announceAdding showed it and nothing saved it since.
func (h *Host) announceAddGone(name string, announced bool) {
	if !announced {
		return
	}
	h.serversMu.Lock()
	defer h.serversMu.Unlock()
	if _, ok := h.servers[name]; !ok {
		h.events.emit(apitype.Event{Type: apitype.EventServerRemoved, Server: name})
	}
}
