//lint:file-ignore SA1019 Plexus relays what MCP 2026-07-28 deprecates (sampling, roots, logging) for the session-era clients and servers that still use it, through the deprecation window.

package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/era"
)

// Peer is the downstream client a request came from. While a call it made
// is in flight, the server→client traffic that call causes reaches it
// (R-PROTO-2): elicitation and sampling requests, progress and log
// notifications. Implementations answer with a clear error when the client
// lacks the capability.
type Peer interface {
	// Ask puts a server's request to the client — elicitation/create,
	// sampling/createMessage or roots/list — with its params as the server
	// wrote them, and returns the client's result as the client wrote it:
	// a proxy hands both through whole, so that fields it does not model
	// (or models with other defaults) arrive intact.
	Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// Progress forwards a progress notification; p.ProgressToken is already
	// the client's own token.
	Progress(ctx context.Context, p *mcp.ProgressNotificationParams)
	Log(ctx context.Context, p *mcp.LoggingMessageParams)
	// Capabilities are what the client declared; an MCP 2026-07-28 server
	// sees them on each request (what it may ask of the caller).
	Capabilities() *mcp.ClientCapabilities
}

// AskMethods are the requests a server may send its client mid-call, and
// what each is called in messages (package era holds them).
var AskMethods = era.AskMethods

// clientKeyer is a Peer that names its client: several calls of one
// client in flight are one client to route a server's request to.
type clientKeyer interface{ Client() any }

// logLeveler is a Peer whose client asked for log messages at a level.
type logLeveler interface{ LogLevel() string }

// clientOf is the client of a call, for routing.
func clientOf(pc *peerCall) any {
	if k, ok := pc.peer.(clientKeyer); ok {
		if c := k.Client(); c != nil {
			return c
		}
	}
	return pc.peer
}

// parker is a Peer whose call may be parked: its client was answered
// with the server's questions (an MCP 2026-07-28 input_required) and has
// not come back with its answers yet.
type parker interface{ Parked() bool }

// parked reports whether pc's call is parked (parker): upstream it still
// runs, waiting on the answer to its question, but its client has no
// request in flight, as it would have none before a server of its own era
// (whose input_required ends the request), and it may never come back.
func parked(pc *peerCall) bool {
	p, ok := pc.peer.(parker)
	return ok && p.Parked()
}

// detacher is a Peer whose call may be detached: no connection of its
// client holds the call's stream now (its POST dropped and no stream was
// resumed).
type detacher interface{ Detached() bool }

// detached reports whether pc's call is detached (detacher).
func detached(pc *peerCall) bool {
	d, ok := pc.peer.(detacher)
	return ok && d.Detached()
}

// logLevelOf is the level the caller asked for; "" for none.
func logLevelOf(pc *peerCall) string {
	if pc == nil {
		return ""
	}
	if l, ok := pc.peer.(logLeveler); ok {
		return l.LogLevel()
	}
	return ""
}

type peerKey struct{}

type peerCall struct {
	peer  Peer
	token any // the client's progress token, nil if it asked for none
	// The client's answers to an input_required result, and the state the
	// server gave with it (MCP 2026-07-28 multi-round-trip).
	input mcp.InputResponseMap
	state string
	// ctx is the call's own context: messages sent to the client with it
	// travel with the call (on its HTTP response stream, say).
	ctx context.Context
}

// WithPeer marks ctx as a request from peer; progressToken is the token the
// client sent with it (nil for none).
func WithPeer(ctx context.Context, peer Peer, progressToken any) context.Context {
	return context.WithValue(ctx, peerKey{}, &peerCall{peer: peer, token: progressToken})
}

// WithInput adds to a ctx made by WithPeer the client's answers to the
// input requests of an earlier result and its request state, for a call
// that retries it (multi-round-trip). Results that ask for input go back to
// a peer as they are: the SDK's server side hands them to a 2026-07-28
// client, or asks an older client itself and calls again.
func WithInput(ctx context.Context, responses mcp.InputResponseMap, state string) context.Context {
	pc := peerFrom(ctx)
	if pc == nil || (responses == nil && state == "") {
		return ctx
	}
	cp := *pc
	cp.input, cp.state = responses, state
	return context.WithValue(ctx, peerKey{}, &cp)
}

