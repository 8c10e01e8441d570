// Package host is the engine of the daemon: it holds the set of supervised
// servers and the catalog built from them, published as one immutable
// snapshot, and applies settings changes as transactions — validate on a
// copy, start what is new beside what runs, save, swap, then stop what was
// replaced (R-SES-2, R-API-2).
//
// Reads (status, catalog, calls) never take the write lock: they load the
// current snapshot.
package host

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/audit"
	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/catcache"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/oauth"
	"github.com/plexus-mcp/plexus/internal/pins"
	"github.com/plexus-mcp/plexus/internal/policy"
	"github.com/plexus-mcp/plexus/internal/store"
	"github.com/plexus-mcp/plexus/internal/supervisor"
)

// Options configure a Host.
type Options struct {
	Store  *store.Store
	Logger *slog.Logger
	// Shim is the argv prefix that runs the lifeline shim in front of every
	// stdio server (see lifeline.Main); nil runs servers directly.
	Shim []string
	// Limits bound each server's catalog.
	Limits catalog.Limits
	// Observer, if set, is told of every call (the metrics).
	Observer CallObserver
	// Pins record approved servers and accepted tools (R-CAT-6); nil opens
	// them from the store's home.
	Pins *pins.Store
	// OAuth holds the logins of remote servers (R-AUTH); nil opens
	// oauth.json in the store's home. The host closes it.
	OAuth *oauth.Manager
	// Placement, in a team, says which replica runs each stdio server
	// (placement.go); nil: this daemon runs every one.
	Placement Placement
	// SandboxByDefault sandboxes a stdio server whose settings have no
	// "sandbox" with the strict preset, as a team's replica does
	// (sandbox.go); "sandbox": false opts one out.
	SandboxByDefault bool
	// Secrets are files of the daemon's own that no sandboxed server
	// reads: a replica's store key and URL files (sandbox.Policy.Secrets).
	Secrets []string
	// Audit, if set, records every call, read and get (audit.go); the
	// daemon owns and closes it.
	Audit *audit.Log
	// ApprovalWait bounds how long a call that needs the user's approval,
	// from a client that cannot be asked, waits for it on the web page or
	// `plexus approve --call` (0: DefaultApprovalWait).
	ApprovalWait time.Duration
}

// CallObserver is told the outcome and duration of every tool call:
// "ok", "tool_error", or the plexus/error marker of a failed call.
type CallObserver interface {
	// path is how the call was carried: PathDecoded or PathFrame.
	ObserveCall(server, path, outcome string, d time.Duration)
}

// UserCallObserver, if the Observer is one too, is told the user of every
// call that carries one (team mode).
type UserCallObserver interface {
	ObserveUserCall(user, server, outcome string)
}

// Host is the engine. Create it with New, then Start; Close stops every server.
type Host struct {
	opts    Options
	results resultStore // results over their cap (results.go)
	log     *slog.Logger
	// lookAgain has watchHandEdits look at extensions.json (handedit.go).
	lookAgain chan struct{}

	// applyMu serialises settings writes: each is a transaction over the
	// store and the server set.
	applyMu sync.Mutex
	// closing is set by Close (under applyMu): a verification start that
	// ran meanwhile saves nothing.
	closing bool

	// serversMu guards servers, the authoritative set; readers use snap.
	serversMu sync.Mutex
	servers   map[string]*supervisor.Server
	cfg       *config.File // the configuration the servers were built from

	snap atomic.Pointer[snapshot]

	events    bus
	announced map[string]string // guarded by serversMu: last announced state per server
	catalogFP string            // guarded by serversMu: fingerprint of the announced catalog
	pub       publishing

	probes   probes
	sessions sessions
	pins     hostPins
	catalogs *catcache.Store // the servers' catalogs as last listed (ondemand.go); nil: none kept
	oauth    *oauth.Manager  // nil only if oauth.json could not be read

	bg sync.WaitGroup // background starts
	// replacing counts, by server, the replacements Replace started
	// (placement.go); guarded by applyMu.
	replacing map[string]uint64
	// arriving marks the servers (by the object in the set) whose place
	// is being settled, until when (Arriving, placement.go).
	arriving sync.Map // *supervisor.Server → time.Time
	started  time.Time
	// limiter counts calls against mcp.policy's rate limits, across
	// reloads (gate.go).
	limiter policy.Limiter
	// waiting are the calls waiting for the user's approval (approvals.go).
	waiting waitingCalls
	// page is the web page's address, for URL-mode approvals (urlask.go).
	page approvalPage
	// scopes are the once-per-session approvals of bridged clients
	// without a session (scope.go).
	scopes scopes
}

