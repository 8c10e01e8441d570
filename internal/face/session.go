package face

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/era"
)

// A session-era client's protocol session, owned whole by the face: the
// mirror of what package upstream does on the client side. The profile's
// table holds it from its initialize to its end — a DELETE, its idle time
// out, its client gone (its standalone stream dropped and not back within
// dropGrace), its eviction by a new client at the profile's cap, or the
// profile's end — and it holds everything of it: its requests in flight
// and the exchange answering each (exchange.go), the calls Plexus makes
// for it and the questions it puts to its client (call.go, ask.go), its
// standalone stream, its log level, its host session, and the SDK's
// server session running on the connection the face gives it (sdkconn.go).

// session is one protocol session of a profile.
type session struct {
	p    *profile
	id   string
	user string // the team member who opened it ("" outside team mode)
	conn *sdkConn
	ss   *mcp.ServerSession

	level atomic.Pointer[string] // the log level the client set; nil for none

	hostMu sync.Mutex
	host   *downstream // its host session, made at its first use

	listener *exchange // the standalone GET stream

	// What the client has shown of itself, for a dropped POST (exchange.go):
	// it opened its standalone stream; it resumed a stream (Last-Event-ID).
	listened, resumes atomic.Bool

	// Activity, for the idle clock, dropGrace and eviction.
	streams atomic.Int32  // GET streams being served
	busy    atomic.Int32  // POSTs being served
	seen    atomic.Uint64 // requests seen: a client that came back sent one
	last    atomic.Int64  // when a request last started or ended, Unix ns
	idle    *time.Timer

	mu      sync.Mutex
	pending map[string]*exchange         // request key → the exchange answering it
	sdkReqs map[string]*mcp.RequestExtra // request key → a request the SDK serves
	extras  map[*mcp.RequestExtra]*exchange
	calls   map[string]faceCall          // request key → a call Plexus makes
	asks    map[string]chan clientAnswer // the face's questions to the client, by id
	// version is the negotiated protocol version, once the initialize is
	// answered; caps the client's capabilities as it declared them.
	version string
	caps    *clientCaps
	ended   bool
	done    chan struct{}

	// The session's idle workers (run) wait on work; idleWorkers counts
	// them.
	work        chan func()
	idleWorkers atomic.Int32
}

// dropGrace is how long a session whose client dropped its standalone
// stream waits for that client to come back.
const dropGrace = 3 * time.Second

// open serves an initialize: a new session, at the profile's cap in place
// of the one idle longest.
func (p *profile) open(w http.ResponseWriter, r *http.Request, msgs []envelope, batch bool) (path, reason string) {
	if victim, full := p.makeRoom(); full {
		// The client may try again once a session is idle or ended.
		p.f.log.Warn("face: a new session refused: the profile holds its maximum, each busy", "profile", p.name, "max", p.def.cap)
		w.Header().Set("Retry-After", "5")
		http.Error(w, fmt.Sprintf("plexus: this profile already holds %d sessions (mcp.face.maxSessions), each busy; try again later", p.def.cap), http.StatusServiceUnavailable)
		return pathRefused, reasonSessionCap
	} else if victim != nil {
		victim.end("a new client needed its place: the profile holds mcp.face.maxSessions sessions, and this one was idle longest")
	}
	id := rand.Text()
	if p.f.sessionID != nil {
		id = p.f.sessionID()
	}
	s := &session{p: p, id: id, user: userOf(r), pending: map[string]*exchange{}, sdkReqs: map[string]*mcp.RequestExtra{},
		extras: map[*mcp.RequestExtra]*exchange{}, calls: map[string]faceCall{}, asks: map[string]chan clientAnswer{},
		done: make(chan struct{}), work: make(chan func())}
	s.touch()
	s.conn = newSDKConn(s)
	s.listener = &exchange{s: s, listen: true, sse: true, ended: make(chan struct{}), sent: -1}
	ss, err := p.srv.Connect(context.WithoutCancel(r.Context()), s.conn, nil)
	if err != nil {
		http.Error(w, "plexus: opening a session: "+err.Error(), http.StatusInternalServerError)
		return pathRefused, reasonInitialize
	}
	s.ss = ss
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		ss.Close()
		http.Error(w, "plexus: this profile changed: reconnect", http.StatusServiceUnavailable)
		return pathRefused, reasonInitialize
	}
	p.sessions[id] = s
	p.mu.Unlock()
	s.mu.Lock()
	s.idle = time.AfterFunc(p.def.idle, s.checkIdle)
	s.mu.Unlock()
	go func() {
		ss.Wait()
		s.end("")
	}()
	s.post(w, r, msgs, batch, http.Header{"Mcp-Session-Id": {id}})
	if v, _ := s.era(); v == "" {
		s.end("its initialize was not answered")
	}
	return pathSDK, reasonInitialize
}

