//lint:file-ignore SA1019 Plexus relays what MCP 2026-07-28 deprecates (sampling, roots, logging) for the session-era clients and servers that still use it, through the deprecation window.

package face

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/jsonscan"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// The frame path: an MCP 2026-07-28 tools/call — one request, one
// answer, no session — is forwarded as a frame: its name is mapped, its
// arguments and the server's result are never decoded into Go values. The
// SDK handler serves everything else, and any request this path is not
// sure of (a progress token or log level asked for, a batch, a malformed
// or unexpected frame, a name that is not a plain tool of the shared
// catalog), so that errors and edge cases have one source of truth.

const version2026 = "2026-07-28"

// frameRequest is a tools/call the frame path can take.
type frameRequest struct {
	ID     json.RawMessage
	Params map[string]json.RawMessage // without _meta
	name   string
	caps   []byte // the client's capabilities as it wrote them
}

// parseFrame2026 reads a client's frame; ok is false for anything but one
// well-formed MCP 2026-07-28 tools/call that asks for no progress and no
// log messages (those need the SDK's event stream). The frame is checked
// whole by encoding/json and then only scanned (jsonscan): the arguments
// are never decoded, and the capabilities only once per distinct value
// (peerCaps).
func parseFrame2026(env envelope) (req frameRequest, ok bool) {
	fr, ok := env.request()
	if !ok || string(fr.method) != `"tools/call"` ||
		len(fr.id) == 0 || (fr.id[0] != '"' && (fr.id[0] < '0' || fr.id[0] > '9')) {
		return req, false
	}
	req.ID = fr.id
	params := fr.params
	var meta, name []byte
	req.Params = make(map[string]json.RawMessage, 4)
	if !jsonscan.Members(params, func(k, v []byte) bool {
		if _, dup := req.Params[string(k)]; dup {
			return false
		}
		if string(k) == "_meta" {
			meta = v
		} else {
			req.Params[string(k)] = v
		}
		if string(k) == "name" {
			name = v
		}
		return true
	}) || meta == nil {
		return req, false
	}
	n, plain := jsonscan.String(name)
	if !plain {
		return req, false // a name with escapes is none of ours: let the SDK say so
	}
	req.name = string(n)
	var info bool
	var version []byte
	if !jsonscan.Members(meta, func(k, v []byte) bool {
		switch string(k) {
		case mcp.MetaKeyProtocolVersion:
			version = v
		case mcp.MetaKeyClientCapabilities:
			req.caps = v
		case mcp.MetaKeyClientInfo:
			info = true
		case "progressToken", mcp.MetaKeyLogLevel:
			return false
		}
		return true
	}) || string(version) != `"`+version2026+`"` || !info || len(req.caps) == 0 || req.caps[0] != '{' {
		return req, false
	}
	delete(req.Params, "_meta")
	return req, true
}

// frame is the members of a JSON-RPC message the frame paths look at.
type frame struct{ id, method, params []byte }

// frameCall2026 serves r if it can; false means the SDK handler must, and r's
// body is left whole for it.
func (p *profile) frameCall2026(w http.ResponseWriter, r *http.Request, env envelope) bool {
	if r.Method != http.MethodPost || !env.valid || !p.def.external || p.def.metaTools ||
		r.Header.Get("Mcp-Protocol-Version") != version2026 || r.Header.Get("Mcp-Session-Id") != "" ||
		r.Header.Get("Mcp-Method") != "tools/call" || !jsonContent(r) ||
		!strings.Contains(r.Header.Get("Accept"), "application/json") {
		return false
	}
	req, ok := parseFrame2026(env)
	if !ok {
		return false
	}
	name := req.name
	if r.Header.Get("Mcp-Name") != name {
		return false // the SDK says what is wrong with the headers
	}
	caps, ok := p.f.caps.get(req.caps)
	if !ok {
		return false
	}
	if !p.framed(name) {
		return false
	}
	d, err := p.downstream(r.Context(), nil)
	if err != nil {
		return false
	}
	res, _, handled, err := p.callFrame(upstream.WithPeer(r.Context(), caps, nil), d, name, req.Params)
	if !handled {
		return false
	}
	p.noteResult(res)
	writeAnswer(w, r, req.ID, res, err, true)
	return true
}

// framed reports whether a tools/call of name may be forwarded as a frame:
// an offered tool whose calls may, or in a bare profile a name its server
// does not list.
func (p *profile) framed(name string) bool {
	if _, ok := p.frameTarget(name); ok {
		return true
	}
	_, ok := p.passThrough(name)
	return ok
}

// callFrame forwards a tools/call frame: of an offered tool by its catalog
// name (target, for the SDK's hand-off of input_required), or in a bare
// profile, of a name its server does not list, to that server as it is —
// the server answers it, as it would a client talking to it directly.
// handled is false when the SDK's path must serve the call.
func (p *profile) callFrame(ctx context.Context, d *downstream, name string, params map[string]json.RawMessage) (res json.RawMessage, target string, handled bool, err error) {
	if target, ok := p.frameTarget(name); ok {
		res, handled, err = d.sess.CallRaw(ctx, target, params)
		return res, target, handled, err
	}
	if server, ok := p.passThrough(name); ok {
		res, err = d.sess.CallServerRaw(ctx, server, name, params)
		return res, "", true, err
	}
	return nil, "", false, nil
}

