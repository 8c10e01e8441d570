package face

import (
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/era"
)

// listBodyMax bounds the tools/list request this path reads; a longer body
// goes to the SDK whole.
const listBodyMax = 64 << 10

// sessionVersions are the session-era versions whose tools/list this path
// answers: those the session was initialized with and the client names in
// its header. Anything older goes to the SDK.
var sessionVersions = map[string]bool{"2025-06-18": true, "2025-11-25": true}

// listRequest is a tools/list this path can answer.
type listRequest struct {
	id     json.RawMessage
	cursor string
}

// listPage is the result of a session's tools/list from the profile's
// rendered pages; nil when this path cannot answer it and the SDK's
// server must: an older version than the pages are rendered for, a cursor
// this rendering did not hand out (a stale or a bad one: the SDK pages
// from its name or says it is invalid), anything unexpected.
func (p *profile) listPage(env envelope, version string) []byte {
	if !sessionVersions[version] {
		return nil
	}
	return p.renderedPage(env, false)
}

// listPage2026 is listPage for a stateless request.
func (p *profile) listPage2026(r *http.Request, env envelope) []byte {
	if r.Header.Get("Mcp-Method") != "tools/list" || !jsonContent(r) || !acceptsBoth(r.Header.Values("Accept")) {
		return nil // the SDK says what is wrong
	}
	return p.renderedPage(env, true)
}

// renderedPage is the page a tools/list asks for, in its era.
func (p *profile) renderedPage(env envelope, stateless bool) []byte {
	if len(env.params) > listBodyMax {
		return nil
	}
	req, ok := parseList(env, stateless)
	if !ok {
		return nil
	}
	tp := p.toolPages()
	if tp == nil {
		return nil
	}
	i, ok := tp.page(req.cursor)
	if !ok {
		return nil
	}
	if stateless {
		return tp.pages[i].stateless
	}
	return tp.pages[i].session
}

// parseList reads a client's tools/list; ok is false for anything but one
// well-formed request with a plain id, no parameters but a cursor and, in
// MCP 2026-07-28 (stateless), its _meta of version, client and
// capabilities, nothing more.
func parseList(env envelope, stateless bool) (req listRequest, ok bool) {
	if !env.valid || env.other || env.result != nil || env.err != nil ||
		!isString(env.version, "2.0") || env.name != "tools/list" || !plainID(env.id) {
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
	if !stateless {
		return req, !has
	}
	var meta map[string]json.RawMessage
	if !has || json.Unmarshal(raw, &meta) != nil || len(meta) != 3 ||
		!isString(meta[mcp.MetaKeyProtocolVersion], era.Stateless) {
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