// makeRoom finds the session a new one replaces when the profile is at
// its cap: the one idle longest (no request in flight, no stream open) —
// an abandoned session, most likely, whose client never comes back; a
// client that does come back gets 404 and opens another, as MCP says.
// full is true when every session is busy.
func (p *profile) makeRoom() (victim *session, full bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.sessions) < p.def.cap {
		return nil, false
	}
	for _, s := range p.sessions {
		if s.streams.Load() > 0 || s.busy.Load() > 0 {
			continue
		}
		if victim == nil || s.last.Load() < victim.last.Load() {
			victim = s
		}
	}
	return victim, victim == nil
}

// sessionByID is a live session of the profile; nil for another id.
func (p *profile) sessionByID(id string) *session {
	if id == "" {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sessions[id]
}

// touch records that a request of the session started or ended now.
func (s *session) touch() { s.last.Store(time.Now().UnixNano()) }

// noteRequest counts a request on the session and returns what marks its
// end.
func (s *session) noteRequest(r *http.Request) func() {
	s.seen.Add(1)
	s.touch()
	if r.Method != http.MethodPost {
		return s.touch
	}
	s.busy.Add(1)
	return func() { s.touch(); s.busy.Add(-1) }
}

// checkIdle ends the session once it has been idle (no request, no
// stream open) for the profile's idle time, else looks again when it
// might be.
func (s *session) checkIdle() {
	idle := s.p.def.idle
	next := idle
	if s.streams.Load() == 0 && s.busy.Load() == 0 {
		quiet := time.Since(time.Unix(0, s.last.Load()))
		if quiet >= idle {
			s.end("it was idle for " + idle.String())
			return
		}
		next = idle - quiet
	}
	s.mu.Lock()
	if !s.ended {
		s.idle.Reset(next)
	}
	s.mu.Unlock()
}

// end ends the session and frees what it holds; why, if not "", is
// logged.
func (s *session) end(why string) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	close(s.done)
	calls := s.calls
	s.calls = map[string]faceCall{}
	if s.idle != nil {
		s.idle.Stop()
	}
	s.mu.Unlock()
	if why != "" {
		s.p.f.log.Info("face: a session ended: "+why, "profile", s.p.name)
	}
	s.p.mu.Lock()
	if s.p.sessions[s.id] == s {
		delete(s.p.sessions, s.id)
	}
	s.p.mu.Unlock()
	for _, c := range calls {
		c.cancel()
	}
	s.conn.Close()
	if s.ss != nil {
		go s.ss.Close()
	}
	s.p.f.replay.sessionClosed(s.id)
	s.hostMu.Lock()
	d := s.host
	s.host = nil
	s.hostMu.Unlock()
	if d != nil {
		d.end()
	}
	s.p.f.poke()
}

