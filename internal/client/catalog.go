package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// Tools lists the catalog's tools; server, when not empty, keeps one server's.
func (c *Client) Tools(ctx context.Context, server string) (*apitype.ToolList, error) {
	var out apitype.ToolList
	if err := c.do(ctx, request{method: http.MethodGet, path: "/tools" + query("server", server)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ToolsRendered returns the catalog rendered by the daemon for a model
// runtime: format is "mcp", "openai" or "anthropic" (R-CAT-5). The JSON array
// is returned unchanged so that it can be handed on verbatim.
func (c *Client) ToolsRendered(ctx context.Context, server, format string) (json.RawMessage, error) {
	var out json.RawMessage
	q := query("server", server, "format", format)
	if err := c.do(ctx, request{method: http.MethodGet, path: "/tools" + q}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Call calls a tool by its Plexus name. It waits as long as the tool runs
// (bounded by the server's call timeout in the daemon, and by ctx).
func (c *Client) Call(ctx context.Context, req apitype.CallRequest) (*apitype.CallResult, error) {
	var out apitype.CallResult
	if err := c.do(ctx, request{method: http.MethodPost, path: "/call", body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Resources lists resources; server, when not empty, keeps one server's.
func (c *Client) Resources(ctx context.Context, server string) (*apitype.ResourceList, error) {
	var out apitype.ResourceList
	if err := c.do(ctx, request{method: http.MethodGet, path: "/resources" + query("server", server)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ReadResource reads one resource of a server.
func (c *Client) ReadResource(ctx context.Context, req apitype.ReadResourceRequest) (*apitype.ReadResourceResult, error) {
	var out apitype.ReadResourceResult
	if err := c.do(ctx, request{method: http.MethodPost, path: "/resources/read", body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Prompts lists prompts; server, when not empty, keeps one server's.
func (c *Client) Prompts(ctx context.Context, server string) (*apitype.PromptList, error) {
	var out apitype.PromptList
	if err := c.do(ctx, request{method: http.MethodGet, path: "/prompts" + query("server", server)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetPrompt fills in one prompt of a server.
func (c *Client) GetPrompt(ctx context.Context, req apitype.GetPromptRequest) (*apitype.GetPromptResult, error) {
	var out apitype.GetPromptResult
	if err := c.do(ctx, request{method: http.MethodPost, path: "/prompts/get", body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// query encodes key/value pairs, leaving out empty values, as "?k=v&..." or "".
func query(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			v.Set(kv[i], kv[i+1])
		}
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}
