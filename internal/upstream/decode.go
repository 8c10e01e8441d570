package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/plexus-mcp/plexus/internal/jsonscan"
)

// This file is the one judge of what a server sends: a message, or
// something that is none and is dropped. The stdio read loop
// (stdioconn.go) decodes its lines with decodeFrame; over HTTP the SDK's
// client decodes what it reads itself, and unreadable.go passes it only
// what decodeForSDK accepts.

// wireMessage is one JSON-RPC message as it travels. Params, result and
// error data stay raw: the SDK decodes them where it needs them, and the
// frame path (frame.go) never does.
type wireMessage struct {
	Version string          `json:"jsonrpc"`
	ID      any             `json:"id,omitempty"`
	Method  json.RawMessage `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *jsonrpc.Error  `json:"error,omitempty"`
}

var errNotMessage = errors.New("not a JSON-RPC request or response")

// decodeMessage decodes one frame as the SDK's jsonrpc.DecodeMessage does
// (the same rules: version "2.0", a method makes a request, else an id
// makes a response), with the standard library's decoder: the SDK's builds
// a new streaming decoder of ~32 KiB for every message, which is most of
// what a call costs a proxy in garbage. One difference: keys match
// case-insensitively, as encoding/json matches them, so a server that
// writes "Params" is understood where the SDK would see no params.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	var w wireMessage
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if w.Version != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", w.Version, "2.0")
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return nil, err
	}
	if len(w.Method) > 0 {
		var method string
		if err := json.Unmarshal(w.Method, &method); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		return &jsonrpc.Request{Method: method, ID: id, Params: w.Params}, nil
	}
	if !id.IsValid() {
		return nil, errNotMessage
	}
	resp := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		resp.Error = w.Error
	}
	return resp, nil
}

// decodeFrame decodes one line: a message, or a batch (an array) of them.
func decodeFrame(line []byte) ([]jsonrpc.Message, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, false
	}
	if line[0] != '[' {
		m, err := decodeMessage(line)
		return []jsonrpc.Message{m}, err == nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil || len(raws) == 0 {
		return nil, false
	}
	msgs := make([]jsonrpc.Message, 0, len(raws))
	for _, raw := range raws {
		m, err := decodeMessage(raw)
		if err != nil {
			return nil, false
		}
		msgs = append(msgs, m)
	}
	return msgs, true
}

// sdkDepth is the nesting the SDK's decoder accepts (the defaultMaxDepth
// of its internal/json).
const sdkDepth = 1000

// decodeForSDK decodes data as decodeFrame does, for the SDK's HTTP
// clients, which decode what they read themselves and take one message
// they cannot decode for a broken connection. ok is false for what
// decodeFrame refuses and for what nests deeper than the SDK reads. asIs
// says that the SDK reads data itself as the one message it is; else each
// message is to be passed on re-encoded: a batch, which the SDK does not
// read, or keys written in another case, which it would not see.
func decodeForSDK(data []byte) (msgs []jsonrpc.Message, asIs, ok bool) {
	msgs, ok = decodeFrame(data)
	if !ok || !within(data, sdkDepth) {
		return nil, false, false
	}
	asIs = len(msgs) == 1 && jsonscan.Members(bytes.TrimSpace(data), func(k, _ []byte) bool {
		return !bytes.ContainsFunc(k, unicode.IsUpper) || !slices.Contains(messageKeys[:], strings.ToLower(string(k)))
	})
	return msgs, asIs, true
}

// readsAsIs is decodeForSDK's verdict without the decoding, for the
// message a server sends most: one object whose members are the
// message's own, each once and as the SDK spells it, of the types the
// decoders take — "jsonrpc" "2.0", an id that is a string, a number or
// null, a method that is a string, any params or result. ok says that
// decodeForSDK would pass data on as it is, as one message, a response
// (an answer) or not; false says only that it takes decoding to know
// (an error answer, say). Over HTTP the SDK's client decodes every
// message itself, so this scan, not a decode of our own, is what lets
// it through: a message is decoded once.
func readsAsIs(data []byte) (response, ok bool) {
	if !json.Valid(data) || !within(data, sdkDepth) {
		return false, false
	}
	var seen [6]bool
	hasID, hasMethod := false, false
	ok = jsonscan.Members(data, func(k, v []byte) bool {
		i := slices.Index(messageKeys[:], string(k))
		if i < 0 || seen[i] {
			return false
		}
		seen[i] = true
		switch k := messageKeys[i]; {
		case k == "jsonrpc":
			return string(v) == `"2.0"`
		case k == "id":
			hasID = string(v) != "null"
			return v[0] == '"' || v[0] == '-' || '0' <= v[0] && v[0] <= '9' || !hasID
		case k == "method":
			hasMethod = true
			return v[0] == '"'
		case k == "error":
			return false // its shape takes decoding
		}
		return true // params, result
	})
	if !ok || !seen[0] || !hasMethod && !hasID {
		return false, false
	}
	return !hasMethod, true
}

// messageKeys are the members of a JSON-RPC message, as the SDK spells
// them, matching keys exactly (decodeMessage matches them in any case);
// "jsonrpc" first.
var messageKeys = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// within reports whether the JSON data nests objects and arrays at most
// max deep.
func within(data []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, b := range data {
		switch {
		case escaped:
			escaped = false
		case inString && b == '\\':
			escaped = true
		case b == '"':
			inString = !inString
		case inString:
		case b == '{' || b == '[':
			if depth++; depth > max {
				return false
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return true
}

// unreadable reports what the server sent that is no JSON-RPC message,
// and is dropped: on says where it came (stdout, or an HTTP answer). It
// is logged as a stdio server's stderr is, redacted and cut, and a stdio
// server's goes to its stderr tail too.
func (c *Conn) unreadable(on string, data []byte) {
	l := cutLine(c.redact.String(strings.TrimSpace(string(data))))
	if c.stderr != nil {
		c.stderr.add(on + ": " + l)
	}
	c.log.Warn("server sent what is no JSON-RPC message; dropped", "on", on, "message", l)
}
