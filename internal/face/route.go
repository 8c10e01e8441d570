package face

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/era"
)

// The face's one router. A request is read once (envelope.go) and
// decided once, by its era: a stateless (MCP 2026-07-28) request has its
// tools/call forwarded by the face (call.go, wait.go) and everything
// else served by the SDK's stateless handler, which keeps nothing past
// the request; a session-era request goes to its session (session.go),
// which the face owns whole and whose messages it dispatches one by one —
// to the face's own handlers or to the SDK's server running on the
// session's connection. Each decision has a named reason, in the debug
// log and in the face's metrics (Observer), so that what path a request
// took is never a guess.

// Paths a request takes through the face.
const (
	pathPages   = "pages"   // tools/list from the rendered pages
	pathFrame   = "frame"   // a call the face forwards itself
	pathAnswer  = "answer"  // a client's answer to a question the face put
	pathStream  = "stream"  // a session's event stream: its standalone GET, a resumption, its end
	pathRefused = "refused" // refused by the face itself
	pathSDK     = "sdk"     // the SDK's server
)

// Reasons for a request's path.
const (
	reasonListPages    = "a list of a rendered page"
	reasonCall2026     = "MCP 2026-07-28 tools/call"
	reasonCallSession  = "tools/call on a known session"
	reasonCancel       = "the cancellation of a call the face forwards"
	reasonAnswer       = "the client's answer to a face's question"
	reasonNoSession    = "a session-era request outside a session"
	reasonSessionGone  = "a session the face does not hold"
	reasonSessionUser  = "a session another team member opened"
	reasonSessionCap   = "a new session beyond mcp.face.maxSessions, each busy"
	reasonBadRequest   = "a request the streamable HTTP transport refuses"
	reasonBatch        = "a batch"
	reasonInitialize   = "initialize"
	reasonOtherMethod  = "a method the face leaves to the SDK"
	reasonNotPlainCall = "a tools/call the face does not take"
	reason2026Other    = "MCP 2026-07-28, not a call the face forwards"
	reasonNoMethod     = "a method MCP does not define"
	reasonListen       = "a session's standalone stream"
	reasonResume       = "a stream resumed with Last-Event-ID"
	reasonResumeGone   = "a Last-Event-ID of a stream the face does not hold"
	reasonResume2026   = "a Last-Event-ID under MCP 2026-07-28, which has no resumption"
	reasonDelete       = "a session ended by its client (DELETE)"
	reasonSessionOnly  = "a session-era ping or logging/setLevel of a 2026-07-28 client, answered"
	reasonTask         = "a request of the tasks extension, to a bare profile's server"
	reasonServerEra    = "MCP 2026-07-28 to a bare profile of a session-era server"
)

// clientMethods are the requests a client may send a server, in every era
// the face serves; any other is answered -32601 here.
var clientMethods = map[string]bool{
	"initialize": true, "ping": true, "server/discover": true, "logging/setLevel": true,
	"tools/list": true, "tools/call": true, "completion/complete": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true, "subscriptions/listen": true,
	"prompts/list": true, "prompts/get": true,
	"tasks/get": true, "tasks/result": true, "tasks/list": true, "tasks/cancel": true,
}

// maxBody bounds one request from a client.
const maxBody = 8 << 20

// Observer is told the path and reason of every request (the metrics).
type Observer func(path, reason string)

// forward serves one request of the profile.
func (p *profile) forward(w http.ResponseWriter, r *http.Request) {
	var body []byte
	var env envelope
	if r.Method == http.MethodPost {
		body = peekBody(r) // left whole for the SDK's stateless handler
		env = readEnvelope(body)
	}
	path, reason := p.route(w, r, body, env)
	if p.f.log.Enabled(r.Context(), slog.LevelDebug) { // its arguments are five allocations
		p.f.log.Debug("face request", "profile", p.name, "method", env.name, "path", path, "reason", reason)
	}
	if p.f.observe != nil {
		p.f.observe(path, reason)
	}
	p.f.poke()
}

