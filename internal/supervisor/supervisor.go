// Package supervisor owns the lifecycle of one configured MCP server: it
// starts the upstream connection, keeps a visible state (R-SUP-1), keeps the
// server's part of the catalog, notices at once when the connection dies,
// restarts it with backoff, and stops it.
//
// States: "disabled" (switched off), "starting", "ready", "failed" (could not
// be started or prepared; the host probes it again on activity), "backoff"
// (lost after running; restarting at NextTry — after too many failures in a
// row it is parked for a cooldown and flagged crash-looping), "needs-login"
// (a remote server whose OAuth login is over: neither restarted nor counted
// as a failure until Restart, which a login does), "stopped".
//
// A server that drops after connecting keeps its catalog entries (R-SES-5):
// its tools stay advertised and calls fail at once with a clear error. No
// call is ever retried.
package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// States: the API's names (apitype), which the supervisor's states are,
// so that the vocabulary is defined once.
const (
	StateDisabled = apitype.StateDisabled
	StateStarting = apitype.StateStarting
	StateReady    = apitype.StateReady
	StateFailed   = apitype.StateFailed
	StateBackoff  = apitype.StateBackoff
	StateStopped  = apitype.StateStopped
	// StateNeedsLogin is apitype.StateNeedsLogin.
	StateNeedsLogin = apitype.StateNeedsLogin
	// StateIdle is apitype.StateIdle (ondemand.go).
	StateIdle = apitype.StateIdle
	// StateWaking is apitype.StateWaking (ondemand.go).
	StateWaking = apitype.StateWaking
)

// Params configure a Server.
type Params struct {
	Name   string
	Config config.Server
	// Spec is the resolved connection spec; ignored for a disabled server.
	Spec   upstream.Spec
	Limits catalog.Limits
	Logger *slog.Logger
	// Policy is the restart schedule; zero means PolicyFor(Config).
	Policy Policy
	// OnChange is called (without locks held) after the state or the
	// catalog changed.
	OnChange func()
	// OnStderr receives each stderr line with its sequence number in the
	// server's ring; it must not block.
	OnStderr func(line string, seq int64)
	// NeedsLogin says whether a failure means the server waits for a
	// person's OAuth login (nil: never): it returns the error to show then
	// (with the advice to log in), or nil. Such a server is not restarted
	// with backoff, nor counted as crashing: it waits in state
	// "needs-login" for Restart.
	NeedsLogin func(error) error

	// Cached is the server's catalog as an earlier run listed it: a
	// server given one starts "idle" with it listed, and its first use
	// starts it (Use). Nil: it is started by Start.
	Cached *Cached
	// IdleStop stops a running server that nothing used or holds for
	// this long, leaving it "idle" with its catalog listed; 0 never.
	IdleStop time.Duration
	// OnListed is told (without locks held) what the server offered,
	// after each connection and each refresh: the host keeps it as the
	// server's cached catalog. Nil: nothing is told.
	OnListed func(Cached)
	// FirstStartTimeout, if longer than the startup timeout, bounds the
	// server's first start instead (one that may download it first).
	FirstStartTimeout time.Duration

	// connect replaces upstream.Connect in tests of the schedule.
	connect func(context.Context, upstream.Spec) (*upstream.Conn, error)
}

// Status is a snapshot of a server's visible state.
type Status struct {
	State           string
	Since           time.Time
	LastError       string
	LastErrorAt     time.Time
	ExitCode        *int
	HTTPStatus      int
	Stderr          []string
	Warnings        []string
	ProtocolVersion string
	ServerInfo      string
	PID             int
	Restarts        int
	// NextTry is when the next restart is due (state backoff).
	NextTry      time.Time
	CrashLooping bool
	// Installing: the start under way waits for npm to install the
	// server's package (upstream.Spec.OnInstalling).
	Installing bool
}

// ErrUnavailable is wrapped by Conn when the server is not connected.
var ErrUnavailable = errors.New("server unavailable")

