package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/plexus-mcp/plexus/internal/sse"
)

// A session-era streamable HTTP server that restarted answers 404 for the
// session it no longer knows. The transport specification's answer: "When
// a client receives HTTP 404 in response to a request containing an
// Mcp-Session-Id, it MUST start a new session by sending a new
// InitializeRequest without a session ID attached." A request so refused
// was never processed, so it is sent again on the new session; one that
// may have run (a call whose stream broke as the server went down) is
// not, and stays "outcome unknown".
//
// The SDK's client takes a 404 for a lost connection, and it keeps the
// session id it was given for its life. So Plexus renews the session under
// it, in the HTTP transport: the same initialize the SDK sent (recorded by
// recordConn), notifications/initialized, and the session's state again
// (the log level, the resource subscriptions); then every request the SDK
// sends with its id goes out with the new one, and every answer naming
// the new id is shown to the SDK with its own.

// renewTimeout bounds a renewal when the request that met the 404 has no
// deadline of its own.
const renewTimeout = 30 * time.Second

// sessionKeeper renews a lost session and maps the SDK's session id to
// the live one.
type sessionKeeper struct {
	// script returns what opened the session and what set its state, as
	// the SDK sent them: initialize first.
	script func() (initialize *jsonrpc.Request, state []*jsonrpc.Request)
	// version is the protocol version the session was opened with; a
	// renewal that negotiates another fails.
	version func() string
	// renewed is called after a renewal; it must not block.
	renewed func()
	log     *slog.Logger

	renewMu sync.Mutex // held by a renewal under way
	ids     atomic.Pointer[sessionIDs]
	seq     atomic.Uint64
}

// sessionIDs are the session id the SDK knows and the live one that
// replaced it.
type sessionIDs struct{ sdk, live string }

// outgoing puts the live session id on req (a clone the caller owns).
func (k *sessionKeeper) outgoing(req *http.Request) {
	if ids := k.ids.Load(); ids != nil && req.Header.Get(sessionHeader) == ids.sdk {
		req.Header.Set(sessionHeader, ids.live)
	}
}

// resend puts the live session id on req, a request refused with the
// session it carried (the SDK's, or a live one renewed since).
func (k *sessionKeeper) resend(req *http.Request) {
	if ids := k.ids.Load(); ids != nil {
		req.Header.Set(sessionHeader, ids.live)
	}
}

// incoming shows the SDK its own session id where the answer names the
// live one: the SDK refuses an answer naming another session than its.
func (k *sessionKeeper) incoming(resp *http.Response) {
	if ids := k.ids.Load(); ids != nil && resp.Header.Get(sessionHeader) == ids.live {
		resp.Header = resp.Header.Clone()
		resp.Header.Set(sessionHeader, ids.sdk)
	}
}

const sessionHeader = "Mcp-Session-Id"

// endAttempts bounds how many times one DELETE or notification is sent:
// once, and again on each kept-alive connection it finds closed (the
// transport keeps a few idle per server).
const endAttempts = 5

// resendOnReused sends req (a DELETE that ends a session, or a POST of a
// notification that failed once already) and sends it again while it
// fails on a reused connection. Sent on a kept-alive connection that the
// server or a proxy closed a moment before — its idle timeout (Node's
// HTTP server closes one after 5 s), a dropped connection — the request
// fails unread, and net/http sends again only the methods it holds
// replayable, which leaves DELETE and POST out: a DELETE lost so left the
// server holding the session for ever, and a handshake's
// notifications/initialized lost so (at load 24, the gap before it past
// Node's 5 s) failed the server's start. DELETE is idempotent (RFC 9110
// §9.2.2), and RFC 9112 §9.3.1.1 lets a client retry an idempotent
// request whose connection closed before the answer came; a notification
// has no answer to lose and none of MCP's is harmed by a second copy. So
// it is sent again as long as the connection it failed on was a reused
// one, as net/http does for GET. A fresh connection's failure is the
// answer. A POST of a request (a call may have run) is never sent again.
func resendOnReused(base http.RoundTripper, req *http.Request) (*http.Response, error) {
	for attempt := 1; ; attempt++ {
		r := req
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r = req.Clone(req.Context())
			r.Body = body
		}
		var reused bool
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
		resp, err := base.RoundTrip(r.WithContext(httptrace.WithClientTrace(r.Context(), trace)))
		if err == nil || !reused || attempt == endAttempts || req.Context().Err() != nil {
			return resp, err
		}
	}
}

