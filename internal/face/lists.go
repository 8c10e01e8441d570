package face

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/host"
	"github.com/plexus-mcp/plexus/internal/tracing"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// serverOffers is what each server of the profile offers, in the order of the
// servers' names (host.Offer: each definition as the server wrote it).
func (p *profile) serverOffers() []host.Offer {
	_, servers := p.f.h.Servers()
	var out []host.Offer
	for _, sc := range servers {
		if !p.def.has(sc.Name) {
			continue
		}
		if o, err := p.f.h.Offer(sc.Name); err == nil {
			out = append(out, o)
		}
	}
	return out
}

// rankOf places the definition i of the server s-th in the profile's
// order: by server, then in the server's own order.
func rankOf(s, i int) int { return s<<20 | i }

// syncResources offers the profile's resources and templates under their
// own URIs (a view's renamed in a profile that gathers servers:
// catalog.UIURI); a URI two servers share goes to the first by name.
func (p *profile) syncResources(offers []host.Offer) {
	aggregate := p.def.naming != config.NamingBare
	seenR, seenT := map[string]bool{}, map[string]bool{}
	for si, o := range offers {
		for i, r := range o.Resources {
			uri := r.URI
			if aggregate && strings.HasPrefix(uri, catalog.UIScheme) {
				uri = catalog.UIURI(r.Server, uri)
			}
			raw, err := r.Offered(aggregate)
			if seenR[uri] || err != nil {
				continue
			}
			seenR[uri] = true
			if !p.lists[resourcesList].put(uri, rankOf(si, i), raw) && p.resources[uri] {
				continue
			}
			p.resources[uri] = true
			p.resRoute[uri] = r.Server
			p.srv.AddResource(&mcp.Resource{URI: uri, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType},
				p.readResource(r.Server))
		}
		for i, t := range o.Templates {
			uri := t.URITemplate
			if aggregate && strings.HasPrefix(uri, catalog.UIScheme) {
				uri = catalog.UIURI(t.Server, uri)
			}
			raw, err := t.Offered(aggregate)
			if seenT[uri] || err != nil {
				continue
			}
			seenT[uri] = true
			if !p.lists[templatesList].put(uri, rankOf(si, i), raw) && p.templates[uri] {
				continue
			}
			p.templates[uri] = true
			p.resRoute[uri] = t.Server
			p.srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: uri, Name: t.Name, Title: t.Title, Description: t.Description, MIMEType: t.MIMEType},
				p.readResource(t.Server))
		}
	}
	if gone := p.dropUnseen(resourcesList, p.resources, seenR); len(gone) > 0 {
		p.srv.RemoveResources(gone...)
	}
	if gone := p.dropUnseen(templatesList, p.templates, seenT); len(gone) > 0 {
		p.srv.RemoveResourceTemplates(gone...)
	}
}

// dropUnseen withdraws what a list offered from servers and no longer
// has, and returns its keys.
func (p *profile) dropUnseen(k listKind, offered map[string]bool, seen map[string]bool) []string {
	var gone []string
	for key := range offered {
		if !seen[key] {
			gone = append(gone, key)
			delete(offered, key)
			p.lists[k].drop(key)
		}
	}
	return gone
}

func (p *profile) readResource(server string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		// The client's session is made here as for a call; the resource and
		// prompt themselves come from the server's shared instance.
		if _, err := p.downstream(ctx, req.Session); err != nil {
			return nil, passOn(err)
		}
		ctx = p.withPeer(ctx, req.Session, req.Params.GetProgressToken())
		ctx = upstream.WithInput(ctx, req.Params.InputResponses, req.Params.RequestState)
		uri := req.Params.URI
		renamed := false
		if s, own, ok := catalog.ParseUIURI(uri); ok && s == server && p.def.naming != config.NamingBare {
			uri, renamed = own, true
		}
		ctx, span := tracing.StartServer(ctx, tracing.FromMetaMap(req.Params.Meta, headerOf(req.Extra)),
			tracing.Call{Method: "resources/read", Resource: req.Params.URI, Server: server, Session: req.Session.ID()})
		res, err := p.f.h.ReadResource(ctx, server, uri)
		span.End(err, tracing.ErrType(err))
		if err == nil && renamed {
			for _, c := range res.Contents {
				if c != nil {
					c.URI = catalog.UIURI(server, c.URI)
				}
			}
		}
		return res, passOn(err)
	}
}

// promptName is the name a client sees for a server's prompt: its own in a
// bare profile, else "<server>__<prompt>", after the way editors name
// their MCP tools.
func (p *profile) promptName(server, name string) string {
	if p.def.naming == config.NamingBare {
		return name
	}
	return server + "__" + name
}

