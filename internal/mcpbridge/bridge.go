// Package mcpbridge joins an MCP client on a byte stream (the stdin and
// stdout of `plexus mcp`) to the daemon's MCP face over streamable HTTP.
//
// It is a transport bridge, not a second MCP server: every message goes
// through unchanged, so the face alone decides what the client sees, and
// server→client requests (elicitation, sampling), progress, cancellation
// and list_changed notifications all cross it. Each client message is one
// POST — a request at once (a long call does not hold back the next);
// initialize and notifications in order, answered before the next line is
// read, so that nothing a client pipelines overtakes them; answers
// arriving as JSON or as an SSE stream are written out whole, one per
// line. After initialize it keeps the session id and protocol version the
// face gave, and holds a GET stream open for the face's own notifications.
package mcpbridge

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/era"
	"github.com/plexus-mcp/plexus/internal/jsonscan"
	"github.com/plexus-mcp/plexus/internal/rawhttp"
	"github.com/plexus-mcp/plexus/internal/rawio"
	"github.com/plexus-mcp/plexus/internal/sse"
)

// maxLine bounds one message from the client; maxAnswer one from the face.
const (
	maxLine   = 8 << 20
	maxAnswer = 64 << 20
)

// Bridge runs until in ends or ctx is done.
type Bridge struct {
	HTTP *http.Client // reaches the face; no overall timeout
	URL  string
	// Dial, if set, connects to the face's server for the POSTs, which
	// then go out in the goroutine that reads the answer (rawhttp); the
	// event stream and the session's end still go through HTTP.
	Dial func(ctx context.Context) (net.Conn, error)
	// Header is sent with the POSTs made through Dial: the daemon's
	// token, which the HTTP client sends with the rest.
	Header http.Header
	// Reauth, if set, gives the header anew (the token read again) when
	// the face refused a POST made through Dial as unauthorized: the
	// daemon made a new token while the bridge ran. The POST then goes
	// once more with it.
	Reauth  func() http.Header
	raw     *rawhttp.Client
	rawPath string // the face's path on it
	// Warn reports problems that do not end the bridge; may be nil.
	Warn func(format string, args ...any)
	// Reconnect, if set, brings the face back when a request cannot reach
	// it (the daemon exited): `plexus mcp` starts the daemon again
	// (reopen.go).
	Reconnect func(ctx context.Context) error
	// Quiet, if set, is called once no message has gone through either
	// way for QuietAfter, after the start and again after each burst of
	// messages: `plexus mcp` gives back then what starting and
	// forwarding mapped and allocated (execpages), as the daemon does.
	Quiet      func()
	QuietAfter time.Duration
	quiet      *time.Timer // calls Quiet; reset by each message

	out   *bufio.Writer
	outMu sync.Mutex

	// scope names this bridge to the face on its MCP 2026-07-28 requests
	// (apitype.HeaderClientScope): random, made by Run.
	scope string

	mu        sync.Mutex
	sessionID string
	version   string
	listening bool
	replay    replay // what reopening the session sends again (reopen.go)
	inflight  sync.WaitGroup
	// listenCtx ends the GET stream when the bridge ends.
	listenCtx  context.Context
	stopListen context.CancelFunc
	listeners  sync.WaitGroup

	reconnectMu, reopenMu sync.Mutex
	ownIDs                atomic.Int64

	// stateless2026 is the version of a client that speaks MCP 2026-07-28
	// (no session), once one of its requests said so.
	stateless2026 string
	// stateless are the MCP 2026-07-28 requests in flight, by id: such a
	// request is cancelled by closing its POST (era.CancelsByClosing), so
	// the client's notifications/cancelled for it ends that POST here.
	stateless sync.Map // string(id) → *context.CancelFunc
}

