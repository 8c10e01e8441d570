package upstream

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/sse"
)

// Over stdio the read loop drops what a server writes that is no JSON-RPC
// message (stdioconn.go). Over HTTP the SDK's client decodes what it reads
// itself, and took one message it could not decode — an event of a call's
// stream or of the standalone stream, a call's JSON answer, an event of a
// legacy SSE stream — for a broken connection: every call on it failed,
// and the supervisor restarted the server. readableOnly reads every answer
// before the SDK does, and passes on only what it can decode: what
// readsAsIs passes at a scan (decode.go), and else what decodeForSDK
// decodes. An event that is none is logged and dropped, as over stdio:
//
//   - On a stream that carries the messages of every call (the standalone
//     stream, a legacy SSE stream), a call whose answer it was waits for
//     its deadline, as over stdio, where it cannot be told whose it was.
//   - On a call's own event stream, the stream goes on, and the call gets
//     the answer that follows, as over stdio; if the stream ends without
//     an answer, the call ends at once: its outcome is unknown
//     (codeUnreadable, calls.go), the answer it was waiting for perhaps
//     the event dropped. So does a call whose JSON answer is none.
//
// The connection and the other calls on it go on. The stream is passed on
// rewritten as the SDK reads it (its ids and retry kept, for resuming):
// lines without a colon, which the SDK also took for a broken stream, are
// fields the standard ignores.

// codeUnreadable and unreadableMessage are the error answer that a call
// whose answer could not be read gets from Plexus: not the server's
// answer, so the call's outcome is unknown (serverAnswered).
const (
	codeUnreadable    = -32099
	unreadableMessage = "plexus: the server's answer could not be decoded as a JSON-RPC message"
)

// maxEvent bounds one event of a remote server's stream, as the SDK's
// client did before readableOnly took the bound over.
const maxEvent = mcp.DefaultMaxEventSize

// readableOnly is the transport under the SDK's client of a remote server.
type readableOnly struct {
	base http.RoundTripper
	c    *Conn
}

func (t *readableOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err // (an empty JSON answer, http.NoBody, is none)
	}
	switch mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); {
	case mt == "text/event-stream":
		resp.Body = &eventFilter{t: t, req: req, body: resp.Body, events: sse.NewReader(resp.Body, maxEvent)}
		resp.ContentLength = -1
	case mt == "application/json" && req.Method == http.MethodPost && resp.StatusCode/100 == 2:
		t.answer(req, resp)
	}
	return resp, nil
}

// answer checks a call's JSON answer, which readAnswer (answerbody.go) has
// read whole. One the SDK would not read as it is becomes an event stream
// of its messages; one that is none becomes the call's error answer.
func (t *readableOnly) answer(req *http.Request, resp *http.Response) {
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		// Cut off: the SDK meets the same failure after the same bytes.
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), failingReader{err}))
		return
	}
	if _, ok := readsAsIs(body); ok {
		return
	}
	msgs, asIs, ok := decodeForSDK(body)
	switch {
	case ok && asIs:
		return
	case ok:
		setBody(resp, "text/event-stream", appendMessages(nil, msgs, ""))
		return
	}
	ans := unreadableAnswer(req)
	if ans == nil {
		return // not a call's answer: the SDK does not read it
	}
	t.c.unreadable("an HTTP answer", body)
	setBody(resp, "application/json", ans)
}

func setBody(resp *http.Response, contentType string, body []byte) {
	resp.Header = resp.Header.Clone()
	resp.Header.Set("Content-Type", contentType)
	resp.Header.Del("Content-Length")
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
}

// unreadableAnswer is the error answer to the call req carries, encoded;
// nil when req carries none.
func unreadableAnswer(req *http.Request) []byte {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return nil
	}
	rb, err := req.GetBody()
	if err != nil {
		return nil
	}
	sent, err := io.ReadAll(io.LimitReader(rb, maxFrameSize))
	rb.Close()
	if err != nil {
		return nil
	}
	call, err := decodeMessage(sent)
	if r, ok := call.(*jsonrpc.Request); err != nil || !ok || !r.IsCall() {
		return nil
	}
	ans, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: call.(*jsonrpc.Request).ID, Error: &jsonrpc.Error{
		Code:    codeUnreadable,
		Message: unreadableMessage,
	}})
	if err != nil {
		return nil
	}
	return ans
}

// eventFilter is an event stream from the server as the SDK reads it:
// events whose data is no message left out.
type eventFilter struct {
	t       *readableOnly
	req     *http.Request
	body    io.ReadCloser
	events  *sse.Reader
	out     []byte // events passed on, read up to off
	off     int
	err     error // the stream's end, returned once out is read
	dropped bool  // an event was no message
	// answered is set once an answer passed: on a call's stream, the
	// call's (a call's stream carries no other).
	answered bool
}

func (f *eventFilter) Read(p []byte) (int, error) {
	for f.off == len(f.out) {
		if f.err != nil {
			return 0, f.err
		}
		f.out, f.off = f.out[:0], 0
		f.next()
	}
	n := copy(p, f.out[f.off:])
	f.off += n
	return n, nil
}

func (f *eventFilter) Close() error { return f.body.Close() }

// next passes on the next event, or notes the stream's end.
func (f *eventFilter) next() {
	ev, err := f.events.NextAny()
	if errors.Is(err, sse.ErrTooLarge) {
		f.t.c.unreadable("an HTTP event stream", []byte("[an event over the size limit]"))
		f.dropped = true // and its end cannot be found: the stream ends
	}
	if err != nil {
		f.end(err)
		return
	}
	if ev.Type != "message" || ev.Data == "" {
		f.out = sse.AppendEvent(f.out, ev) // not for the SDK to decode
		return
	}
	data := []byte(ev.Data)
	if response, ok := readsAsIs(data); ok {
		f.answered = f.answered || response
		f.out = sse.AppendEvent(f.out, ev)
		return
	}
	msgs, asIs, ok := decodeForSDK(data)
	switch {
	case ok && asIs:
		f.out = sse.AppendEvent(f.out, ev)
	case ok:
		f.out = appendMessages(f.out, msgs, ev.ID)
	default:
		f.t.c.unreadable("an HTTP event stream", data)
		f.dropped = true
		if ev.ID != "" {
			f.out = sse.AppendEvent(f.out, sse.Event{ID: ev.ID}) // where a resumed stream goes on
		}
	}
	for _, m := range msgs {
		if _, ok := m.(*jsonrpc.Response); ok {
			f.answered = true
		}
	}
}

// end notes the stream's end, err. A call's stream that dropped an event
// and ends without the call's answer ends with the call's error answer:
// the answer may have been the event dropped.
func (f *eventFilter) end(err error) {
	f.err = err
	if !f.dropped || f.answered {
		return
	}
	if ans := unreadableAnswer(f.req); ans != nil {
		f.out = sse.AppendData(f.out, "message", "", ans)
		f.err = io.EOF
		f.answered = true
	}
}

// appendMessages appends msgs, re-encoded, as one event each; the last
// carries id.
func appendMessages(b []byte, msgs []jsonrpc.Message, id string) []byte {
	for i, m := range msgs {
		data, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			continue // decoded, so it encodes
		}
		if i < len(msgs)-1 {
			b = sse.AppendData(b, "message", "", data)
		} else {
			b = sse.AppendData(b, "message", id, data)
		}
	}
	return b
}