// syncPrompts offers the profile's prompts, each as the server wrote it
// under the name the profile gives it.
func (p *profile) syncPrompts(offers []host.Offer) {
	seen := map[string]bool{}
	for si, o := range offers {
		for i, pr := range o.Prompts {
			name := p.promptName(pr.Server, pr.Name)
			raw, err := pr.Offered(name)
			if seen[name] || err != nil {
				continue
			}
			seen[name] = true
			if !p.lists[promptsList].put(name, rankOf(si, i), raw) && p.prompts[name] {
				continue
			}
			var args []*mcp.PromptArgument
			for _, a := range pr.Arguments {
				args = append(args, &mcp.PromptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
			}
			p.prompts[name] = true
			p.promptRoute[name] = [2]string{pr.Server, pr.Name}
			p.srv.AddPrompt(&mcp.Prompt{Name: name, Title: pr.Title, Description: pr.Description, Arguments: args},
				p.getPrompt(pr.Server, pr.Name))
		}
	}
	if gone := p.dropUnseen(promptsList, p.prompts, seen); len(gone) > 0 {
		p.srv.RemovePrompts(gone...)
	}
}

func (p *profile) getPrompt(server, name string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		// The client's session is made here as for a call; the resource and
		// prompt themselves come from the server's shared instance.
		if _, err := p.downstream(ctx, req.Session); err != nil {
			return nil, passOn(err)
		}
		ctx = p.withPeer(ctx, req.Session, req.Params.GetProgressToken())
		ctx = upstream.WithInput(ctx, req.Params.InputResponses, req.Params.RequestState)
		ctx, span := tracing.StartServer(ctx, tracing.FromMetaMap(req.Params.Meta, headerOf(req.Extra)),
			tracing.Call{Method: "prompts/get", Prompt: p.promptName(server, name), Server: server, Session: req.Session.ID()})
		res, err := p.f.h.GetPrompt(ctx, server, name, req.Params.Arguments)
		span.End(err, tracing.ErrType(err))
		return res, passOn(err)
	}
}

// serverFor finds the server behind a resource URI: an exact resource, or
// the only template whose literal prefix the URI starts with; in a bare
// profile, its one server, which answers for any URI as it would directly.
func (p *profile) serverFor(uri string) (string, bool) {
	if p.def.naming == config.NamingBare && len(p.def.servers) == 1 {
		return p.def.servers[0], true
	}
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	if s, ok := p.resRoute[uri]; ok {
		return s, true
	}
	best, bestLen := "", -1
	for t := range p.templates {
		prefix, _, _ := strings.Cut(t, "{")
		if strings.HasPrefix(uri, prefix) && len(prefix) > bestLen {
			best, bestLen = p.resRoute[t], len(prefix)
		}
	}
	return best, bestLen >= 0
}

func (p *profile) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	server, ok := p.serverFor(req.Params.URI)
	if !ok {
		return unknownResource(req.Params.URI)
	}
	conn, done, err := p.f.h.UseServer(ctx, server)
	if err != nil {
		return passOn(err)
	}
	defer done()
	// The SDK sends the update to the sessions subscribed to the URI.
	conn.WatchResources("face/"+p.name, func(uri string) {
		p.srv.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
	})
	if err := conn.Subscribe(ctx, req.Params.URI); err != nil {
		return passOn(err)
	}
	// A stopped server would forget the subscription: it stays up.
	p.f.h.KeepAwake(server, "subscription "+req.Params.URI, true)
	return nil
}

func (p *profile) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	server, ok := p.serverFor(req.Params.URI)
	if !ok {
		return unknownResource(req.Params.URI)
	}
	conn, err := p.f.h.ServerConn(server)
	if err != nil {
		return passOn(err)
	}
	err = conn.Unsubscribe(ctx, req.Params.URI)
	if err == nil {
		p.f.h.KeepAwake(server, "subscription "+req.Params.URI, false)
	}
	return passOn(err)
}

// complete forwards completion/complete to the server behind the prompt or
// resource template it is about.
func (p *profile) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	ref := req.Params.Ref
	var server string
	params := *req.Params
	switch ref.Type {
	case "ref/prompt":
		p.syncMu.Lock()
		route, ok := p.promptRoute[ref.Name]
		p.syncMu.Unlock()
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no prompt named " + ref.Name}
		}
		server = route[0]
		r := *ref
		r.Name = route[1]
		params.Ref = &r
	case "ref/resource":
		s, ok := p.serverFor(ref.URI)
		if !ok {
			return nil, unknownResource(ref.URI)
		}
		server = s
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown completion reference type " + ref.Type}
	}
	conn, done, err := p.f.h.UseServer(ctx, server)
	if err != nil {
		return nil, passOn(err)
	}
	defer done()
	res, err := conn.Complete(ctx, &params)
	return res, passOn(err)
}

// passOn gives the client a server's JSON-RPC error as the server sent it,
// and any other failure as an internal error: never a code JSON-RPC does
// not define (the SDK answers a plain error with code 0).
func passOn(err error) error {
	if err == nil {
		return nil
	}
	if je := upstream.AnswerError(err); je != nil {
		return je
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return err
	}
	var nf *host.NotFoundError
	if errors.As(err, &nf) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// codeResourceNotFound is MCP's error for a resource that does not exist.
const codeResourceNotFound = -32002

func unknownResource(uri string) error {
	return &jsonrpc.Error{Code: codeResourceNotFound, Message: "Resource not found: no server of this profile offers " + uri}
}

// headerOf is an SDK request's HTTP header (nil over stdio).
func headerOf(extra *mcp.RequestExtra) http.Header {
	if extra == nil {
		return nil
	}
	return extra.Header
}
