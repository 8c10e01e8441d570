package host

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/catalog"
)

// A client's own resources/read and prompts/get (through the face, or the
// settings API) pass the gate as a call of the server's per-server
// operation would — read_resource, get_prompt, under their Plexus names —
// so that one rule governs both ways to the same thing: a rule whose tool
// glob matches github's read_resource operation (or github_*) governs
// github's resources read directly too. The question a rule asks shows
// the resource's URI, or the prompt's name and its arguments. A refusal is never sent to the server; it is a
// JSON-RPC error (CodeRefused), since these requests have no result that
// can carry an error of the tool's kind.

// CodeRefused is the JSON-RPC error code of a resources/read or
// prompts/get the gate refused, in the range JSON-RPC leaves to a server's
// own errors; its data names the gate's marker (apitype.MetaError) and,
// rate-limited, when to try again (MetaRetryAfterMs).
const CodeRefused = -32003

// gateServed runs the gate for a request of server that the catalog
// offers as operation op, with the operation's arguments: nil if it may
// go on, else the refusal.
func (h *Host) gateServed(ctx context.Context, server, op string, args any) error {
	snap := h.snap.Load()
	if snap.policy == nil {
		return nil
	}
	ix, ok := snap.lookup(catalog.OpName(server, op))
	if !ok {
		// The server lists no resources (or prompts), so the catalog
		// offers no operation: the rules still apply to its name.
		srv, known := snap.servers[server]
		if !known {
			return nil // the request fails as unknown, unsent
		}
		ix = indexed{entry: catalog.Entry{Name: catalog.OpName(server, op), Server: server, Tool: op, Kind: op}, server: srv}
	}
	raw, _ := json.Marshal(args)
	res := h.gate(ctx, snap, ix, raw)
	if res == nil {
		return nil
	}
	data := map[string]any{apitype.MetaError: res.Meta[apitype.MetaError]}
	if ms, ok := res.Meta[MetaRetryAfterMs]; ok {
		data[MetaRetryAfterMs] = ms
	}
	b, _ := json.Marshal(data)
	return &jsonrpc.Error{Code: CodeRefused, Message: refusalText(res), Data: b}
}

// promptSummary is what the gate's question and waiting list show of a
// prompts/get: the prompt's arguments and, under "prompt", its name (over
// an argument of that name).
func promptSummary(name string, args map[string]string) map[string]string {
	m := make(map[string]string, len(args)+1)
	for k, v := range args {
		m[k] = v
	}
	m["prompt"] = name
	return m
}

// refusalText is the text of a refusal of the gate's (errorResult).
func refusalText(res *mcp.CallToolResult) string {
	if len(res.Content) > 0 {
		if t, ok := res.Content[0].(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return "plexus: the settings refuse this request"
}
