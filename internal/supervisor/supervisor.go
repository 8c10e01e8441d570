// Package supervisor owns the lifecycle of one configured MCP server: it
// starts the upstream connection, records a visible state (R-SUP-1), keeps
// the server's part of the catalog, notices when the connection dies, and
// stops it.
//
// A server that drops after connecting keeps its catalog entries (R-SES-5):
// its tools stay advertised and calls fail at once with a clear error.
// Automatic restarts with backoff are the next layer of this package.
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// States, as shown to users.
const (
	StateDisabled = "disabled"
	StateStarting = "starting"
	StateReady    = "ready"
	StateFailed   = "failed"
	StateBackoff  = "backoff"
	StateStopped  = "stopped"
)

// Params configure a Server.
type Params struct {
	Name   string
	Config config.Server
	// Spec is the resolved connection spec; ignored for a disabled server.
	Spec   upstream.Spec
	Limits catalog.Limits
	Logger *slog.Logger
	// OnChange is called (without locks held) after the state or the
	// catalog changed.
	OnChange func()
}

// Status is a snapshot of a server's visible state.
type Status struct {
	State           string
	Since           time.Time
	LastError       string
	LastErrorAt     time.Time
	ExitCode        *int
	Stderr          []string
	Warnings        []string
	ProtocolVersion string
	ServerInfo      string
	PID             int
}

// ErrUnavailable is wrapped by Conn when the server is not connected.
var ErrUnavailable = errors.New("server unavailable")

// Server is one supervised server.
type Server struct {
	p   Params
	log *slog.Logger

	mu      sync.Mutex // guards the fields below
	conn    *upstream.Conn
	status  Status
	entries []catalog.Entry
	disc    upstream.Discovery
	stopped bool

	wg sync.WaitGroup // watcher and refresh goroutines
}

// New returns a server in state "stopped", or "disabled" if the config says so.
func New(p Params) *Server {
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	if p.OnChange == nil {
		p.OnChange = func() {}
	}
	s := &Server{p: p, log: p.Logger.With("server", p.Name)}
	s.status = Status{State: StateStopped, Since: time.Now()}
	if !p.Config.IsEnabled() {
		s.status.State = StateDisabled
	}
	return s
}

// Name returns the server's name.
func (s *Server) Name() string { return s.p.Name }

// Config returns the configuration the server was built from.
func (s *Server) Config() config.Server { return s.p.Config }

// Start connects to the server (start, handshake and discovery, bounded by
// the spec's startup timeout) and builds its catalog entries. On failure the
// server is in state "failed", everything started is torn down, and the
// error says why.
func (s *Server) Start(ctx context.Context) error {
	s.setState(StateStarting, nil)
	spec := s.p.Spec
	spec.OnListChanged = s.onListChanged
	if spec.Logger == nil {
		spec.Logger = s.p.Logger // upstream adds the server's name itself
	}
	conn, err := upstream.Connect(ctx, spec)
	if err != nil {
		s.mu.Lock()
		var stderr []string
		var se *upstream.ConnectError
		if errors.As(err, &se) {
			stderr = se.Stderr
		}
		s.status.Stderr = stderr
		s.mu.Unlock()
		s.setState(StateFailed, err)
		return err
	}
	disc := conn.Discovery()
	entries, warnings, err := s.build(disc)
	if err != nil {
		conn.Close()
		s.setState(StateFailed, err)
		return err
	}

	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		conn.Close()
		return fmt.Errorf("server %s was stopped while starting", s.p.Name)
	}
	s.conn = conn
	s.disc = disc
	s.entries = entries
	s.status.Warnings = warnings
	s.status.ProtocolVersion = conn.ProtocolVersion()
	if info := conn.ServerInfo(); info != nil {
		s.status.ServerInfo = info.Name + " " + info.Version
	}
	s.status.PID = conn.PID()
	s.status.ExitCode = nil
	s.mu.Unlock()
	s.setState(StateReady, nil)
	s.log.Info("server ready", "protocol", conn.ProtocolVersion(), "tools", len(disc.Tools))

	s.wg.Add(1)
	go s.watch(conn)
	return nil
}