// Server is one supervised server.
type Server struct {
	p      Params
	log    *slog.Logger
	stderr ring

	quit     chan struct{} // closed by Stop
	quitOnce sync.Once
	kick     chan struct{} // Restart: try now
	used     func()        // doneUse, made once: Use hands it to every call

	mu     sync.Mutex // guards the fields below
	conn   *upstream.Conn
	status Status
	cat    catalog.Built
	disc   upstream.Discovery
	// init is the server's answer to its handshake as it wrote it
	// (upstream.Conn.InitializeResult), kept after a crash as cat is.
	init json.RawMessage
	// ownEra is the era the server spoke of its own at its last
	// connection (upstream.Conn.OwnEra), kept after a crash as init is.
	ownEra  string
	running bool // a Start or the supervise loop owns the server
	stopped bool
	// loginOver: the live connection's login is over (LoginNeeded); it
	// takes no new call, and is closed once the ones in flight drained.
	loginOver bool
	failures  int // consecutive failures, for the backoff
	od        onDemand

	wg sync.WaitGroup // supervise and refresh goroutines
}

// New returns a server in state "stopped", or "disabled" if the config says so.
func New(p Params) *Server {
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	if p.OnChange == nil {
		p.OnChange = func() {}
	}
	if p.Policy == (Policy{}) {
		p.Policy = PolicyFor(p.Config)
	}
	if p.connect == nil {
		p.connect = upstream.Connect
	}
	if p.NeedsLogin == nil {
		p.NeedsLogin = func(error) error { return nil }
	}
	s := &Server{p: p, log: p.Logger.With("server", p.Name), quit: make(chan struct{}), kick: make(chan struct{}, 1)}
	s.used = s.doneUse
	s.status = Status{State: StateStopped, Since: time.Now()}
	if !p.Config.IsEnabled() {
		s.status.State = StateDisabled
	} else if p.Cached != nil {
		s.fromCache(*p.Cached)
	}
	s.od.lastUse = time.Now()
	return s
}

// Name returns the server's name.
func (s *Server) Name() string { return s.p.Name }

// Config returns the configuration the server was built from.
func (s *Server) Config() config.Server { return s.p.Config }

// RunsOn is the team replica that runs the server, "" for this process
// (upstream.Spec.RunsOn).
func (s *Server) RunsOn() string { return s.p.Spec.RunsOn }

// Start connects to the server (start, handshake and discovery, bounded by
// the spec's startup timeout) and, once it is up, supervises it: a lost
// connection is restarted with backoff until Stop. If the first connection
// fails the server is left "failed" with the reason, everything started is
// torn down, and Start returns the error; calling Start again tries again.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.stopped || s.running {
		s.mu.Unlock()
		return errors.New("server " + s.p.Name + " is already running or stopped")
	}
	s.running = true
	s.mu.Unlock()

	s.setState(StateStarting, nil)
	conn, cat, err := s.connectOnce(ctx, "")
	if err != nil {
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
		if le := s.p.NeedsLogin(err); le != nil {
			s.fail(StateNeedsLogin, le)
			return err
		}
		s.fail(StateFailed, err)
		return err
	}
	if !s.install(conn, cat) {
		return errors.New("server " + s.p.Name + " was stopped while starting")
	}
	s.wg.Add(1)
	go s.supervise(conn)
	return nil
}

// built is a server's catalog as built from one discovery.
type built struct {
	disc     upstream.Discovery
	cat      catalog.Built
	warnings []string
	early    *earlyChanges // of the connection listed
}

// connectUntilQuit connects once, given up when the server is told to
// quit; version is as connectOnce's.
func (s *Server) connectUntilQuit(version string) (*upstream.Conn, built, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	return s.connectOnce(ctx, version)
}

