package supervisor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/plexus-mcp/plexus/internal/upstream"
)

// supervise watches a live connection and, when it is lost, restarts the
// server with backoff until Stop (R-SUP-2). It owns the server while it runs.
func (s *Server) supervise(conn *upstream.Conn) {
	defer s.wg.Done()
	for {
		up := time.Now()
		hung, quit := s.watch(conn)
		if quit {
			return
		}
		err := s.lost(conn, time.Since(up))
		if hung != nil {
			err = hung
		}
		conn.Close() // reap what is left of the process group
		if conn = s.restart(err); conn == nil {
			return
		}
	}
}

// watch waits until the connection ends (quit false) or the server is
// stopped (quit true), pinging it every Policy.KeepAlive: after
// KeepAliveMisses unanswered pings in a row the connection is closed as
// hung (R-SUP-2: a failed keepalive is a crash), and hung says why.
func (s *Server) watch(conn *upstream.Conn) (hung error, quit bool) {
	var tick, idle <-chan time.Time
	if s.p.Policy.KeepAlive > 0 {
		t := time.NewTicker(s.p.Policy.KeepAlive)
		defer t.Stop()
		tick = t.C
	}
	if s.p.IdleStop > 0 {
		t := time.NewTicker(s.idleTick())
		defer t.Stop()
		idle = t.C
	}
	misses := 0
	for {
		select {
		case <-conn.Done():
			return hung, false
		case <-s.quit:
			return nil, true
		case <-idle:
			if hung == nil && s.trySleep(conn) {
				return nil, true // stopped when idle: a use starts it again
			}
		case <-tick:
			sent := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), s.p.Policy.KeepAlive/2)
			err := conn.Ping(ctx)
			cancel()
			// An error answer is an answer: the server is alive. A failed
			// HTTP request is not, though the SDK reports it as a JSON-RPC
			// error of its own ("rejected by transport"): AnswerError tells
			// the server's from the SDK's. Nor is a server hung that sent
			// something else meanwhile (answers to calls, progress): it is
			// busy, as a loaded one answers a ping late, and closing it
			// would lose the calls it is answering.
			if err == nil || upstream.AnswerError(err) != nil || conn.HeardSince(sent) {
				misses = 0
				continue
			}
			misses++
			if upstream.ConnRefused(err) && hung == nil {
				// Nothing listens at its address any more: gone, not hung,
				// and no later ping will find it.
				hung = err
				s.log.Warn("server refused the connection: closing it", "err", err)
				go conn.Close()
				continue
			}
			if s.p.NeedsLogin(err) != nil && hung == nil {
				// Refused for want of a login: no further ping will do.
				hung = err
				go conn.Close()
				continue
			}
			if misses >= max(s.p.Policy.KeepAliveMisses, 1) && hung == nil {
				hung = fmt.Errorf("keepalive failed: %d pings in a row went unanswered (last: %v)", misses, err)
				s.log.Warn("server not answering: closing it", "err", hung)
				go conn.Close() // Done follows
			}
		}
	}
}

// lost records the end of a connection and returns its cause.
func (s *Server) lost(conn *upstream.Conn, uptime time.Duration) error {
	err := conn.Err()
	if err == nil {
		err = errors.New("connection closed")
	}
	s.mu.Lock()
	if s.conn == conn {
		s.conn = nil
		s.status.PID = 0
		s.od.holds = nil // a new connection has none of the old one's subscriptions
	}
	s.mu.Unlock()
	s.noteUptime(uptime)
	s.log.Warn("server connection lost", "err", err, "uptime", uptime.Round(time.Millisecond).String())
	return fmt.Errorf("connection lost: %w", err)
}

// noteUptime resets the failure count after a connection that ran long
// enough to count as healthy.
func (s *Server) noteUptime(uptime time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if uptime >= s.p.Policy.ResetAfter {
		s.failures = 0
	}
}

