package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/era"
	"github.com/plexus-mcp/plexus/internal/recovery"
	"github.com/plexus-mcp/plexus/internal/tracing"
)

// Phases of Connect, as named in a ConnectError.
const (
	PhaseStart     = "start"
	PhaseHandshake = "handshake"
)

// ConnectError is why Connect failed: the phase ("start", "handshake",
// "listing tools", ...), the cause, and for stdio the last stderr lines.
type ConnectError struct {
	Server string
	Phase  string
	Err    error
	Stderr []string // last few stderr lines, redacted; nil for remote servers
}

func (e *ConnectError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "server %q: %s: %v", e.Server, e.Phase, e.Err)
	if len(e.Stderr) > 0 {
		fmt.Fprintf(&b, " (stderr: %q)", strings.Join(e.Stderr, " | "))
	}
	return b.String()
}

func (e *ConnectError) Unwrap() error { return e.Err }

// stderrTail is how many stderr lines a ConnectError carries.
const stderrTail = 5

// Connect starts or reaches the server, negotiates the protocol and lists what
// it offers. All of it is bounded by s.StartupTimeout (R-RUN-4); on failure
// everything started is torn down and the error is a *ConnectError.
func Connect(ctx context.Context, s Spec) (_ *Conn, err error) {
	s = withDefaults(s)
	ctx, span := tracing.StartLaunch(ctx, s.Name, s.Type)
	defer func() { span.End(err, connectPhase(err)) }()
	ctx, cancel := context.WithTimeout(ctx, s.StartupTimeout)
	defer cancel()

	c := newConn(s)
	switch s.Type {
	case "stdio":
		err = c.startStdio(ctx, s)
	case "http", "sse":
		err = c.startRemote(ctx, s)
	default:
		err = &ConnectError{Server: s.Name, Phase: PhaseStart, Err: fmt.Errorf("unknown server type %q", s.Type)}
	}
	if err == nil {
		var phase string
		phase, err = c.refresh(ctx)
		if err != nil {
			err = c.connectError(ctx, phase, err, s.StartupTimeout)
		}
	}
	if err != nil {
		c.end(err)
		<-c.stopped
		if ce := (*ConnectError)(nil); errors.As(err, &ce) && c.stderr != nil {
			ce.Stderr = c.stderr.last(stderrTail)
		}
		return nil, err
	}
	d := c.Discovery()
	c.log.Info("server connected", "protocol", c.ProtocolVersion(), "pid", c.PID(), "tools", len(d.Tools),
		"resources", len(d.Resources), "templates", len(d.ResourceTemplates), "prompts", len(d.Prompts))
	return c, nil
}

