package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/jsonscan"
	"github.com/plexus-mcp/plexus/internal/tracing"
)

// The frame path (R-Q-2): a proxy that already holds a
// client's tools/call frame forwards it with only its name and _meta
// changed, and gets the server's result back as bytes. The SDK keeps the
// handshake, discovery and everything else on the same connection; only
// the decoding of arguments and results — most of a call's cost in the
// SDK — is skipped. Answers are told apart from the SDK's own by their id
// ("plexus-frame-N"), which the SDK never uses.

const framePrefix = "plexus-frame-"

var frameSeq atomic.Uint64

// newFrameID is a new frame call's id, made in one allocation.
func newFrameID() string {
	var b [len(framePrefix) + 20]byte
	return string(strconv.AppendUint(append(b[:0], framePrefix...), frameSeq.Add(1), 10))
}

// frameCalls are the frame calls awaiting an answer on one connection.
type frameCalls struct {
	mu      sync.Mutex
	pending map[string]frameWait
	lost    error // why the stream ended; once set, no answer will come
	expiry  expiry
}

// frameWait is the frame call id awaiting its answer, on ch, until its
// deadline (zero: none).
type frameWait struct {
	id       string
	ch       chan frameAnswer
	deadline time.Time
}

// frameAnswer is a frame call's answer: its result as the server wrote
// it, or its error.
type frameAnswer struct {
	result json.RawMessage
	err    error
}

