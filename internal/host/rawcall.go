package host

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// find resolves a catalog name for the session: the shared catalog, less what the session switched off or froze out. ok is
// false when the slow path must decide (a per-session instance, a name
// not frozen into a running turn, an unknown name).
func (s *Session) find(snap *snapshot, name string) (indexed, bool) {
	ix, ok := snap.lookup(name)
	if !ok {
		return indexed{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.off[ix.entry.Server] || s.instances[ix.entry.Server] != nil || (s.inTurn && !s.frozen[name]) {
		return indexed{}, false
	}
	return ix, true
}

// CallRaw is Call for a proxy that forwards a client's tools/call frame:
// params are the client's params (arguments, and for a retry its input
// responses and request state); the name and _meta are replaced here. It
// returns the server's result as bytes, or — for a failure of Plexus's own
// — an error result like Call's. handled is false when the name needs the
// full path (Call): it is not a plain tool of the shared catalog, or it
// is held or unknown.
func (s *Session) CallRaw(ctx context.Context, name string, params map[string]json.RawMessage) (res json.RawMessage, handled bool, err error) {
	s.touch()
	snap := s.h.snap.Load()
	ix, ok := s.find(snap, name)
	if !ok || ix.entry.Kind != catalog.KindTool {
		return nil, false, nil
	}
	res, err = s.h.callRaw(inSession(ctx, s.ID), snap, ix, params)
	return res, true, err
}

func (h *Host) callRaw(ctx context.Context, snap *snapshot, ix indexed, params map[string]json.RawMessage) (json.RawMessage, error) {
	out, err := h.run(ctx, snap, ix, PathFrame, params["arguments"], func(ctx context.Context, conn *upstream.Conn, within time.Duration) (callResult, error) {
		params["name"] = quoteName(ix.entry.Tool)
		raw, err := conn.CallRawWithin(ctx, params, within)
		return callResult{raw: raw}, err
	})
	if err != nil {
		return nil, err
	}
	return out.bytes()
}

// CallServerRaw forwards a tools/call frame to server for a tool the
// server does not list: for a proxy that passes one server through
// unchanged (a bare profile), such a name is the server's to answer, as
// it would answer a client talking to it directly. A tool it lists that
// Plexus does not offer — filtered out, or held back by pinning — is not
// forwarded (NotFoundError). The call takes the same pipeline as every
// other (pipeline.go).
func (s *Session) CallServerRaw(ctx context.Context, server, tool string, params map[string]json.RawMessage) (json.RawMessage, error) {
	s.touch()
	snap := s.h.snap.Load()
	srv, ok := snap.servers[server]
	if !ok || s.offServer(server) {
		return nil, &NotFoundError{What: "server", Name: server}
	}
	if slices.Contains(srv.Catalog().Listed, tool) {
		return nil, &NotFoundError{What: "tool", Name: tool}
	}
	ix := indexed{entry: catalog.Entry{Server: server, Tool: tool, Name: tool, Kind: catalog.KindTool}, server: srv}
	return s.h.callRaw(inSession(ctx, s.ID), snap, ix, params)
}

// offServer reports whether the session has server switched off or runs
// its own instance of it (which the shared snapshot does not hold).
func (s *Session) offServer(server string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.off[server] || s.instances[server] != nil
}

// quoteName is name as a JSON string, the bytes json.Marshal writes: a
// name of printable ASCII that needs no escape (every tool name a server
// lists, in practice) is quoted as it is, without Marshal's reflection.
func quoteName(name string) json.RawMessage {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(name)
			return b
		}
	}
	b := make([]byte, 0, len(name)+2)
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"')
}
