package face

import (
	"context"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/host"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// syncResources offers the profile's resources and templates under their
// own URIs; a URI two servers share goes to the first by name.
func (p *profile) syncResources() {
	list, err := p.f.h.Resources("")
	if err != nil {
		return
	}
	seenR, seenT := map[string]bool{}, map[string]bool{}
	for _, r := range list {
		if !p.def.has(r.Server) {
			continue
		}
		seen, offered := seenR, p.resources
		if r.Template {
			seen, offered = seenT, p.templates
		}
		if seen[r.URI] {
			continue
		}
		seen[r.URI] = true
		def := r.Server + "\x00" + r.Name + "\x00" + r.Title + "\x00" + r.Description + "\x00" + r.MIMEType
		if offered[r.URI] == def {
			continue
		}
		offered[r.URI] = def
		p.resRoute[r.URI] = r.Server
		h := p.readResource(r.Server)
		if r.Template {
			p.srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: r.URI, Name: r.Name, Title: r.Title,
				Description: r.Description, MIMEType: r.MIMEType}, h)
		} else {
			p.srv.AddResource(&mcp.Resource{URI: r.URI, Name: r.Name, Title: r.Title,
				Description: r.Description, MIMEType: r.MIMEType}, h)
		}
	}
	if gone := dropUnseen(p.resources, seenR); len(gone) > 0 {
		p.srv.RemoveResources(gone...)
	}
	if gone := dropUnseen(p.templates, seenT); len(gone) > 0 {
		p.srv.RemoveResourceTemplates(gone...)
	}
}

func dropUnseen(offered map[string]string, seen map[string]bool) []string {
	var gone []string
	for k := range offered {
		if !seen[k] {
			gone = append(gone, k)
			delete(offered, k)
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
		res, err := p.f.h.ReadResource(ctx, server, req.Params.URI)
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

func (p *profile) syncPrompts() {
	list, err := p.f.h.Prompts("")
	if err != nil {
		return
	}
	seen := map[string]bool{}
	for _, pr := range list {
		if !p.def.has(pr.Server) {
			continue
		}
		name := p.promptName(pr.Server, pr.Name)
		if seen[name] {
			continue
		}
		seen[name] = true
		var args []*mcp.PromptArgument
		var sig strings.Builder
		for _, a := range pr.Arguments {
			args = append(args, &mcp.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
			sig.WriteString(a.Name + "\x01" + a.Description + "\x01" + map[bool]string{true: "r"}[a.Required] + "\x02")
		}
		def := pr.Server + "\x00" + pr.Name + "\x00" + pr.Title + "\x00" + pr.Description + "\x00" + sig.String()
		if p.prompts[name] == def {
			continue
		}
		p.prompts[name] = def
		p.promptRoute[name] = [2]string{pr.Server, pr.Name}
		p.srv.AddPrompt(&mcp.Prompt{Name: name, Title: pr.Title, Description: pr.Description, Arguments: args},
			p.getPrompt(pr.Server, pr.Name))
	}
	if gone := dropUnseen(p.prompts, seen); len(gone) > 0 {
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
		res, err := p.f.h.GetPrompt(ctx, server, name, req.Params.Arguments)
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
	conn, err := p.f.h.ServerConn(server)
	if err != nil {
		return passOn(err)
	}
	// The SDK sends the update to the sessions subscribed to the URI.
	conn.WatchResources("face/"+p.name, func(uri string) {
		p.srv.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
	})
	return passOn(conn.Subscribe(ctx, req.Params.URI))
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
	return passOn(conn.Unsubscribe(ctx, req.Params.URI))
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
	conn, err := p.f.h.ServerConn(server)
	if err != nil {
		return nil, passOn(err)
	}
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