// carriesNotification reports whether req's body, which it reads again
// (GetBody), is one JSON-RPC notification.
func carriesNotification(req *http.Request) bool {
	if req.GetBody == nil {
		return false
	}
	body, err := req.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, 1<<20))
	if err != nil {
		return false
	}
	msg, err := jsonrpc.DecodeMessage(b)
	n, ok := msg.(*jsonrpc.Request)
	return err == nil && ok && !n.IsCall()
}

// renew opens a new session in place of sent, the id a request was
// refused with (404); true once there is a live session other than sent,
// whether this call or another made it. send posts one message to the
// server without a session (id "") or on one, and returns the answer.
func (k *sessionKeeper) renew(ctx context.Context, sent string, send func(ctx context.Context, sid string, msg jsonrpc.Message) (*http.Response, error)) bool {
	k.renewMu.Lock()
	defer k.renewMu.Unlock()
	cur := k.ids.Load()
	if cur != nil && cur.live != sent {
		return true // renewed meanwhile
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, renewTimeout)
		defer cancel()
	}
	id, err := k.open(ctx, send)
	if err != nil {
		k.log.Warn("the server no longer knows the session, and a new one could not be opened", "err", err)
		return false
	}
	sdk := sent
	if cur != nil {
		sdk = cur.sdk
	}
	k.ids.Store(&sessionIDs{sdk: sdk, live: id})
	k.log.Info("the server no longer knew the session (HTTP 404): a new one was opened and the refused request is sent again")
	k.renewed()
	return true
}

// open opens a new session and sets its state again; it returns its id.
func (k *sessionKeeper) open(ctx context.Context, send func(context.Context, string, jsonrpc.Message) (*http.Response, error)) (string, error) {
	init, state := k.script()
	if init == nil {
		return "", errors.New("the session's initialize was not recorded")
	}
	req := *init
	req.ID = k.nextID()
	resp, err := send(ctx, "", &req)
	if err != nil {
		return "", fmt.Errorf("initialize: %w", err)
	}
	id := resp.Header.Get(sessionHeader)
	answer, err := answerTo(resp, req.ID)
	switch {
	case err != nil:
		return "", fmt.Errorf("initialize: %w", err)
	case answer.Error != nil:
		return "", fmt.Errorf("initialize: %w", answer.Error)
	case id == "":
		return "", errors.New("initialize: the server gave no session id")
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(answer.Result, &res) != nil || res.ProtocolVersion != k.version() {
		return "", fmt.Errorf("initialize: the server now speaks %q, not %q", res.ProtocolVersion, k.version())
	}
	if err := k.post(ctx, send, id, &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)}); err != nil {
		return "", fmt.Errorf("notifications/initialized: %w", err)
	}
	for _, r := range state {
		again := *r
		again.ID = k.nextID()
		if err := k.post(ctx, send, id, &again); err != nil {
			k.log.Warn("the new session's state could not be set again", "method", r.Method, "err", err)
		}
	}
	return id, nil
}

// post sends msg on session sid and reads its answer, if it is a call.
func (k *sessionKeeper) post(ctx context.Context, send func(context.Context, string, jsonrpc.Message) (*http.Response, error), sid string, msg *jsonrpc.Request) error {
	resp, err := send(ctx, sid, msg)
	if err != nil {
		return err
	}
	if !msg.IsCall() {
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			return fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		return nil
	}
	answer, err := answerTo(resp, msg.ID)
	if err == nil && answer.Error != nil {
		err = answer.Error
	}
	return err
}

func (k *sessionKeeper) nextID() jsonrpc.ID {
	id, _ := jsonrpc.MakeID("plexus-session-" + strconv.FormatUint(k.seq.Add(1), 10))
	return id
}

// renewMaxAnswer bounds an answer read during a renewal.
const renewMaxAnswer = 4 << 20

// answerTo reads the answer to the call id from resp, a JSON body or an
// event stream, and closes the body.
func answerTo(resp *http.Response, id jsonrpc.ID) (*jsonrpc.Response, error) {
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	match := func(data []byte) *jsonrpc.Response {
		msg, err := jsonrpc.DecodeMessage(data)
		if r, ok := msg.(*jsonrpc.Response); err == nil && ok && r.ID == id {
			return r
		}
		return nil
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "text/event-stream" {
		events := sse.NewReader(resp.Body, renewMaxAnswer)
		for {
			ev, err := events.Next()
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			if err != nil {
				return nil, fmt.Errorf("no answer in the event stream: %w", err)
			}
			if r := match([]byte(ev.Data)); r != nil {
				return r, nil
			}
		}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, renewMaxAnswer))
	if err != nil {
		return nil, err
	}
	if r := match(bytes.TrimSpace(body)); r != nil {
		return r, nil
	}
	return nil, fmt.Errorf("no answer to the request in %q", clip(string(body), 200))
}