// Run copies messages from in to the face and the face's messages to out.
func (b *Bridge) Run(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b.scope = rand.Text()
	b.listenCtx, b.stopListen = context.WithCancel(ctx)
	if b.Dial != nil {
		u, err := url.Parse(b.URL)
		if err != nil {
			return fmt.Errorf("the face's URL %q: %w", b.URL, err)
		}
		dial := b.Dial
		b.raw, b.rawPath = &rawhttp.Client{Dial: func(ctx context.Context) (net.Conn, error) {
			c, err := dial(ctx)
			if err != nil {
				return nil, err
			}
			return rawio.Conn(c), nil
		}, Host: u.Host}, u.RequestURI()
		defer b.raw.CloseIdle()
	}
	if f, ok := in.(*os.File); ok {
		r, done := rawFile(f)
		defer done()
		in = r
	}
	if f, ok := out.(*os.File); ok {
		w, done := rawFile(f)
		defer done()
		out = w
	}
	b.out = newWriter(out)
	if b.Quiet != nil {
		b.quiet = time.AfterFunc(b.QuietAfter, b.Quiet)
		defer b.quiet.Stop()
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		b.active()
		msg := append([]byte(nil), line...)
		head, err := peek(msg)
		if err != nil {
			b.writeError(nil, -32700, "parse error: "+err.Error())
			continue
		}
		b.remember(msg, head)
		if head.Method == "notifications/cancelled" && b.cancelStateless(msg) {
			continue
		}
		if head.ID == nil || head.Method == "initialize" {
			// What a client writes after these must not overtake them, so
			// each is sent, and its answer read, before the next line is:
			// initialize, whose answer names the session every later POST
			// carries; a notification (initialized, cancelled) or an answer
			// to the face's request. Other requests go at once, each in its
			// own POST, so that a long call holds nothing back.
			b.post(ctx, msg, head)
			continue
		}
		b.inflight.Add(1)
		go func() {
			defer b.inflight.Done()
			b.post(ctx, msg, head)
		}()
	}
	err := sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		err = fmt.Errorf("a message from the client is over %d MiB", maxLine>>20)
	}
	b.inflight.Wait()
	b.end()
	return err
}

func newWriter(w io.Writer) *bufio.Writer { return bufio.NewWriter(w) }

// rawFile is the editor's stdin or stdout as the bridge reads or writes
// it: a non-blocking copy in the runtime's poller (pollable), through raw
// system calls (rawio) where it could be made; else f. done puts f back.
func rawFile(f *os.File) (_ io.ReadWriter, done func()) {
	pf, done := pollable(f)
	if pf == f {
		return f, done
	}
	return rawio.File(pf), done
}

// active puts off the call of Quiet: a message went through.
func (b *Bridge) active() {
	if b.quiet != nil {
		b.quiet.Reset(b.QuietAfter)
	}
}

// head is what the bridge reads of a message: little, so that large
// arguments are never decoded here (the message is checked whole, then
// scanned: jsonscan).
type head struct {
	ID      json.RawMessage // nil for a notification
	Method  string
	Name    string // of tools/call and prompts/get; the URI of resources/read
	version string // a 2026-07-28 request's protocol version, from its _meta
}

func peek(msg []byte) (*head, error) {
	if !json.Valid(msg) {
		var v any
		return nil, json.Unmarshal(msg, &v) // says what is wrong
	}
	var h head
	var method, params []byte
	if !jsonscan.Members(msg, func(k, v []byte) bool {
		switch string(k) {
		case "id":
			h.ID = v
		case "method":
			method = v
		case "params":
			params = v
		}
		return true
	}) {
		if b := bytes.TrimSpace(msg); len(b) > 0 && b[0] == '{' {
			return decodeHead(msg) // a key with an escape: decoded instead
		}
		return nil, errors.New("not a JSON-RPC message: a JSON object is expected")
	}
	var err error
	if h.Method, err = jsonString(method); err != nil {
		return nil, err
	}
	var name, uri, meta []byte
	jsonscan.Members(params, func(k, v []byte) bool {
		switch string(k) {
		case "name":
			name = v
		case "uri":
			uri = v
		case "_meta":
			meta = v
		}
		return true
	})
	switch h.Method {
	case "tools/call", "prompts/get":
		h.Name, _ = jsonString(name)
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		h.Name, _ = jsonString(uri)
	}
	jsonscan.Members(meta, func(k, v []byte) bool {
		if string(k) == "io.modelcontextprotocol/protocolVersion" {
			h.version, _ = jsonString(v)
		}
		return true
	})
	return &h, nil
}

