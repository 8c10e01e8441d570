//lint:file-ignore SA1019 Plexus relays what MCP 2026-07-28 deprecates (sampling, roots, logging) for the session-era clients and servers that still use it, through the deprecation window.

package face

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/era"
	"github.com/plexus-mcp/plexus/internal/recovery"
)

// A stateless (MCP 2026-07-28) client's call. The client cannot be asked
// anything mid-call: it has no session, and its era asks in a result. So
// when the server asks mid-call (a session-era server does; so do some
// servers of the new era over stdio), the face answers the client's POST
// with input_required — the server's questions, and a requestState of
// the face's own naming the call — while the call upstream waits for the
// answers. The client's retry, carrying its answers and that state, is
// taken here: the answers go to the server, and the retry's POST waits
// for what the call does next (another question, or its result). A
// client that does not come back within waitTTL has its call cancelled.
//
// A stateless server's own input_required passes through as it is: its
// requestState is the server's, and the retry goes to the server.

// statePrefix starts the requestState of the face's own input_required.
const statePrefix = "plexus-wait:"

// waitTTL bounds how long a call waits for its client's next round.
const waitTTL = 2 * time.Minute

// pendingCall is one stateless client's call, across its rounds.
type pendingCall struct {
	p     *profile
	token string // its requestState, without the prefix
	name  string // the tool called, which every round must name
	user  string

	wake   chan struct{}    // a question came
	result chan callOutcome // what it gave, once the call is over
	cancel context.CancelFunc

	mu     sync.Mutex
	ex     *exchange            // the POST waiting on it now; nil between rounds
	parked bool                 // answered with questions; its client not back yet
	asks   map[string]*question // asked, not yet answered, by key
	expiry *time.Timer
	seq    int
}

// callOutcome is what a call gave: its result, or its error.
type callOutcome struct {
	res json.RawMessage
	err error
}

// question is a server's question waiting for the client's answer.
type question struct {
	ask    era.Ask
	sent   bool
	answer chan json.RawMessage
}

// waitCall serves a stateless client's tools/call: a new call, or the
// next round of one waiting for its answers.
func (p *profile) waitCall(w http.ResponseWriter, r *http.Request, req callRequest, caps *clientCaps) {
	ex := newExchange(nil, era.Stateless, w, []string{"call"}, true, nil)
	if _, state := era.Responses(req.params); strings.HasPrefix(state, statePrefix) {
		c := p.pendingCall(strings.TrimPrefix(state, statePrefix), req.name, userOf(r))
		if c == nil {
			ex.answer("call", errorAnswer(req.id, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "plexus: this call is no longer waiting for input (it ended, or waited over " + waitTTL.String() + "): call the tool again"}), http.StatusBadRequest)
			return
		}
		answers, _ := era.Responses(req.params)
		c.deliver(answers)
		c.await(ex, r, req.id)
		return
	}
	d, err := p.downstream(r.Context(), nil)
	if err != nil {
		ex.answer("call", errorAnswer(req.id, err), answerStatus(err))
		return
	}
	if req.level != "" {
		p.wantLogs(req.level)
	}
	c := &pendingCall{p: p, token: rand.Text(), name: req.name, user: userOf(r), wake: make(chan struct{}, 1),
		result: make(chan callOutcome, 1), asks: map[string]*question{}}
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	c.cancel = cancel
	peer := &statelessPeer{caps: caps, level: req.level, progress: req.token != nil, call: c}
	go func() {
		defer cancel()
		res, err := recovery.Do(p.f.log, "face: a stateless call", func() (json.RawMessage, error) {
			return p.forwardCall(ctx, d, peer, era.Stateless, req)
		}, "profile", p.name, "tool", req.name)
		c.result <- callOutcome{res, err}
		c.wakeUp()
	}()
	c.await(ex, r, req.id)
}

// await holds a POST of the call (request id) until the call answers,
// asks, or the client closes the POST (which cancels the call). Each
// round is a request of its own: its answer carries its own id.
func (c *pendingCall) await(ex *exchange, r *http.Request, id json.RawMessage) {
	defer ex.release() // a progress or log message on its way finds it gone
	c.mu.Lock()
	c.ex, c.parked = ex, false
	if c.expiry != nil {
		c.expiry.Stop()
	}
	c.mu.Unlock()
	for {
		select {
		case out := <-c.result:
			c.detach(ex)
			c.p.dropPending(c.token)
			ex.answer("call", callAnswer(id, out.res, out.err), answerStatus(out.err))
			return
		case <-c.wake:
			if asks := c.unsent(); len(asks) > 0 {
				c.detach(ex)
				c.p.keepPending(c)
				ex.answer("call", appendResponse(id, era.InputRequiredResult(asks, statePrefix+c.token)), 0)
				c.mu.Lock()
				c.parked = true
				c.expiry = time.AfterFunc(waitTTL, func() { c.p.dropPending(c.token); c.cancel() })
				c.mu.Unlock()
				return
			}
		case <-r.Context().Done():
			// Closing a stateless request cancels it.
			c.detach(ex)
			c.p.dropPending(c.token)
			c.cancel()
			return
		}
	}
}

