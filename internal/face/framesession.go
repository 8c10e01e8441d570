package face

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/jsonscan"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// The frame path for session-era clients: most agents today
// (Claude Code, VS Code, Cursor) keep a protocol session, and their
// tools/call would otherwise take the SDK's path, which decodes and
// encodes every argument and result twice. A call is forwarded as a
// frame, as frame.go does for MCP 2026-07-28, when nothing of the session
// can be needed during it:
//
//   - the session is live, initialized with the version its header names,
//     and has had a call through the SDK (which made its host session);
//   - the request is one plain tools/call without a progress token;
//   - the client has not set a log level (its log messages ride the SDK's
//     event stream of the call) nor sent a batch.
//
// A session-era server may ask the client mid-call: frameask.go puts the
// question on the call's answer, which becomes an event stream. A server
// of MCP 2026-07-28 asks in its result instead (input_required), which is
// not the client's to read: the SDK turns it into requests on the session
// and retries the call with the answers. The frame path hands the request
// to the SDK then, with the result it already has (prefetch), so that the
// server is not called twice. notifications/cancelled for a frame call
// cancels it here; the SDK would not know the request.

// frameSession is what the frame path knows of one session of the SDK
// server.
type frameSession struct {
	ss      *mcp.ServerSession
	d       atomic.Pointer[downstream] // made on the session's first call
	version string
	user    string           // the team member who opened it ("" outside team mode)
	peer    *sessionlessPeer // the client's capabilities, as initialize declared them
	off     atomic.Bool

	mu       sync.Mutex
	inflight map[string]context.CancelFunc // by the request's raw id
	asks     sync.Map                      // question id → chan clientAnswer (frameask.go)
}

// register makes a session known to the frame path, once its initialize
// is answered; unregister forgets it.
func (p *profile) register(ss *mcp.ServerSession, user string) {
	ip := ss.InitializeParams()
	if ip == nil || !sessionVersions[ip.ProtocolVersion] || ss.ID() == "" {
		return
	}
	caps := ip.Capabilities
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	key, _ := json.Marshal(caps)
	ls := &frameSession{ss: ss, version: ip.ProtocolVersion, user: user, peer: &sessionlessPeer{caps: caps, raw: string(key)},
		inflight: map[string]context.CancelFunc{}}
	p.byID.Store(ss.ID(), ls)
}

func (p *profile) unregister(ss *mcp.ServerSession) { p.byID.Delete(ss.ID()) }

// frameSessionCall serves r, a POST on a session, if it can; false means
// the SDK handler must, and r's body is left whole for it. On the way it
// notes what it must know of the session's other requests: a log level
// set, a batch, the cancellation of a frame call.
func (p *profile) frameSessionCall(w http.ResponseWriter, r *http.Request, env envelope) (bool, string) {
	if !p.def.external || p.def.metaTools {
		return false, reasonOtherMethod
	}
	v, ok := p.byID.Load(r.Header.Get("Mcp-Session-Id"))
	if !ok {
		return false, reasonSessionNotYet
	}
	ls := v.(*frameSession)
	if ls.user != userOf(r) {
		// Another user's session: the SDK refuses it (403).
		return false, reasonSessionUser
	}
	if ls.off.Load() {
		return false, reasonSessionOff
	}
	if r.Header.Get("Mcp-Protocol-Version") != ls.version || !jsonContent(r) || !acceptsBoth(r.Header.Values("Accept")) {
		return false, reasonHeaders
	}
	if ls.answered(env) {
		w.WriteHeader(http.StatusAccepted)
		return true, reasonAnswer
	}
	req, method, ok := parseSessionRequest(env)
	switch {
	case !ok:
		return false, reasonNotPlainCall
	case method == "logging/setLevel":
		ls.off.Store(true) // its log messages ride the SDK's streams from now on
		return false, reasonOtherMethod
	case method == "notifications/cancelled":
		ls.cancel(req.cancelled)
		return false, reasonOtherMethod
	case method != "tools/call":
		return false, reasonOtherMethod
	}
	if !p.framed(req.name) {
		return false, reasonNotPlainCall
	}
	// The call outlives its POST while the client may resume its stream
	// (requestlife.go, framestream.go).
	ans := &frameAnswer{w: w, buf: p.f.replay, lives: &p.f.lives}
	ans.life = requestLife{ctx: r.Context(), session: ls.ss.ID()}
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	defer context.AfterFunc(r.Context(), func() { ans.release(w); p.f.lives.dropped(&ans.life, cancel) })()
	ls.mu.Lock()
	if _, dup := ls.inflight[string(req.ID)]; dup {
		ls.mu.Unlock()
		return false, reasonNotPlainCall // the SDK says what is wrong with a reused id
	}
	ls.inflight[string(req.ID)] = cancel
	ls.mu.Unlock()
	defer func() {
		ls.mu.Lock()
		delete(ls.inflight, string(req.ID))
		ls.mu.Unlock()
	}()
	args := req.Params["arguments"]
	defer ans.close() // nothing is written once this handler returns
	if ls.version >= "2025-11-25" {
		defer time.AfterFunc(primeAfter, func() {
			if p.sessionEraTool(req.name) {
				ans.prime()
			}
		}).Stop()
	}
	d := ls.d.Load()
	if d == nil {
		var err error
		if d, err = p.downstream(ctx, ls.ss); err != nil {
			return false, reasonNotPlainCall // the SDK's path says what is wrong
		}
	}
	res, target, handled, err := p.callFrame(upstream.WithPeer(ctx, &sessionPeer{ls, ans}, nil), d, req.name, req.Params)
	if !handled {
		return false, reasonNotPlainCall
	}
	p.noteResult(res)
	ans.mu.Lock()
	streaming := ans.sse
	ans.settled = true // not primed from now on: the answer is here
	ans.mu.Unlock()
	if err == nil && !streaming && target != "" && inputRequired(res) {
		var out mcp.CallToolResult
		if json.Unmarshal(res, &out) != nil {
			return false, reasonInputRequired // the SDK calls again, and says what is wrong
		}
		p.prefetch.put(ls.ss.ID(), target, args, &out)
		return false, reasonInputRequired
	}
	if err != nil && ctx.Err() != nil && r.Context().Err() == nil {
		// Cancelled by the client: it expects no answer.
		if !streaming {
			w.WriteHeader(http.StatusAccepted)
		}
		return true, reasonCallSession
	}
	ans.finish(r, req.ID, res, err)
	if stream := ans.streamed(); stream != "" {
		p.delivered(r, &stream)
	}
	return true, reasonCallSession
}

