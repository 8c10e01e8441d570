package client

import (
	"context"
	"net/http"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// Accept accepts the changed definitions of held tools of server name
// (R-CAT-6): the tools req names, or all of them. Send the NewHash each
// tool had when it was shown to the person in req.Hashes, so that a tool
// that changed again since is refused (an *APIError with code conflict)
// rather than accepted unseen.
func (c *Client) Accept(ctx context.Context, name string, req apitype.AcceptRequest) (*apitype.AcceptResult, error) {
	var out apitype.AcceptResult
	if err := c.do(ctx, request{method: http.MethodPost, path: serverPath(name) + "/accept", body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Approve approves the current definition of server name — its command,
// args, environment names or URL — and starts it (R-CAT-6). key, if not
// empty, is the Approval.Key shown to the person: a definition that changed
// again since is refused. The result holds the state the server reached.
func (c *Client) Approve(ctx context.Context, name, key string) (*apitype.WriteResult, error) {
	return c.write(ctx, request{method: http.MethodPost, path: serverPath(name) + "/approve", body: apitype.ApproveRequest{Key: key}})
}
