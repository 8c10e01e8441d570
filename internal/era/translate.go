package era

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/plexus-mcp/plexus/internal/jsonscan"
)

// The _meta keys of the stateless era (SEP-2575).
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
)

// Caller is what a request Plexus sends upstream on a client's behalf
// says of that client.
type Caller struct {
	// Caps are the client's capabilities as far as Plexus forwards them
	// (elicitation, sampling, roots: what a server may ask of it).
	Caps any
	// Info is how Plexus names itself to the server.
	Info any
	// LogLevel is the level the client asked for; "" for none, and the
	// server then logs as it would by default.
	LogLevel string
	// ProgressToken is the token the server is to report progress under
	// (Plexus's own, mapped back to the client's); nil for none.
	ProgressToken any
}

// RequestMeta is the _meta of a request to a server of version on c's
// behalf; nil when there is nothing to send. A session-era server learns
// the client's capabilities and log level from the session, so its
// requests carry only a progress token: anything of the stateless era
// there makes the SDKs send that era's headers on the older session, which
// such a server refuses. A stateless server needs all of it on every
// request.
func RequestMeta(version string, c Caller) map[string]any {
	if !IsStateless(version) {
		if c.ProgressToken == nil {
			return nil
		}
		return map[string]any{"progressToken": c.ProgressToken}
	}
	m := map[string]any{MetaProtocolVersion: version, MetaClientInfo: c.Info, MetaClientCapabilities: c.Caps}
	if c.Caps == nil {
		m[MetaClientCapabilities] = map[string]any{}
	}
	if c.LogLevel != "" {
		m[MetaLogLevel] = c.LogLevel
	}
	if c.ProgressToken != nil {
		m["progressToken"] = c.ProgressToken
	}
	return m
}

// statelessMembers are the result members only the stateless era defines:
// a session-era client must not see them (the SDK's server writes ttlMs
// and cacheScope on every list; a stateless server writes resultType).
var statelessMembers = map[string]bool{"resultType": true, "ttlMs": true, "cacheScope": true}

// ForClient is a result as a client of version must read it: for the
// session era without statelessMembers at its top, for the stateless era
// marked complete when it does not say what it is. b is returned as it is
// when nothing changes (the usual case: one scan).
func ForClient(version string, b []byte) []byte {
	if IsStateless(version) {
		return completed(b)
	}
	if !bytes.Contains(b, []byte(`"resultType"`)) && !bytes.Contains(b, []byte(`"ttlMs"`)) && !bytes.Contains(b, []byte(`"cacheScope"`)) {
		return b
	}
	out, ok := without(b, func(k []byte) bool { return statelessMembers[string(k)] })
	if !ok {
		return b
	}
	return out
}

