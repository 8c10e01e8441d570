package face

import (
	"bytes"
	"encoding/json"

	"github.com/plexus-mcp/plexus/internal/jsonscan"
)

// envelope is a POST's JSON-RPC message as the face reads it, once: the
// body checked whole by encoding/json, then its top-level members scanned
// (jsonscan) and kept as raw bytes. Every path decides from it, and only
// the path that serves a message reads into its params.
type envelope struct {
	valid bool // one JSON object whose keys scan (no escapes)
	batch bool // a JSON array: a batch, which the SDK alone serves
	// members counts the object's members; other is set when one is none
	// of a JSON-RPC message's.
	members int
	other   bool

	version, id, method, params, result, err []byte
	raw                                      []byte // the message as the client wrote it
	// name is the method as a plain string ("" when it has escapes or is
	// not a string, or for a response).
	name string
}

// readEnvelope reads body (nil: no body, or too large to look at).
func readEnvelope(body []byte) envelope {
	var e envelope
	if body == nil {
		return e
	}
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
		e.batch = true
		return e
	}
	if !json.Valid(body) {
		return e
	}
	e.raw = body
	e.valid = jsonscan.Members(body, func(k, v []byte) bool {
		e.members++
		switch string(k) {
		case "jsonrpc":
			e.version = v
		case "id":
			e.id = v
		case "method":
			e.method = v
		case "params":
			e.params = v
		case "result":
			e.result = v
		case "error":
			e.err = v
		default:
			e.other = true
		}
		return true
	})
	if s, ok := jsonscan.String(e.method); ok && e.method != nil {
		e.name = methodName(s)
	}
	return e
}

// methodName is s as a string: the methods a client sends on every call
// are the constants, not a copy each request.
func methodName(s []byte) string {
	switch string(s) {
	case "tools/call":
		return "tools/call"
	case "tools/list":
		return "tools/list"
	case "notifications/cancelled":
		return "notifications/cancelled"
	case "notifications/progress":
		return "notifications/progress"
	case "ping":
		return "ping"
	}
	return string(s)
}

// frame is the members of a JSON-RPC request the face looks at.
type frame struct{ id, method, params []byte }

// request is the envelope as a request or notification: ok only for an
// object of version "2.0" with no more than the four members of one.
func (e envelope) request() (frame, bool) {
	return frame{id: e.id, method: e.method, params: e.params},
		e.valid && e.members <= 4 && string(e.version) == `"2.0"` && e.result == nil && e.err == nil
}

// isRequest reports whether the envelope is a request (it has an id and a
// method); a notification has no id.
func (e envelope) isRequest() bool { return e.valid && e.id != nil && e.method != nil }

// isResponse reports whether the envelope is a response: an id and a
// result or an error, nothing else.
func (e envelope) isResponse() bool {
	return e.valid && !e.other && e.method == nil && e.params == nil && string(e.version) == `"2.0"` &&
		e.id != nil && (e.result == nil) != (e.err == nil)
}

// isMessage reports whether the envelope is a JSON-RPC message at all: a
// request, a notification or a response.
func (e envelope) isMessage() bool {
	return e.isResponse() || e.valid && e.method != nil && string(e.version) == `"2.0"`
}

// readMessages reads a POST's body: one message, or a batch (an array)
// of them; nil if it is neither.
func readMessages(body []byte) (msgs []envelope, batch bool) {
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
		var raws []json.RawMessage
		if json.Unmarshal(b, &raws) != nil || len(raws) == 0 {
			return nil, true
		}
		for _, raw := range raws {
			e := readEnvelope(raw)
			if !e.isMessage() {
				return nil, true
			}
			msgs = append(msgs, e)
		}
		return msgs, true
	}
	e := readEnvelope(body)
	if !e.isMessage() {
		return nil, false
	}
	return []envelope{e}, false
}
