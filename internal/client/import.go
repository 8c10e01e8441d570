package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// Import sends another client's settings file to the daemon, which adds
// its servers and moves the literal secrets it finds into the managed store
// (or, with req.DryRun, only says what it would do). The answer names the
// secrets, never their values.
func (c *Client) Import(ctx context.Context, req apitype.ImportRequest) (*apitype.ImportResult, error) {
	var out apitype.ImportResult
	if err := c.do(ctx, request{method: http.MethodPost, path: "/import", body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Export returns the snippet that registers `plexus mcp` in client (claude,
// claude-desktop, cursor, vscode, codex, zed, goose). command, when not
// empty, replaces "plexus" as the command the client runs.
func (c *Client) Export(ctx context.Context, client, command string) (*apitype.ExportResult, error) {
	q := url.Values{"client": {client}}
	if command != "" {
		q.Set("command", command)
	}
	var out apitype.ExportResult
	if err := c.do(ctx, request{method: http.MethodGet, path: "/export?" + q.Encode()}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