// PeerError is a refusal of server→client traffic: the server gets it as
// the answer to its request, and a call that fails because of it was
// answered, not lost.
type PeerError struct{ Msg string }

func (e *PeerError) Error() string { return e.Msg }

func peerFrom(ctx context.Context) *peerCall {
	pc, _ := ctx.Value(peerKey{}).(*peerCall)
	return pc
}

// progressPrefix starts the progress tokens Plexus sends upstream: one per
// call, so that a notification maps back to exactly one caller.
const progressPrefix = "plexus-"

var tokenSeq atomic.Uint64

// inflight tracks the calls in flight on one connection and who made them.
type inflight struct {
	mu     sync.Mutex
	calls  map[uint64]*peerCall
	tagged tagged // the server's messages a call's stream carried (attribute.go)
	// last is the call that ended last, and when (lateFor).
	last      *peerCall
	lastEnded time.Time
}

// begin registers a call from ctx's peer, if any, and returns ctx marked
// with the registration (for the transport that carries the call), the
// progress token to send upstream (nil for none) and the function that
// ends it.
func (f *inflight) begin(ctx context.Context) (context.Context, any, func()) {
	pc := peerFrom(ctx)
	if pc == nil {
		return ctx, nil, func() {}
	}
	id := tokenSeq.Add(1)
	cp := *pc
	cp.ctx = ctx
	pc = &cp
	ctx = context.WithValue(ctx, callKey{}, pc)
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[uint64]*peerCall{}
	}
	f.calls[id] = pc
	f.mu.Unlock()
	end := func() {
		f.mu.Lock()
		delete(f.calls, id)
		f.last, f.lastEnded = pc, time.Now()
		f.mu.Unlock()
	}
	if pc.token == nil {
		return ctx, nil, end
	}
	return ctx, progressPrefix + strconv.FormatUint(id, 10), end
}