func newConn(s Spec) *Conn {
	return &Conn{
		name:    s.Name,
		log:     s.Logger,
		redact:  newRedactor(s.Secrets),
		grace:   s.StopGrace,
		notify:  newNotifier(s.OnListChanged),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
}

// connectPhase is the phase a start failed in, as its span's error.type.
func connectPhase(err error) string {
	if err == nil {
		return ""
	}
	if ce := (*ConnectError)(nil); errors.As(err, &ce) {
		return ce.Phase
	}
	return ""
}

func withDefaults(s Spec) Spec {
	if s.StartupTimeout <= 0 {
		s.StartupTimeout = DefaultStartupTimeout
	}
	if s.DiscoverTimeout <= 0 {
		s.DiscoverTimeout = DefaultDiscoverTimeout
	}
	if s.StopGrace <= 0 {
		s.StopGrace = DefaultStopGrace
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	s.Logger = s.Logger.With("server", s.Name)
	if s.ClientInfo == nil {
		s.ClientInfo = &mcp.Implementation{Name: "plexus"}
	}
	return s
}

// startStdio starts the process and shakes hands over its pipes.
func (c *Conn) startStdio(ctx context.Context, s Spec) error {
	c.stderr = &lineRing{onAdd: s.OnStderr}
	if d, ok := c.npxResolve(ctx, s); ok {
		s = d
	} else if err := ctx.Err(); err != nil {
		return c.connectError(ctx, PhaseStart, fmt.Errorf("installing with npm: %w", err), s.StartupTimeout)
	}
	probe := s.ProtocolVersion != "" && s.ownSession == nil && s.RunsOn == ""
	for {
		proc, p, err := startProcess(s, c.stderr, c.redact, c.log)
		if err != nil {
			return &ConnectError{Server: s.Name, Phase: PhaseStart, Err: c.redact.Error(err)}
		}
		c.proc = proc
		c.stdio = newStdioConn(p, s.DiscoverTimeout, func(line []byte) { c.unreadable("stdout", line) })
		if !probe {
			break
		}
		probe = false
		if c.ownEra = probeStdio(ctx, c.stdio, s); !era.IsStateless(c.ownEra) {
			break // a server of the session era only: the pinned handshake follows on this process
		}
		// It answered as a server of MCP 2026-07-28, for which that began
		// its session: the pinned handshake gets a process of its own.
		c.log.Debug("pinned server's own era", "own", c.ownEra, "pinned", s.ProtocolVersion)
		proc.watch(func(*ExitError) {})
		c.stdio.closeInput()
		proc.stop(s.StopGrace)
		c.stdio.Close()
		c.proc, c.stdio = nil, nil
	}
	c.raw = c.stdio
	// Only now that the Conn is whole may an exit start its teardown.
	c.proc.watch(func(e *ExitError) {
		c.log.Info("server process exited", "code", e.Code, "signal", e.Signal)
		c.end(c.exitCause(e))
	})
	return c.handshake(ctx, s, connTransport{c.stdio})
}

// startRemote reaches an http or sse server.
func (c *Conn) startRemote(ctx context.Context, s Spec) error {
	sanitized := SanitizeURL(s.URL)
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &ConnectError{Server: s.Name, Phase: PhaseStart, Err: fmt.Errorf("invalid URL %s", sanitized)}
	}
	secrets := append([]string(nil), s.Secrets...)
	for _, vs := range s.Headers {
		for _, v := range vs {
			secrets = append(secrets, v)
			if _, token, ok := strings.Cut(v, " "); ok {
				secrets = append(secrets, token) // the token of "Bearer <token>"
			}
		}
	}
	if pw, ok := u.User.Password(); ok {
		secrets = append(secrets, pw)
	}
	// Error texts quote the URL (net/http does); swap in the sanitized one.
	c.redact = newRedactor(secrets, s.URL, sanitized, u.String(), sanitized, u.Redacted(), sanitized)

	hc, ht, release := remoteHTTPClient(s, u)
	hc.Transport = &streamTagger{base: &readableOnly{base: hc.Transport, c: c}, calls: &c.calls} // attribute.go, unreadable.go
	life, cancelLife := context.WithCancel(context.WithoutCancel(ctx))
	c.release = func() { cancelLife(); ht.pumps.Wait(); release() }
	ht.life, ht.log = life, c.log
	if s.Type == "http" {
		ht.session = &sessionKeeper{
			script:  func() (*jsonrpc.Request, []*jsonrpc.Request) { return c.rec.script() },
			version: c.ProtocolVersion,
			renewed: c.sessionRenewed,
			log:     c.log,
		}
		c.standalone = func() { c.listenStandalone(life, hc, s.URL) }
	}
	kt := &keepTransport{inner: remoteTransport(s, hc), life: life, cancel: cancelLife}
	c.explain = func(err error) error { return ht.connectError(err, sanitized) }
	c.lastRefusal = ht.lastRefusal
	err = c.handshake(ctx, s, kt)
	c.raw = kt.conn
	if err == nil && s.ownSession == nil && s.RunsOn == "" {
		// Not to another replica: replicas speak MCP 2026-07-28 between them.
		c.clients = &clientSessions{spec: s, log: c.log}
	}
	if err == nil && s.Type == "http" {
		v := c.ProtocolVersion()
		ht.version.Store(&v)
		if !era.IsStateless(v) {
			c.startStandalone()
		}
	}
	return err
}

// startStandalone opens the standalone stream of a session-era server
// (standalone.go), unless it is open or the connection has ended.
func (c *Conn) startStandalone() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil || c.standalone == nil || !c.standaloneOn.CompareAndSwap(false, true) {
		return
	}
	c.watchers.Add(1) // under mu, before end could start the teardown's Wait
	go func() {
		defer c.standaloneOn.Store(false)
		c.standalone()
	}()
}

// sessionRenewed follows a renewed session (session.go): the server
// restarted, so its lists are read again, and its standalone stream,
// which ended with the old session, is opened on the new one.
func (c *Conn) sessionRenewed() {
	c.notify.post("tools")
	c.startStandalone()
}