func (c *pendingCall) detach(ex *exchange) {
	c.mu.Lock()
	if c.ex == ex {
		c.ex = nil
	}
	c.mu.Unlock()
}

func (c *pendingCall) wakeUp() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// unsent are the questions not yet put to the client, marked put.
func (c *pendingCall) unsent() []era.Ask {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []era.Ask
	for _, q := range c.asks {
		if !q.sent {
			q.sent = true
			out = append(out, q.ask)
		}
	}
	return out
}

// ask puts a server's question to the client in the call's next answer
// and waits for the client's answer in its retry.
func (c *pendingCall) ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	c.mu.Lock()
	c.seq++
	key := "q" + strconv.Itoa(c.seq)
	q := &question{ask: era.Ask{Key: key, Method: method, Params: era.AskParams(params)}, answer: make(chan json.RawMessage, 1)}
	c.asks[key] = q
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.asks, key)
		c.mu.Unlock()
	}()
	c.wakeUp()
	select {
	case a := <-q.answer:
		return a, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// deliver hands the client's answers to the questions waiting for them:
// the client is back, so the call is parked no more (the server's next
// question may come before the retry's POST waits on the call).
func (c *pendingCall) deliver(answers map[string]json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.parked = false
	for k, a := range answers {
		if q := c.asks[k]; q != nil {
			select {
			case q.answer <- a:
			default:
			}
		}
	}
}

// event sends a message of the call to the POST waiting on it, if any.
func (c *pendingCall) event(msg []byte) {
	c.mu.Lock()
	ex := c.ex
	c.mu.Unlock()
	if ex != nil {
		ex.event(msg)
	}
}

// pendingCall is the call waiting under token for a round of tool name by
// user; nil if there is none.
func (p *profile) pendingCall(token, name, user string) *pendingCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.waiting[token]
	if c == nil || c.name != name || c.user != user {
		return nil
	}
	return c
}

func (p *profile) keepPending(c *pendingCall) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waiting == nil {
		p.waiting = map[string]*pendingCall{}
	}
	p.waiting[c.token] = c
}

func (p *profile) dropPending(token string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.waiting, token)
}

// statelessPeer is a stateless client of one call, as the upstream
// connection's router sees it: each call a client of its own.
type statelessPeer struct {
	caps     *clientCaps
	level    string
	progress bool
	call     *pendingCall
}

// Parked reports whether the call waits for its client's next round,
// having answered it with the server's questions: the client has no
// request in flight then, and a server's question from another call is
// not its (upstream.Peer routing).
func (p *statelessPeer) Parked() bool {
	p.call.mu.Lock()
	defer p.call.mu.Unlock()
	return p.call.parked
}

func (p *statelessPeer) Capabilities() *mcp.ClientCapabilities { return p.caps.caps }
func (p *statelessPeer) CapsKey() string                       { return p.caps.raw }
func (p *statelessPeer) LogLevel() string                      { return p.level }

func (p *statelessPeer) Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if err := refusal(p.caps.caps, method); err != nil {
		return nil, err
	}
	return p.call.ask(ctx, method, params)
}

func (p *statelessPeer) Progress(_ context.Context, params *mcp.ProgressNotificationParams) {
	if p.progress {
		p.call.event(notification("notifications/progress", params))
	}
}

func (p *statelessPeer) Log(_ context.Context, params *mcp.LoggingMessageParams) {
	if p.level != "" && logs(p.level, string(params.Level)) {
		p.call.event(notification("notifications/message", params))
	}
}

// peerCaps keeps the capabilities stateless clients declare: few distinct
// ones, so each is decoded once. It is bounded: past its size a new set
// is decoded per call and not kept.
type peerCaps struct {
	mu   sync.Mutex
	sets map[string]*clientCaps
}

const maxPeerCaps = 64

// get returns the capabilities written as raw; false if they do not
// decode.
func (c *peerCaps) get(raw []byte) (*clientCaps, bool) {
	c.mu.Lock()
	p := c.sets[string(raw)]
	c.mu.Unlock()
	if p != nil {
		return p, true
	}
	caps, err := decodeCaps(raw)
	if err != nil {
		return nil, false
	}
	p = &clientCaps{caps: caps, raw: string(raw)}
	c.mu.Lock()
	if c.sets == nil {
		c.sets = map[string]*clientCaps{}
	}
	if len(c.sets) < maxPeerCaps {
		c.sets[p.raw] = p
	}
	c.mu.Unlock()
	return p, true
}