// jsonString is a JSON string's value; "" for none (nil).
func jsonString(v []byte) (string, error) {
	if v == nil {
		return "", nil
	}
	if s, ok := jsonscan.String(v); ok && utf8.Valid(s) {
		return string(s), nil
	}
	var s string
	err := json.Unmarshal(v, &s)
	return s, err
}

// decodeHead reads a message's head with encoding/json, for what the scan
// does not take (keys written with escapes).
func decodeHead(msg []byte) (*head, error) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
			Name string                     `json:"name"`
			URI  string                     `json:"uri"`
		} `json:"params"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return nil, err
	}
	h := &head{ID: m.ID, Method: m.Method}
	switch h.Method {
	case "tools/call", "prompts/get":
		h.Name = m.Params.Name
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		h.Name = m.Params.URI
	}
	json.Unmarshal(m.Params.Meta["io.modelcontextprotocol/protocolVersion"], &h.version)
	return h, nil
}

// cancelStateless ends the POST of the stateless request a client's
// notifications/cancelled names, if one is in flight; false if there is
// none, and the notification goes to the face.
func (b *Bridge) cancelStateless(msg []byte) bool {
	var n struct {
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &n) != nil || n.Params.RequestID == nil {
		return false
	}
	cancel, ok := b.stateless.Load(string(bytes.TrimSpace(n.Params.RequestID)))
	if ok {
		(*cancel.(*context.CancelFunc))()
	}
	return ok
}

// post sends one client message and relays its answer. A message that did
// not reach the face, or met a session the face no longer knows, goes once
// more after the face is back and the session opened again (reopen.go).
func (b *Bridge) post(ctx context.Context, msg []byte, h *head) {
	if h.ID != nil && era.IsStateless(h.version) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		key, entry := string(bytes.TrimSpace(h.ID)), &cancel
		b.stateless.Store(key, entry)
		defer func() { b.stateless.CompareAndDelete(key, entry); cancel() }()
	}
	reauthed := false
	for attempt := 0; ; attempt++ {
		resp, sid, err := b.send(ctx, msg, h)
		switch {
		case err != nil && attempt == 0 && unreached(err) && b.Reconnect != nil:
			if rerr := b.reconnect(ctx); rerr != nil {
				b.writeError(h.ID, -32603, "plexus: the daemon did not answer: "+err.Error()+"; starting it again: "+rerr.Error())
				return
			}
			continue
		case err != nil:
			if ctx.Err() == nil {
				b.writeError(h.ID, -32603, "plexus: the daemon did not answer: "+err.Error())
			}
			return
		case resp.StatusCode == http.StatusUnauthorized && b.raw != nil && b.Reauth != nil && !reauthed:
			resp.Body.Close()
			reauthed = true
			hdr := b.Reauth()
			b.mu.Lock()
			b.Header = hdr
			b.mu.Unlock()
			continue
		case resp.StatusCode == http.StatusNotFound && sid != "" && h.Method != "initialize" && attempt < 2:
			resp.Body.Close()
			if rerr := b.reopen(ctx, sid); rerr != nil {
				b.writeError(h.ID, -32603, "plexus: the daemon's face lost this session and it could not be opened again: "+rerr.Error())
				return
			}
			continue
		}
		b.relay(resp, h)
		return
	}
}

// send POSTs one client message on the session the bridge holds, and
// returns the response with the session id it was sent on.
func (b *Bridge) send(ctx context.Context, msg []byte, h *head) (*http.Response, string, error) {
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	b.mu.Lock()
	sid, version := b.sessionID, b.version
	b.mu.Unlock()
	if h.version != "" && version == "" {
		version = h.version // an MCP 2026-07-28 client: no initialize, the version in each request
		b.mu.Lock()
		b.stateless2026 = version
		b.mu.Unlock()
	}
	if version == "" && sid == "" {
		// A request without the era's _meta (a ping) of a client that has
		// spoken MCP 2026-07-28 is of that era too; initialize is the
		// session era's, sent by a client the face refused that era (a
		// bare profile of a session-era server), which now speaks the
		// session era.
		b.mu.Lock()
		if h.Method == "initialize" {
			b.stateless2026 = ""
		}
		version = b.stateless2026
		b.mu.Unlock()
	}
	if sid != "" {
		hdr["Mcp-Session-Id"] = []string{sid}
	}
	if version != "" {
		hdr["Mcp-Protocol-Version"] = []string{version}
	}
	if era.IsStateless(version) && h.Method != "" {
		// MCP 2026-07-28 names the method (and what it acts on) in headers
		// too, so that proxies can route without reading the body.
		hdr["Mcp-Method"] = []string{h.Method}
		hdr[apitype.HeaderClientScope] = []string{b.scope}
		switch h.Method {
		case "tools/call", "prompts/get", "resources/read":
			hdr["Mcp-Name"] = []string{h.Name}
		}
	}
	resp, err := b.do(ctx, hdr, msg)
	return resp, sid, err
}

// relay writes the face's answer to a client message out to the client.
func (b *Bridge) relay(resp *http.Response, h *head) {
	defer resp.Body.Close()
	if h.Method == "initialize" {
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			b.mu.Lock()
			b.sessionID = id
			b.mu.Unlock()
		}
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		// a notification or a response to the face's request
	case ct == "text/event-stream":
		b.relayEvents(resp.Body, h.Method == "initialize")
	case ct == "application/json":
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
		if err != nil {
			b.writeError(h.ID, -32603, "plexus: reading the answer: "+err.Error())
			return
		}
		b.deliver(body, h.Method == "initialize")
	default:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		if h.ID != nil {
			b.writeError(h.ID, -32600, fmt.Sprintf("plexus: %s: %s", resp.Status, strings.TrimSpace(string(body))))
		} else if b.Warn != nil {
			b.Warn("the face refused a notification: %s: %s", resp.Status, strings.TrimSpace(string(body)))
		}
	}
}

// do POSTs msg to the face: through rawhttp when the bridge can dial.
func (b *Bridge) do(ctx context.Context, hdr http.Header, msg []byte) (*http.Response, error) {
	if b.raw != nil {
		b.mu.Lock()
		auth := b.Header
		b.mu.Unlock()
		for k, v := range auth {
			hdr[k] = v
		}
		return b.raw.Do(ctx, http.MethodPost, b.rawPath, hdr, msg)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.URL, bytes.NewReader(msg))
	if err != nil {
		return nil, err
	}
	req.Header = hdr
	return b.HTTP.Do(req)
}

// relayEvents writes each SSE event's data as one message.
func (b *Bridge) relayEvents(r io.Reader, initialize bool) {
	events := sse.NewReader(r, maxAnswer)
	for {
		ev, err := events.Next()
		if err != nil {
			if errors.Is(err, sse.ErrTooLarge) && b.Warn != nil {
				b.Warn("the face sent a message over %d MiB; the rest of that answer is lost", maxAnswer>>20)
			}
			return
		}
		b.deliver([]byte(ev.Data), initialize)
	}
}

// deliver writes one message to the client. The answer to initialize
// fixes the protocol version and opens the face's notification stream.
func (b *Bridge) deliver(msg []byte, initialize bool) {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 {
		return
	}
	if bytes.IndexByte(msg, '\n') >= 0 {
		// An event's data split over lines: stdio frames are one line.
		var c bytes.Buffer
		if json.Compact(&c, msg) != nil {
			if b.Warn != nil {
				b.Warn("the face sent a message that is not JSON; dropped")
			}
			return
		}
		msg = c.Bytes()
	}
	if initialize {
		var r struct {
			Result struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"result"`
		}
		if json.Unmarshal(msg, &r) == nil && r.Result.ProtocolVersion != "" {
			b.mu.Lock()
			b.version = r.Result.ProtocolVersion
			b.mu.Unlock()
			b.startListening()
		}
	}
	b.active()
	b.outMu.Lock()
	defer b.outMu.Unlock()
	b.out.Write(msg)
	b.out.WriteByte('\n')
	b.out.Flush()
}