// post serves a POST of the session's messages: each dispatched to its
// handler, the requests answered on one exchange. header is set on the
// answer (an initialize's names the session). The path and reason are
// those of its first message.
func (s *session) post(w http.ResponseWriter, r *http.Request, msgs []envelope, batch bool, header http.Header) (path, reason string) {
	var keys []string
	for _, m := range msgs {
		if m.isRequest() {
			keys = append(keys, idKey(m.id))
		}
	}
	version, _ := s.era()
	ex := newExchange(s, version, w, keys, !batch && len(keys) == 1, header)
	s.mu.Lock()
	for _, k := range keys {
		if s.pending[k] != nil {
			s.mu.Unlock()
			ex.unused()
			writeJSON(w, http.StatusBadRequest, errorAnswer(msgs[0].id, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "duplicate in-flight request id"}))
			return pathRefused, reasonBadRequest
		}
	}
	for _, k := range keys {
		s.pending[k] = ex
	}
	s.mu.Unlock()
	for i, m := range msgs {
		pa, re := s.dispatch(r, ex, m)
		if i == 0 {
			path, reason = pa, re
		}
	}
	if batch {
		reason = reasonBatch
	}
	if len(keys) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return path, reason
	}
	ex.serve(r)
	return path, reason
}

// dispatch hands one message to its handler: Plexus's own (a tools/call
// it forwards, a tools/list from the rendered pages, the client's answer
// to Plexus's question, the cancellation of a Plexus call) or the SDK's.
func (s *session) dispatch(r *http.Request, ex *exchange, m envelope) (path, reason string) {
	reason = reasonOtherMethod
	switch {
	case m.isResponse():
		if s.answered(m) {
			return pathAnswer, reasonAnswer
		}
	case m.isRequest():
		key := idKey(m.id)
		switch m.name {
		case "tools/list", "resources/list", "resources/templates/list", "prompts/list":
			k, _ := kindOf(m.name)
			if res, handled, err := s.p.listPage(k, r, m); handled {
				if err != nil {
					s.answer(key, errorAnswer(m.id, err))
				} else {
					s.answer(key, appendResponse(m.id, res))
				}
				return pathPages, reasonListPages
			}
		case "tools/call":
			s.p.awaitTool(r.Context(), m.params)
			if s.call(r, ex, key, m) {
				return pathFrame, reasonCallSession
			}
			reason = reasonNotPlainCall
		case "tasks/get", "tasks/result", "tasks/list", "tasks/cancel":
			if s.task(r, ex, key, m) { // tasks.go
				return pathFrame, reasonTask
			}
		case "logging/setLevel":
			s.setLevel(m.params)
		case "initialize":
			s.declared(m.params)
			reason = reasonInitialize
		}
	case m.name == "notifications/cancelled":
		if s.cancelled(m.params) {
			return pathFrame, reasonCancel
		}
	}
	s.toSDK(r, ex, m)
	return pathSDK, reason
}

// toSDK hands a message to the SDK's server; its answer comes back
// through fromSDK.
func (s *session) toSDK(r *http.Request, ex *exchange, m envelope) {
	msg, err := jsonrpc.DecodeMessage(m.raw)
	if err != nil {
		if m.isRequest() {
			s.answer(idKey(m.id), errorAnswer(m.id, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: err.Error()}))
		}
		return
	}
	if req, ok := msg.(*jsonrpc.Request); ok {
		extra := &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(r.Context()), Header: r.Header}
		req.Extra = extra
		if req.IsCall() {
			key := idKey(m.id)
			s.mu.Lock()
			s.sdkReqs[key] = extra
			s.extras[extra] = ex
			s.mu.Unlock()
		}
	}
	if !s.conn.hand(msg) && m.isRequest() {
		s.answer(idKey(m.id), errorAnswer(m.id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "plexus: the session has ended"}))
	}
}

// exchangeOf is the exchange of a request the SDK serves.
func (s *session) exchangeOf(extra *mcp.RequestExtra) *exchange {
	if extra == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.extras[extra]
}

