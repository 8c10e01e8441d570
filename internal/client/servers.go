package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// Status returns the daemon's state and every server's status.
func (c *Client) Status(ctx context.Context) (*apitype.Status, error) {
	var out apitype.Status
	if err := c.do(ctx, request{method: http.MethodGet, path: "/status"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Servers lists the configured servers with their status.
func (c *Client) Servers(ctx context.Context) (*apitype.ServerList, error) {
	var out apitype.ServerList
	if err := c.do(ctx, request{method: http.MethodGet, path: "/servers"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Server returns one server's stored configuration and the revision it was
// read at, the base of a later PutServer.
func (c *Client) Server(ctx context.Context, name string) (*apitype.ServerConfig, error) {
	var out apitype.ServerConfig
	if err := c.do(ctx, request{method: http.MethodGet, path: serverPath(name)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AddServer adds a new server. The daemon starts it first unless
// req.NoVerify, so this can take as long as the server's startup timeout.
// ifMatch, when > 0, is the revision the addition is based on.
func (c *Client) AddServer(ctx context.Context, req apitype.PutServerRequest, ifMatch int64) (*apitype.WriteResult, error) {
	return c.write(ctx, request{method: http.MethodPost, path: "/servers", body: req, ifMatch: ifMatch})
}

// PutServer replaces the configuration of server name. ifMatch, when > 0, is
// the revision the new configuration was derived from; the daemon refuses the
// write if the settings changed since (R-OWN-3).
func (c *Client) PutServer(ctx context.Context, name string, req apitype.PutServerRequest, ifMatch int64) (*apitype.WriteResult, error) {
	return c.write(ctx, request{method: http.MethodPut, path: serverPath(name), body: req, ifMatch: ifMatch})
}

// DeleteServer removes server name together with its credentials.
func (c *Client) DeleteServer(ctx context.Context, name string, ifMatch int64) (*apitype.WriteResult, error) {
	return c.write(ctx, request{method: http.MethodDelete, path: serverPath(name), ifMatch: ifMatch})
}

// SetEnabled switches server name on or off.
func (c *Client) SetEnabled(ctx context.Context, name string, on bool) (*apitype.WriteResult, error) {
	action := "/disable"
	if on {
		action = "/enable"
	}
	return c.write(ctx, request{method: http.MethodPost, path: serverPath(name) + action})
}

// Restart stops server name and starts it again now, resetting its backoff:
// the way out of a crash loop once its cause is fixed. Like AddServer it
// can take as long as the server's startup timeout; the result holds the
// state it reached.
func (c *Client) Restart(ctx context.Context, name string) (*apitype.WriteResult, error) {
	return c.write(ctx, request{method: http.MethodPost, path: serverPath(name) + "/restart"})
}

// Reload makes the daemon read extensions.json again and apply it as one
// transaction, for edits made to the file by hand. An invalid file is
// refused with an *APIError listing every problem, and the running servers
// are kept as they were.
func (c *Client) Reload(ctx context.Context) (*apitype.WriteResult, error) {
	return c.write(ctx, request{method: http.MethodPost, path: "/reload"})
}

// Logs returns the last stderr lines of server name (at most 200, kept
// across restarts, secrets redacted). To follow them, open Events first,
// then call Logs, and skip the EventStderr events whose Seq is below
// LogLines.NextSeq: those lines are in the answer already.
func (c *Client) Logs(ctx context.Context, name string) (*apitype.LogLines, error) {
	var out apitype.LogLines
	if err := c.do(ctx, request{method: http.MethodGet, path: serverPath(name) + "/logs"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func (c *Client) write(ctx context.Context, r request) (*apitype.WriteResult, error) {
	var out apitype.WriteResult
	if err := c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// serverPath escapes name so that no name can address another route.
func serverPath(name string) string { return "/servers/" + url.PathEscape(name) }

// UILogin asks the daemon for a one-time login link to its web page.
func (c *Client) UILogin(ctx context.Context) (*apitype.UILogin, error) {
	var out apitype.UILogin
	if err := c.do(ctx, request{method: http.MethodPost, path: "/ui/login"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Settings returns the section-wide settings (request timeout, retry).
func (c *Client) Settings(ctx context.Context) (*apitype.Settings, error) {
	var out apitype.Settings
	if err := c.do(ctx, request{method: http.MethodGet, path: "/settings"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetSettings saves the section-wide settings; ifMatch, when > 0, is the
// revision they were read at.
func (c *Client) SetSettings(ctx context.Context, s apitype.Settings, ifMatch int64) (*apitype.Settings, error) {
	var out apitype.Settings
	if err := c.do(ctx, request{method: http.MethodPut, path: "/settings", body: s, ifMatch: ifMatch}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