// passThrough is the server of a bare profile, for a tool name the
// profile does not offer.
func (p *profile) passThrough(name string) (string, bool) {
	if p.def.naming != config.NamingBare || len(p.def.servers) != 1 {
		return "", false
	}
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	if _, offered := p.toolRoute[name]; offered {
		return "", false
	}
	return p.def.servers[0], true
}

// sessionEraTool reports whether the server of tool name (offered, or
// passed through) speaks a session era: a 2026-07-28 server may answer
// input_required, which the frame path hands to the SDK's path and so
// must answer before its answer becomes an event stream.
func (p *profile) sessionEraTool(name string) bool {
	p.syncMu.Lock()
	server, ok := p.toolServer[name]
	p.syncMu.Unlock()
	if !ok {
		if server, ok = p.passThrough(name); !ok {
			return false
		}
	}
	conn, err := p.f.h.ServerConn(server)
	return err == nil && conn.ProtocolVersion() < version2026
}

// frameTarget is the catalog name of an offered tool whose calls may take a
// frame path; false for any other name.
func (p *profile) frameTarget(name string) (string, bool) {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	target, ok := p.toolRoute[name]
	return target, ok && p.frameable[name]
}

// jsonContent reports whether r's body is declared JSON.
func jsonContent(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "application/json" {
		return true
	}
	ct, _, _ = mime.ParseMediaType(ct)
	return ct == "application/json"
}

// peekBody reads r's body and leaves it whole for whoever reads it next;
// nil and false if it cannot be read or is over maxBody.
func peekBody(r *http.Request) ([]byte, bool) {
	body, err := readBody(r)
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	if err != nil || len(body) > maxBody {
		return nil, false
	}
	return body, true
}

// writeAnswer writes the answer to a frame call: the server's result as it
// wrote it (marked complete for a 2026-07-28 client when it does not say),
// or the error. A client that went away gets nothing: the server was told.
func writeAnswer(w http.ResponseWriter, r *http.Request, id, res json.RawMessage, err error, era2026 bool) {
	var out []byte
	status := http.StatusOK
	switch {
	case err == nil:
		if era2026 {
			res = completed(res)
		}
		out = appendResponse(id, res)
	case r.Context().Err() != nil:
		return
	default:
		if era2026 {
			status = errorStatus(jsonError(err).Code)
		}
		out = errorAnswer(id, err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(out)
}

// readBody reads up to maxBody+1 bytes of r's body, in one buffer of its
// declared length when it has one.
func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= maxBody {
		body := make([]byte, n)
		k, err := io.ReadFull(r.Body, body)
		return body[:k], err
	}
	return io.ReadAll(io.LimitReader(r.Body, maxBody+1))
}

// jsonError is the JSON-RPC error a failed frame call answers with: the
// server's own, else Plexus's.
func jsonError(err error) *jsonrpc.Error {
	var je *jsonrpc.Error
	errors.As(passOn(err), &je)
	return je
}

// errorAnswer is the JSON-RPC error answer to request id.
func errorAnswer(id json.RawMessage, err error) []byte {
	b, _ := json.Marshal(jsonError(err))
	return append(append(append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"error":`...), b...), '}')
}

// errorStatus is the HTTP status of a JSON-RPC error answer under MCP
// 2026-07-28 (SEP-2575), as the SDK's handler sends it.
func errorStatus(code int64) int {
	switch code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

func appendResponse(id, result json.RawMessage) []byte {
	out := make([]byte, 0, len(result)+len(id)+40)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, `,"result":`...)
	out = append(out, result...)
	return append(out, '}')
}

// completed marks a result as complete for a 2026-07-28 client when the
// server (of the session era) did not say.
func completed(res json.RawMessage) json.RawMessage {
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

// sessionlessPeer is a client without a session: it can take no requests from a
// server (an MCP 2026-07-28 server asks in its result instead, which
// passes through), and its progress and logs were not asked for.
type sessionlessPeer struct {
	caps *mcp.ClientCapabilities
	raw  string // as the client wrote them
}

func (p *sessionlessPeer) Capabilities() *mcp.ClientCapabilities { return p.caps }

// CapsKey lets the upstream connection cache what it derives from the
// capabilities by their bytes, without encoding them again.
func (p *sessionlessPeer) CapsKey() string { return p.raw }

// peerCaps keeps the peers of the capability sets clients declare: few
// distinct ones, so each is decoded once. It is bounded: past its size a
// new set is decoded per call and not kept.
type peerCaps struct {
	mu    sync.Mutex
	peers map[string]*sessionlessPeer
}

const maxPeerCaps = 64

// get returns the peer for raw capabilities; false if they do not decode.
func (c *peerCaps) get(raw []byte) (*sessionlessPeer, bool) {
	c.mu.Lock()
	p := c.peers[string(raw)]
	c.mu.Unlock()
	if p != nil {
		return p, true
	}
	caps, err := decodeCaps(raw)
	if err != nil {
		return nil, false
	}
	p = &sessionlessPeer{caps: caps, raw: string(raw)}
	c.mu.Lock()
	if c.peers == nil {
		c.peers = map[string]*sessionlessPeer{}
	}
	if len(c.peers) < maxPeerCaps {
		c.peers[p.raw] = p
	}
	c.mu.Unlock()
	return p, true
}

func (*sessionlessPeer) Ask(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
	return nil, noSession(method)
}

func (*sessionlessPeer) Progress(context.Context, *mcp.ProgressNotificationParams) {}
func (*sessionlessPeer) Log(context.Context, *mcp.LoggingMessageParams)            {}