func (s *Server) build(d upstream.Discovery) ([]catalog.Entry, []string, error) {
	f := catalog.Filter{Enabled: s.p.Config.EnabledTools, Disabled: s.p.Config.DisabledTools}
	return catalog.Build(s.p.Name, d.Tools, d.Resources, d.ResourceTemplates, d.Prompts, f, s.p.Limits)
}

// watch notices the end of a connection that was not stopped on purpose.
func (s *Server) watch(conn *upstream.Conn) {
	defer s.wg.Done()
	<-conn.Done()
	s.mu.Lock()
	if s.stopped || s.conn != conn {
		s.mu.Unlock()
		return
	}
	s.conn = nil
	s.status.PID = 0
	s.status.Stderr = conn.Stderr()
	var ee *upstream.ExitError
	if errors.As(conn.Err(), &ee) {
		code := ee.Code
		s.status.ExitCode = &code
	}
	s.mu.Unlock()
	err := conn.Err()
	if err == nil {
		err = errors.New("connection closed")
	}
	s.log.Warn("server connection lost", "err", err)
	s.setState(StateFailed, fmt.Errorf("connection lost: %w", err))
	conn.Close() // reap what is left of the process group
}

func (s *Server) onListChanged(kind string) {
	s.mu.Lock()
	conn := s.conn
	stopped := s.stopped
	if conn == nil || stopped {
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
		entries, warnings, err := s.build(disc)
		if err != nil {
			s.log.Warn("refreshed catalog refused", "err", err)
			s.recordError(err)
			return
		}
		s.mu.Lock()
		if s.conn == conn {
			s.disc, s.entries, s.status.Warnings = disc, entries, warnings
		}
		s.mu.Unlock()
		s.log.Info("catalog refreshed", "kind", kind, "tools", len(disc.Tools))
		s.p.OnChange()
	}()
}

func (s *Server) startupTimeout() time.Duration {
	if s.p.Spec.StartupTimeout > 0 {
		return s.p.Spec.StartupTimeout
	}
	return time.Duration(config.DefaultStartupTimeoutMs) * time.Millisecond
}

// Stop closes the connection and waits until the server's processes are
// reaped. It is safe after a failed Start and idempotent.
func (s *Server) Stop() {
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
	}
	s.mu.Unlock()
}

// Conn returns the live connection, or an error wrapping ErrUnavailable
// that says why there is none.
func (s *Server) Conn() (*upstream.Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		return s.conn, nil
	}
	switch s.status.State {
	case StateDisabled:
		return nil, fmt.Errorf("%w: %s is disabled (enable it with `plexus enable %s`)", ErrUnavailable, s.p.Name, s.p.Name)
	case StateStarting:
		return nil, fmt.Errorf("%w: %s is starting", ErrUnavailable, s.p.Name)
	}
	if s.status.LastError != "" {
		return nil, fmt.Errorf("%w: %s is %s: %s", ErrUnavailable, s.p.Name, s.status.State, s.status.LastError)
	}
	return nil, fmt.Errorf("%w: %s is %s", ErrUnavailable, s.p.Name, s.status.State)
}

// Status returns a snapshot of the visible state.
func (s *Server) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status
	if s.conn != nil {
		st.Stderr = s.conn.Stderr()
	}
	st.Stderr = append([]string(nil), st.Stderr...)
	st.Warnings = append([]string(nil), st.Warnings...)
	return st
}

// Entries returns the server's catalog entries (kept after a crash).
func (s *Server) Entries() []catalog.Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.entries
}

// Discovery returns what the server offered when last listed.
func (s *Server) Discovery() upstream.Discovery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.disc
}

func (s *Server) recordError(err error) {
	s.mu.Lock()
	s.status.LastError = err.Error()
	s.status.LastErrorAt = time.Now()
	s.mu.Unlock()
	s.p.OnChange()
}

func (s *Server) setState(state string, err error) {
	s.mu.Lock()
	s.status.State = state
	s.status.Since = time.Now()
	if err != nil {
		s.status.LastError = err.Error()
		s.status.LastErrorAt = s.status.Since
	}
	s.mu.Unlock()
	s.p.OnChange()
}

// MarkFailed records that the server could not even be prepared (a missing
// variable, say), so that its status says why.
func (s *Server) MarkFailed(err error) { s.setState(StateFailed, err) }
