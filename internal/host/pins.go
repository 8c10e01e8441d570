package host

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/pins"
	"github.com/plexus-mcp/plexus/internal/supervisor"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// Pinning (R-CAT-6) in the host:
//
//   - newServer refuses, with an *ApprovalError, to prepare a server whose
//     definition a person has not approved, so every path that starts
//     servers — Start, Reload, Restart, enable, probes, sessions — leaves it
//     failed and not started, and it is not probed.
//   - publish filters each server's entries through pins.Check: changed
//     tools are held back, not indexed, and answer calls with an error
//     result marked "held".
//   - A person's add or edit through the settings API (PutServer) approves
//     the definition it sets; a hand-edited file applied by Reload, or an
//     edit marked NeedsApproval (the MCP face), does not. Approve and
//     Accept are the person's decisions made later.

// hostPins is the host's side of pinning.
type hostPins struct {
	store *pins.Store
	// announced holds the held signature last announced per server;
	// guarded by serversMu.
	announced map[string]string
	// decided caches each server's decision for the next rebuild; guarded
	// by serversMu (publish.go).
	decided map[string]decided
	// gated holds the servers (*supervisor.Server) that approvalGate
	// refused to prepare: refreshPins starts those an approval made
	// elsewhere now trusts.
	gated sync.Map
}

// openPins returns the pins given in opts, or opens them from the store's
// home. If that fails every server is held back, saying why: the host
// fails closed rather than trusting what it cannot check. The daemon opens
// the pins itself, so that a broken pins.json stops it at start.
func openPins(opts Options) *pins.Store {
	if opts.Pins != nil {
		return opts.Pins
	}
	p, err := pins.OpenOn(opts.Store.Docs(), opts.Store.Config().MCP.Servers)
	if err != nil {
		opts.Logger.Error("pins not loaded: every server needs approval", "err", err)
		return pins.Unavailable(err)
	}
	return p
}

// ApprovalError says a server is not started because its definition is not
// one a person approved.
type ApprovalError struct {
	Server string
	Reason string
}

func (e *ApprovalError) Error() string {
	return fmt.Sprintf("server %s needs approval: %s; review it with `plexus approve %s`", e.Server, e.Reason, e.Server)
}

// approvalGate is the check of newServer: nil if sc is the approved
// definition of server name.
func (h *Host) approvalGate(name string, sc config.Server) error {
	if p := h.pins.store.Pending(name, pins.TrustOf(sc)); p != nil {
		return &ApprovalError{Server: name, Reason: p.Reason}
	}
	return nil
}

// needsApproval reports whether srv waits for a person's approval: such a
// server is not probed, since only the approval can change its fate.
func (h *Host) needsApproval(srv *supervisor.Server) bool {
	return h.pins.store.Pending(srv.Name(), pins.TrustOf(srv.Config())) != nil
}

// approveEdit is PutServer's part (R-CAT-6): a person's add or edit through
// the settings API is their approval of the definition it sets — for a new
// server, or one whose command, URL... the edit changes. An edit that leaves
// the definition as it was approves nothing, so that changing a timeout does
// not wave through a command swapped by hand meanwhile. An edit that is not
// a person's (NeedsApproval) approves nothing; if its definition is not
// approved it is saved without being started.
//
// The approval is provisional until the edit is saved and swapped in: the
// new server may start, and the one it replaces keeps its tools meanwhile.
// The caller ends it with commit or abort.
func (h *Host) approveEdit(req *PutRequest, old config.Server, exists bool, sc config.Server) editApproval {
	t := pins.TrustOf(sc)
	if req.NeedsApproval {
		if h.pins.store.Pending(req.Name, t) != nil {
			req.NoVerify = true
		}
		return editApproval{}
	}
	if exists && pins.TrustOf(old).Key() == t.Key() {
		return editApproval{}
	}
	commit, abort := h.pins.store.Provisional(req.Name, t)
	return editApproval{name: req.Name, abortFn: abort, commitFn: func() error {
		err := commit()
		if err != nil {
			h.publish() // no longer trusted: its tools are withheld at once
		}
		return err
	}}
}

// editApproval is a provisional approval; the zero value approves nothing.
type editApproval struct {
	name     string
	commitFn func() error
	abortFn  func()
}

// commit records the approval once the edit is saved. If that fails the
// edit stands but the server needs approval, and the caller is told so.
func (a editApproval) commit() error {
	if a.commitFn == nil {
		return nil
	}
	if err := a.commitFn(); err != nil {
		return fmt.Errorf("server %s was saved, but its approval could not be recorded, so it needs `plexus approve %s`: %w", a.name, a.name, err)
	}
	return nil
}

// abort drops the approval of an edit that failed.
func (a editApproval) abort() {
	if a.abortFn != nil {
		a.abortFn()
	}
}