// route decides the request's path and serves it there.
func (p *profile) route(w http.ResponseWriter, r *http.Request, body []byte, env envelope) (path, reason string) {
	if r.Method == http.MethodPost && env.isRequest() && env.name != "" && !clientMethods[env.name] {
		status := http.StatusOK
		if stateless(r) {
			status = errorStatus(jsonrpc.CodeMethodNotFound) // 404, as MCP 2026-07-28 asks
		}
		writeJSON(w, status, errorAnswer(env.id, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q not found", env.name)}))
		return pathRefused, reasonNoMethod
	}
	if stateless(r) {
		if v := p.sessionServer(); v != "" {
			return p.refuseStateless(w, env, v)
		}
		return p.routeStateless(w, r, env)
	}
	sid := r.Header.Get("Mcp-Session-Id")
	switch r.Method {
	case http.MethodPost:
	case http.MethodGet:
		if !acceptsStream(r.Header.Values("Accept")) {
			http.Error(w, "Accept must contain 'text/event-stream' for GET requests", http.StatusBadRequest)
			return pathRefused, reasonBadRequest
		}
		if sid == "" {
			http.Error(w, "Bad Request: GET requires an Mcp-Session-Id header", http.StatusBadRequest)
			return pathRefused, reasonNoSession
		}
		s, path, reason := p.lookup(w, r, sid)
		if s == nil {
			return path, reason
		}
		defer s.noteRequest(r)()
		if len(r.Header.Values("Last-Event-ID")) > 0 {
			return p.resume(w, r, s)
		}
		s.listen(w, r, -1)
		return pathStream, reasonListen
	case http.MethodDelete:
		if sid == "" {
			http.Error(w, "Bad Request: DELETE requires an Mcp-Session-Id header", http.StatusBadRequest)
			return pathRefused, reasonNoSession
		}
		s, path, reason := p.lookup(w, r, sid)
		if s == nil {
			return path, reason
		}
		s.end("its client ended it (DELETE)")
		w.WriteHeader(http.StatusNoContent)
		return pathStream, reasonDelete
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return pathRefused, reasonBadRequest
	}
	msgs, batch, why := p.readPOST(r, body)
	if why != "" {
		status := http.StatusBadRequest
		if strings.HasPrefix(why, "Content-Type") {
			status = http.StatusUnsupportedMediaType
		}
		http.Error(w, why, status)
		return pathRefused, reasonBadRequest
	}
	if sid == "" {
		if !slices.ContainsFunc(msgs, func(m envelope) bool { return m.name == "initialize" && m.isRequest() }) {
			writeJSON(w, http.StatusBadRequest, errorAnswer(orNull(env.id), &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: "plexus: no session: send initialize first (or announce MCP 2026-07-28 in Mcp-Protocol-Version)"}))
			return pathRefused, reasonNoSession
		}
		return p.open(w, r, msgs, batch)
	}
	s, path, reason := p.lookup(w, r, sid)
	if s == nil {
		return path, reason
	}
	defer s.noteRequest(r)()
	path, reason = s.post(w, r, msgs, batch, nil)
	return path, reason
}

// routeStateless serves an MCP 2026-07-28 request.
func (p *profile) routeStateless(w http.ResponseWriter, r *http.Request, env envelope) (path, reason string) {
	switch {
	case r.Method == http.MethodGet && len(r.Header.Values("Last-Event-ID")) > 0:
		w.Header().Set("Allow", "POST")
		http.Error(w, "plexus: MCP 2026-07-28 has no stream resumption (Last-Event-ID): send the request again, with a new id", http.StatusMethodNotAllowed)
		return pathRefused, reasonResume2026
	case r.Method == http.MethodPost && isList(env.name):
		k, _ := kindOf(env.name)
		if res, handled, err := p.listPage2026(k, r, env); handled {
			if err != nil {
				writeJSON(w, answerStatus(err), errorAnswer(env.id, err))
			} else {
				writeJSON(w, http.StatusOK, appendResponse(env.id, res))
			}
			return pathPages, reasonListPages
		}
	case r.Method == http.MethodPost && env.name == "tools/call":
		p.awaitTool(r.Context(), env.params)
		if p.call2026(w, r, env) {
			return pathFrame, reasonCall2026
		}
	case r.Method == http.MethodPost && isTaskMethod(env.name):
		if p.task2026(w, r, env) { // tasks.go
			return pathFrame, reasonTask
		}
	case r.Method == http.MethodPost && env.isRequest() && (env.name == "ping" || env.name == "logging/setLevel") && !hasEraMeta(env.params):
		// Requests of the session era a 2026-07-28 client may still send
		// without the era's _meta (the Go SDK's does), which the SDK's
		// handler refuses: a server the client reaches directly over stdio
		// answers them, and so does the face. A level set so is no one's:
		// that era asks for it with each request. With the era's _meta,
		// they are methods the era removed (the SDK answers 404, -32601).
		writeJSON(w, http.StatusOK, appendResponse(env.id, era.ForClient(era.Stateless, []byte(`{}`))))
		return pathRefused, reasonSessionOnly
	}
	p.stateless.ServeHTTP(w, r)
	return pathSDK, reason2026Other
}

// lookup is the live session sid of the request's caller; else it
// answers 404 (the session is gone: the client opens another) or 403.
func (p *profile) lookup(w http.ResponseWriter, r *http.Request, sid string) (s *session, path, reason string) {
	s = p.sessionByID(sid)
	if s == nil {
		http.Error(w, "session not found", http.StatusNotFound)
		return nil, pathRefused, reasonSessionGone
	}
	if s.user != userOf(r) {
		http.Error(w, "session user mismatch", http.StatusForbidden)
		return nil, pathRefused, reasonSessionUser
	}
	return s, "", ""
}

// readPOST reads a session-era POST's messages, checking what the
// streamable HTTP transport asks of one; why says what is wrong.
func (p *profile) readPOST(r *http.Request, body []byte) (msgs []envelope, batch bool, why string) {
	version := r.Header.Get("Mcp-Protocol-Version")
	switch {
	case !jsonContent(r):
		return nil, false, "Content-Type must be 'application/json'"
	case !acceptsBoth(r.Header.Values("Accept")):
		return nil, false, "Accept must contain both 'application/json' and 'text/event-stream'"
	case len(r.Header.Values("Last-Event-ID")) > 0:
		return nil, false, "can't send Last-Event-ID for POST request"
	case version != "" && !slices.Contains(config.SessionProtocolVersions, version):
		return nil, false, fmt.Sprintf("Bad Request: Unsupported protocol version (supported versions: %s)", strings.Join(config.SessionProtocolVersions, ","))
	case body == nil:
		return nil, false, fmt.Sprintf("request body exceeds %d bytes", maxBody)
	case len(bytes.TrimSpace(body)) == 0:
		return nil, false, "POST requires a non-empty body"
	}
	msgs, batch = readMessages(body)
	switch {
	case msgs == nil:
		return nil, false, "malformed payload: not one JSON-RPC message or a batch of them"
	case batch && !era.Batches(orDefault(version)):
		return nil, false, fmt.Sprintf("JSON-RPC batching is not supported in %s and later (request version: %s)", era.V20250618, version)
	}
	return msgs, batch, ""
}

// orDefault is the version a request without the header is taken to be
// of, as the transport specification says.
func orDefault(version string) string {
	if version == "" {
		return era.V20250326
	}
	return version
}

// hasEraMeta reports whether a request's params carry the stateless
// era's protocol version in their _meta.
func hasEraMeta(params []byte) bool {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	return json.Unmarshal(params, &p) == nil && p.Meta[era.MetaProtocolVersion] != nil
}

// isList reports whether method lists tools, resources, templates or
// prompts.
func isList(method string) bool {
	_, ok := kindOf(method)
	return ok
}

// stateless reports whether a request is of the stateless era: no
// protocol session, the version announced in the header.
func stateless(r *http.Request) bool {
	return r.Header.Get("Mcp-Session-Id") == "" && era.IsStateless(r.Header.Get("Mcp-Protocol-Version"))
}

// resume serves a GET with Last-Event-ID on a session: the replay buffer
// must still hold every event of that stream of this session after it (a
// stream of another session is unknown here); then the stream's exchange
// replays them and goes on with the stream.
func (p *profile) resume(w http.ResponseWriter, r *http.Request, s *session) (path, reason string) {
	s.resumes.Store(true)
	last := r.Header.Get("Last-Event-ID")
	stream, index, ok := parseEventID(last)
	if !ok {
		http.Error(w, fmt.Sprintf("plexus: Last-Event-ID %q is not an event id this face sent (STREAM_INDEX)", last), http.StatusBadRequest)
		return pathRefused, reasonResumeGone
	}
	if stream == "" {
		s.listen(w, r, index)
		return pathStream, reasonResume
	}
	ex, err := p.f.replay.held(streamKey{s.id, stream}, index)
	if err != nil || ex == nil {
		if err == nil {
			err = errReplayGone
		}
		// 400, not 404: a 404 tells the client its session is gone.
		http.Error(w, fmt.Sprintf("plexus: cannot resume the stream of Last-Event-ID %q: %v; send the request again", last, err), http.StatusBadRequest)
		return pathRefused, reasonResumeGone
	}
	s.streams.Add(1)
	ex.attach(w, r, index)
	s.streams.Add(-1)
	return pathStream, reasonResume
}

// peekBody reads r's body and leaves it whole for whoever reads it next;
// nil if it cannot be read or is over maxBody.
func peekBody(r *http.Request) []byte {
	body, err := readBody(r)
	r.Body = &replayBody{peeked: body, rest: r.Body}
	if err != nil || len(body) > maxBody {
		return nil
	}
	if body == nil {
		body = []byte{}
	}
	return body
}

// replayBody is a request's body once peeked: what peekBody read, then
// the rest. Closing it closes nothing (the server closes the request's
// own body).
type replayBody struct {
	peeked []byte
	rest   io.Reader
}

func (b *replayBody) Read(p []byte) (int, error) {
	if len(b.peeked) > 0 {
		n := copy(p, b.peeked)
		b.peeked = b.peeked[n:]
		return n, nil
	}
	return b.rest.Read(p)
}

func (b *replayBody) Close() error { return nil }

// readBody reads up to maxBody+1 bytes of r's body, in one buffer of its
// declared length when it has one.
func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= maxBody {
		body := make([]byte, n)
		k, err := io.ReadFull(r.Body, body)
		return body[:k], err
	}
	return io.ReadAll(io.LimitReader(r.Body, maxBody+1))
}