// cancel ends the frame call with raw id, if there is one.
func (ls *frameSession) cancel(id json.RawMessage) {
	ls.mu.Lock()
	c := ls.inflight[string(id)]
	ls.mu.Unlock()
	if c != nil {
		c()
	}
}

// sessionRequest is what frameSessionCall reads of a request.
type sessionRequest struct {
	frameRequest
	cancelled json.RawMessage // the requestId of notifications/cancelled
}

// parseSessionRequest reads a session's frame: for a tools/call its id,
// name and params (ok only if it asks for no progress and has nothing but
// a name, arguments and _meta), for notifications/cancelled the id it
// cancels, and otherwise the method only.
func parseSessionRequest(env envelope) (req sessionRequest, method string, ok bool) {
	fr, ok := env.request()
	if !ok {
		return req, "", false
	}
	req.ID = fr.id
	params := fr.params
	s, plain := jsonscan.String(fr.method)
	if !plain {
		return req, "", false
	}
	method = string(s)
	switch method {
	case "notifications/cancelled":
		jsonscan.Members(params, func(k, v []byte) bool {
			if string(k) == "requestId" {
				req.cancelled = v
			}
			return true
		})
		return req, method, req.cancelled != nil
	case "tools/call":
	default:
		return req, method, true
	}
	if !plainID(req.ID) {
		return req, method, false
	}
	req.Params = make(map[string]json.RawMessage, 3)
	var meta, name []byte
	if !jsonscan.Members(params, func(k, v []byte) bool {
		switch string(k) {
		case "name":
			name = v
		case "arguments":
		case "_meta":
			meta = v
			return true
		default:
			return false // something the SDK knows and this path does not
		}
		if _, dup := req.Params[string(k)]; dup {
			return false
		}
		req.Params[string(k)] = v
		return true
	}) {
		return req, method, false
	}
	n, plain := jsonscan.String(name)
	if !plain {
		return req, method, false
	}
	req.name = string(n)
	if meta != nil && !jsonscan.Members(meta, func(k, _ []byte) bool { return string(k) != "progressToken" }) {
		return req, method, false
	}
	return req, method, true
}

// inputRequired reports whether a result asks the client for input.
func inputRequired(res json.RawMessage) bool {
	if !bytes.Contains(res, []byte(`"input_required"`)) {
		return false
	}
	var r struct {
		ResultType string `json:"resultType"`
	}
	return json.Unmarshal(res, &r) == nil && r.ResultType == "input_required"
}

// prefetched are results that asked for input, fetched by the frame path
// for a call it then handed to the SDK: the SDK's call takes its result
// from here instead of calling the server a second time.
type prefetched struct {
	mu sync.Mutex
	m  map[string]prefetch
}

type prefetch struct {
	res  *mcp.CallToolResult
	when time.Time
}

// prefetchTTL bounds how long a result waits for its call: the SDK takes
// it at once, unless it refused the request.
const prefetchTTL = 30 * time.Second

func prefetchKey(session, name string, args json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, args) != nil {
		b.Reset()
		b.Write(args)
	}
	return session + "\x00" + name + "\x00" + b.String()
}

func (p *prefetched) put(session, name string, args json.RawMessage, res *mcp.CallToolResult) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]prefetch{}
	}
	for k, v := range p.m {
		if now.Sub(v.when) > prefetchTTL {
			delete(p.m, k)
		}
	}
	p.m[prefetchKey(session, name, args)] = prefetch{res, now}
}

// take returns and forgets the result fetched for this call, if any.
func (p *prefetched) take(session, name string, args json.RawMessage) *mcp.CallToolResult {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.m) == 0 {
		return nil
	}
	k := prefetchKey(session, name, args)
	v, ok := p.m[k]
	delete(p.m, k)
	if !ok || time.Since(v.when) > prefetchTTL {
		return nil
	}
	return v.res
}
