//lint:file-ignore SA1019 Plexus relays what MCP 2026-07-28 deprecates (sampling, roots, logging) for the session-era clients and servers that still use it, through the deprecation window.

package upstream

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/era"
)

// One upstream session per client session. A session-era server keeps
// state per session — the log level set, the client's capabilities, the
// stream it sends its own requests on — and a client that reaches it
// directly has a session of its own. Shared by every client, one upstream
// session gets the lowest log level any client set, the capabilities of
// none, and questions on its standalone stream that Plexus cannot tell
// the client of. So a remote server (streamable HTTP, legacy SSE) gets,
// for each client that holds a session-era session with Plexus, a session
// of that client's own, opened at the client's first request to it: in the
// client's protocol version (unless the server's settings pin one), with
// the client's capabilities, at the client's log level. Its requests go
// there; the shared connection keeps the handshake's lists, the health
// checks, the resource subscriptions, and the requests of every other
// caller (MCP 2026-07-28 clients, which have no session to mirror, the
// settings API). A stdio server is one process speaking one session: it
// stays shared.
//
// The shared Conn is the one owner of these sessions (clientSessions): it
// opens one, hands it out, and closes it when its client's session ends,
// after clientSessionIdle without a request, when the cap needs its place,
// or with itself.

// sessionOwner is a Peer whose client holds a session with Plexus.
type sessionOwner interface {
	Peer
	// ClientSession is the client's session: a comparable key, the
	// protocol version it negotiated, and a channel closed when it ends.
	ClientSession() (key any, version string, ended <-chan struct{})
	// Standalone is the client as reached on its session's own stream
	// (the standalone GET stream), for what the server sends its session
	// outside any request.
	Standalone() Peer
}

const (
	// maxClientSessions bounds the sessions one server holds for clients.
	// Each holds a connection or two (its requests, its standalone or SSE
	// stream) and the server's state for it; a machine's clients — a few
	// editors and agents — fit with room to spare. Past it, the session
	// idle longest makes room; with all busy, a request goes on the
	// shared connection, as before there were sessions of clients.
	maxClientSessions = 16
	// clientSessionIdle closes a client's session nobody used for this
	// long; the client's next request opens another.
	clientSessionIdle = 10 * time.Minute
	// clientSessionRetry is how long a server that refused a client's
	// session (an initialize in that version) is not asked again.
	clientSessionRetry = time.Minute
)

// clientSessions are the sessions of one remote server's clients.
type clientSessions struct {
	spec Spec // the shared connection's, to open more like it
	log  *slog.Logger

	mu      sync.Mutex
	byKey   map[any]*clientSession
	refused map[string]time.Time // version → when the server refused a session in it
	closed  bool
	wg      sync.WaitGroup // the sessions' watchers
}

// clientSession is one client's session at the server.
type clientSession struct {
	ready chan struct{} // closed once conn is set (nil: it failed)
	conn  *Conn
	quit  chan struct{} // closed to close it

	// guarded by clientSessions.mu
	busy     int
	lastUsed time.Time

	levelMu sync.Mutex // serialises setting the level
	level   string     // the level the client's session was set to; "" none
}

// sessionFor is the Conn a request of ctx's caller goes on: its own
// session for the client of a session-era session with Plexus, else c.
// done ends the request's use of it.
func (c *Conn) sessionFor(ctx context.Context) (conn *Conn, done func()) {
	cs := c.clients
	if cs == nil {
		return c, func() {}
	}
	pc := peerFrom(ctx)
	if pc == nil {
		return c, func() {}
	}
	o, ok := pc.peer.(sessionOwner)
	if !ok {
		return c, func() {}
	}
	key, version, ended := o.ClientSession()
	if key == nil || !era.IsSession(version) {
		return c, func() {}
	}
	select {
	case <-ended:
		return c, func() {} // a straggler of an ended session
	default:
	}
	s := cs.get(ctx, c, key, version, o, ended)
	if s == nil {
		return c, func() {}
	}
	s.setLevel(ctx, logLevelOf(pc))
	return s.conn, func() { cs.release(s) }
}

// get returns the client's session, opened if it has none (nil: it
// cannot have one now), and counts a request on it.
func (cs *clientSessions) get(ctx context.Context, shared *Conn, key any, version string, o sessionOwner, ended <-chan struct{}) *clientSession {
	cs.mu.Lock()
	if cs.closed {
		cs.mu.Unlock()
		return nil
	}
	s := cs.byKey[key]
	if s != nil {
		select {
		case <-s.ready:
			if s.conn == nil || s.conn.usable() != nil {
				cs.forgetLocked(key, s) // it failed or ended: open another
				s = nil
			}
		default:
		}
	}
	if s == nil {
		v := version
		if cs.spec.ProtocolVersion != "" {
			v = cs.spec.ProtocolVersion // the settings pin the server's version
		}
		if t, ok := cs.refused[v]; ok && time.Since(t) < clientSessionRetry {
			cs.mu.Unlock()
			return nil
		}
		if !cs.makeRoomLocked() {
			cs.mu.Unlock()
			return nil
		}
		s = &clientSession{ready: make(chan struct{}), quit: make(chan struct{}), lastUsed: time.Now()}
		if cs.byKey == nil {
			cs.byKey = map[any]*clientSession{}
		}
		cs.byKey[key] = s
		cs.wg.Add(1)
		go cs.open(shared, key, s, v, o, ended)
	}
	s.busy++
	cs.mu.Unlock()
	select {
	case <-s.ready:
	case <-ctx.Done():
		// The request goes on the shared connection, which fails it on
		// its ended ctx as before.
		cs.release(s)
		return nil
	}
	if s.conn == nil {
		cs.release(s)
		return nil
	}
	return s
}