// expect registers a frame call about to be written, answered with
// errTimedOut past deadline (zero: none); an error if the stream has
// already ended, so that nothing is written.
func (f *frameCalls) expect(id string, deadline time.Time) (chan frameAnswer, error) {
	ch := make(chan frameAnswer, 1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lost != nil {
		return nil, f.lost
	}
	if f.pending == nil {
		f.pending = map[string]frameWait{}
	}
	f.pending[id] = frameWait{id: id, ch: ch, deadline: deadline}
	f.expiry.due(deadline, f.expire)
	return ch, nil
}

// streamEnded answers every frame call awaiting an answer with err, the
// reason the connection's stream ended, as the SDK does for its own calls
// when its read fails. A call is not held until the Conn ends: that waits
// for the exit of a stdio server, which takes a while to be reaped.
func (f *frameCalls) streamEnded(err error) {
	f.mu.Lock()
	if f.lost == nil {
		f.lost = err
	}
	pending := f.pending
	f.pending = nil
	if f.expiry.t != nil {
		f.expiry.t.Stop()
		f.expiry.next = time.Time{}
	}
	f.mu.Unlock()
	for _, w := range pending {
		w.ch <- frameAnswer{err: err}
	}
}

func (f *frameCalls) forget(id string) {
	f.mu.Lock()
	delete(f.pending, id)
	f.mu.Unlock()
}

// deliver hands a decoded answer to its frame call; false if it is not
// one.
func (f *frameCalls) deliver(resp *jsonrpc.Response) bool {
	s, ok := resp.ID.Raw().(string)
	if !ok || len(s) <= len(framePrefix) || s[:len(framePrefix)] != framePrefix {
		return false
	}
	f.mu.Lock()
	w := f.pending[s]
	delete(f.pending, s)
	f.mu.Unlock()
	if w.ch != nil {
		w.ch <- frameAnswer{result: resp.Result, err: resp.Error}
	}
	return true // a late answer to an abandoned call is dropped too
}

// deliverFrame hands a frame that is a successful answer to a frame call
// to its caller, having only scanned it (jsonscan): its result is passed on
// as bytes. False for anything else (an error answer too): the frame is
// decoded as usual, and deliver still finds a frame call's answer.
func (f *frameCalls) deliverFrame(line []byte) bool {
	if !bytes.Contains(line, []byte(framePrefix)) || !json.Valid(line) {
		return false
	}
	var version, id, result []byte
	n := 0
	if !jsonscan.Members(line, func(k, v []byte) bool {
		n++
		switch string(k) {
		case "jsonrpc":
			version = v
		case "id":
			id = v
		case "result":
			result = v
		default:
			return false
		}
		return true
	}) || n != 3 || string(version) != `"2.0"` || result == nil {
		return false
	}
	s, ok := jsonscan.String(id)
	if !ok || len(s) <= len(framePrefix) || !bytes.HasPrefix(s, []byte(framePrefix)) {
		return false
	}
	f.mu.Lock()
	w := f.pending[string(s)] // a lookup by the id's bytes: no copy
	if w.ch != nil {
		delete(f.pending, w.id)
	}
	f.mu.Unlock()
	if w.ch != nil {
		w.ch <- frameAnswer{result: result}
	}
	return true // a late answer to an abandoned call is dropped too
}

// CallRaw calls a tool with params as the client sent them, except that
// "name" must already be the server's own tool name; "_meta" is the
// client's own members (without those Plexus sets) and Plexus's, as the
// server's era needs them (era.RequestMeta). It returns the result as the
// server wrote it. Errors are classified as CallTool's are: the caller's
// ctx, a JSON-RPC answer (AnswerError), or ErrTransportLost.
func (c *Conn) CallRaw(ctx context.Context, params map[string]json.RawMessage) (json.RawMessage, error) {
	return c.CallRawWithin(ctx, params, 0)
}

// CallRawWithin is CallRaw with a time limit as well (0: none): past it
// the server is told the call is cancelled and the call fails with an
// error that is ErrTimedOut. Over stdio the limit is kept by the
// connection (frameexpiry.go); over HTTP, where the request's write lasts
// as long as its POST, by the call's context.
func (c *Conn) CallRawWithin(ctx context.Context, params map[string]json.RawMessage, within time.Duration) (_ json.RawMessage, err error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	if own, done := c.sessionFor(ctx); own != c {
		res, err := own.CallRawWithin(ctx, params, within)
		done()
		return res, err
	}
	rc := c.route
	if rc == nil {
		return nil, fmt.Errorf("server %q: no frame path on this connection", c.name)
	}
	var deadline time.Time
	if within > 0 {
		if c.stdio == nil {
			tctx, cancel := context.WithTimeout(ctx, within)
			defer cancel()
			res, err := c.CallRawWithin(tctx, params, 0)
			if err != nil && ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
				err = fmt.Errorf("%w: %w", ErrTimedOut, err)
			}
			return res, err
		}
		deadline = time.Now().Add(within)
	}
	ctx, token, end := c.calls.begin(ctx)
	defer end()
	id := newFrameID()
	ch, err := rc.frames.expect(id, deadline)
	if err != nil {
		// The stream has ended and the Conn is about to: nothing was sent.
		return nil, fmt.Errorf("server %q: %w: %w", c.name, ErrNotConnected, c.redact.Error(err))
	}
	own := params["_meta"]
	if tracing.On() {
		var span *tracing.Span
		ctx, span = tracing.StartClient(ctx, tracing.Call{Method: "tools/call", Tool: toolName(params), Server: c.name})
		defer func() { span.End(err, tracing.ErrType(err)) }()
		own = tracing.Meta(ctx, own) // the server continues this span's trace
	}
	meta := c.frameMeta(peerFrom(ctx), token, own)
	if c.stdio != nil {
		// The frame is written as bytes: nothing is encoded twice.
		c.stdio.frames.Store(&rc.frames)
		err = c.stdio.writeFrame(ctx, encodeFrame(id, meta, params), deadline)
	} else {
		rid, _ := jsonrpc.MakeID(id)
		body := encodeParams(make([]byte, 0, 256), meta, params)
		err = rc.Connection.Write(ctx, &jsonrpc.Request{ID: rid, Method: "tools/call", Params: body})
	}
	if err != nil {
		rc.frames.forget(id)
		if ctx.Err() != nil {
			// Over HTTP the write lasts as long as the POST: the request
			// may have reached the server, which must hear that it is over.
			c.sendCancel(ctx, id)
		}
		return nil, fmt.Errorf("server %q: calling a tool: %w", c.name, c.callError(ctx, err))
	}
	select {
	case a := <-ch:
		if a.err == errTimedOut {
			c.sendCancelFor(ctx, id, "timed out")
			return nil, fmt.Errorf("server %q: calling a tool: %w after %s", c.name, ErrTimedOut, within)
		}
		if a.err != nil {
			return nil, fmt.Errorf("server %q: calling a tool: %w", c.name, c.callError(ctx, a.err))
		}
		return a.result, nil
	case <-ctx.Done():
		rc.frames.forget(id)
		c.sendCancel(ctx, id) // as the SDK does for its own calls
		return nil, fmt.Errorf("server %q: calling a tool: %w", c.name, ctx.Err())
	case <-c.done:
		rc.frames.forget(id)
		return nil, fmt.Errorf("server %q: calling a tool: %w", c.name, &lostError{err: c.Err()})
	}
}

