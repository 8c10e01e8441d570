package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// NewSession creates a session of the session API (docs/sessions.md).
func (c *Client) NewSession(ctx context.Context, req apitype.NewSessionRequest) (*apitype.Session, error) {
	var out apitype.Session
	if err := c.do(ctx, request{method: http.MethodPost, path: "/sessions", body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// EndSession ends a session and stops its per-session servers.
func (c *Client) EndSession(ctx context.Context, id string) error {
	return c.do(ctx, request{method: http.MethodDelete, path: "/sessions/" + url.PathEscape(id)}, nil)
}

// SessionTools lists a session's catalog.
func (c *Client) SessionTools(ctx context.Context, id string) (*apitype.ToolList, error) {
	var out apitype.ToolList
	if err := c.do(ctx, request{method: http.MethodGet, path: "/sessions/" + url.PathEscape(id) + "/tools"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SessionCall calls a tool of a session's catalog.
func (c *Client) SessionCall(ctx context.Context, id string, req apitype.CallRequest) (*apitype.CallResult, error) {
	var out apitype.CallResult
	if err := c.do(ctx, request{method: http.MethodPost, path: "/sessions/" + url.PathEscape(id) + "/call", body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