// connTransport hands an existing connection to the SDK.
type connTransport struct{ conn mcp.Connection }

func (t connTransport) Connect(context.Context) (mcp.Connection, error) { return t.conn, nil }

// handshake runs the SDK's connect: server/discover, else initialize.
func (c *Conn) handshake(ctx context.Context, s Spec, t mcp.Transport) error {
	opts := &mcp.ClientOptions{
		Logger:                     s.Logger,
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { c.notify.post("tools") },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { c.notify.post("resources") },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { c.notify.post("prompts") },
	}
	// Elicitation, sampling, progress and logs go to the client whose call
	// caused them. Plexus offers no roots of its own.
	c.clientHandlers(opts, s.ownSession)
	c.clientInfo = s.ClientInfo
	client := mcp.NewClient(s.ClientInfo, opts)
	client.AddReceivingMiddleware(recovery.Middleware(c.log, "upstream: serving a server's message")) // outermost
	c.rec = &recordTransport{inner: t}
	t = routeTransport{inner: c.rec, c: c}
	var so *mcp.ClientSessionOptions
	if s.ProtocolVersion != "" {
		// A session-era version: the SDK then initializes with it, without
		// trying server/discover.
		so = &mcp.ClientSessionOptions{ProtocolVersion: s.ProtocolVersion}
		if s.ownSession == nil && s.RunsOn == "" {
			c.probeEra(ctx, s)
		}
	}
	cs, err := client.Connect(ctx, t, so)
	if err != nil {
		if c.explain != nil {
			err = c.explain(err)
		}
		return c.connectError(ctx, PhaseHandshake, err, s.StartupTimeout)
	}
	c.initResult = c.rec.result()
	if v := cs.InitializeResult().ProtocolVersion; s.RunsOn != "" && era.IsSession(v) {
		// The replicas of a team speak MCP 2026-07-28 to each other, whose
		// every request names its member: a session would be its first
		// caller's, and another member's requests on it refused. The
		// replica running the server fell back to the session era (it
		// refused the discovery while it was starting the server): this
		// start fails and is tried again.
		cs.Close()
		return c.connectError(ctx, PhaseHandshake, fmt.Errorf("replica %s answered in MCP %s, not %s (is it still starting the server?)", s.RunsOn, v, era.Stateless), s.StartupTimeout)
	}
	c.mu.Lock()
	c.session = cs
	c.mu.Unlock()
	c.watchers.Add(1)
	go c.watchSession(cs)
	return nil
}

// watchSession ends the Conn when the session's stream ends.
func (c *Conn) watchSession(cs *mcp.ClientSession) {
	defer c.watchers.Done()
	err := cs.Wait()
	if c.proc != nil {
		// Stdout usually closes a moment before the exit is seen; then the
		// exit status is the reason. But when the stream broke for a reason
		// of its own (a message over the size limit), that is the cause, and
		// the exit that follows (SIGPIPE, say) only its consequence. A
		// closed stdout most often means an exit whose reaping, on a loaded
		// machine, can take longer than half a second (the group is told to
		// go first, which is what closes a stdout a grandchild held).
		wait := 500 * time.Millisecond
		if c.stdio.stdoutClosed() {
			wait = exitAfterStdout
		}
		if c.proc.waitExited(wait) {
			c.end(c.exitCause(c.proc.exitErr))
			return
		}
	}
	if err == nil {
		err = errors.New("server closed the connection")
	}
	if c.explain != nil {
		err = c.explain(err) // e.g. a 401 once a token has expired
	}
	c.end(c.redact.Error(err))
}

// exitCause is why a stdio connection ended when its process exited: the
// exit, unless the stream broke first for a reason of its own (a message
// over the size limit) — then that is the cause, and the exit that
// followed (SIGPIPE, say) only its consequence.
func (c *Conn) exitCause(e *ExitError) error {
	if serr := c.stdio.streamError(); serr != nil {
		return fmt.Errorf("%w; then %w", c.redact.Error(serr), e)
	}
	return e
}

// exitAfterStdout is how long a failed start or a lost connection waits
// for the exit of a server that closed its stdout.
const exitAfterStdout = 3 * time.Second