// approveImported approves the servers an import adds: `plexus import` is a
// person's decision, made through the settings API, like an add.
func (h *Host) approveImported(names []string, cfg *config.File) (undo func(), err error) {
	var undos []func()
	undo = func() {
		for _, u := range slices.Backward(undos) {
			u()
		}
	}
	for _, name := range names {
		u, err := h.pins.store.Approve(name, pins.TrustOf(cfg.MCP.Servers[name]), "")
		if err != nil {
			undo()
			return nil, err
		}
		undos = append(undos, h.undoer("approval", name, u))
	}
	return undo, nil
}

// undoer wraps a pins undo for a transaction that failed. If even the undo
// cannot be saved the pins are left stricter, never looser: a definition
// approved for a failed edit is not the one configured, so the server
// needs approval at its next start. Said loudly, in the log.
func (h *Host) undoer(what, name string, u func() error) func() {
	return func() {
		if err := u(); err != nil {
			h.log.Error("pins: could not take back a change after a failed edit", "what", what, "server", name, "err", err)
		}
	}
}

// Approve records a person's approval of server name's current definition
// and starts it if it is switched on (R-CAT-6). key, if set, must be the
// definition the person was shown (apitype.Approval.Key). A server that
// does not start once approved is left failed and probed like any other.
func (h *Host) Approve(ctx context.Context, name, key string) error {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	snap := h.snap.Load()
	srv, ok := snap.servers[name]
	if !ok {
		return &NotFoundError{What: "server", Name: name}
	}
	sc := srv.Config()
	t := pins.TrustOf(sc)
	if h.pins.store.Pending(name, t) == nil {
		if key != "" && key != t.Key() {
			return &pins.ChangedError{Server: name}
		}
		return nil // approved already: nothing to restart
	}
	if _, err := h.pins.store.Approve(name, t, key); err != nil {
		return err
	}
	h.log.Info("server approved", "server", name, "key", t.Key())
	if !sc.IsEnabled() || !mcpEnabled(snap.cfg) {
		h.publish()
		return nil
	}
	fresh, err := h.newServer(name, sc, snap.cfg)
	if err == nil {
		err = fresh.Start(ctx)
	}
	h.swap(name, fresh, h.cfgLocked())
	srv.Stop()
	if err != nil {
		h.log.Warn("approved server did not start", "server", name, "err", err)
		h.leftOut(fresh, snap.cfg)
	}
	return nil
}

// Accept re-pins held tools of server name to what the server offers now:
// the named tools, or all held tools. hashes maps a tool to the definition
// the person was shown (apitype.HeldTool.NewHash). It returns the tools
// accepted; they are offered at once.
func (h *Host) Accept(name string, tools []string, all bool, hashes map[string]string) ([]string, error) {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	srv, ok := h.snap.Load().servers[name]
	if !ok {
		return nil, &NotFoundError{What: "server", Name: name}
	}
	accepted, err := h.pins.store.Accept(name, pins.TrustOf(srv.Config()), srv.Entries(), tools, all, hashes)
	if err != nil {
		return nil, err
	}
	if len(accepted) > 0 {
		h.log.Info("tools accepted", "server", name, "tools", accepted)
		h.publish()
	}
	return accepted, nil
}

// pinsView is what pinning decided when a snapshot was published.
type pinsView struct {
	decisions map[string]pins.Decision
	// withheld maps the Plexus name of a held tool, or of a pinned tool of
	// a server that needs approval, to the message a call of it gets.
	withheld map[string]string
}

// record keeps what pinning decided for server name. The caller holds
// serversMu.
func (v *pinsView) record(name string, d pins.Decision) {
	if v.decisions == nil {
		v.decisions, v.withheld = map[string]pins.Decision{}, map[string]string{}
	}
	v.decisions[name] = d
	for _, held := range d.Held {
		v.withheld[held.Entry.Name] = fmt.Sprintf("tool %s of server %s is held back: %s. Nothing was called. "+
			"A person can review the change and accept it with `plexus accept %s %s`.", held.Entry.Tool, name, held.Reason, name, held.Entry.Tool)
	}
	if d.Pending != nil {
		for _, tool := range d.WithheldNames {
			v.withheld[tool] = fmt.Sprintf("server %s is not started: it needs approval, since %s. Nothing was called. "+
				"A person can review it and approve it with `plexus approve %s`.", name, d.Pending.Reason, name)
		}
	}
}

// heldCall answers a call of a tool that is held back, if name is one.
func (s *snapshot) heldCall(name string) (string, bool) {
	msg, ok := s.pins.withheld[name]
	return msg, ok
}

