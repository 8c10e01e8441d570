package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// CallApprovals lists the tool calls waiting for the user's approval.
func (c *Client) CallApprovals(ctx context.Context) ([]apitype.CallApproval, error) {
	var out []apitype.CallApproval
	if err := c.do(ctx, request{method: http.MethodGet, path: "/approvals"}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// DecideCall approves (or refuses) the waiting call id.
func (c *Client) DecideCall(ctx context.Context, id string, approve bool) error {
	return c.do(ctx, request{method: http.MethodPost, path: "/approvals/" + url.PathEscape(id), body: apitype.DecideCallRequest{Approve: approve}}, nil)
}
