package host

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/audit"
	"github.com/plexus-mcp/plexus/internal/catalog"
)

// The audit log's records of what the host serves: each tool call (the
// pipeline's observe step), resource read and prompt get. Sizes always,
// arguments and results only for a server whose settings say
// auditPayloads, redacted of its secrets by its connection's redactor.

// Audit is the daemon's audit log (nil: off), for records of other parts
// (logins, settings changes, decisions).
func (h *Host) Audit() *audit.Log { return h.opts.Audit }

// auditCall records a tool call that took d: its arguments' size, its
// result's, and both for a server that asks.
func (h *Host) auditCall(ctx context.Context, ix indexed, args json.RawMessage, out callResult, outcome string, d time.Duration) {
	kind := audit.KindToolCall
	switch ix.entry.Kind {
	case catalog.KindReadResource:
		kind = audit.KindResourceRead
	case catalog.KindGetPrompt:
		kind = audit.KindPromptGet
	}
	r := audit.Record{Kind: kind, Server: ix.entry.Server, Tool: ix.entry.Tool, Name: ix.entry.Name, Outcome: outcome,
		Ms: audit.Millis(d), ArgBytes: len(args), ResultBytes: len(out.raw)}
	if out.res != nil {
		r.ResultBytes = int(approxSize(out.res))
	}
	if ix.server != nil && ix.server.Config().AuditPayloads {
		res, _ := out.bytes()
		r.Arguments, r.Result = args, res
		h.opts.Audit.RecordPayload(auditSession(ctx), r, h.redactor(ix.entry.Server))
		return
	}
	h.opts.Audit.Record(auditSession(ctx), r)
}

// auditServed records a resource read or prompt get a client asked of a
// server directly (not through a catalog tool).
func (h *Host) auditServed(ctx context.Context, kind, server, what string, args, result any, err error, d time.Duration) {
	if h.opts.Audit == nil {
		return
	}
	r := audit.Record{Kind: kind, Server: server, Tool: what, Outcome: "ok", Ms: audit.Millis(d)}
	if err != nil {
		r.Outcome = "error"
	}
	payloads := false
	if srv, ok := h.snap.Load().servers[server]; ok {
		payloads = srv.Config().AuditPayloads
	}
	var a []byte
	if args != nil {
		a, _ = json.Marshal(args)
		r.ArgBytes = len(a)
	}
	if err == nil {
		r.ResultBytes = servedSize(result)
	}
	if payloads {
		r.Arguments = a
		if err == nil {
			r.Result, _ = json.Marshal(result)
		}
		h.opts.Audit.RecordPayload(auditSession(ctx), r, h.redactor(server))
		return
	}
	h.opts.Audit.Record(auditSession(ctx), r)
}

// servedSize is about the size of a read's or get's result as JSON,
// without encoding a resource's contents on the call's path.
func servedSize(result any) int {
	switch res := result.(type) {
	case *mcp.ReadResourceResult:
		if res == nil {
			return 0
		}
		n := 32
		for _, c := range res.Contents {
			n += 64 + len(c.URI) + len(c.Text) + len(c.Blob)*4/3
		}
		return n
	case *mcp.GetPromptResult:
		if res == nil {
			return 0
		}
		b, _ := json.Marshal(res)
		return len(b)
	}
	return 0
}

// redactor is the server's connection's redactor, or nil.
func (h *Host) redactor(server string) func(string) string {
	if c, err := h.conn(server); err == nil {
		return c.Redact
	}
	return nil
}

// auditSession names the host session of ctx as the record's session
// when the face named none.
func auditSession(ctx context.Context) context.Context {
	if c, ok := audit.ClientFrom(ctx); ok && c.Session != "" {
		return ctx
	}
	id, ok := ctx.Value(sessionKey{}).(string)
	if !ok {
		return ctx
	}
	c, _ := audit.ClientFrom(ctx)
	c.Session = id
	return audit.WithClient(ctx, c)
}