// offered returns the entries of srv that a session may see: the
// published decision for the shared server, a fresh check for a session's
// own instance.
func (h *Host) offered(snap *snapshot, name string, srv *supervisor.Server) []catalog.Entry {
	if snap.servers[name] == srv {
		return snap.pins.decisions[name].Offered
	}
	return h.pins.store.Check(name, pins.TrustOf(srv.Config()), srv.Entries()).Offered
}

// status renders server name's status in s, with what pinning decided.
func (s *snapshot) status(name string) apitype.ServerStatus {
	srv := s.servers[name]
	st := serverStatus(srv, s.sandboxByDefault)
	st.State = s.publishedState(name, st.State)
	st.EventSeq = s.eventSeq.Load()
	if s.auth != nil {
		st.Auth = s.auth(name, srv.Config())
	}
	d, ok := s.pins.decisions[name]
	if !ok {
		return st
	}
	st.Tools = 0
	for _, e := range d.Offered {
		if e.Kind == catalog.KindTool {
			st.Tools++
		}
	}
	if p := d.Pending; p != nil {
		st.NeedsApproval = true
		st.Approval = &apitype.Approval{Reason: p.Reason, Key: p.Key, Current: shownDefinition(p.Current)}
		if p.Approved != nil {
			prev := shownDefinition(*p.Approved)
			at := p.ApprovedAt
			st.Approval.Approved, st.Approval.ApprovedAt = &prev, &at
		}
	}
	for _, held := range d.Held {
		ht := apitype.HeldTool{Name: held.Entry.Name, Tool: held.Entry.Tool, Reason: held.Reason, Changed: held.Changed,
			NewHash: held.NewHash, New: toolDefinition(held.New)}
		if held.Old != nil {
			old := toolDefinition(held.Old.Definition)
			at := held.Old.PinnedAt
			ht.OldHash, ht.Old, ht.PinnedAt = held.Old.Hash, &old, &at
		}
		st.Held = append(st.Held, ht)
	}
	return st
}

// shownDefinition renders a trust definition for people: names only, the
// URL with its query values redacted.
func shownDefinition(t pins.Trust) apitype.ServerDefinition {
	d := apitype.ServerDefinition{Type: t.Type, Cwd: t.Cwd, Env: t.Env}
	if t.Type == config.TypeStdio {
		d.Command = append([]string{t.Command}, t.Args...)
	} else {
		d.URL = upstream.SanitizeURL(t.URL)
		d.HeaderNames = slices.Sorted(maps.Keys(t.Headers))
		if t.BearerTokenEnvVar != "" {
			d.HeaderNames = append(d.HeaderNames, "Authorization")
		}
	}
	return d
}

func toolDefinition(d pins.Definition) apitype.ToolDefinition {
	return apitype.ToolDefinition{Title: d.Title, Description: d.Description, InputSchema: d.InputSchema,
		OutputSchema: d.OutputSchema, Annotations: d.Annotations}
}

// heldSignature identifies what of a status pinning holds back, for the
// change detection of events: which tools at which definitions, and which
// definition waits for approval.
func heldSignature(st apitype.ServerStatus) string {
	var b strings.Builder
	if st.Approval != nil {
		b.WriteString("approval:" + st.Approval.Key)
	}
	for _, t := range st.Held {
		b.WriteString("|" + t.Tool + "@" + t.NewHash)
	}
	return b.String()
}

// announceHeldLocked emits EventHeld for each server whose held tools or
// pending approval changed to something a person must look at, and
// forgets the servers gone. The caller holds serversMu.
func (h *Host) announceHeldLocked(s *snapshot) {
	if h.pins.announced == nil {
		h.pins.announced = map[string]string{}
	}
	for name := range h.pins.announced {
		if _, ok := s.servers[name]; !ok {
			delete(h.pins.announced, name)
		}
	}
	for _, name := range s.names {
		st := s.status(name)
		sig := heldSignature(st)
		if h.pins.announced[name] == sig {
			continue
		}
		h.pins.announced[name] = sig
		if sig == "" {
			continue
		}
		h.events.emit(apitype.Event{Type: apitype.EventHeld, Server: name, Held: st.Held, Approval: st.Approval})
		h.log.Warn("held back until a person decides", "server", name, "held", len(st.Held), "needs_approval", st.NeedsApproval)
	}
}

// heldWarning describes a server's held tools for the warnings of a tool
// listing, or returns "".
func heldWarning(st apitype.ServerStatus) string {
	if len(st.Held) == 0 {
		return ""
	}
	var tools []string
	for _, t := range st.Held {
		tools = append(tools, t.Tool)
	}
	what := fmt.Sprintf("%d tools are", len(tools))
	if len(tools) == 1 {
		what = "1 tool is"
	}
	return fmt.Sprintf("%s: %s held back because the server changed their definition (%s): review with `plexus accept %s`",
		st.Name, what, strings.Join(tools, ", "), st.Name)
}
