package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/plexus-mcp/plexus/internal/jsonscan"
)

// Over streamable HTTP a server sends what a request causes — its
// questions to the client, its log messages — on that request's own
// response stream. The SDK's client hands every message of every stream
// to one reader, and which stream a message came on is lost; with calls
// of several clients in flight a question could then not be told apart
// (routeConn refused it) and a log message went nowhere. The stream is
// known where the response is read: streamTagger reads along with the
// SDK, and tags each request and notification a call's stream carries
// with that call, for routeConn to find.

// maxTaggedEvent bounds one event streamTagger reads along; past it the
// stream's messages go untagged.
const maxTaggedEvent = 1 << 20

// streamTagger is the HTTP transport of a remote connection's SDK client.
type streamTagger struct {
	base  http.RoundTripper
	calls *inflight
}

func (t *streamTagger) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || resp.Body == nil {
		return resp, err
	}
	pc := callFrom(req.Context())
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); pc == nil || mt != "text/event-stream" {
		return resp, nil
	}
	resp.Body = &taggingBody{ReadCloser: resp.Body, pc: pc, calls: t.calls}
	return resp, nil
}

// taggingBody is a call's response stream, read by the SDK and along with
// it here.
type taggingBody struct {
	io.ReadCloser
	pc    *peerCall
	calls *inflight
	line  []byte // the line being read
	data  []byte // the event's data so far
	off   bool   // an event over maxTaggedEvent: this stream is not tagged
}

func (b *taggingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if !b.off {
		b.scan(p[:n])
	}
	return n, err
}

// scan follows the event stream's lines: each event's data is tagged
// once the blank line that ends it is read, before the SDK's reader has
// decoded and handed on its message.
func (b *taggingBody) scan(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			b.line = append(b.line, p...)
			break
		}
		b.line = append(b.line, p[:i]...)
		p = p[i+1:]
		line := bytes.TrimSuffix(b.line, []byte("\r"))
		switch {
		case len(line) == 0:
			if len(b.data) > 0 {
				b.calls.tag(b.data, b.pc)
			}
			b.data = b.data[:0]
		case bytes.HasPrefix(line, []byte("data:")):
			d := bytes.TrimPrefix(line[len("data:"):], []byte(" "))
			if len(b.data) > 0 {
				b.data = append(b.data, '\n')
			}
			b.data = append(b.data, d...)
		}
		b.line = b.line[:0]
		if len(b.data) > maxTaggedEvent {
			b.off, b.line, b.data = true, nil, nil
			return
		}
	}
	if len(b.line) > maxTaggedEvent {
		b.off, b.line, b.data = true, nil, nil
	}
}

// tagged are the server's messages a call's stream carried, by key
// (tagKey), waiting for routeConn; bounded, the oldest going first.
type tagged struct {
	mu    sync.Mutex
	by    map[string][]*peerCall
	order []string
}

const maxTagged = 256

// tag notes that msg, one message of a server's, came on the stream of
// pc's call.
func (f *inflight) tag(msg []byte, pc *peerCall) {
	key, ok := tagKeyOf(msg)
	if !ok {
		return
	}
	t := &f.tagged
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.by == nil {
		t.by = map[string][]*peerCall{}
	}
	t.by[key] = append(t.by[key], pc)
	t.order = append(t.order, key)
	for len(t.order) > maxTagged {
		old := t.order[0]
		t.order = t.order[1:]
		if q := t.by[old]; len(q) > 1 {
			t.by[old] = q[1:]
		} else {
			delete(t.by, old)
		}
	}
}

// taggedCall is the call whose stream carried req, if one did; the tag is
// used up.
func (f *inflight) taggedCall(req *jsonrpc.Request) *peerCall {
	key := tagKey(req.Method, req.ID, req.Params)
	t := &f.tagged
	t.mu.Lock()
	defer t.mu.Unlock()
	q := t.by[key]
	if len(q) == 0 {
		return nil
	}
	if len(q) == 1 {
		delete(t.by, key)
	} else {
		t.by[key] = q[1:]
	}
	return q[0]
}

// tagKeyOf is the key of a server's message as written: a request's by
// its method and id, a notification's by its method and params.
func tagKeyOf(msg []byte) (string, bool) {
	var method, id, params []byte
	if !jsonscan.Members(msg, func(k, v []byte) bool {
		switch string(k) {
		case "method":
			method = v
		case "id":
			id = v
		case "params":
			params = v
		}
		return true
	}) || method == nil {
		return "", false
	}
	m, ok := jsonscan.String(method)
	if !ok {
		return "", false
	}
	var rid jsonrpc.ID
	if id != nil {
		var v any
		if json.Unmarshal(id, &v) != nil {
			return "", false
		}
		var err error
		if rid, err = jsonrpc.MakeID(v); err != nil {
			return "", false
		}
	}
	return tagKey(string(m), rid, params), true
}

func tagKey(method string, id jsonrpc.ID, params []byte) string {
	if id.IsValid() {
		switch v := id.Raw().(type) {
		case string:
			return method + "\x00s" + v
		case int64:
			return method + "\x00n" + strconv.FormatInt(v, 10)
		}
	}
	return method + "\x00p" + string(params)
}

// callKey carries a call's registration (inflight.begin) in its context,
// for the transport that carries it.
type callKey struct{}

func callFrom(ctx context.Context) *peerCall {
	pc, _ := ctx.Value(callKey{}).(*peerCall)
	return pc
}
