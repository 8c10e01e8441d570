package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// Clients lists the MCP clients' settings files the daemon finds in the
// person's home, with their servers and whether Plexus is connected.
func (c *Client) Clients(ctx context.Context) (*apitype.ClientList, error) {
	var out apitype.ClientList
	if err := c.do(ctx, request{method: http.MethodGet, path: "/clients"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ImportClient imports the servers of a client's settings file, which the
// daemon reads itself.
func (c *Client) ImportClient(ctx context.Context, client string, req apitype.ClientImportRequest) (*apitype.ImportResult, error) {
	var out apitype.ImportResult
	if err := c.do(ctx, request{method: http.MethodPost, path: "/clients/" + url.PathEscape(client) + "/import", body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ConnectClient registers Plexus in a client's user settings file: with
// req.DryRun it shows the change (masked) and its Base; without, it writes
// the change shown for req.Base.
func (c *Client) ConnectClient(ctx context.Context, client string, req apitype.ClientConnectRequest) (*apitype.ClientConnectResult, error) {
	var out apitype.ClientConnectResult
	if err := c.do(ctx, request{method: http.MethodPost, path: "/clients/" + url.PathEscape(client) + "/connect", body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
