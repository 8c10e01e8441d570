package face

import (
	"bytes"
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/host"
)

// A result over its server's maxResultBytes comes back from the host as a
// resource_link to a result the daemon keeps (host/results.go). A profile
// offers the template those links fall under once it has handed out the
// first one — not before, so that a bare profile of a server without
// resources advertises none.

// resultsTemplate is where kept results are read, a page at a time.
const resultsTemplate = host.ResultsURI + "{id}/{page}"

// noteResult offers the results template if res links to a kept result.
func (p *profile) noteResult(res []byte) {
	if p.resultsOffered.Load() || !bytes.Contains(res, []byte(host.ResultsURI)) {
		return
	}
	if p.resultsOffered.Swap(true) {
		return
	}
	p.srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: resultsTemplate, Name: "plexus-results",
		Title:       "Results kept by Plexus",
		Description: "Tool results over their server's maxResultBytes, kept by Plexus for a while and read here in pages; each page's _meta names the next.",
		MIMEType:    "application/json"}, p.readResult)
}

// noteDecoded is noteResult for a decoded result.
func (p *profile) noteDecoded(res *mcp.CallToolResult) {
	if res == nil || p.resultsOffered.Load() {
		return
	}
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			p.noteResult([]byte(l.URI))
		}
	}
}

// readResult reads a page of a kept result as the client session (and,
// in team mode, the member) asking: the host answers only its own.
func (p *profile) readResult(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	d, err := p.downstream(ctx, req.Session)
	if err != nil {
		return nil, passOn(err)
	}
	pg, err := d.sess.ReadResult(withCaller(ctx, req.Extra), req.Params.URI)
	if err != nil {
		var nf *host.NotFoundError
		if errors.As(err, &nf) {
			return nil, unknownResource(req.Params.URI)
		}
		return nil, &jsonrpc.Error{Code: codeResourceNotFound, Message: err.Error()}
	}
	meta := mcp.Meta{"plexus/page": pg.Page, "plexus/pages": pg.Pages}
	if pg.Next != "" {
		meta["plexus/next"] = pg.Next
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: pg.Text, Meta: meta}}}, nil
}