// connectOnce connects and builds the catalog entries; on failure nothing
// is left running.
//
// A list change the server announces while it is being connected may
// have come after it was listed (a team's replica that runs the server
// offers its tools a moment after its name: the others may list nothing,
// then hear of the tools before they are done connecting). There is no
// live connection yet for onListChanged to list again, so the change is
// held: the server is listed again before its entries are built, and
// install lists it once more for a change held after that.
//
// version, if not "", is the session-era version the server is known to
// speak (knownVersion): the handshake is initialize in it, without the
// server/discover probe first.
func (s *Server) connectOnce(ctx context.Context, version string) (*upstream.Conn, built, error) {
	spec := s.p.Spec
	if version != "" {
		spec.ProtocolVersion = version
	}
	limit, setting := s.startLimit()
	spec.StartupTimeout = limit
	early := &earlyChanges{}
	spec.OnListChanged = func(kind string) {
		if !early.hold(kind) {
			s.onListChanged(kind)
		}
	}
	spec.OnStderr = s.onStderr
	spec.OnInstalling = s.onInstalling
	if spec.Logger == nil {
		spec.Logger = s.p.Logger // upstream adds the server's name itself
	}
	conn, err := s.p.connect(ctx, spec)
	if err != nil {
		return nil, built{}, s.timeoutHint(err, setting)
	}
	b := built{disc: conn.Discovery(), early: early}
	if early.take() != "" {
		rctx, cancel := context.WithTimeout(ctx, s.startupTimeout())
		b.disc, err = conn.Refresh(rctx)
		cancel()
		if err != nil {
			conn.Close()
			return nil, built{}, err
		}
	}
	if b.cat, b.warnings, err = s.build(b.disc); err != nil {
		conn.Close()
		return nil, built{}, err
	}
	return conn, b, nil
}

// install makes conn the live connection; false if the server was stopped
// meanwhile (conn is then closed).
func (s *Server) install(conn *upstream.Conn, b built) bool {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		conn.Close()
		return false
	}
	s.conn, s.disc, s.cat, s.init, s.ownEra = conn, b.disc, b.cat, conn.InitializeResult(), conn.OwnEra()
	s.loginOver = false
	s.status.Warnings = b.warnings
	s.status.ProtocolVersion = conn.ProtocolVersion()
	if info := conn.ServerInfo(); info != nil {
		s.status.ServerInfo = info.Name + " " + info.Version
	}
	s.status.PID = conn.PID()
	s.status.ExitCode, s.status.HTTPStatus = nil, 0
	s.status.NextTry, s.status.CrashLooping = time.Time{}, false
	s.od.connected = true
	s.od.lastUse = time.Now()
	s.mu.Unlock()
	s.setState(StateReady, nil)
	s.log.Info("server ready", "protocol", conn.ProtocolVersion(), "tools", len(b.disc.Tools))
	s.listed(conn.InitializeResult(), b.disc)
	s.askLogs(conn)
	if kind := b.early.release(); kind != "" {
		s.onListChanged(kind)
	}
	return true
}

// earlyChanges holds the list changes a connection announces before it is
// installed (connectOnce).
type earlyChanges struct {
	mu      sync.Mutex
	live    bool   // installed: its changes go to onListChanged
	pending string // the kind of a change held; "" for none
}

// hold keeps a change of kind while the connection is not installed, and
// reports whether it did.
func (e *earlyChanges) hold(kind string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.live {
		return false
	}
	if e.pending == "" {
		e.pending = kind
	}
	return true
}

// take returns the kind of the change held, if any, and forgets it.
func (e *earlyChanges) take() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	kind := e.pending
	e.pending = ""
	return kind
}

// release marks the connection installed and returns the kind of a
// change held since the last take, if any.
func (e *earlyChanges) release() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.live = true
	kind := e.pending
	e.pending = ""
	return kind
}