// toolName is a frame call's tool name, for its span.
func toolName(params map[string]json.RawMessage) string {
	var name string
	_ = json.Unmarshal(params["name"], &name)
	return name
}

// encodeFrame encodes a frame call, ending in a newline.
func encodeFrame(id string, meta json.RawMessage, params map[string]json.RawMessage) []byte {
	n := 128 + len(meta)
	for k, v := range params {
		n += len(k) + len(v) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, `{"jsonrpc":"2.0","id":"`...)
	b = append(b, id...)
	b = append(b, `","method":"tools/call","params":`...)
	b = encodeParams(b, meta, params)
	return append(b, "}\n"...)
}

// encodeParams appends a frame call's params: meta (if any), then the
// others in their own order, each value as the client sent it (already
// valid JSON: it was checked once to find the name).
func encodeParams(b []byte, meta json.RawMessage, params map[string]json.RawMessage) []byte {
	b = append(b, '{')
	first := true
	if len(meta) > 0 {
		b = append(b, `"_meta":`...)
		b = append(b, meta...)
		first = false
	}
	for k, v := range params {
		if k == "_meta" || len(v) == 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendKey(b, k)
		b = append(b, ':')
		b = append(b, v...)
	}
	return append(b, '}')
}

// frameMeta is the _meta of a frame call: Plexus's, as the server's era
// needs it (meta), and the client's own members beside it (own, an object
// without the members Plexus sets). Callers declare few distinct
// capability sets, so a meta without a progress token, log level or
// client members is made once per set and kept, by the capabilities'
// bytes when the caller has them (capsKeyer) and up to maxMetas of them.
func (c *Conn) frameMeta(pc *peerCall, token any, own json.RawMessage) json.RawMessage {
	if token != nil || logLevelOf(pc) != "" || len(own) > 0 {
		return mergeMeta(c.meta(pc, token), own)
	}
	var key string
	if k, ok := peerOf(pc).(capsKeyer); ok {
		key = "raw " + k.CapsKey()
	} else {
		b, _ := json.Marshal(forwardedCaps(pc))
		key = string(b)
	}
	if m, ok := c.metas.Load(key); ok {
		return m.(json.RawMessage)
	}
	b := mergeMeta(c.meta(pc, nil), nil)
	if c.nmetas.Add(1) <= maxMetas {
		c.metas.Store(key, b)
	}
	return b
}

// mergeMeta is Plexus's _meta members with the client's own after them;
// nil for none.
func mergeMeta(m mcp.Meta, own json.RawMessage) json.RawMessage {
	if len(m) == 0 && len(own) == 0 {
		return nil
	}
	b, _ := json.Marshal(m)
	if len(m) == 0 {
		b = []byte("{}")
	}
	if len(own) == 0 {
		return b
	}
	out := b[:len(b)-1]
	jsonscan.Members(own, func(k, v []byte) bool {
		if _, ours := m[string(k)]; ours {
			return true
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = appendKey(out, string(k))
		out = append(out, ':')
		out = append(out, v...)
		return true
	})
	return append(out, '}')
}

const maxMetas = 64

// capsKeyer is a Peer that has its capabilities as the bytes it was sent.
type capsKeyer interface{ CapsKey() string }

func peerOf(pc *peerCall) Peer {
	if pc == nil {
		return nil
	}
	return pc.peer
}

// appendKey appends k as a JSON string: as it is when it needs no escape
// (a key the face scanned from valid JSON), else encoded.
func appendKey(b []byte, k string) []byte {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			q, _ := json.Marshal(k)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, k...)
	return append(b, '"')
}