// streamWait bounds how long startListening waits for the face to answer
// the session's GET stream.
const streamWait = 2 * time.Second

// startListening opens the session's GET stream unless it is open, and
// returns once the face has answered its first GET (or streamWait passed).
// Its callers then hand the client its session (the answer to initialize,
// or a session opened again): so a client killed at any moment after has
// a stream whose drop the face sees, where one killed before its GET was
// sent would leave its session held until the face's idle expiry.
func (b *Bridge) startListening() {
	b.mu.Lock()
	start := !b.listening && b.sessionID != "" && b.listenCtx.Err() == nil
	b.listening = b.listening || start
	b.mu.Unlock()
	if !start {
		return
	}
	answered := make(chan struct{})
	b.listeners.Go(func() {
		lost := b.listen(answered)
		b.mu.Lock()
		b.listening = false
		b.mu.Unlock()
		if lost != "" {
			// The face no longer knows the session: open it again now,
			// so that its notifications reach the client before its
			// next request.
			if err := b.reopen(b.listenCtx, lost); err != nil && b.listenCtx.Err() == nil && b.Warn != nil {
				b.Warn("the daemon's face lost this client's session, and it could not be opened again yet: %v", err)
			}
		}
	})
	select {
	case <-answered:
	case <-time.After(streamWait):
	}
}

