package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// RegistryQuery is a search of the MCP registry.
type RegistryQuery struct {
	Search string
	Cursor string
	// Limit is how many servers a page holds (0: the daemon's default).
	Limit int
	// Refresh asks the registry even if the daemon has a fresh answer.
	Refresh bool
}

// SearchRegistry reads one page of the MCP registry's servers whose name
// holds q.Search, through the daemon (which asks the registry its
// settings name and keeps the answers).
func (c *Client) SearchRegistry(ctx context.Context, q RegistryQuery) (*apitype.RegistryList, error) {
	v := url.Values{}
	if q.Search != "" {
		v.Set("search", q.Search)
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Refresh {
		v.Set("refresh", "1")
	}
	path := "/registry/servers"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var out apitype.RegistryList
	if err := c.do(ctx, request{method: http.MethodGet, path: path}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ShowRegistry reads one version of a registry server ("" is the latest),
// with its server.json and the versions there are.
func (c *Client) ShowRegistry(ctx context.Context, name, version string, refresh bool) (*apitype.RegistryShow, error) {
	v := url.Values{}
	if version != "" {
		v.Set("version", version)
	}
	if refresh {
		v.Set("refresh", "1")
	}
	path := "/registry/servers/" + url.PathEscape(name)
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var out apitype.RegistryShow
	if err := c.do(ctx, request{method: http.MethodGet, path: path}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PlanRegistry asks what adding a registry server would save; nothing is
// saved. The plan's Config is then added like any server (AddServer),
// with the values of its secret fields.
func (c *Client) PlanRegistry(ctx context.Context, req apitype.RegistryPlanRequest) (*apitype.RegistryPlan, error) {
	var out apitype.RegistryPlan
	if err := c.do(ctx, request{method: http.MethodPost, path: "/registry/plan", body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