// restart waits out the backoff and connects again, until it succeeds
// (returning the new connection) or the server is stopped (nil).
func (s *Server) restart(cause error) *upstream.Conn {
	for {
		if le := s.p.NeedsLogin(cause); le != nil {
			if !s.waitLogin(le) {
				return nil
			}
		} else if !s.backoff(cause) {
			return nil
		}
		s.setState(StateStarting, nil)
		conn, b, err := s.connectUntilQuit("")
		if err != nil {
			s.log.Warn("server restart failed", "err", err)
			cause = err
			continue
		}
		s.mu.Lock()
		s.status.Restarts++ // counted before install announces "ready"
		s.mu.Unlock()
		if !s.install(conn, b) {
			return nil
		}
		return conn
	}
}

// waitLogin parks a server whose login is over until Restart (false: the
// server was stopped). It is no failure: nothing is counted, and no timer
// tries again, since only a person's login mends it.
func (s *Server) waitLogin(cause error) bool {
	s.mu.Lock()
	s.status.NextTry, s.status.CrashLooping = time.Time{}, false
	s.failures = 0
	s.mu.Unlock()
	s.fail(StateNeedsLogin, cause)
	s.log.Warn("server needs an OAuth login: waiting for one", "err", cause)
	select {
	case <-s.kick:
		return true
	case <-s.quit:
		return false
	}
}

// backoff records cause and waits out the backoff before the next try
// (false: the server was stopped).
func (s *Server) backoff(cause error) bool {
	delay, parked := s.nextDelay(cause)
	s.mu.Lock()
	s.status.NextTry = time.Now().Add(delay)
	s.status.CrashLooping = parked
	s.mu.Unlock()
	s.fail(StateBackoff, cause)
	if parked {
		s.log.Warn("server crash-looping: parked", "cooldown", delay.String(), "err", cause)
	}
	t := time.NewTimer(delay)
	select {
	case <-t.C:
	case <-s.kick:
		t.Stop()
		s.mu.Lock()
		s.failures = 0
		s.mu.Unlock()
	case <-s.quit:
		t.Stop()
		return false
	}
	return true
}

// nextDelay counts one more failure and returns the wait before the next
// try, and whether the server is parked for the cooldown.
func (s *Server) nextDelay(cause error) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures++
	p := s.p.Policy
	if p.MaxAttempts > 0 && s.failures > p.MaxAttempts {
		// Parked; after the cooldown the count starts over.
		s.failures = 0
		return p.Cooldown, true
	}
	// A remote session that expired (HTTP 404 on its session id) is
	// re-initialized at once, the first time (R-SUP-4).
	var se *upstream.StatusError
	if s.failures == 1 && errors.As(cause, &se) && se.StatusCode == 404 {
		return 0, false
	}
	return p.Delay(s.failures, jitter()), false
}

// unavailableLocked says why there is no connection. s.mu is held.
func (s *Server) unavailableLocked() error {
	st := s.status
	name := s.p.Name
	switch st.State {
	case StateDisabled:
		return fmt.Errorf("%w: %s is disabled (enable it with `plexus enable %s`)", ErrUnavailable, name, name)
	case StateStarting:
		return fmt.Errorf("%w: %s is starting", ErrUnavailable, name)
	case StateNeedsLogin:
		return fmt.Errorf("%w: %s", ErrUnavailable, st.LastError)
	case StateBackoff:
		wait := time.Until(st.NextTry).Round(time.Second)
		what := "restarting"
		if st.CrashLooping {
			what = "crash-looping"
		}
		return fmt.Errorf("%w: %s is %s, next try in %s; last error: %s", ErrUnavailable, name, what, max(wait, 0), st.LastError)
	}
	if st.LastError != "" {
		return fmt.Errorf("%w: %s is %s: %s", ErrUnavailable, name, st.State, st.LastError)
	}
	return fmt.Errorf("%w: %s is %s", ErrUnavailable, name, st.State)
}
