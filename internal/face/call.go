//lint:file-ignore SA1019 Plexus relays what MCP 2026-07-28 deprecates (sampling, roots, logging) for the session-era clients and servers that still use it, through the deprecation window.

package face

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/era"
	"github.com/plexus-mcp/plexus/internal/host"
	"github.com/plexus-mcp/plexus/internal/jsonscan"
	"github.com/plexus-mcp/plexus/internal/recovery"
	"github.com/plexus-mcp/plexus/internal/tracing"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// A tools/call of a server's tool is forwarded by the face itself, in
// every era: its name is mapped and its _meta replaced (upstream), its
// arguments and the server's result pass as the bytes they were written
// in, and what the server sends the client meanwhile rides the call's
// exchange. The era translator (package era) makes the answer one the
// client's era reads: a stateless server's input_required is answered by
// asking a session-era client on its stream and calling again
// (forwardCall), a session-era server's question mid-call reaches a
// stateless client as input_required (wait.go). Anything the face is not
// sure of — a frame that does not parse, a name that is none of the
// profile's servers' tools, Plexus's own tools — goes to the SDK's
// server, which says what is wrong with it.

// callRequest is a tools/call the face forwards.
type callRequest struct {
	id     json.RawMessage
	name   string
	params map[string]json.RawMessage // _meta without what Plexus replaces
	token  any                        // the client's progress token; nil for none
	level  string                     // a stateless client's log level
	caps   []byte                     // a stateless client's capabilities, as written
}

// parseCall reads a client's tools/call; ok is false for anything but one
// well-formed request with a plain id and name (and, stateless, the era's
// _meta), which is the SDK's to answer.
func parseCall(env envelope, stateless bool) (req callRequest, ok bool) {
	fr, ok := env.request()
	if !ok || env.name != "tools/call" || !plainID(fr.id) {
		return req, false
	}
	req.id = fr.id
	req.params = make(map[string]json.RawMessage, 4)
	var meta, name []byte
	if !jsonscan.Members(fr.params, func(k, v []byte) bool {
		if _, dup := req.params[string(k)]; dup {
			return false
		}
		var key string // the members every call has are constants: no copy of their keys
		switch string(k) {
		case "_meta":
			meta = v
			return true
		case "name":
			name, key = v, "name"
		case "arguments":
			key = "arguments"
		default:
			key = string(k)
		}
		req.params[key] = v
		return true
	}) {
		return req, false
	}
	n, plain := jsonscan.String(name)
	if !plain || len(n) == 0 {
		return req, false // a name with escapes is none of ours: let the SDK say so
	}
	req.name = string(n)
	var version []byte
	var info bool
	kept := make([]byte, 0, len(meta))
	if meta != nil && !jsonscan.Members(meta, func(k, v []byte) bool {
		switch string(k) {
		case "progressToken":
			if json.Unmarshal(v, &req.token) != nil || req.token == nil {
				return false
			}
			return true
		case era.MetaProtocolVersion:
			version = v
			return true
		case era.MetaClientCapabilities:
			req.caps = v
			return true
		case era.MetaClientInfo:
			info = true
			return true
		case era.MetaLogLevel:
			l, ok := jsonscan.String(v)
			req.level = string(l)
			return ok
		}
		kept = appendMember(kept, k, v)
		return true
	}) {
		return req, false
	}
	if len(kept) > 0 {
		req.params["_meta"] = append(append([]byte{'{'}, kept...), '}')
	}
	if stateless {
		return req, string(version) == `"`+era.Stateless+`"` && info && len(req.caps) > 0 && req.caps[0] == '{'
	}
	return req, version == nil
}

// appendMember appends "k":v to the members of an object being written.
func appendMember(b, k, v []byte) []byte {
	if len(b) > 0 {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, k...)
	b = append(b, `":`...)
	return append(b, v...)
}

// call forwards a session's tools/call if the face takes it; false leaves
// it to the SDK's server.
func (s *session) call(r *http.Request, ex *exchange, key string, m envelope) bool {
	p := s.p
	if !p.def.external || p.def.metaTools {
		return false
	}
	version, _ := s.era()
	req, ok := parseCall(m, false)
	if !ok || version == "" || !p.framed(req.name, false) {
		return false
	}
	base := tracing.WithClient(s.withClient(context.WithoutCancel(r.Context())), r.Header, s.id)
	return s.run(r, base, ex, key, req.id, func(ctx context.Context) (json.RawMessage, error) {
		d, err := s.downstream(ctx)
		if err != nil {
			return nil, err
		}
		return p.forwardCall(ctx, d, &sessionPeer{s, ex}, version, req)
	})
}

// faceCall is a call Plexus makes for a client.
type faceCall struct {
	end context.CancelCauseFunc
}

// cancel ends the call.
func (c faceCall) cancel() { c.end(nil) }

// drop ends the call as one whose client dropped its POST rather than
// cancelled it (upstream.ErrClientDropped).
func (c faceCall) drop() { c.end(upstream.ErrClientDropped) }

