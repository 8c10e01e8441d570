package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// Revisions lists the kept versions of extensions.json, newest first:
// every save keeps the version it replaces.
func (c *Client) Revisions(ctx context.Context) (*apitype.Revisions, error) {
	var out apitype.Revisions
	if err := c.do(ctx, request{method: http.MethodGet, path: "/revisions"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RestoreRevision puts a kept version back as extensions.json and applies
// it, like Reload; the version it replaces is kept in turn.
func (c *Client) RestoreRevision(ctx context.Context, name string) (*apitype.WriteResult, error) {
	return c.write(ctx, request{method: http.MethodPost, path: "/revisions/" + url.PathEscape(name) + "/restore"})
}

// DiscardEdits puts extensions.json back as the daemon last read or wrote
// it, dropping a hand edit that was not applied; the edited file is kept
// as a revision.
func (c *Client) DiscardEdits(ctx context.Context) (*apitype.WriteResult, error) {
	return c.write(ctx, request{method: http.MethodPost, path: "/reload/discard"})
}
