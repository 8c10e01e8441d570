//lint:file-ignore SA1019 Plexus relays what MCP 2026-07-28 deprecates (sampling, roots, logging) for the session-era clients and servers that still use it, through the deprecation window.

package face

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/recovery"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// profile is one profile's SDK server, the SDK's stateless handler (for
// the MCP 2026-07-28 requests the face does not forward itself) and the
// profile's sessions.
type profile struct {
	f    *Face
	name string
	def  definition
	srv  *mcp.Server

	stateless *mcp.StreamableHTTPHandler

	syncMu sync.Mutex // serialises sync
	// synced is the host's catalog version the last sync began from: a
	// call that meets a name not offered syncs at once if the host has a
	// newer one (await.go), instead of waiting for the event.
	synced uint64
	// lists: what the profile offers (pages.go); tools, resources,
	// templates, prompts: what of it came from servers, by key.
	lists                                [4]offered
	tools, resources, templates, prompts map[string]bool
	// routes: offered name → where it goes.
	toolRoute  map[string]string // offered tool → catalog name
	toolServer map[string]string // offered tool → its server
	// frameable: tools whose stateless calls the face forwards (call.go):
	// those without x-mcp-header parameters, which the SDK checks against
	// the request's headers.
	frameable   map[string]bool
	promptRoute map[string][2]string
	resRoute    map[string]string // resource URI or template → server
	pageSize    int               // of the lists' pages

	resultsOffered atomic.Bool // the kept results' template offered (results.go)

	mu       sync.Mutex
	sessions map[string]*session     // by id (session.go)
	waiting  map[string]*pendingCall // stateless calls waiting for input, by token (wait.go)
	shared   *downstream             // for stateless (2026-07-28) requests
	closed   bool
}

func newProfile(f *Face, name string, def definition) *profile {
	p := &profile{f: f, name: name, def: def,
		tools: map[string]bool{}, resources: map[string]bool{}, templates: map[string]bool{}, prompts: map[string]bool{},
		toolRoute: map[string]string{}, toolServer: map[string]string{}, frameable: map[string]bool{}, promptRoute: map[string][2]string{}, resRoute: map[string]string{},
		pageSize: listPageSize, sessions: map[string]*session{}}
	opts := &mcp.ServerOptions{
		Instructions: f.instructions(def),
		// The SDK logs every stateless request's session at INFO: warnings
		// and errors are what the daemon's log needs from it.
		Logger:   slog.New(minLevel{f.log.With("profile", name).Handler(), slog.LevelWarn}),
		HasTools: true,
		PageSize: p.pageSize,
	}
	if def.external {
		// Resources and prompts are advertised once the profile has some
		// (the SDK declares them with the first one added), not for
		// servers that have none.
		opts.SubscribeHandler = p.subscribe
		opts.UnsubscribeHandler = p.unsubscribe
		opts.CompletionHandler = p.complete
	}
	p.srv = f.newServer(opts)
	p.srv.AddReceivingMiddleware(p.attach, p.traced)
	if def.external && def.naming == config.NamingBare && len(def.servers) == 1 {
		p.srv.AddReceivingMiddleware(p.serverCaps) // caps.go
	}
	p.srv.AddReceivingMiddleware(recovery.Middleware(f.log.With("profile", name), "face: serving a message")) // outermost
	if def.control {
		p.addControlTools()
	}
	if def.control && def.write {
		p.addWriteTools()
	}
	if def.external && def.metaTools {
		p.addMetaTools()
	}
	get := func(*http.Request) *mcp.Server { return p.srv }
	p.stateless = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Logger: opts.Logger, MaxRequestBodyBytes: maxBody, Stateless: true,
		// MCP 2026-07-28 cancels a request by closing it: pass it upstream.
		PropagateRequestCancellation: true})
	p.sync()
	return p
}

// instructions tell a client what the profile offers, and, while the
// servers' tools are not offered, why and how a person switches them on.
// A bare profile gives its one server's own instructions: the face is that
// server, as far as the client can tell.
func (f *Face) instructions(def definition) string {
	if def.external && def.naming == config.NamingBare && len(def.servers) == 1 {
		// From its handshake's answer as last seen: a server stopped when
		// idle has the same instructions.
		o, err := f.h.Offer(def.servers[0])
		if err != nil {
			return ""
		}
		var instr string
		if raw, ok := catalog.Member(o.InitializeResult, "instructions"); ok {
			json.Unmarshal(raw, &instr)
		}
		return instr
	}
	about := "Plexus runs the user's MCP servers and offers them here."
	if def.control {
		about += " plexus_status and plexus_snapshot describe them."
	}
	if def.external {
		return about
	}
	return about + " Now " + apitype.ExternalCallOff + "."
}