// run does one of the session's requests that the face forwards itself
// (a call, a tasks request), and answers it: the only request of its POST
// in the POST's own goroutine, one of a batch in a goroutine of its own
// (spawn). The request outlives its POST while the client may resume its
// stream (exchange.go); the client's notifications/cancelled ends it, and
// a cancelled one is answered nothing. False: the session has ended.
func (s *session) run(r *http.Request, base context.Context, ex *exchange, key string, id json.RawMessage, do func(context.Context) (json.RawMessage, error)) bool {
	ctx, end := context.WithCancelCause(base)
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		end(nil)
		return false
	}
	s.calls[key] = faceCall{end: end}
	s.mu.Unlock()
	job := func() {
		defer func() {
			end(nil)
			s.mu.Lock()
			delete(s.calls, key)
			s.mu.Unlock()
		}()
		res, err := recovery.Do(s.p.f.log, "face: a session's call", func() (json.RawMessage, error) { return do(ctx) },
			"profile", s.p.name)
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			s.mu.Lock()
			delete(s.pending, key)
			s.mu.Unlock()
			ex.abandon(key) // cancelled: the client expects no answer
			return
		}
		s.answer(key, callAnswer(id, res, err))
	}
	if !ex.single {
		s.spawn(job)
		return true
	}
	// Its POST's goroutine waits for the answer anyway: doing the request
	// there spares two goroutine hand-offs a call. Meanwhile watch, not
	// serve, sees the POST drop.
	stop := ex.watch(r)
	job()
	stop()
	return true
}

// maxIdleWorkers bounds the workers a session keeps waiting for its next
// request.
const maxIdleWorkers = 16

// spawn runs job in a goroutine of its own: one of the session's idle
// workers, else a new one. A request's goroutine grows its stack on its
// way through the host and the upstream (runtime.newstack was 2 – 3 % of
// the daemon's CPU at 16 callers): a worker keeps its stack, grown, for
// the session's next request, and ends with the session.
func (s *session) spawn(job func()) {
	select {
	case s.work <- job:
	default:
		go s.worker(job)
	}
}

// worker runs job, then waits for the session's next, until the session
// ends or maxIdleWorkers others already wait.
func (s *session) worker(job func()) {
	for {
		job()
		if s.idleWorkers.Add(1) > maxIdleWorkers {
			s.idleWorkers.Add(-1)
			return
		}
		select {
		case job = <-s.work:
			s.idleWorkers.Add(-1)
		case <-s.done:
			s.idleWorkers.Add(-1)
			return
		}
	}
}

// call2026 forwards a stateless client's tools/call if the face takes it;
// false leaves r, whose body is whole, to the SDK's stateless handler.
func (p *profile) call2026(w http.ResponseWriter, r *http.Request, env envelope) bool {
	if !p.def.external || p.def.metaTools || r.Header.Get("Mcp-Protocol-Version") != era.Stateless ||
		r.Header.Get("Mcp-Method") != "tools/call" || !jsonContent(r) || !acceptsBoth(r.Header.Values("Accept")) {
		return false
	}
	req, ok := parseCall(env, true)
	if !ok || r.Header.Get("Mcp-Name") != req.name || !p.framed(req.name, true) {
		return false // the SDK says what is wrong with the headers
	}
	caps, ok := p.f.caps.get(req.caps)
	if !ok {
		return false
	}
	fr, _ := env.request()
	ctx := p.withStatelessClient(r.Context(), fr.params)
	ctx = host.WithApprovalScope(ctx, r.Header.Get(apitype.HeaderClientScope))
	if tracing.On() {
		ctx = tracing.WithClient(ctx, r.Header, "")
	}
	p.waitCall(w, r.WithContext(ctx), req, caps)
	return true
}

// forwardCall makes a call through the client's host session and returns
// the server's result as the client's era reads it, or its error. A
// session-era client cannot read an input_required result: it is asked
// each question on its stream, and the call made again with its answers.
func (p *profile) forwardCall(ctx context.Context, d *downstream, peer upstream.Peer, version string, req callRequest) (json.RawMessage, error) {
	// MCP's own carrier first, else the HTTP headers (WithClient).
	ctx, span := tracing.StartServer(ctx, tracing.FromMeta(req.params["_meta"]), tracing.Call{Method: "tools/call", Tool: req.name})
	res, err := p.forwardRounds(ctx, d, peer, version, req)
	span.End(err, tracing.ErrType(err))
	return res, err
}

// forwardRounds is forwardCall's rounds of a call, inside its span.
func (p *profile) forwardRounds(ctx context.Context, d *downstream, peer upstream.Peer, version string, req callRequest) (json.RawMessage, error) {
	ctx = upstream.WithPeer(ctx, peer, req.token)
	for round := 0; ; round++ {
		res, err := p.callOnce(ctx, d, req)
		if err != nil {
			return nil, err
		}
		p.noteResult(res)
		if era.IsStateless(version) {
			return era.ForClient(version, res), nil
		}
		asks, state, ok := era.InputRequired(res)
		if !ok {
			return era.ForClient(version, res), nil
		}
		if round == maxInputRounds {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "plexus: the server asked for input more than 8 times in a row"}
		}
		answers := make(map[string]json.RawMessage, len(asks))
		for _, a := range asks {
			if answers[a.Key], err = peer.Ask(ctx, a.Method, a.Params); err != nil {
				return nil, err
			}
		}
		era.Retry(req.params, answers, state)
	}
}