// build prepares the server's catalog from what it listed. Every warning —
// a list the server refused, a tool left out, text cleaned or bounded —
// goes to the log as well as the status.
func (s *Server) build(d upstream.Discovery) (catalog.Built, []string, error) {
	f := catalog.Filter{Enabled: s.p.Config.EnabledTools, Disabled: s.p.Config.DisabledTools}
	lists := catalog.Lists{Tools: d.Tools, Resources: d.Resources, Templates: d.ResourceTemplates, Prompts: d.Prompts}
	b, warnings, err := catalog.Build(s.p.Name, lists, f, s.p.Limits)
	warnings = append(append([]string(nil), d.Warnings...), warnings...)
	for _, w := range warnings[len(d.Warnings):] {
		s.log.Warn("catalog", "warning", w)
	}
	return b, warnings, err
}

// Stop closes the connection, ends the supervision and waits until the
// server's processes are reaped. It is safe after a failed Start and
// idempotent.
func (s *Server) Stop() {
	s.quitOnce.Do(func() { close(s.quit) })
	s.mu.Lock()
	s.stopped = true
	conn := s.conn
	s.conn = nil
	s.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
	s.wg.Wait()
	s.mu.Lock()
	if s.status.State != StateDisabled {
		s.status.State = StateStopped
		s.status.Since = time.Now()
		s.status.PID = 0
		s.status.NextTry = time.Time{}
	}
	s.mu.Unlock()
}

// loginDrain is how long the connection of a server whose login ended
// stays open for the requests in flight on it: each fails by itself (the
// request was refused, or not sent), and closing the connection under
// them would make their outcome unknown.
const loginDrain = 3 * time.Second

// LoginNeeded takes a ready server whose OAuth login is over (its token
// refused, and no refresh mended it; why says so) out of service: it is
// "needs-login" at once and takes no new call, and its connection is
// closed a moment later, after which it waits for a login rather than
// stay "ready" with every request refused.
func (s *Server) LoginNeeded(why error) {
	s.mu.Lock()
	conn := s.conn
	if conn == nil || s.loginOver || s.stopped {
		s.mu.Unlock()
		return
	}
	s.loginOver = true
	s.wg.Add(1)
	s.mu.Unlock()
	s.fail(StateNeedsLogin, why)
	s.log.Warn("server needs an OAuth login: taken out of service", "err", why)
	go func() {
		defer s.wg.Done()
		t := time.NewTimer(loginDrain)
		defer t.Stop()
		select {
		case <-t.C:
		case <-s.quit:
		case <-conn.Done():
		}
		conn.Close() // the supervise loop sees it end, and waits for a login
	}()
}

// Restart asks a server in backoff (or waiting for a login) to try again
// now, with its failure count reset. It does nothing to a server that is
// not restarting.
func (s *Server) Restart() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Conn returns the live connection, or an error wrapping ErrUnavailable
// that says why there is none and when the next try is.
func (s *Server) Conn() (*upstream.Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil && !s.loginOver {
		return s.conn, nil
	}
	return nil, s.unavailableLocked()
}

// Status returns a snapshot of the visible state.
func (s *Server) Status() Status {
	s.mu.Lock()
	st := s.status
	s.mu.Unlock()
	st.Stderr, _ = s.stderr.snapshot()
	st.Warnings = append([]string(nil), st.Warnings...)
	return st
}

// State returns the visible state alone, without the copies Status makes.
func (s *Server) State() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status.State
}

// Logs returns the kept stderr lines and the sequence number of the next.
func (s *Server) Logs() ([]string, int64) { return s.stderr.snapshot() }

// Entries returns the server's catalog entries (kept after a crash).
func (s *Server) Entries() []catalog.Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cat.Entries
}

// InitializeResult is the server's answer to its handshake as it wrote it
// (its capabilities, server info and instructions), from its last
// connection; nil before it first connected.
func (s *Server) InitializeResult() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.init
}

// OwnEra is the era the server spoke of its own at its last connection
// (upstream.Conn.OwnEra): kept while it restarts, so that a bare profile
// offers a client the same eras then; "" before it first connected or when
// not known.
func (s *Server) OwnEra() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ownEra
}

// Catalog returns the server's prepared catalog: its entries, and its
// resources, templates and prompts as it wrote them (kept after a crash).
func (s *Server) Catalog() catalog.Built {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cat
}