// byToken finds the call an upstream progress token belongs to.
func (f *inflight) byToken(token any) *peerCall {
	s, ok := token.(string)
	if !ok {
		return nil
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(s, progressPrefix), 10, 64)
	if err != nil || !strings.HasPrefix(s, progressPrefix) {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[n]
}

// route finds the peer a server→client request belongs to: the caller whose
// context it arrives in (a 2026-07-28 server's input_required result is
// handled inside the call), else the one client with calls in flight — its
// newest live call, when it has several. With calls from several clients
// in flight a session-era server gives no way to tell which caused the
// request, so it is refused rather than guessed.
func (f *inflight) route(ctx context.Context, what string, grace time.Duration) (Peer, context.Context, error) {
	if pc := peerFrom(ctx); pc != nil {
		return pc.peer, ctx, nil
	}
	// Calls whose caller has gone away are not candidates: their end is
	// under way. One that is going away may not know it yet (its client's
	// connection closed a moment ago), so an ambiguity waits a little for
	// the callers to come down to one before it is refused.
	deadline := time.Now().Add(grace)
	for {
		only, n := f.liveCaller()
		switch {
		case n == 1:
			return only.peer, only.ctx, nil
		case n == 0:
			return nil, nil, &PeerError{fmt.Sprintf("plexus has no client to send this %s to: no call is in flight on this server", what)}
		case time.Now().After(deadline):
			return nil, nil, &PeerError{fmt.Sprintf("plexus cannot tell which client this %s is for: calls from %d clients are in flight on this server; send it within a call's result (MCP 2026-07-28 input_required) instead", what, n)}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lateGrace is how long after a call's answer a log message that finds
// no call in flight is taken for that call's (lateFor).
const lateGrace = time.Second

// lateFor is the client a log message that came with no call in flight
// goes to: the client of the call that ended last, within lateGrace, on
// its session's own stream — a server may write a call's log messages
// after its answer (mcp-go's stdio and SSE servers queue them), and a
// client reaching it directly gets them on its session all the same. Nil
// when no call ended that recently, or its client has no such stream (a
// 2026-07-28 client's call: its answer was all of it).
func (f *inflight) lateFor() Peer {
	f.mu.Lock()
	pc, ended := f.last, f.lastEnded
	f.mu.Unlock()
	if pc == nil || time.Since(ended) > lateGrace {
		return nil
	}
	if o, ok := pc.peer.(sessionOwner); ok {
		return o.Standalone()
	}
	return nil
}

// routeGrace bounds how long an ambiguous server request waits for the
// callers in flight to come down to one (a log message, read in stream
// order, does not wait).
const routeGrace = 500 * time.Millisecond

// liveCaller is the newest live call of the one client with live calls in
// flight, and how many distinct clients have them. A call whose caller
// gave up (cancelled, its client gone) is none: its end is under way, and
// a question routed to it would be answered "context canceled". Nor is a
// parked call: its question is with its client already, and its client
// has no request in flight (one that never comes back, as the go-sdk's
// client does not when it cannot read a roots/list without params, would
// otherwise make every other client's question ambiguous until the call
// gives up waiting, minutes later). A detached call counts only when no
// client has an attached one: its client dropped the connection that
// carried it (an mcp-go client cancels by dropping its POST), and the
// face holds it a moment for a resumption that seldom comes before it
// cancels it — meanwhile another client's call, whose log messages come
// on the same stdio stream, would be ambiguous and lose them.
func (f *inflight) liveCaller() (*peerCall, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var only, loose *peerCall
	var newest, newestLoose uint64
	seen, seenLoose := map[any]bool{}, map[any]bool{}
	for id, pc := range f.calls {
		if pc.ctx != nil && pc.ctx.Err() != nil || parked(pc) {
			continue
		}
		if detached(pc) {
			seenLoose[clientOf(pc)] = true
			if id > newestLoose {
				loose, newestLoose = pc, id
			}
			continue
		}
		seen[clientOf(pc)] = true
		if id > newest {
			only, newest = pc, id
		}
	}
	if len(seen) == 0 {
		return loose, len(seenLoose)
	}
	return only, len(seen)
}

// clientHandlers are the SDK client options behind the routing: what
// Plexus declares to servers, and multi-round-trip left to the callers.
func (c *Conn) clientHandlers(o *mcp.ClientOptions, own *mcp.ClientCapabilities) {
	// input_required results pass through to the caller (WithInput).
	o.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	o.Capabilities = &mcp.ClientCapabilities{
		Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}},
		Sampling:    &mcp.SamplingCapabilities{},
	}
	if own != nil {
		// One client's own session declares what that client declared,
		// as the client would to the server directly.
		o.Capabilities = own
	}
	// Elicitation, sampling and roots requests, progress and log
	// notifications are routed by routeConn, on the connection, in order.
	o.ResourceUpdatedHandler = func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		// The SDK lets its params be missing: then they are a nil pointer.
		if req.Params != nil {
			c.resourceUpdated(req.Params.URI)
		}
	}
}

// resourceUpdated tells the watchers (WatchResources) of an update.
func (c *Conn) resourceUpdated(uri string) {
	c.resMu.Lock()
	fns := make([]func(string), 0, len(c.resWatch))
	for _, fn := range c.resWatch {
		fns = append(fns, fn)
	}
	c.resMu.Unlock()
	for _, fn := range fns {
		fn(uri)
	}
}

// WatchResources calls fn with the URI of every notifications/resources/
// updated the server sends (for resources subscribed to with Subscribe);
// a second call with the same key replaces the first.
func (c *Conn) WatchResources(key string, fn func(uri string)) {
	c.resMu.Lock()
	defer c.resMu.Unlock()
	if c.resWatch == nil {
		c.resWatch = map[string]func(string){}
	}
	c.resWatch[key] = fn
}

// WantLogs asks a session-era server that offers logging for its log
// messages at level, when that is more than it was asked for before: the
// connection is shared, and each client gets the messages at its own
// level or above (the face filters). Nothing is asked at connect: a
// server sends what it sends by default until a client asks for a level,
// as it would to that client directly; a 2026-07-28 server is told each
// caller's level with its request.
func (c *Conn) WantLogs(ctx context.Context, level string) {
	if err := c.usable(); err != nil || era.IsStateless(c.ProtocolVersion()) || c.Capabilities().Logging == nil {
		return
	}
	c.logMu.Lock()
	defer c.logMu.Unlock()
	if rank, ok := logRank[level]; !ok || c.logLevel != "" && rank >= logRank[c.logLevel] {
		return
	}
	if err := c.session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: mcp.LoggingLevel(level)}); err != nil {
		c.log.Info("server refused logging/setLevel", "err", c.redact.Error(err))
		return
	}
	c.logLevel = level
	c.logFloor.Store(int32(logRank[level]) + 1)
}

