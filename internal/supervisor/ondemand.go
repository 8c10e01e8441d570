package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/plexus-mcp/plexus/internal/era"
	"github.com/plexus-mcp/plexus/internal/tracing"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// Starting on use and stopping when idle. A server given a cached catalog
// (Params.Cached) is built "idle": its catalog is listed and no process
// runs. Its first use (Use) starts it — "waking" while the use waits —
// and a server with Params.IdleStop is stopped again, back to "idle" with
// its catalog listed, once nothing used it for that long and nothing holds
// it awake: a use in flight (a call, and with it any request the server
// makes of its caller meanwhile), or a hold (Keep: a resource
// subscription, which a stopped server would forget). A log level a client
// asked for does not hold it: it is asked of every new connection
// (WantLogs). This file and the supervise loop are the one owner of those
// transitions.

// Cached is a server's catalog as it listed it: its answer to the
// handshake and its lists, as it wrote them.
type Cached struct {
	Init json.RawMessage
	Disc upstream.Discovery
}

// onDemand is the state of starting on use and stopping when idle; guarded
// by Server.mu.
type onDemand struct {
	waking     *waking         // the start under way, nil for none
	wakeFailed bool            // the last start on use failed: the next use tries again
	inUse      int             // uses in flight (Use)
	holds      map[string]bool // what holds the server awake beside uses (Keep)
	lastUse    time.Time       // when the last use ended, or the server started
	logLevel   string          // the most verbose log level asked for (WantLogs)
	connected  bool            // a connection was made once: the first start's limit is spent
}

// waking is one start on use; every use that comes meanwhile waits for it.
type waking struct {
	done chan struct{}
	err  error // set before done is closed
}

// fromCache lists the cached catalog of a server that is not running.
func (s *Server) fromCache(c Cached) {
	cat, warnings, err := s.build(c.Disc)
	if err != nil {
		s.log.Warn("cached catalog not used: the server starts at once", "err", err)
		return
	}
	s.disc, s.cat, s.init = c.Disc, cat, c.Init
	s.status.Warnings = warnings
	s.status.State = StateIdle
}

// Use returns the live connection for one use — a call, a read, a
// completion, a subscription — and done, to be called when the use ends:
// the idle time counts from the last use's end. An idle server is started
// first and the use waits for it, bounded by its startup timeout and by
// ctx; waiting is told every second how long it has waited, if not nil. A
// start that fails is an error naming the server and the cause.
func (s *Server) Use(ctx context.Context, waiting func(time.Duration)) (*upstream.Conn, func(), error) {
	began := time.Now()
	for try := 0; ; try++ {
		s.mu.Lock()
		if s.conn != nil && !s.loginOver {
			conn := s.conn
			s.od.inUse++
			s.mu.Unlock()
			return conn, s.used, nil
		}
		if try > 0 || !s.canWakeLocked() {
			err := s.unavailableLocked()
			s.mu.Unlock()
			return nil, nil, err
		}
		w := s.od.waking
		if w == nil {
			w = s.wakeLocked()
		}
		s.mu.Unlock()
		_, span := tracing.StartStep(ctx, "start on demand", tracing.Call{Server: s.p.Name})
		err := waitWake(ctx, w, began, waiting)
		if err == nil && w.err != nil {
			span.End(w.err, "unavailable")
		} else {
			span.End(err, tracing.ErrType(err))
		}
		if err != nil {
			return nil, nil, err
		}
		if w.err != nil {
			return nil, nil, fmt.Errorf("%w: %s could not be started on demand: %w", ErrUnavailable, s.p.Name, w.err)
		}
	}
}

func waitWake(ctx context.Context, w *waking, began time.Time, waiting func(time.Duration)) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-w.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if waiting != nil {
				waiting(time.Since(began))
			}
		}
	}
}

func (s *Server) doneUse() {
	s.mu.Lock()
	s.od.inUse--
	s.od.lastUse = time.Now()
	s.mu.Unlock()
}

// canWakeLocked: the server is not running and a use may start it.
func (s *Server) canWakeLocked() bool {
	if s.stopped || !s.p.Config.IsEnabled() {
		return false
	}
	switch s.status.State {
	case StateIdle, StateWaking:
		return true
	case StateFailed:
		return s.od.wakeFailed && !s.running
	}
	return false
}

// wakeLocked starts the server for a use. s.mu is held.
func (s *Server) wakeLocked() *waking {
	w := &waking{done: make(chan struct{})}
	s.od.waking = w
	s.running = true
	s.status.State, s.status.Since, s.status.Installing = StateWaking, time.Now(), false
	s.wg.Add(1)
	go s.wake(w)
	return w
}

func (s *Server) wake(w *waking) {
	defer s.wg.Done()
	defer close(w.done)
	s.p.OnChange()
	s.log.Info("starting on demand")
	conn, b, err := s.connectUntilQuit(s.knownVersion())
	s.mu.Lock()
	s.od.waking = nil
	if err != nil {
		s.running = false
		s.od.wakeFailed = true
		s.mu.Unlock()
		w.err = err
		s.log.Warn("start on demand failed", "err", err)
		if le := s.p.NeedsLogin(err); le != nil {
			s.fail(StateNeedsLogin, le)
		} else {
			s.fail(StateFailed, err)
		}
		return
	}
	s.od.wakeFailed = false
	s.od.lastUse = time.Now()
	s.mu.Unlock()
	if !s.install(conn, b) {
		w.err = errors.New("the server was stopped while starting")
		return
	}
	s.wg.Add(1)
	go s.supervise(conn)
}