// fromSDK delivers what the SDK's server sends: an answer to the exchange
// of its request, anything else to the exchange of the request it belongs
// to (by its context) or, outside any, to the session's standalone stream.
func (s *session) fromSDK(ctx context.Context, msg jsonrpc.Message) error {
	switch m := msg.(type) {
	case *jsonrpc.Response:
		key := keyOf(m.ID)
		s.mu.Lock()
		if extra := s.sdkReqs[key]; extra != nil {
			delete(s.extras, extra)
			delete(s.sdkReqs, key)
		}
		s.mu.Unlock()
		if len(m.Result) > 0 {
			version, _ := s.era()
			if version == "" {
				s.initialized(m.Result)
				version, _ = s.era()
			}
			m.Result = era.ForClient(version, m.Result)
		}
		b, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			return err
		}
		s.answer(key, b)
		return nil
	case *jsonrpc.Request:
		b, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			return err
		}
		if ex := exchangeFrom(ctx); ex != nil {
			if err := ex.event(b); err == nil || !m.IsCall() {
				return err
			}
		}
		return s.listener.event(b)
	}
	return nil
}

// initialized takes what the session needs from the SDK's answer to its
// initialize: the negotiated version, and the client's capabilities as it
// declared them.
func (s *session) initialized(result json.RawMessage) {
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(result, &r) != nil || r.ProtocolVersion == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.caps == nil {
		s.caps = &clientCaps{caps: &mcp.ClientCapabilities{}, raw: "{}"}
	}
	s.version = r.ProtocolVersion
}

// era is the session's negotiated version and the client's capabilities;
// "" and nil until its initialize is answered.
func (s *session) era() (string, *clientCaps) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version, s.caps
}

// declared keeps the capabilities an initialize declares, as the client
// wrote them (the SDK's struct loses roots: decodeCaps).
func (s *session) declared(params []byte) {
	var p struct {
		Capabilities json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.Capabilities) == 0 || p.Capabilities[0] != '{' {
		return
	}
	if caps, err := decodeCaps(p.Capabilities); err == nil {
		s.mu.Lock()
		s.caps = &clientCaps{caps: caps, raw: string(p.Capabilities)}
		s.mu.Unlock()
	}
}

// answer writes the answer to the request key on its exchange.
func (s *session) answer(key string, msg []byte) {
	s.mu.Lock()
	ex := s.pending[key]
	delete(s.pending, key)
	s.mu.Unlock()
	if ex != nil {
		ex.answer(key, msg, 0)
	}
}

// cancel cancels the request key, whose client dropped its POST: a call of
// Plexus's is ended as dropped (upstream.ErrClientDropped), one the SDK serves is
// cancelled there as the client would cancel it.
func (s *session) cancel(key string) {
	s.mu.Lock()
	c := s.calls[key]
	extra := s.sdkReqs[key]
	s.mu.Unlock()
	switch {
	case c.end != nil:
		c.drop()
	case extra != nil:
		id, ok := rawID(key)
		if !ok {
			return
		}
		p, _ := json.Marshal(map[string]any{"requestId": id, "reason": "the client's connection dropped"})
		s.conn.hand(&jsonrpc.Request{Method: "notifications/cancelled", Params: p})
	}
}

// cancelled takes a client's notifications/cancelled of a call of
// Plexus's; false if it cancels anything else, for the SDK.
func (s *session) cancelled(params []byte) bool {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == nil {
		return false
	}
	key := idKey(p.RequestID)
	s.mu.Lock()
	c := s.calls[key]
	s.mu.Unlock()
	if c.end == nil {
		return false
	}
	c.cancel()
	return true
}

// setLevel notes the log level a client sets (the SDK answers it).
func (s *session) setLevel(params []byte) {
	var p struct {
		Level string `json:"level"`
	}
	if json.Unmarshal(params, &p) == nil && p.Level != "" {
		s.level.Store(&p.Level)
		s.p.wantLogs(p.Level)
	}
}