// maxInputRounds bounds the questions of one call.
const maxInputRounds = 8

// callOnce makes one round of a call: forwarded as a frame where the host
// can (a tool of the shared catalog, a name a bare profile's server does
// not list), else through the host's decoded path (a per-session
// instance's tool).
func (p *profile) callOnce(ctx context.Context, d *downstream, req callRequest) (json.RawMessage, error) {
	if target, ok := p.target(req.name); ok {
		res, handled, err := d.sess.CallRaw(ctx, target, req.params)
		if handled {
			return res, err
		}
		return p.callDecoded(ctx, d, target, req)
	}
	if server, ok := p.passThrough(req.name); ok {
		return d.sess.CallServerRaw(ctx, server, req.name, req.params)
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool " + req.name}
}

// callDecoded makes a call through the host's decoded path.
func (p *profile) callDecoded(ctx context.Context, d *downstream, target string, req callRequest) (json.RawMessage, error) {
	var in mcp.InputResponseMap
	if raw := req.params["inputResponses"]; len(raw) > 0 {
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "inputResponses: " + err.Error()}
		}
	}
	_, state := era.Responses(req.params)
	ctx = upstream.WithInput(ctx, in, state)
	res, err := d.sess.Call(ctx, target, req.params["arguments"])
	if err != nil {
		return nil, err
	}
	return marshalSDK(res)
}

// framed reports whether the face forwards a tools/call of name: an
// offered tool (for a stateless client, one whose calls carry no
// x-mcp-header parameters, which the SDK checks against the request's
// headers), or in a bare profile a name its server does not list.
func (p *profile) framed(name string, stateless bool) bool {
	p.syncMu.Lock()
	_, offered := p.toolRoute[name]
	frameable := p.frameable[name]
	p.syncMu.Unlock()
	if offered {
		return frameable || !stateless
	}
	_, ok := p.passThrough(name)
	return ok
}

// target is the catalog name of an offered tool.
func (p *profile) target(name string) (string, bool) {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	target, ok := p.toolRoute[name]
	return target, ok
}

// passThrough is the server of a bare profile, for a tool name the
// profile does not offer.
func (p *profile) passThrough(name string) (string, bool) {
	if p.def.naming != config.NamingBare || len(p.def.servers) != 1 {
		return "", false
	}
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	if _, offered := p.toolRoute[name]; offered {
		return "", false
	}
	return p.def.servers[0], true
}

// callAnswer is the JSON-RPC answer to call id: its result, or its error
// (the server's own, else Plexus's).
func callAnswer(id, res json.RawMessage, err error) []byte {
	if err != nil {
		return errorAnswer(id, err)
	}
	return appendResponse(id, res)
}

// answerStatus is the HTTP status of an answer to a stateless client: an
// error's per SEP-2575, else 200.
func answerStatus(err error) int {
	if err == nil {
		return http.StatusOK
	}
	return errorStatus(jsonError(err).Code)
}

// jsonContent reports whether r's body is declared JSON.
func jsonContent(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "application/json" {
		return true
	}
	ct, _, _ = mime.ParseMediaType(ct)
	return ct == "application/json"
}

// jsonError is the JSON-RPC error a failed call answers with: the server's
// own, else Plexus's.
func jsonError(err error) *jsonrpc.Error {
	var je *jsonrpc.Error
	errors.As(passOn(err), &je)
	return je
}

// errorAnswer is the JSON-RPC error answer to request id.
func errorAnswer(id json.RawMessage, err error) []byte {
	b, _ := json.Marshal(jsonError(err))
	return append(append(append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"error":`...), b...), '}')
}

// errorStatus is the HTTP status of a JSON-RPC error answer under MCP
// 2026-07-28 (SEP-2575), as the SDK's handler sends it.
func errorStatus(code int64) int {
	switch code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// appendResponse is the JSON-RPC answer to request id with result.
func appendResponse(id, result json.RawMessage) []byte {
	out := make([]byte, 0, len(result)+len(id)+40)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, `,"result":`...)
	out = append(out, result...)
	return append(out, '}')
}

// acceptsBoth reports whether an Accept header takes JSON and an event
// stream, as a streamable HTTP POST must.
func acceptsBoth(values []string) bool {
	var js, sse bool
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				js = true
			case "text/event-stream", "text/*":
				sse = true
			case "*/*":
				js, sse = true, true
			}
		}
	}
	return js && sse
}

// plainID reports whether a request id comes back from the SDK as it was
// sent: a whole number below 2^53 without sign or exponent, or a string of
// printable ASCII with no escapes.
func plainID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		if len(raw) < 2 || raw[len(raw)-1] != '"' {
			return false
		}
		for _, c := range raw[1 : len(raw)-1] {
			if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	if len(raw) > 15 || (raw[0] == '0' && len(raw) > 1) {
		return false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}