// listen holds the session's GET stream open for messages the face sends
// outside any request (list_changed), reconnecting after a break; it
// closes answered when the face has answered its first GET, or it ends
// first. It returns the session's id if the face answered that it does
// not know it.
func (b *Bridge) listen(answered chan struct{}) (lost string) {
	var once sync.Once
	first := func() { once.Do(func() { close(answered) }) }
	defer first()
	for attempt := 0; ; attempt++ {
		b.mu.Lock()
		sid, version, on := b.sessionID, b.version, b.listening
		b.mu.Unlock()
		if !on || b.listenCtx.Err() != nil {
			return ""
		}
		req, _ := http.NewRequestWithContext(b.listenCtx, http.MethodGet, b.URL, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", version)
		resp, err := b.HTTP.Do(req)
		first()
		if err == nil {
			if resp.StatusCode == http.StatusOK {
				attempt = 0
				b.relayEvents(resp.Body, false)
			}
			resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusNotFound:
				return sid // the session is gone
			case http.StatusMethodNotAllowed:
				return "" // the face offers no stream
			}
		}
		select {
		case <-b.listenCtx.Done():
			return ""
		case <-time.After(min(time.Duration(attempt+1)*200*time.Millisecond, 5*time.Second)):
		}
	}
}

// end closes the session with the face.
func (b *Bridge) end() {
	b.mu.Lock()
	sid := b.sessionID
	b.mu.Unlock()
	b.stopListen()
	b.listeners.Wait()
	if sid == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, b.URL, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	if resp, err := b.HTTP.Do(req); err == nil {
		resp.Body.Close()
	}
}

// writeError answers a request the face could not.
func (b *Bridge) writeError(id json.RawMessage, code int, msg string) {
	if id == nil {
		if b.Warn != nil {
			b.Warn("%s", msg)
		}
		return
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	b.deliver(out, false)
}
