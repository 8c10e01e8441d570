package client

import (
	"context"
	"net/http"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// Login starts an OAuth login for server name (R-AUTH-1) and returns the
// URL to open in a browser. The daemon waits for the redirect on its own
// loopback listener; progress shows in the server's status (Auth).
func (c *Client) Login(ctx context.Context, name string, req apitype.LoginRequest) (*apitype.LoginStart, error) {
	var out apitype.LoginStart
	if err := c.do(ctx, request{method: http.MethodPost, path: serverPath(name) + "/login", body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CompleteLogin hands the daemon the URL the browser was redirected to, for
// a login started with NoBrowser. The result holds the state the server
// reached with its new tokens.
func (c *Client) CompleteLogin(ctx context.Context, name, redirectURL string) (*apitype.WriteResult, error) {
	return c.write(ctx, request{method: http.MethodPost, path: serverPath(name) + "/login/complete",
		body: apitype.LoginCompleteRequest{RedirectURL: redirectURL}})
}

// Logout forgets the tokens and the client registration Plexus holds for
// server name (R-AUTH-2).
func (c *Client) Logout(ctx context.Context, name string) (*apitype.WriteResult, error) {
	return c.write(ctx, request{method: http.MethodPost, path: serverPath(name) + "/logout"})
}
