// Package upstream is one connection to one MCP server: a local server started
// over stdio, or a remote one reached over streamable HTTP or legacy SSE.
//
// A [Conn] wraps the official Go SDK's mcp.ClientSession. The SDK does the
// protocol (negotiation, pagination, cancellation, notifications); this package
// owns what the SDK leaves to the host:
//
//   - launching: exact argv, no shell, a reduced environment, the login-shell
//     PATH, an own process group, the parent-death signal, and an optional
//     lifeline shim ([lifeline.Main]) so that no process outlives a killed daemon;
//   - stopping: close stdin, SIGTERM to the group, SIGKILL to the group, reap;
//   - a bounded server/discover probe, so that a server that ignores unknown
//     methods still falls back to initialize on the same connection;
//   - discovery of tools, resources, templates and prompts with a pagination
//     guard, all bounded by the startup timeout;
//   - errors that say which phase failed, carry the server's last stderr lines,
//     and never contain secrets; and a call error that tells "the connection
//     was lost, outcome unknown" ([ErrTransportLost]) apart from a server error
//     or the caller's own deadline.
//
// The package is Unix-only and tuned for Linux (Pdeathsig, child subreaper).
package upstream

import (
	"github.com/plexus-mcp/plexus/internal/sandbox"

	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults for the zero values of [Spec].
const (
	DefaultStartupTimeout  = 30 * time.Second
	DefaultDiscoverTimeout = 3 * time.Second
	DefaultStopGrace       = 2 * time.Second
)

// Sentinel errors; test with errors.Is.
var (
	// ErrTransportLost marks a call whose connection broke while it was in
	// flight (process exit, broken stream, Close). The server may or may not
	// have acted on it: the outcome is unknown and the call must not be retried
	// blindly (R-SES-5).
	ErrTransportLost = errors.New("connection to server lost, outcome unknown")
	// ErrNotConnected marks a call refused because the Conn had already ended;
	// nothing was sent. The error also wraps [Conn.Err].
	ErrNotConnected = errors.New("server not connected")
	// ErrClosed is [Conn.Err] after [Conn.Close].
	ErrClosed = errors.New("connection closed by plexus")
	// ErrTimedOut marks a call that ran past its time limit
	// ([Conn.CallRawWithin]); the server was told it is cancelled, and may
	// still have acted.
	ErrTimedOut = errors.New("timed out")
)

// Spec says how to reach one server. The host layer fills it from the
// configuration with every placeholder and secret already resolved.
type Spec struct {
	Name string // server name, for logs and errors
	Type string // "stdio", "http" or "sse"
	// RunsOn is, for a team's stdio server that another replica runs,
	// that replica's id: this connection reaches the server there.
	RunsOn string

	// stdio
	Argv []string          // exact argv; argv[0] is resolved by Connect; never a shell
	Env  map[string]string // added to the reduced environment (HOME, PATH, TMPDIR)
	Dir  string            // working directory; must exist
	// Shim, if set, is the argv prefix of the lifeline shim: the server runs as
	// Shim... -- argv..., where the shim is [lifeline.Main].
	Shim []string
	// Sandbox, if set, confines the server (package sandbox). It needs
	// Shim: the plexus binary there is also the sandbox's launcher.
	Sandbox *sandbox.Policy
	// NpxDirect starts a server run by `npx` without npm's `npm exec`
	// wrapper, once npm has installed it (npxdirect.go).
	NpxDirect bool
	// OnInstalling, if set, is called once when npm says a start installs
	// the package of a server run by npx (with NpxDirect).
	OnInstalling func()

	// http and sse
	URL        string       // expanded URL, may carry secrets in its query
	Headers    http.Header  // resolved header values (secret)
	HTTPClient *http.Client // optional; never modified

	// ProtocolVersion, if set, pins a session-era version: initialize asks
	// for it (a streamable HTTP server is first asked, on a connection of
	// its own, whether it speaks MCP 2026-07-28 of its own: Conn.OwnEra).
	ProtocolVersion string

	StartupTimeout  time.Duration // start + handshake + discovery; default 30s
	DiscoverTimeout time.Duration // bound on the server/discover probe (stdio); default 3s
	StopGrace       time.Duration // each wait while stopping a process; default 2s

	Secrets       []string            // redacted from stderr lines and error messages
	Logger        *slog.Logger        // default: discard
	ClientInfo    *mcp.Implementation // default: {Name: "plexus"}
	OnListChanged func(kind string)   // "tools", "resources" or "prompts"; called on its own goroutine, must not call Close
	// OnStderr, if set, receives every stderr line (redacted, cut) as it is
	// read, on the reading goroutine: it must not block.
	OnStderr func(line string)

	// ownSession, set for a client's own session (clientsession.go), is
	// the capabilities that client declared: the session declares them.
	ownSession *mcp.ClientCapabilities
}

// ExitError is [Conn.Err] when a stdio server's process ended by itself.
type ExitError struct {
	Code   int    // exit code, or -1 if killed by a signal
	Signal string // e.g. "SIGKILL"; empty if it exited normally
}

func (e *ExitError) Error() string {
	if e.Signal != "" {
		return "server process was killed by " + e.Signal
	}
	return fmt.Sprintf("server process exited with code %d", e.Code)
}

// Conn is one live connection to one server. All methods are safe for
// concurrent use. Close must be called, also after Done, to wait for the
// cleanup of the process group.
type Conn struct {
	name    string
	log     *slog.Logger
	redact  *redactor
	session *mcp.ClientSession // set (under mu) once, before Connect returns
	raw     mcp.Connection     // under session; closing it fails in-flight calls at once
	stdio   *stdioConn         // nil for remote servers
	proc    *process           // nil for remote servers
	stderr  *lineRing          // nil for remote servers
	notify  *notifier
	calls   inflight   // calls in flight with their callers (R-PROTO-2)
	route   *routeConn // under session: routes server→client traffic; frame calls
	// clientInfo is how Plexus names itself to the server.
	clientInfo *mcp.Implementation
	// pinned: the settings pin the server's version; ownEra is then what
	// the probe before the handshake found (eraprobe.go). Both set before
	// Connect returns.
	pinned bool
	ownEra string
	// heard is when a message of the server was last read off the
	// routed connection (HeardSince; over stdio, its stdioConn's too).
	heard atomic.Int64
	// metas are the _meta of frame calls by the caller's capabilities
	// (frame.go), JSON → json.RawMessage.
	metas  sync.Map
	nmetas atomic.Int64
	// resWatch are told of notifications/resources/updated (WatchResources).
	resMu    sync.Mutex
	resWatch map[string]func(uri string)

	release func()            // frees what a remote transport owns; may be nil
	explain func(error) error // remote: names the HTTP status behind a failure; may be nil
	// lastRefusal, remote: the 401 or 403 that refused the last request
	// answered, if any (refused.go); may be nil.
	lastRefusal func() *StatusError
	grace       time.Duration

	refreshMu sync.Mutex // serialises Refresh

	logMu    sync.Mutex // serialises WantLogs
	logLevel string     // the level the server was asked for; "" none yet
	// logFloor is logLevel's rank + 1 (0: none asked), read by the
	// reader of the server's messages, which must not wait for logMu
	// (WantLogs holds it while the server answers); everyLevel is set
	// once the server sent a message below it (logs.go).
	logFloor   atomic.Int32
	everyLevel atomic.Bool
	// lostLogs counts the server's log messages that reached no client
	// (logs.go).
	lostLogs logDrops

	// initResult is the server's answer to initialize (or server/discover)
	// as it wrote it; set before Connect returns.
	initResult json.RawMessage
	// rec records how the session was opened (connect.go).
	rec *recordTransport
	// standalone runs a session-era HTTP server's standalone stream until
	// it ends (nil for other servers); standaloneOn is set while it runs.
	standalone   func()
	standaloneOn atomic.Bool
	// clients are the sessions of a remote server opened each for one
	// client session (clientsession.go); nil for a stdio server and for
	// such a session itself.
	clients *clientSessions
	// owner, on a client's own session over streamable HTTP, is that
	// client as reached on its own standalone stream: what the server
	// sends on this session's standalone stream goes there, as it would
	// directly (nil otherwise).
	owner Peer

	mu   sync.Mutex
	disc Discovery // guarded by mu
	err  error     // guarded by mu; set once, just before done is closed

	done     chan struct{}
	stopped  chan struct{} // closed when teardown has finished
	watchers sync.WaitGroup
}

// Discovery returns the lists from the last successful listing.
func (c *Conn) Discovery() Discovery {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.disc
}

// ProtocolVersion is the negotiated MCP protocol version.
func (c *Conn) ProtocolVersion() string { return c.session.InitializeResult().ProtocolVersion }

// ServerInfo is the server's self-description (may be nil).
func (c *Conn) ServerInfo() *mcp.Implementation { return c.session.InitializeResult().ServerInfo }

// Instructions is the server's usage hint for models (may be empty).
func (c *Conn) Instructions() string { return c.session.InitializeResult().Instructions }

// Capabilities is what the server advertised; never nil.
func (c *Conn) Capabilities() *mcp.ServerCapabilities {
	if caps := c.session.InitializeResult().Capabilities; caps != nil {
		return caps
	}
	return &mcp.ServerCapabilities{}
}

// InitializeResult is the server's answer to initialize (or, in MCP
// 2026-07-28, to server/discover) as the server wrote it: for a proxy
// that presents the server as it is (a bare profile), with the members
// the SDK's struct does not model. Nil if the answer was not seen.
func (c *Conn) InitializeResult() json.RawMessage { return c.initResult }

// RawCapabilities is the capabilities member of InitializeResult as the
// server wrote it (extensions and experimental capabilities included);
// nil if there is none.
func (c *Conn) RawCapabilities() json.RawMessage {
	var r struct {
		Capabilities json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(c.initResult, &r) != nil || string(r.Capabilities) == "null" {
		return nil
	}
	return r.Capabilities
}

// PID is the process id (and process group id) of a stdio server, or of its
// shim; 0 for a remote server.
func (c *Conn) PID() int {
	if c.proc == nil {
		return 0
	}
	return c.proc.pid
}

// Done is closed when the connection is gone: process exit, broken stream,
// or Close.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err says why the connection ended: an *[ExitError], [ErrClosed], or the
// stream error. It is nil before Done is closed.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Stderr returns the last stderr lines of a stdio server (at most 200, each cut
// at 4 KiB, secrets redacted), oldest first. Lines the server wrote to stdout
// that were not JSON-RPC are included with a "stdout: " prefix.
func (c *Conn) Stderr() []string {
	if c.stderr == nil {
		return nil
	}
	return c.stderr.snapshot()
}

// Redact replaces the server's secrets in s (its env and header values,
// its URL's credentials), as in its stderr lines and errors: for what
// Plexus keeps of a call (the audit log).
func (c *Conn) Redact(s string) string { return c.redact.String(s) }

// Close ends the connection gracefully and waits until everything is released:
// for stdio, stdin is closed, then the process group gets SIGTERM and SIGKILL
// after StopGrace each, and every process is reaped. Close is idempotent and
// always returns nil; Err reports why the connection ended.
func (c *Conn) Close() error {
	c.end(ErrClosed)
	<-c.stopped
	return nil
}

// end records why the connection ended (the first cause wins), closes Done and
// starts the teardown. It never blocks, because process and stream watchers
// call it.
func (c *Conn) end(cause error) {
	c.mu.Lock()
	first := c.err == nil
	if first {
		c.err = cause
		close(c.done)
	}
	c.mu.Unlock()
	if first {
		go c.teardown()
	}
}

// teardown releases everything the Conn owns. It runs once, on its own
// goroutine, and closes c.stopped when done.
func (c *Conn) teardown() {
	defer close(c.stopped)
	if c.proc != nil {
		if c.proc.hasExited() {
			// The server is gone: fail in-flight calls now, not after the
			// leftovers of its group are cleaned up.
			c.raw.Close()
		}
		// MCP stdio transport, shutdown: "the client SHOULD initiate shutdown
		// by: First, closing the input stream to the child process (the
		// server); Waiting for the server to exit, or sending SIGTERM if the
		// server does not exit within a reasonable time; Sending SIGKILL if the
		// server does not exit within a reasonable time after SIGTERM".
		// Meanwhile responses are still read, so calls may finish.
		c.stdio.closeInput()
		c.proc.stop(c.grace)
	}
	if c.raw != nil {
		c.raw.Close()
	}
	c.mu.Lock()
	cs := c.session
	c.mu.Unlock()
	if cs != nil {
		cs.Close()
	}
	c.clients.closeAll()
	c.watchers.Wait()
	c.notify.stop()
	if c.release != nil {
		c.release()
	}
}

// usable returns an error wrapping ErrNotConnected once the Conn has ended.
func (c *Conn) usable() error {
	select {
	case <-c.done:
		return fmt.Errorf("server %q: %w: %w", c.name, ErrNotConnected, c.Err())
	default:
		return nil
	}
}