// knownVersion is the session-era protocol version a stdio server
// answered its last handshake with (its cached catalog's, after a daemon
// restart), "" if none or if its configuration pins one: a start on
// demand then opens the session in it at once. The server/discover probe
// of MCP 2026-07-28 costs such a server a round trip, and one that ignores
// methods it does not know the probe's whole bound (three seconds) — on
// every first call after an idle stop. A server that comes to speak
// 2026-07-28 under the same definition (an unpinned `npx -y` package, say)
// is probed again at its next start other than on demand: a restart after
// it was lost, or a start while its catalog is not cached (a changed
// definition, a removed catalogs.json).
func (s *Server) knownVersion() string {
	if s.p.Spec.Type != "stdio" || s.p.Spec.ProtocolVersion != "" {
		return ""
	}
	s.mu.Lock()
	init := s.init
	s.mu.Unlock()
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(init, &r) != nil || !era.IsSession(r.ProtocolVersion) {
		return ""
	}
	return r.ProtocolVersion
}

// idleTick is how often a running server with an idle stop is checked.
func (s *Server) idleTick() time.Duration {
	return min(max(s.p.IdleStop/4, 5*time.Millisecond), 30*time.Second)
}

// trySleep stops conn's server if it is idle, leaving it "idle" with its
// catalog listed; it reports whether it did.
func (s *Server) trySleep(conn *upstream.Conn) bool {
	s.mu.Lock()
	if s.conn != conn || s.stopped || s.loginOver || s.od.inUse > 0 || len(s.od.holds) > 0 || time.Since(s.od.lastUse) < s.p.IdleStop {
		s.mu.Unlock()
		return false
	}
	s.conn = nil
	s.running = false
	s.status.State, s.status.Since, s.status.PID, s.status.Installing = StateIdle, time.Now(), 0, false
	idle := time.Since(s.od.lastUse)
	s.mu.Unlock()
	s.log.Info("server stopped: idle", "idle", idle.Round(time.Millisecond).String())
	conn.Close()
	s.p.OnChange()
	return true
}

// Keep holds the server awake while on (a resource subscription named by
// key: a stopped server would forget it), or lets it go. Holds end with
// the connection they were made on.
func (s *Server) Keep(key string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if on {
		if s.od.holds == nil {
			s.od.holds = map[string]bool{}
		}
		s.od.holds[key] = true
		return
	}
	delete(s.od.holds, key)
	s.od.lastUse = time.Now()
}

// Held reports whether anything holds the server awake (Keep).
func (s *Server) Held() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.od.holds) > 0
}

// WantLogs asks the server for log messages at level (upstream.Conn.
// WantLogs), now if it runs and on every connection after: a server
// stopped when idle hears it again when it starts.
func (s *Server) WantLogs(ctx context.Context, level string) {
	s.mu.Lock()
	if r, ok := logRank[level]; ok && (s.od.logLevel == "" || r < logRank[s.od.logLevel]) {
		s.od.logLevel = level
	}
	conn := s.conn
	s.mu.Unlock()
	if conn != nil {
		conn.WantLogs(ctx, level)
	}
}

// askLogs asks a new connection for the level clients asked for before.
func (s *Server) askLogs(conn *upstream.Conn) {
	s.mu.Lock()
	level := s.od.logLevel
	s.mu.Unlock()
	if level == "" {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn.WantLogs(ctx, level)
	}()
}

// logRank orders MCP's log levels, most verbose first.
var logRank = map[string]int{"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7}

// startLimit is the bound of the next connection: the first start's own
// (Params.FirstStartTimeout, for a start that may download the server)
// until a connection was made, then the startup timeout. The setting that
// raises it is named in a timeout's error.
func (s *Server) startLimit() (time.Duration, string) {
	s.mu.Lock()
	first := !s.od.connected
	s.mu.Unlock()
	if first && s.p.FirstStartTimeout > s.startupTimeout() {
		return s.p.FirstStartTimeout, "installTimeoutMs"
	}
	return s.startupTimeout(), "startupTimeoutMs"
}

// timeoutHint names the setting that gives a start more time.
func (s *Server) timeoutHint(err error, setting string) error {
	if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	how := fmt.Sprintf("`plexus edit %s --startup-timeout MS`", s.p.Name)
	if setting != "startupTimeoutMs" {
		how = fmt.Sprintf("`plexus edit %s --install-timeout MS`", s.p.Name)
	}
	hint := func(e error) error {
		return fmt.Errorf("%w (give it more time with its %s setting: %s)", e, setting, how)
	}
	// A ConnectError is rendered from its parts: the hint goes in its cause.
	if ce := (*upstream.ConnectError)(nil); errors.As(err, &ce) {
		c := *ce
		c.Err = hint(ce.Err)
		return &c
	}
	return hint(err)
}