// close ends the profile's sessions and the calls waiting for input.
func (p *profile) close() {
	p.mu.Lock()
	p.closed = true
	all := p.sessions
	p.sessions = map[string]*session{}
	waiting := p.waiting
	p.waiting = nil
	shared := p.shared
	p.shared = nil
	p.mu.Unlock()
	for _, s := range all {
		s.end("")
	}
	for _, c := range waiting {
		c.cancel()
	}
	if shared != nil {
		shared.end()
	}
}

// sync makes the SDK server's lists match the profile's slice of the
// catalog; the SDK sends list_changed for what changed.
func (p *profile) sync() {
	if !p.def.external {
		return
	}
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	p.synced = p.f.h.CatalogVersion()
	if !p.def.metaTools {
		p.syncTools()
	}
	offers := p.serverOffers()
	p.syncResources(offers)
	p.syncPrompts(offers)
}

// entries is the profile's slice of the catalog.
func (p *profile) entries() []catalog.Entry {
	all, _, err := p.f.h.Tools("")
	if err != nil {
		return nil
	}
	out := all[:0:0]
	for _, e := range all {
		if !p.def.has(e.Server) {
			continue
		}
		if p.def.naming == config.NamingBare && e.Kind != catalog.KindTool {
			continue // resources and prompts pass through natively instead
		}
		out = append(out, e)
	}
	return out
}

// offeredName is the name a client sees for an entry.
func (p *profile) offeredName(e catalog.Entry) string {
	if p.def.naming == config.NamingBare {
		return e.Tool
	}
	return e.Name
}

// syncTools offers the profile's tools: each as the server wrote it
// (catalog.Entry.Offered: renamed, and its views in a profile that gathers
// servers), in its server's order in a profile of one server's names.
func (p *profile) syncTools() {
	seen := map[string]bool{}
	aggregate := p.def.naming != config.NamingBare
	for _, e := range p.entries() {
		name := p.offeredName(e)
		if seen[name] {
			continue
		}
		seen[name] = true
		var schema struct {
			Type any `json:"type"`
		}
		if json.Unmarshal(e.InputSchema, &schema) != nil || schema.Type != "object" {
			p.f.log.Warn("face: tool has no object input schema; not offered", "tool", e.Name)
			continue
		}
		// The SDK's server has the tool too: it serves a call the face
		// does not forward (call.go), and tells clients of list changes.
		tool := &mcp.Tool{Name: name, Title: e.Title, Description: e.Description, InputSchema: e.InputSchema}
		if len(e.OutputSchema) > 0 {
			tool.OutputSchema = e.OutputSchema
		}
		raw, err := e.Offered(name, aggregate)
		if e.Raw == nil {
			raw, err = marshalSDK(tool) // a per-server operation: Plexus's own
		}
		if err != nil {
			p.f.log.Warn("face: a tool's definition cannot be offered", "tool", e.Name, "err", err)
			continue
		}
		rank := 0
		if !aggregate {
			rank = e.Index
		}
		if !p.lists[toolsList].put(name, rank, raw) && p.tools[name] {
			continue
		}
		p.toolRoute[name] = e.Name
		p.toolServer[name] = e.Server
		p.frameable[name] = !bytes.Contains(e.InputSchema, []byte(`"x-mcp-header"`))
		p.srv.AddTool(tool, p.callTool(e.Name))
		p.tools[name] = true
	}
	var gone []string
	for name := range p.tools {
		if !seen[name] {
			gone = append(gone, name)
			delete(p.tools, name)
			delete(p.toolRoute, name)
			delete(p.toolServer, name)
			delete(p.frameable, name)
			p.lists[toolsList].drop(name)
		}
	}
	if len(gone) > 0 {
		p.srv.RemoveTools(gone...)
	}
}

// addTool offers one of Plexus's own tools; the caller holds syncMu (or
// owns p alone). They come first in a profile of one server's names.
func (p *profile) addTool(t *mcp.Tool, h mcp.ToolHandler) {
	raw, err := marshalSDK(t)
	if err != nil {
		panic(err) // Plexus's own definitions encode
	}
	rank := 0
	if p.def.naming == config.NamingBare {
		rank = -1
	}
	p.srv.AddTool(t, h)
	p.lists[toolsList].put(t.Name, rank, raw)
}

// callTool makes a call of catalog entry name that the face did not
// forward itself (call.go): a stateless call of a tool with x-mcp-header
// parameters, which the SDK's handler checks first.
func (p *profile) callTool(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		d, err := p.downstream(ctx, req.Session)
		if err != nil {
			return nil, passOn(err)
		}
		ctx = p.withPeer(ctx, req.Session, req.Params.GetProgressToken())
		ctx = withCaller(ctx, req.Extra)
		ctx = upstream.WithInput(ctx, req.Params.InputResponses, req.Params.RequestState)
		res, err := d.sess.Call(ctx, name, req.Params.Arguments)
		p.noteDecoded(res)
		return res, passOn(err)
	}
}

// minLevel drops records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(a), m.min}
}

func (m minLevel) WithGroup(g string) slog.Handler { return minLevel{m.Handler.WithGroup(g), m.min} }