// wantLogs asks the profile's session-era servers for their log messages
// at level (upstream.Conn.WantLogs), which they may not send otherwise,
// and returns once they answered (2 s at most): the client's setLevel is
// answered after, as a server answers it once its level is set, so that
// what the servers send for the client's next call is sent at that level
// (and a server that sends below it is known to: upstream/logs.go).
func (p *profile) wantLogs(level string) {
	_, servers := p.f.h.Servers()
	var wg sync.WaitGroup
	for _, sc := range servers {
		if !p.def.has(sc.Name) {
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			p.f.h.WantLogs(ctx, sc.Name, level) // asked again of a server started later
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
}

// logLevel is the level the client set; "" for none.
func (s *session) logLevel() string {
	if l := s.level.Load(); l != nil {
		return *l
	}
	return ""
}

// downstream is the session's host session, made at its first use.
func (s *session) downstream(ctx context.Context) (*downstream, error) {
	s.hostMu.Lock()
	defer s.hostMu.Unlock()
	if s.host != nil {
		return s.host, nil
	}
	select {
	case <-s.done:
		return nil, fmt.Errorf("the session has ended")
	default:
	}
	d, err := s.p.newDownstream(ctx)
	if err != nil {
		return nil, err
	}
	s.host = d
	return d, nil
}

// listen serves the session's standalone GET stream and, when its client
// dropped it, ends the session unless the client comes back within
// dropGrace.
func (s *session) listen(w http.ResponseWriter, r *http.Request, index int) {
	s.listened.Store(true)
	s.streams.Add(1)
	s.listener.attach(w, r, index)
	s.touch()
	s.streams.Add(-1)
	if r.Context().Err() == nil {
		return // ended by the face, not by a client gone
	}
	seen := s.seen.Load()
	s.p.f.log.Info("face: a session's client dropped its stream; the session ends unless the client is back within "+dropGrace.String(), "profile", s.p.name)
	time.AfterFunc(dropGrace, func() {
		if s.streams.Load() > 0 || s.busy.Load() > 0 || s.seen.Load() != seen {
			return // the client is back
		}
		s.end("its client dropped its stream and did not come back")
	})
}

// idKey is a request id as the SDK compares ids: a string, or a number
// (an integer); it names the request within its session.
func idKey(raw json.RawMessage) string {
	if k, ok := plainIDKey(raw); ok {
		return k
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "?" + string(raw)
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		return "?" + string(raw)
	}
	return keyOf(id)
}

// plainIDKey is idKey of the ids clients send, without decoding: an
// integer of at most 15 digits (exact as the float64 encoding/json reads it
// as) or a string without escapes, with no space around either. ok is
// false for any other id.
func plainIDKey(raw []byte) (string, bool) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		s := raw[1 : n-1]
		if bytes.IndexByte(s, '\\') >= 0 || bytes.IndexByte(s, '"') >= 0 || !utf8.Valid(s) {
			return "", false
		}
		for _, c := range s {
			if c < 0x20 {
				return "", false
			}
		}
		return "s" + string(s), true
	}
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 || len(digits) > 1 && digits[0] == '0' {
		return "", false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	if digits[0] == '0' {
		return "n0", true // "-0" too, as encoding/json reads it
	}
	return "n" + string(raw), true // already as FormatInt writes it
}

func keyOf(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case string:
		return "s" + v
	case int64:
		return "n" + strconv.FormatInt(v, 10)
	}
	return "?"
}

// rawID is the id a key names, as JSON.
func rawID(key string) (any, bool) {
	switch {
	case len(key) > 0 && key[0] == 's':
		return key[1:], true
	case len(key) > 0 && key[0] == 'n':
		n, err := strconv.ParseInt(key[1:], 10, 64)
		return n, err == nil
	}
	return nil, false
}
