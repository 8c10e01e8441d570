package face

import (
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The face's one forwarder. A request is read once (envelope.go) and
// decided once: answered from the profile's rendered tool pages,
// forwarded to its server as a frame (a tools/call whose arguments and
// result are never decoded here), refused here, or served by the SDK's
// handler of its era — which is where everything not plainly one of the
// others goes, so that errors and edge cases have one source of truth.
// Each decision has a named reason, in the debug log and in the face's
// metrics (Observer), so that what path a request took is never a guess.

// Paths a request takes through the face.
const (
	pathPages   = "pages"   // tools/list from the rendered pages
	pathFrame   = "frame"   // forwarded as a frame
	pathAnswer  = "answer"  // a client's answer to a question the frame path put
	pathRefused = "refused" // refused by the face itself
	pathSDK     = "sdk"     // the SDK's handler
)

// Reasons for a request's path.
const (
	reasonListPages     = "tools/list of a rendered page"
	reasonCall2026      = "MCP 2026-07-28 tools/call"
	reasonCallSession   = "tools/call on a known session"
	reasonAnswer        = "the client's answer to a frame-path question"
	reasonNoSession     = "a session-era request outside a session"
	reasonSessionCap    = "a new session beyond mcp.face.maxSessions"
	reasonNotPost       = "not a POST"
	reasonBatch         = "a batch"
	reasonUnreadable    = "a body that is not one JSON-RPC message"
	reasonInitialize    = "initialize"
	reasonOtherMethod   = "a method the frame path does not take"
	reasonNotPlainCall  = "a tools/call the frame path does not take"
	reason2026Other     = "MCP 2026-07-28, not forwardable as a frame"
	reasonSessionNotYet = "a session the frame path does not know (yet)"
	reasonSessionOff    = "a session that set a log level or sent a batch"
	reasonSessionUser   = "a session another team member opened"
	reasonHeaders       = "headers the frame path does not take"
	reasonInputRequired = "a result asking for input, handed to the SDK"
	reasonNoMethod      = "a method MCP does not define"
	reasonResume        = "a stream resumed with Last-Event-ID"
	reasonResumeGone    = "a Last-Event-ID of a stream the face does not hold"
	reasonResume2026    = "a Last-Event-ID under MCP 2026-07-28, which has no resumption"
)

// clientMethods are the requests a client may send a server, in every era
// the face serves; any other is answered -32601 here (the SDK's handler
// answers it with an HTTP 400 that is no JSON-RPC answer at all).
var clientMethods = map[string]bool{
	"initialize": true, "ping": true, "server/discover": true, "logging/setLevel": true,
	"tools/list": true, "tools/call": true, "completion/complete": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true, "subscriptions/listen": true,
	"prompts/list": true, "prompts/get": true,
	"tasks/get": true, "tasks/result": true, "tasks/list": true, "tasks/cancel": true,
}

// Observer is told the path and reason of every request (the metrics).
type Observer func(path, reason string)

// forward serves one request of the profile.
func (p *profile) forward(w http.ResponseWriter, r *http.Request) {
	var env envelope
	if r.Method == http.MethodPost {
		body, _ := peekBody(r) // left whole for the SDK's handler
		env = readEnvelope(body)
	}
	done := p.noteRequest(r)
	path, reason := p.route(w, r, env)
	done()
	p.f.log.Debug("face request", "profile", p.name, "method", env.name, "path", path, "reason", reason)
	if p.f.observe != nil {
		p.f.observe(path, reason)
	}
}

// route decides the request's path and serves it there.
func (p *profile) route(w http.ResponseWriter, r *http.Request, env envelope) (path, reason string) {
	switch {
	case r.Method == http.MethodGet && len(r.Header.Values("Last-Event-ID")) > 0:
		return p.resume(w, r)
	case r.Method != http.MethodPost:
		p.serveSDK(w, r, env)
		return pathSDK, reasonNotPost
	case env.batch:
		p.serveSDK(w, r, env)
		return pathSDK, reasonBatch
	case !env.valid:
		p.serveSDK(w, r, env)
		return pathSDK, reasonUnreadable
	case env.isRequest() && env.name != "" && !clientMethods[env.name]:
		status := http.StatusOK
		if stateless(r) {
			status = errorStatus(jsonrpc.CodeMethodNotFound) // 404, as MCP 2026-07-28 asks
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(errorAnswer(env.id, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q not found", env.name)}))
		return pathRefused, reasonNoMethod
	case env.name == "tools/list" && p.listFromPages(w, r, env):
		return pathPages, reasonListPages
	}
	if env.name == "tools/call" {
		p.awaitTool(r.Context(), env.params)
	}
	if stateless(r) {
		if env.name == "tools/call" && p.frameCall2026(w, r, env) {
			return pathFrame, reasonCall2026
		}
		p.stateless.ServeHTTP(w, r)
		return pathSDK, reason2026Other
	}
	if r.Header.Get("Mcp-Session-Id") == "" {
		if env.isRequest() && env.name != "initialize" {
			// The SDK would open a session for it and answer code 0.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write(errorAnswer(env.id, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: "plexus: no session: send initialize first (or announce MCP 2026-07-28 in Mcp-Protocol-Version)"}))
			return pathRefused, reasonNoSession
		}
		if p.liveSessions() >= p.def.cap {
			// The client may try again once idle sessions have expired.
			p.f.log.Warn("face: a new session refused: the profile holds its maximum", "profile", p.name, "max", p.def.cap)
			w.Header().Set("Retry-After", "60")
			http.Error(w, fmt.Sprintf("plexus: this profile already holds %d sessions (mcp.face.maxSessions); try again later, or end idle sessions with DELETE", p.def.cap), http.StatusServiceUnavailable)
			return pathRefused, reasonSessionCap
		}
		p.serveSDK(w, r, env)
		return pathSDK, reasonInitialize
	}
	served, reason := p.frameSessionCall(w, r, env)
	if served {
		if reason == reasonAnswer {
			return pathAnswer, reason
		}
		return pathFrame, reason
	}
	p.serveSDK(w, r, env)
	return pathSDK, reason
}

// serveSDK hands a session-era request to the SDK's handler: its POST's
// life marked for the handler's calls (requestlife.go), and a new
// session followed to its end from before its initialize is answered.
func (p *profile) serveSDK(w http.ResponseWriter, r *http.Request, env envelope) {
	if stateless(r) {
		p.stateless.ServeHTTP(w, r)
		return
	}
	if r.Method == http.MethodGet {
		p.serveStream(w, r)
		return
	}
	if r.Method != http.MethodPost {
		p.stateful.ServeHTTP(w, r)
		return
	}
	life, forget := p.f.lives.mark(r)
	defer forget()
	lw := &lifeWriter{ResponseWriter: w, lives: &p.f.lives, life: life}
	if life.session != "" {
		p.stateful.ServeHTTP(lw, r)
		p.delivered(r, life.stream.Load())
		return
	}
	user := userOf(r)
	sw := &sessionWriter{ResponseWriter: lw, opened: func(id string) { p.track(id, user) }}
	p.stateful.ServeHTTP(sw, r)
	sw.open() // an answer with no body at all
	if s := life.stream.Load(); s != nil && r.Context().Err() == nil {
		p.f.replay.free(sw.id, *s)
	}
}
