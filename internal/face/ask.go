//lint:file-ignore SA1019 Plexus relays what MCP 2026-07-28 deprecates (sampling, roots, logging) for the session-era clients and servers that still use it, through the deprecation window.

package face

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/era"
	"github.com/plexus-mcp/plexus/internal/jsonscan"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// What a server sends a session-era client in the middle of a request —
// a question (elicitation, sampling, roots), progress, a log message —
// rides that request's exchange: the question goes out as a request of
// the face's own, with an id of its own, and the client's answer comes
// back in a POST on the session, taken by that id (answered).

// askPrefix marks the ids of the questions the face puts to clients; the
// SDK never uses strings for its own.
const askPrefix = "plexus-ask-"

var askSeq atomic.Uint64

// clientCaps are a client's capabilities as it declared them: decoded, for
// the refusals, and as it wrote them, the key upstream derives a call's
// _meta from.
type clientCaps struct {
	caps *mcp.ClientCapabilities
	raw  string
}

// sessionPeer is the client of one request on a session, as the upstream
// connection's router sees it.
type sessionPeer struct {
	s  *session
	ex *exchange
}

func (p *sessionPeer) Capabilities() *mcp.ClientCapabilities {
	if _, c := p.s.era(); c != nil {
		return c.caps
	}
	return &mcp.ClientCapabilities{}
}

func (p *sessionPeer) CapsKey() string {
	if _, c := p.s.era(); c != nil {
		return c.raw
	}
	return "{}"
}

// Client is the session: one client, however many of its calls are in
// flight.
func (p *sessionPeer) Client() any { return p.s }

// LogLevel is the level the client set; "" for none.
func (p *sessionPeer) LogLevel() string { return p.s.logLevel() }

// ClientSession is the session, its version and its end: a remote
// server gives the client a session of its own (upstream/clientsession.go).
func (p *sessionPeer) ClientSession() (any, string, <-chan struct{}) {
	version, _ := p.s.era()
	return p.s, version, p.s.done
}

// Detached reports whether no connection of the client holds the
// request's stream now: its POST dropped and it was not resumed (yet).
func (p *sessionPeer) Detached() bool { return p.ex != nil && p.ex.detached() }

// Standalone is the client on its session's standalone stream.
func (p *sessionPeer) Standalone() upstream.Peer { return &sessionPeer{p.s, p.s.listener} }

// Ask puts the server's request to the client, as the server wrote it,
// and returns the client's answer as the client wrote it.
func (p *sessionPeer) Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if err := refusal(p.Capabilities(), method); err != nil {
		return nil, err
	}
	defer p.ex.ask()()
	return p.s.ask(ctx, p.ex, method, params)
}

// Tell sends the client a notification of Plexus's own on the call's
// stream.
func (p *sessionPeer) Tell(method string, params any) {
	p.ex.event(notification(method, params))
}

func (p *sessionPeer) Progress(_ context.Context, params *mcp.ProgressNotificationParams) {
	p.ex.event(notification("notifications/progress", params))
}

func (p *sessionPeer) Log(ctx context.Context, params *mcp.LoggingMessageParams) {
	if upstream.EveryLevel(ctx) || logs(p.s.logLevel(), string(params.Level)) {
		p.ex.event(notification("notifications/message", params))
	}
}

// notification is a JSON-RPC notification of method.
func notification(method string, params any) []byte {
	b, _ := json.Marshal(params)
	return append(append([]byte(`{"jsonrpc":"2.0","method":"`+method+`","params":`), b...), '}')
}

// logLevels are MCP's log levels, least severe first.
var logLevels = map[string]int{"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7}

// logs reports whether a client that set level (or none: "") gets a log
// message of level msg: a client that set none gets what the server sends,
// as it would directly.
func logs(level, msg string) bool {
	want, set := logLevels[level]
	got, known := logLevels[msg]
	return !set || !known || got >= want
}

// ask puts a request to the client on ex's stream and waits for its
// answer, the end of ctx, or the session's.
func (s *session) ask(ctx context.Context, ex *exchange, method string, params json.RawMessage) (json.RawMessage, error) {
	id := askPrefix + strconv.FormatUint(askSeq.Add(1), 10)
	ch := make(chan clientAnswer, 1)
	s.mu.Lock()
	s.asks[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.asks, id)
		s.mu.Unlock()
	}()
	params = era.AskParams(params)
	msg := make([]byte, 0, len(params)+len(method)+64)
	msg = append(msg, `{"jsonrpc":"2.0","id":"`...)
	msg = append(msg, id...)
	msg = append(msg, `","method":"`...)
	msg = append(msg, method...)
	msg = append(msg, '"')
	if params != nil {
		msg = append(append(msg, `,"params":`...), params...)
	}
	msg = append(msg, '}')
	if err := ex.event(msg); err != nil {
		return nil, err
	}
	select {
	case a := <-ch:
		if a.err != nil {
			return nil, a.err
		}
		return a.result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.done:
		return nil, errors.New("the client's session ended")
	}
}

// clientAnswer is a client's answer to a question of the face's.
type clientAnswer struct {
	result json.RawMessage
	err    *jsonrpc.Error
}

// answered takes a client's answer to one of the face's questions: true
// if m is one (delivered, or late and dropped), false for any other
// response (the SDK's).
func (s *session) answered(m envelope) bool {
	id, plain := jsonscan.String(m.id)
	if !plain || !strings.HasPrefix(string(id), askPrefix) {
		return false
	}
	var a clientAnswer
	if m.err != nil {
		a.err = &jsonrpc.Error{}
		if json.Unmarshal(m.err, a.err) != nil {
			a.err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client answered with a malformed error"}
		}
	} else {
		a.result = m.result
	}
	s.mu.Lock()
	ch := s.asks[string(id)]
	s.mu.Unlock()
	if ch != nil {
		select {
		case ch <- a:
		default: // answered twice: the first answer stands
		}
	}
	return true
}

// decodeCaps decodes capabilities as a client declared them. The SDK's
// struct keeps roots in a field encoding/json does not fill (RootsV2), so
// that a client's roots are read here, or they would be lost.
func decodeCaps(raw []byte) (*mcp.ClientCapabilities, error) {
	caps := &mcp.ClientCapabilities{}
	if err := json.Unmarshal(raw, caps); err != nil {
		return nil, err
	}
	var roots struct {
		Roots *mcp.RootCapabilities `json:"roots"`
	}
	if err := json.Unmarshal(raw, &roots); err != nil {
		return nil, err
	}
	caps.RootsV2 = roots.Roots
	return caps, nil
}

// refusal is why a client cannot be asked method: it did not declare the
// capability (nil if it did).
func refusal(caps *mcp.ClientCapabilities, method string) error {
	switch {
	case method == "elicitation/create" && caps.Elicitation == nil:
		return errors.New("the client that made this call does not support elicitation")
	case method == "sampling/createMessage" && caps.Sampling == nil:
		return errors.New("the client that made this call does not support sampling")
	case method == "roots/list" && caps.RootsV2 == nil:
		return errors.New("the client that made this call does not offer roots")
	case era.AskMethods[method] == "":
		return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "plexus does not forward " + method}
	}
	return nil
}

// noSession is the refusal of a server's request to a client that has no
// session to be asked on and made a call that cannot wait for its answer.
func noSession(method string) error {
	return fmt.Errorf("the client called over MCP 2026-07-28 without a session, so plexus cannot forward this server's %s to it", era.AskMethods[method])
}