// connectError wraps err as a ConnectError for phase, naming the cause: a
// process exit before the startup timeout, or the timeout — followed by the
// exit, if the server died only after it (a late answer written to the
// stdout Plexus had closed by then ends the server with SIGPIPE).
func (c *Conn) connectError(ctx context.Context, phase string, err error, timeout time.Duration) error {
	if ce := (*ConnectError)(nil); errors.As(err, &ce) {
		return err
	}
	err = c.redact.Error(err)
	wait := 200 * time.Millisecond
	if c.stdio != nil && c.stdio.stdoutClosed() {
		// A server that closed its stdout is most often exiting: its exit
		// code is the cause to report, and on a loaded machine the exit
		// can take a while to be reaped after the stream's end.
		wait = exitAfterStdout
	}
	exited := c.proc != nil && c.proc.waitExited(wait)
	deadline, _ := ctx.Deadline()
	timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
	switch {
	case exited && (!timedOut || c.proc.exitedAt.Before(deadline)):
		err = fmt.Errorf("%w: %w", c.proc.exitErr, err)
	case exited:
		err = fmt.Errorf("startup timeout (%s) exceeded: %w; then %w", timeout, err, c.proc.exitErr)
	case timedOut:
		err = fmt.Errorf("startup timeout (%s) exceeded: %w", timeout, err)
	}
	return &ConnectError{Server: c.name, Phase: phase, Err: err}
}

// recordTransport keeps what Plexus's SDK client sends to open the
// session and set its state, and the server's answer to the handshake as
// the bytes it came in: the SDK decodes that answer into a struct that
// drops what it does not model, such as a capability of an extension; and
// a session the server lost is opened again as it was (session.go).
type recordTransport struct {
	inner mcp.Transport
	conn  *recordConn
}

func (t *recordTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = &recordConn{Connection: conn, ids: map[jsonrpc.ID]bool{}, subs: map[string]*jsonrpc.Request{}}
	return t.conn, nil
}

// result returns the last successful answer to the handshake and stops
// watching for one: a health check's server/discover is not the handshake.
func (t *recordTransport) result() json.RawMessage {
	if t.conn == nil {
		return nil
	}
	t.conn.mu.Lock()
	defer t.conn.mu.Unlock()
	t.conn.done = true
	t.conn.ids = nil
	return t.conn.raw
}

// script returns the session's initialize and the requests that set its
// state now: the log level, the resource subscriptions.
func (t *recordTransport) script() (*jsonrpc.Request, []*jsonrpc.Request) {
	if t.conn == nil {
		return nil, nil
	}
	c := t.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	var state []*jsonrpc.Request
	if c.level != nil {
		state = append(state, c.level)
	}
	for _, uri := range slices.Sorted(maps.Keys(c.subs)) {
		state = append(state, c.subs[uri])
	}
	return c.init, state
}

type recordConn struct {
	mcp.Connection
	mu    sync.Mutex
	ids   map[jsonrpc.ID]bool         // guarded by mu: handshake requests awaiting their answer
	raw   json.RawMessage             // guarded by mu
	done  bool                        // guarded by mu
	init  *jsonrpc.Request            // guarded by mu: the last initialize sent
	level *jsonrpc.Request            // guarded by mu: the last logging/setLevel
	subs  map[string]*jsonrpc.Request // guarded by mu: resources/subscribe by URI
}

func (h *recordConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		h.mu.Lock()
		switch req.Method {
		case "initialize", "server/discover":
			if !h.done {
				h.ids[req.ID] = true
				if req.Method == "initialize" {
					h.init = req
				}
			}
		case "logging/setLevel":
			h.level = req
		case "resources/subscribe", "resources/unsubscribe":
			var p struct {
				URI string `json:"uri"`
			}
			if json.Unmarshal(req.Params, &p) == nil {
				if req.Method == "resources/subscribe" {
					h.subs[p.URI] = req
				} else {
					delete(h.subs, p.URI)
				}
			}
		}
		h.mu.Unlock()
	}
	return h.Connection.Write(ctx, msg)
}

func (h *recordConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := h.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		h.mu.Lock()
		if h.ids[resp.ID] {
			delete(h.ids, resp.ID)
			if resp.Error == nil {
				h.raw = resp.Result
			}
		}
		h.mu.Unlock()
	}
	return msg, err
}
