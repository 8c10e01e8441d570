package face

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// listFromPages answers a tools/list from the profile's rendered pages if it
// can: an MCP 2026-07-28 one, or one on a live, initialized session. False
// means the SDK handler must serve r, whose body is left whole for it; so
// do a cursor this rendering did not hand out (a stale or a bad one: the
// SDK pages from its name or says it is invalid) and anything unexpected.
func (p *profile) listFromPages(w http.ResponseWriter, r *http.Request, env envelope) bool {
	if r.Method != http.MethodPost || !env.valid {
		return false
	}
	sid, version := r.Header.Get("Mcp-Session-Id"), r.Header.Get("Mcp-Protocol-Version")
	stateless := sid == ""
	if stateless && (version != version2026 || r.Header.Get("Mcp-Method") != "tools/list") {
		return false
	}
	if !stateless && !sessionVersions[version] {
		return false
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" || !acceptsBoth(r.Header.Values("Accept")) {
		return false // the SDK says what is wrong
	}
	if env.name != "tools/list" || len(env.params) > listBodyMax {
		return false // a session's tools/call, say: not decoded here
	}
	req, ok := parseList(env, stateless)
	if !ok || (!stateless && !p.liveSession(sid, version)) {
		return false
	}
	tp := p.toolPages()
	if tp == nil {
		return false
	}
	i, ok := tp.page(req.cursor)
	if !ok {
		return false
	}
	res := tp.pages[i].session
	if stateless {
		res = tp.pages[i].stateless
	}
	// In pieces: a page is copied nowhere on its way out.
	head := append(append([]byte(`{"jsonrpc":"2.0","id":`), req.id...), `,"result":`...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(head)+len(res)+1))
	w.WriteHeader(http.StatusOK)
	w.Write(head)
	w.Write(res)
	w.Write([]byte{'}'})
	return true
}

// liveSession reports whether session id is one of the SDK server's,
// initialized with version: the SDK would serve it a tools/list.
func (p *profile) liveSession(id, version string) bool {
	for ss := range p.srv.Sessions() {
		if ss.ID() == id {
			ip := ss.InitializeParams()
			return ip != nil && ip.ProtocolVersion == version
		}
	}
	return false
}

// acceptsBoth reports whether an Accept header takes JSON and an event
// stream, as the SDK's handler requires of a POST.
func acceptsBoth(values []string) bool {
	var js, sse bool
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json":
				js = true
			case "text/event-stream":
				sse = true
			}
		}
	}
	return js && sse
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
		!isString(meta[mcp.MetaKeyProtocolVersion], version2026) {
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

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// plainID reports whether a request id comes back from the SDK as it was
// sent: a whole number below 2^53 without sign or exponent, or a string of
// printable ASCII with no escapes. Anything else goes to the SDK.
func plainID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		if len(raw) < 2 || raw[len(raw)-1] != '"' {
			return false
		}
		for _, c := range raw[1 : len(raw)-1] {
			if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	if len(raw) > 15 || (raw[0] == '0' && len(raw) > 1) {
		return false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