// Discovery returns what the server offered when last listed.
func (s *Server) Discovery() upstream.Discovery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.disc
}

// MarkFailed records that the server could not even be prepared (a missing
// variable, say) or started, so that its status says why; a failure that
// is a login's (Params.NeedsLogin) leaves it waiting for one.
func (s *Server) MarkFailed(err error) {
	if le := s.p.NeedsLogin(err); le != nil {
		s.fail(StateNeedsLogin, le)
		return
	}
	s.fail(StateFailed, err)
}

// onListChanged refreshes the server's part of the catalog after an
// upstream list_changed notification (R-SUP-3).
func (s *Server) onListChanged(kind string) {
	s.mu.Lock()
	conn := s.conn
	if conn == nil || s.stopped {
		s.mu.Unlock()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), s.startupTimeout())
		defer cancel()
		disc, err := conn.Refresh(ctx)
		if err != nil {
			s.log.Warn("refreshing catalog failed", "kind", kind, "err", err)
			return
		}
		cat, warnings, err := s.build(disc)
		if err != nil {
			// Keep serving the catalog we had; say why it was not updated.
			s.log.Warn("refreshed catalog refused", "err", err)
			s.mu.Lock()
			s.status.LastError, s.status.LastErrorAt = err.Error(), time.Now()
			s.mu.Unlock()
			s.p.OnChange()
			return
		}
		s.mu.Lock()
		current := s.conn == conn
		if current {
			s.disc, s.cat, s.status.Warnings = disc, cat, warnings
		}
		s.mu.Unlock()
		s.log.Info("catalog refreshed", "kind", kind, "tools", len(disc.Tools))
		s.p.OnChange()
		if current {
			s.listed(conn.InitializeResult(), disc)
		}
	}()
}

// listed tells Params.OnListed what the server offered.
func (s *Server) listed(init json.RawMessage, d upstream.Discovery) {
	if s.p.OnListed != nil {
		s.p.OnListed(Cached{Init: init, Disc: d})
	}
}

func (s *Server) startupTimeout() time.Duration {
	if s.p.Spec.StartupTimeout > 0 {
		return s.p.Spec.StartupTimeout
	}
	return time.Duration(config.DefaultStartupTimeoutMs) * time.Millisecond
}

func (s *Server) onStderr(line string) {
	seq := s.stderr.add(line)
	if s.p.OnStderr != nil {
		s.p.OnStderr(line, seq)
	}
}

// onInstalling marks a start as installing its package (Status.Installing).
func (s *Server) onInstalling() {
	s.mu.Lock()
	starting := s.status.State == StateStarting || s.status.State == StateWaking
	if starting {
		s.status.Installing = true
	}
	s.mu.Unlock()
	if starting {
		s.p.OnChange()
	}
}

func (s *Server) setState(state string, err error) {
	s.mu.Lock()
	s.status.State, s.status.Installing = state, false
	s.status.Since = time.Now()
	if err != nil {
		s.status.LastError = err.Error()
		s.status.LastErrorAt = s.status.Since
	}
	s.mu.Unlock()
	s.p.OnChange()
}

// fail records err with its exit code or HTTP status and enters state.
func (s *Server) fail(state string, err error) {
	s.mu.Lock()
	var ee *upstream.ExitError
	if errors.As(err, &ee) {
		code := ee.Code
		s.status.ExitCode = &code
	}
	var se *upstream.StatusError
	if errors.As(err, &se) {
		s.status.HTTPStatus = se.StatusCode
	}
	s.mu.Unlock()
	s.setState(state, err)
}

func jitter() float64 { return rand.Float64() }

// SetNextTry records when a failed server will next be probed, so that its
// status says so; the host's probes own that schedule.
func (s *Server) SetNextTry(t time.Time) {
	s.mu.Lock()
	changed := s.status.NextTry != t
	s.status.NextTry = t
	s.mu.Unlock()
	if changed {
		s.p.OnChange()
	}
}