// release ends a request's use of s.
func (cs *clientSessions) release(s *clientSession) {
	cs.mu.Lock()
	s.busy--
	s.lastUsed = time.Now()
	cs.mu.Unlock()
}

// makeRoomLocked makes room for one more session: false when every one of
// maxClientSessions is busy.
func (cs *clientSessions) makeRoomLocked() bool {
	if len(cs.byKey) < maxClientSessions {
		return true
	}
	var victim any
	var oldest time.Time
	for k, s := range cs.byKey {
		if s.busy == 0 && (victim == nil || s.lastUsed.Before(oldest)) {
			victim, oldest = k, s.lastUsed
		}
	}
	if victim == nil {
		return false
	}
	cs.forgetLocked(victim, cs.byKey[victim])
	return true
}

// forgetLocked removes the session of key and tells it to close.
func (cs *clientSessions) forgetLocked(key any, s *clientSession) {
	if cs.byKey[key] == s {
		delete(cs.byKey, key)
	}
	select {
	case <-s.quit:
	default:
		close(s.quit)
	}
}

// open opens the client's session and keeps it until its client's session
// ends, it idles, it is made room for, or the shared connection closes.
func (cs *clientSessions) open(shared *Conn, key any, s *clientSession, version string, o sessionOwner, ended <-chan struct{}) {
	defer cs.wg.Done()
	spec := cs.spec
	spec.ProtocolVersion, spec.ownSession, spec.OnListChanged = version, ownCaps(o.Capabilities()), nil
	spec = withDefaults(spec)
	ctx, cancel := context.WithTimeout(context.Background(), spec.StartupTimeout)
	go func() {
		select {
		case <-s.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	conn := newConn(spec)
	if spec.Type == "http" {
		conn.owner = o.Standalone()
	}
	err := conn.startRemote(ctx, spec)
	cancel()
	if err != nil {
		conn.end(err)
		<-conn.stopped
		cs.mu.Lock()
		if cs.refused == nil {
			cs.refused = map[string]time.Time{}
		}
		cs.refused[version] = time.Now()
		cs.forgetLocked(key, s)
		cs.mu.Unlock()
		close(s.ready)
		cs.log.Info("a client's own session could not be opened: its requests go on the shared session", "version", version, "err", err)
		return
	}
	s.conn = conn
	close(s.ready)
	idle := time.NewTimer(clientSessionIdle)
	defer idle.Stop()
	for {
		select {
		case <-ended:
		case <-s.quit:
		case <-shared.done:
		case <-conn.done:
		case <-idle.C:
			cs.mu.Lock()
			wait := clientSessionIdle - time.Since(s.lastUsed)
			if s.busy > 0 || wait > 0 {
				cs.mu.Unlock()
				idle.Reset(max(wait, time.Second))
				continue
			}
			cs.mu.Unlock()
		}
		break
	}
	cs.mu.Lock()
	cs.forgetLocked(key, s)
	cs.mu.Unlock()
	conn.Close()
}

// closeAll closes every client's session and waits for them (the shared
// connection's teardown).
func (cs *clientSessions) closeAll() {
	if cs == nil {
		return
	}
	cs.mu.Lock()
	cs.closed = true
	for k, s := range cs.byKey {
		cs.forgetLocked(k, s)
	}
	cs.mu.Unlock()
	cs.wg.Wait()
}

// setLevel sets the session's log level to the client's, as the client
// set it at the server directly; nothing until the client sets one.
func (s *clientSession) setLevel(ctx context.Context, level string) {
	if level == "" {
		return
	}
	s.levelMu.Lock()
	defer s.levelMu.Unlock()
	c := s.conn
	if level == s.level || c.Capabilities().Logging == nil {
		return
	}
	if _, ok := logRank[level]; !ok {
		return
	}
	if err := c.session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: mcp.LoggingLevel(level)}); err != nil {
		c.log.Info("server refused logging/setLevel", "err", c.redact.Error(err))
		return
	}
	s.level = level
	c.logMu.Lock()
	c.logLevel = level
	c.logFloor.Store(int32(logRank[level]) + 1)
	c.logMu.Unlock()
}

// ownCaps are the capabilities a client's session declares: what the
// client declared of those a server may use mid-request (elicitation,
// sampling, roots), which Plexus relays.
func ownCaps(caps *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	out := &mcp.ClientCapabilities{}
	if caps == nil {
		return out
	}
	out.Elicitation, out.Sampling = caps.Elicitation, caps.Sampling
	if caps.RootsV2 != nil {
		out.RootsV2 = caps.RootsV2
		out.Roots.ListChanged = caps.RootsV2.ListChanged
	}
	return out
}