// without is object b without the members drop picks; false if b is not
// an object that scans.
func without(b []byte, drop func(k []byte) bool) ([]byte, bool) {
	out := make([]byte, 0, len(b))
	out = append(out, '{')
	ok := jsonscan.Members(b, func(k, v []byte) bool {
		if drop(k) {
			return true
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = append(out, k...)
		out = append(out, `":`...)
		out = append(out, v...)
		return true
	})
	return append(out, '}'), ok
}

// completed marks a result complete (resultType) when it does not say.
func completed(res []byte) []byte {
	res = bytes.TrimSpace(res)
	if len(res) < 2 || res[0] != '{' || bytes.Contains(res, []byte(`"resultType"`)) {
		return res
	}
	out := make([]byte, 0, len(res)+26)
	out = append(out, `{"resultType":"complete"`...)
	if rest := bytes.TrimSpace(res[1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, res[1:]...)
}

// AskMethods are the requests a server may put to its client (mid-call in
// the session era, in an input_required result in the stateless one), and
// what each is called in messages.
var AskMethods = map[string]string{
	"elicitation/create":     "elicitation request",
	"sampling/createMessage": "sampling request",
	"roots/list":             "roots request",
}

// Ask is one question a server puts to its client: its method and params
// as the server wrote them, and, within an input_required result, the key
// the answer goes back under.
type Ask struct {
	Key    string
	Method string
	Params json.RawMessage
}

// AskParams are a question's params as the server wrote them; nil where
// it sent none (roots/list has nothing to say) or null, and the question
// then reaches the client without params, as the spec allows.
func AskParams(p json.RawMessage) json.RawMessage {
	if t := bytes.TrimSpace(p); len(t) == 0 || string(t) == "null" {
		return nil
	}
	return p
}

// InputRequired reads a stateless server's input_required result: the
// questions it asks (sorted by key; params nil where it wrote none) and
// the state to send back with the answers; ok is false for any other
// result.
func InputRequired(res []byte) (asks []Ask, state json.RawMessage, ok bool) {
	if !bytes.Contains(res, []byte(`"input_required"`)) {
		return nil, nil, false
	}
	var r struct {
		ResultType    string `json:"resultType"`
		InputRequests map[string]struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		} `json:"inputRequests"`
		RequestState json.RawMessage `json:"requestState"`
	}
	if json.Unmarshal(res, &r) != nil || r.ResultType != "input_required" {
		return nil, nil, false
	}
	for _, k := range slices.Sorted(maps.Keys(r.InputRequests)) {
		q := r.InputRequests[k]
		asks = append(asks, Ask{Key: k, Method: q.Method, Params: AskParams(q.Params)})
	}
	return asks, r.RequestState, true
}

// InputRequiredResult is the input_required result that asks a stateless
// client asks, with state (a JSON string) to be sent back with the
// answers.
func InputRequiredResult(asks []Ask, state string) []byte {
	type request struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params,omitempty"`
	}
	reqs := make(map[string]request, len(asks))
	for _, a := range asks {
		reqs[a.Key] = request{a.Method, AskParams(a.Params)}
	}
	b, _ := json.Marshal(struct {
		ResultType    string             `json:"resultType"`
		InputRequests map[string]request `json:"inputRequests"`
		RequestState  string             `json:"requestState,omitempty"`
	}{"input_required", reqs, state})
	return b
}

// Retry sets a retried request's inputResponses (answers by key, each as
// the client wrote it) and requestState (as the server wrote it) in
// params, replacing what was there.
func Retry(params map[string]json.RawMessage, answers map[string]json.RawMessage, state json.RawMessage) {
	delete(params, "inputResponses")
	delete(params, "requestState")
	if len(answers) > 0 {
		params["inputResponses"], _ = json.Marshal(answers)
	}
	if len(state) > 0 && string(state) != "null" {
		params["requestState"] = state
	}
}

// Responses reads a retried request's inputResponses (by key, as the
// client wrote them) and requestState; nil and "" when it carries none.
func Responses(params map[string]json.RawMessage) (map[string]json.RawMessage, string) {
	var answers map[string]json.RawMessage
	json.Unmarshal(params["inputResponses"], &answers)
	var state string
	json.Unmarshal(params["requestState"], &state)
	return answers, state
}

// The HTTP headers the stateless era adds to a request (SEP-2243).
const (
	HeaderVersion    = "Mcp-Protocol-Version"
	headerMethod     = "Mcp-Method"
	headerName       = "Mcp-Name"
	headerParamStart = "Mcp-Param-"
)

// HeadersDiffer reports whether the headers of a request to a server of
// version are not those its era has (ServerHeaders would change them).
func HeadersDiffer(h http.Header, version string) bool {
	got := h.Get(HeaderVersion)
	if got == "" || !IsStateless(version) && got != version {
		return true
	}
	if IsStateless(version) {
		return false
	}
	for k := range h {
		if k == headerMethod || k == headerName || strings.HasPrefix(k, headerParamStart) {
			return true
		}
	}
	return false
}

// ServerHeaders makes the headers of a request to a server of version
// those its era has: the version in Mcp-Protocol-Version where it is
// missing, and for a session-era server the negotiated version and none
// of the stateless era's headers. The SDK's client takes the version of
// what it sends from the request's context when it knows no other, and a
// request Plexus makes on a client's behalf inside a handler of the SDK's
// stateless server carries that client's 2026-07-28: a session-era server
// then refuses it (400), which the SDK takes for a lost connection.
func ServerHeaders(h http.Header, version string) {
	if !IsStateless(version) {
		for k := range h {
			if k == headerMethod || k == headerName || strings.HasPrefix(k, headerParamStart) {
				delete(h, k)
			}
		}
		h.Set(HeaderVersion, version)
		return
	}
	if h.Get(HeaderVersion) == "" {
		h.Set(HeaderVersion, version)
	}
}