// logRank orders MCP's log levels, least severe first.
var logRank = map[string]int{"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7}

// negotiated is the protocol version, or "" before the handshake ended.
func (c *Conn) negotiated() string {
	c.mu.Lock()
	cs := c.session
	c.mu.Unlock()
	if cs == nil || cs.InitializeResult() == nil {
		return ""
	}
	return cs.InitializeResult().ProtocolVersion
}

// meta is the _meta Plexus sends with a request on peer pc's behalf, as
// the server's era needs it (era.RequestMeta): for a session-era server
// the progress token alone, for a 2026-07-28 one also the caller's
// capabilities (as far as Plexus forwards them) and log level.
func (c *Conn) meta(pc *peerCall, token any) mcp.Meta {
	m := era.RequestMeta(c.ProtocolVersion(), era.Caller{Caps: forwardedCaps(pc), Info: c.clientInfo, LogLevel: logLevelOf(pc), ProgressToken: token})
	if m == nil {
		return nil
	}
	return mcp.Meta(m)
}

// forwardedCaps is what a server learns of the caller's capabilities:
// elicitation, sampling and roots, each only when the caller declared it —
// an MCP 2026-07-28 server asks for them within a call's result, which
// reaches the caller as the server wrote it, and asks only a caller that
// declared them. A map, not an mcp.ClientCapabilities, whose deprecated
// roots field would always be written (as {}) and declare roots for every
// caller.
func forwardedCaps(pc *peerCall) map[string]any {
	out := map[string]any{}
	if pc != nil {
		if c := pc.peer.Capabilities(); c != nil {
			if c.Elicitation != nil {
				out["elicitation"] = c.Elicitation
			}
			if c.Sampling != nil {
				out["sampling"] = c.Sampling
			}
			if c.RootsV2 != nil {
				out["roots"] = c.RootsV2
			}
		}
	}
	return out
}

// needsInput refuses a result that asks for input when there is no client
// to ask (the session API, the CLI).
func (c *Conn) needsInput(pc *peerCall, ask bool, what string) error {
	if !ask || pc != nil {
		return nil
	}
	return &PeerError{fmt.Sprintf("server %q: %s asked for input from the user (elicitation or sampling), which this caller cannot give: use it from an MCP client through the face", c.name, what)}
}

// HasPeer reports whether ctx carries a downstream client (WithPeer).
func HasPeer(ctx context.Context) bool { return peerFrom(ctx) != nil }

// AnswerError returns the JSON-RPC error a server answered a request with
// (code, message and data, secrets redacted), for a proxy to pass on to its
// client unchanged; nil if err is not one.
func AnswerError(err error) *jsonrpc.Error {
	var ae *answerError
	if errors.As(err, &ae) {
		return ae.rpc
	}
	return nil
}

// answerError keeps a server's JSON-RPC error, redacted, in the chain.
type answerError struct {
	rpc *jsonrpc.Error
	err error
}

func (e *answerError) Error() string { return e.err.Error() }
func (e *answerError) Unwrap() error { return e.err }