// writeJSON writes a JSON answer.
func writeJSON(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// orNull is id, or null for none.
func orNull(id json.RawMessage) json.RawMessage {
	if id == nil {
		return json.RawMessage("null")
	}
	return id
}

// acceptsStream reports whether an Accept header takes an event stream.
func acceptsStream(values []string) bool {
	return acceptsBoth(append(slices.Clone(values), "application/json"))
}

// A bare profile speaks its server's era too. In front of a server that
// speaks only the session era (it answered Plexus's server/discover with
// an error, and initialize) it offers no MCP 2026-07-28: a client of that
// era is refused as the server would refuse it, falls back to initialize
// as it does when it reaches the server directly, and from then on meets
// what it meets there (ping, logging/setLevel, progress and questions of
// the session). A server whose settings pin a session-era version is such
// a server only when it refused the server/discover Plexus sent before
// pinning it (upstream.Conn.OwnEra: one POST apart over streamable HTTP,
// over stdio the process's first message): the pin holds Plexus back, not
// the server, which a client reaching it directly may well speak
// 2026-07-28 with (the peer matrix's go-sdk, mcp-go and TypeScript 2.x
// servers do). Then, and while the server's own era is not known (a probe
// that got no answer), the profile offers every era and translates, as a
// profile that gathers servers always does (internal/era).

// sessionServer is the session-era version a bare profile's server
// speaks of its own; "" for any other profile, a server that speaks MCP
// 2026-07-28, or while the server's era is not known (then the profile
// offers every era).
func (p *profile) sessionServer() string {
	if !p.def.external || p.def.channel || p.def.naming != config.NamingBare || len(p.def.servers) != 1 {
		return ""
	}
	if v, own := p.f.h.ServerEra(p.def.servers[0]); own && era.IsSession(v) {
		return v
	}
	return ""
}

// refuseStateless answers a stateless-era request to a profile whose
// server speaks version: 400 with a JSON-RPC error that is not the era's
// "unsupported protocol version" (which tells a client of that era that
// the server is of it too, and some then do not fall back), so that every
// client falls back to initialize, as before a session-era server.
func (p *profile) refuseStateless(w http.ResponseWriter, env envelope, version string) (path, reason string) {
	msg := fmt.Sprintf("Bad Request: %s speaks MCP %s, which opens a session: send initialize (this profile does not offer MCP %s)",
		p.def.servers[0], version, era.Stateless)
	writeJSON(w, http.StatusBadRequest, errorAnswer(orNull(env.id), &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg}))
	return pathRefused, reasonServerEra
}
