package face

import (
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/era"
	"github.com/plexus-mcp/plexus/internal/tracing"
)

// listBodyMax bounds the tools/list request this path reads; a longer body
// goes to the SDK whole.
const listBodyMax = 64 << 10

// listRequest is a tools/list this path can answer.
type listRequest struct {
	id     json.RawMessage
	cursor string
	meta   json.RawMessage // its _meta, for its span's trace context
}

// listPage is the result of a session's list request (kind) from the
// profile's rendered pages, or the error to answer; handled is false when
// the SDK's server must answer it: a request this path does not read.
func (p *profile) listPage(k listKind, r *http.Request, env envelope) (res []byte, handled bool, err error) {
	return p.renderedPage(k, r, env, false)
}

// listPage2026 is listPage for a stateless request.
func (p *profile) listPage2026(k listKind, r *http.Request, env envelope) (res []byte, handled bool, err error) {
	if r.Header.Get("Mcp-Method") != listKinds[k].method || !jsonContent(r) || !acceptsBoth(r.Header.Values("Accept")) {
		return nil, false, nil // the SDK says what is wrong
	}
	return p.renderedPage(k, r, env, true)
}

// renderedPage is the page a list request asks for, in its era.
func (p *profile) renderedPage(k listKind, r *http.Request, env envelope, stateless bool) (_ []byte, _ bool, err error) {
	if len(env.params) > listBodyMax {
		return nil, false, nil
	}
	req, ok := parseList(env, stateless)
	if !ok {
		return nil, false, nil
	}
	rl := p.rendered(k)
	if rl == nil {
		return nil, false, nil
	}
	if tracing.On() {
		// MCP's own carrier first, else the HTTP headers.
		_, span := tracing.StartServer(r.Context(), tracing.FromMetaOr(req.meta, r.Header), tracing.Call{Method: listKinds[k].method})
		defer func() { span.End(err, tracing.ErrType(err)) }()
	}
	res, err := rl.page(req.cursor, stateless)
	return res, true, err
}

// parseList reads a client's list request; ok is false for anything but
// one well-formed request with a plain id, no parameters but a cursor and
// _meta, and in MCP 2026-07-28 (stateless) its _meta with the era's
// version, client and capabilities.
func parseList(env envelope, stateless bool) (req listRequest, ok bool) {
	if !env.valid || env.other || env.result != nil || env.err != nil ||
		!isString(env.version, "2.0") || !plainID(env.id) {
		return req, false
	}
	req.id = env.id
	var params map[string]json.RawMessage
	if env.params != nil && json.Unmarshal(env.params, &params) != nil {
		return req, false
	}
	if !onlyKeys(params, "cursor", "_meta") {
		return req, false
	}
	if raw, has := params["cursor"]; has && json.Unmarshal(raw, &req.cursor) != nil {
		return req, false
	}
	raw, has := params["_meta"]
	req.meta = raw
	if !stateless {
		return req, true
	}
	var meta map[string]json.RawMessage
	if !has || json.Unmarshal(raw, &meta) != nil || !isString(meta[mcp.MetaKeyProtocolVersion], era.Stateless) {
		return req, false
	}
	var client mcp.Implementation
	var caps mcp.ClientCapabilities
	if !isObject(meta[mcp.MetaKeyClientInfo]) || json.Unmarshal(meta[mcp.MetaKeyClientInfo], &client) != nil ||
		!isObject(meta[mcp.MetaKeyClientCapabilities]) || json.Unmarshal(meta[mcp.MetaKeyClientCapabilities], &caps) != nil {
		return req, false
	}
	return req, true
}

func onlyKeys(m map[string]json.RawMessage, keys ...string) bool {
	n := 0
	for _, k := range keys {
		if _, ok := m[k]; ok {
			n++
		}
	}
	return n == len(m)
}

func isString(raw json.RawMessage, want string) bool {
	var s string
	return json.Unmarshal(raw, &s) == nil && s == want
}
