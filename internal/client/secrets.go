package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// Secrets lists the names of the managed secrets; values never leave the
// daemon.
func (c *Client) Secrets(ctx context.Context) (*apitype.SecretList, error) {
	var out apitype.SecretList
	if err := c.do(ctx, request{method: http.MethodGet, path: "/secrets"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetSecret stores value under name in the daemon's managed environment
// (creds.json), where { "env": name } references resolve first (R-CFG-3).
func (c *Client) SetSecret(ctx context.Context, name, value string) error {
	return c.do(ctx, request{method: http.MethodPut, path: secretPath(name), body: apitype.SetSecretRequest{Value: value}}, nil)
}

// DeleteSecret removes the managed secret name.
func (c *Client) DeleteSecret(ctx context.Context, name string) error {
	return c.do(ctx, request{method: http.MethodDelete, path: secretPath(name)}, nil)
}

func secretPath(name string) string { return "/secrets/" + url.PathEscape(name) }
