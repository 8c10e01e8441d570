//lint:file-ignore SA1019 Plexus relays what MCP 2026-07-28 deprecates (sampling, roots, logging) for the session-era clients and servers that still use it, through the deprecation window.

package face

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/jsonscan"
)

// A frame call of a session-era client to a session-era server may be asked
// something by the server mid-call (elicitation, sampling, roots), as the
// SDK's path allows: the question goes to the client on the call's own
// answer, which turns from JSON into an event stream, and the client's
// answer comes back in a POST of its own on the session, taken here by its
// id before the SDK sees it.

// askPrefix marks the ids of the questions the frame path puts to clients;
// the SDK never uses strings for its own.
const askPrefix = "plexus-ask-"

var askSeq atomic.Uint64

// sessionPeer is the client of one frame call, as the upstream connection's
// router sees it: asked as the SDK's path would ask it, with the same
// refusals when it did not declare what it is asked for.
type sessionPeer struct {
	ls  *frameSession
	ans *frameAnswer
}

func (p *sessionPeer) Capabilities() *mcp.ClientCapabilities { return p.ls.peer.caps }
func (p *sessionPeer) CapsKey() string                       { return p.ls.peer.raw }

// Ask puts the server's request to the client as the server wrote it.
func (p *sessionPeer) Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if err := refusal(p.ls.peer.caps, method); err != nil {
		return nil, err
	}
	defer p.ans.life.ask()()
	return p.ask(ctx, method, params)
}

// Progress and Log: the frame path asks the server for neither (no progress
// token; a session that set a log level takes the SDK's path).
func (p *sessionPeer) Progress(context.Context, *mcp.ProgressNotificationParams) {}
func (p *sessionPeer) Log(context.Context, *mcp.LoggingMessageParams)            {}

// ask puts a request to the client on the call's stream and waits for its
// answer (answered) or the end of ctx.
func (p *sessionPeer) ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	id := askPrefix + strconv.FormatUint(askSeq.Add(1), 10)
	ch := make(chan clientAnswer, 1)
	p.ls.asks.Store(id, ch)
	defer p.ls.asks.Delete(id)
	msg := make([]byte, 0, len(params)+len(method)+64)
	msg = append(msg, `{"jsonrpc":"2.0","id":"`...)
	msg = append(msg, id...)
	msg = append(msg, `","method":"`...)
	msg = append(msg, method...)
	msg = append(msg, `","params":`...)
	msg = append(append(msg, params...), '}')
	if err := p.ans.event(msg); err != nil {
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
	}
}

// clientAnswer is a client's answer to a question of the frame path.
type clientAnswer struct {
	result json.RawMessage
	err    *jsonrpc.Error
}

// answered takes a client's answer to one of the frame path's questions:
// true if body is one (delivered, or late and dropped), false if it is
// anything else.
func (ls *frameSession) answered(env envelope) bool {
	fr, ok := scanAnswer(env)
	if !ok {
		return false
	}
	id, plain := jsonscan.String(fr.id)
	if !plain || !strings.HasPrefix(string(id), askPrefix) {
		return false
	}
	var a clientAnswer
	if fr.err != nil {
		a.err = &jsonrpc.Error{}
		if json.Unmarshal(fr.err, a.err) != nil {
			a.err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client answered with a malformed error"}
		}
	} else {
		a.result = fr.result
	}
	if ch, ok := ls.asks.Load(string(id)); ok {
		select {
		case ch.(chan clientAnswer) <- a:
		default: // answered twice: the first answer stands
		}
	}
	return true
}

// answerFrame is what scanAnswer reads of a response.
type answerFrame struct{ id, result, err []byte }

// scanAnswer reads a JSON-RPC response: an id and a result or an error,
// nothing else.
func scanAnswer(env envelope) (f answerFrame, ok bool) {
	f = answerFrame{id: env.id, result: env.result, err: env.err}
	return f, env.valid && !env.other && env.method == nil && env.params == nil &&
		string(env.version) == `"2.0"` && f.id != nil && (f.result == nil) != (f.err == nil)
}