// snapshot is an immutable view of the servers and the catalog.
type snapshot struct {
	// version counts the rebuilds: each snapshot's is one more than the
	// one before it (CatalogVersion).
	version uint64
	cfg     *config.File // never mutated
	servers map[string]*supervisor.Server
	names   []string // sorted server names
	// tools is the catalog, sorted by name, pointing into the servers'
	// entries: lookup finds a name in it by binary search (a map beside it
	// would keep a copy of every entry).
	tools []*catalog.Entry
	// pins is what pinning decided: held tools, servers awaiting approval.
	pins pinsView
	// states are the servers' states as of this snapshot: a server is
	// ready once its catalog is in (publish.go).
	states map[string]string
	// fps fingerprint each server's offered entries (publish.go).
	fps map[string][32]byte
	// auth renders a server's OAuth state (Host.authStatus).
	auth func(name string, sc config.Server) *apitype.AuthStatus
	// sandboxByDefault is Options.SandboxByDefault, for the servers'
	// status (sandboxOf).
	sandboxByDefault bool
	// eventSeq is the Seq of the newest event a status read from this
	// snapshot is as new as (apitype.ServerStatus.EventSeq): the last one
	// emitted before the snapshot was built, then, once its own changes
	// are announced, the last of those (publish.go).
	eventSeq atomic.Int64
	// policy is mcp.policy compiled (gate.go); nil when it has no rule and
	// no limit.
	policy *policy.Policy
}

// indexed is a catalog entry with the server that answers it.
type indexed struct {
	entry  catalog.Entry
	server *supervisor.Server
}

// lookup returns the entry of the shared catalog named name.
func (s *snapshot) lookup(name string) (indexed, bool) {
	i, ok := slices.BinarySearchFunc(s.tools, name, func(e *catalog.Entry, name string) int { return strings.Compare(e.Name, name) })
	if !ok {
		return indexed{}, false
	}
	e := s.tools[i]
	return indexed{entry: *e, server: s.servers[e.Server]}, true
}

// New returns a Host over the store's settings. No server runs yet.
func New(opts Options) *Host {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Limits == (catalog.Limits{}) {
		opts.Limits = catalog.DefaultLimits()
	}
	h := &Host{opts: opts, log: opts.Logger, servers: map[string]*supervisor.Server{}, cfg: &config.File{}, started: time.Now(),
		lookAgain: make(chan struct{}, 1)}
	h.pins.store = openPins(opts)
	h.catalogs = openCatalogs(opts)
	h.oauth = opts.OAuth
	if h.oauth == nil {
		m, err := oauth.Open(oauth.Options{Docs: opts.Store.Docs(), Logger: opts.Logger.With("component", "oauth"), Audit: opts.Audit})
		if err != nil {
			h.log.Error("OAuth logins are unavailable", "err", err)
		}
		h.oauth = m
	}
	if h.oauth != nil {
		h.oauth.SetOnChange(func(account string) {
			h.publish()
			h.loginChanged(account)
		})
	}
	h.snap.Store(&snapshot{cfg: h.cfg, servers: map[string]*supervisor.Server{}})
	return h
}

// StartedAt returns when the host was created.
func (h *Host) StartedAt() time.Time { return h.started }

// Store returns the settings store.
func (h *Host) Store() *store.Store { return h.opts.Store }

// Start builds a server for every configured server and starts the enabled
// ones in the background, in parallel; it does not wait for them. A server
// that cannot be prepared (a missing variable, say) is left failed with the
// reason, and the others load as usual (R-SES-3).
func (h *Host) Start(ctx context.Context) {
	cfg := h.opts.Store.Config()
	built := map[string]*supervisor.Server{}
	var toStart []*supervisor.Server
	for name, sc := range cfg.MCP.Servers {
		srv, err := h.newServer(name, sc, cfg)
		if err != nil {
			h.log.Warn("server not prepared", "server", name, "err", err)
			if sc.IsEnabled() && mcpEnabled(cfg) {
				h.leftOut(srv, cfg)
			}
		}
		built[name] = srv
		if err == nil && sc.IsEnabled() && mcpEnabled(cfg) {
			toStart = append(toStart, srv)
		}
	}
	h.serversMu.Lock()
	h.servers = built
	h.cfg = cfg
	h.serversMu.Unlock()
	h.publish()
	for _, srv := range toStart {
		h.startInBackground(ctx, srv, cfg)
	}
}

// startInBackground starts srv without waiting for it; a server idle with
// its cached catalog is left for its first use to start (ondemand.go).
func (h *Host) startInBackground(ctx context.Context, srv *supervisor.Server, cfg *config.File) {
	if srv.State() == supervisor.StateIdle {
		return
	}
	placed := srv.RunsOn() != ""
	if placed {
		h.arrive(srv) // until it is up, or retryPlaced gives up
	}
	h.bg.Add(1)
	go func() {
		defer h.bg.Done()
		err := srv.Start(ctx)
		if err != nil {
			h.log.Warn("server failed to start", "server", srv.Name(), "err", err)
			h.leftOut(srv, cfg)
		}
		if !placed || err == nil || !h.retryPlaced(ctx, srv) {
			h.arriving.Delete(srv)
		}
	}()
}

// Close stops every server and waits until their processes are reaped.
func (h *Host) Close() {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	defer h.results.close()
	h.closing = true
	h.endSessions()
	h.serversMu.Lock()
	servers := h.servers
	h.servers = map[string]*supervisor.Server{}
	h.serversMu.Unlock()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() { defer wg.Done(); s.Stop() }()
	}
	wg.Wait()
	if h.oauth != nil {
		h.oauth.Close()
	}
	h.bg.Wait()
	h.publish()
}
