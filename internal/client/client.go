// Package client is the typed Go client of the Plexus daemon's settings API.
//
// Every front end (the CLI, the terminal UI) changes state only through the
// daemon (R-OWN-2), and reaches it through this package alone: HTTP/JSON on
// the unix socket $PLEXUS_HOME/plexus.sock, each request carrying the
// token in $PLEXUS_HOME/token (token.go). The wire structs live in
// internal/apitype; this package adds the transport, the routes and the
// translation of failures into errors a front end can turn into a remedy.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// SocketName is the name of the daemon's socket inside the Plexus home.
const SocketName = "plexus.sock"

// dialTimeout bounds only the connection to the socket. A local socket
// answers at once or not at all, so a short limit turns a hung daemon into an
// error instead of a silent wait. Calls themselves have no overall timeout:
// adding a server waits for it to start, and a tool call may legitimately run
// for minutes; the caller's context is the one limit.
const dialTimeout = 5 * time.Second

// maxErrorBody bounds how much of an error answer is read: the daemon's error
// bodies are small, and anything larger is not one of them.
const maxErrorBody = 1 << 20

// Home returns the Plexus home directory: $PLEXUS_HOME, or ~/.plexus.
func Home() (string, error) {
	if h := os.Getenv("PLEXUS_HOME"); h != "" {
		// A relative PLEXUS_HOME would name a different socket in every
		// working directory; pin it once.
		abs, err := filepath.Abs(h)
		if err != nil {
			return "", fmt.Errorf("PLEXUS_HOME %q: %w", h, err)
		}
		return abs, nil
	}
	dir, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot find your home directory (%w): set PLEXUS_HOME to the Plexus directory", err)
	}
	return filepath.Join(dir, ".plexus"), nil
}

// Client talks to one daemon. It is safe for concurrent use.
type Client struct {
	home   string
	socket string
	// homeFromEnv records that PLEXUS_HOME chose the home, so that "the
	// daemon is not running" can say which daemon was looked for: a daemon
	// started under another PLEXUS_HOME is a common cause.
	homeFromEnv bool
	hc          *http.Client
	// streams serves long-lived answers (the event stream). It shares hc's
	// transport but must never get an overall Timeout: a stream is open for
	// as long as its reader wants it.
	streams *http.Client
	tok     token // sent with every request (token.go)
}

// Dial connects to the daemon's socket.
func (c *Client) Dial(ctx context.Context) (net.Conn, error) {
	d := net.Dialer{Timeout: dialTimeout}
	conn, err := d.DialContext(ctx, "unix", c.socket)
	if err != nil {
		// Marked so that do can tell "never reached the daemon" (safe to
		// say it is not running) from a failure mid-call.
		return nil, &dialError{err: err}
	}
	return conn, nil
}

// New returns a client of the daemon whose home is home.
func New(home string) *Client {
	c := &Client{
		home:        home,
		socket:      filepath.Join(home, SocketName),
		homeFromEnv: os.Getenv("PLEXUS_HOME") != "",
	}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return c.Dial(ctx)
		},
		MaxIdleConns:    4,
		IdleConnTimeout: 30 * time.Second,
	}
	auth := authTransport{c: c, base: tr}
	c.hc = &http.Client{Transport: auth}
	c.streams = &http.Client{Transport: auth}
	return c
}

// Home returns the Plexus home this client talks to.
func (c *Client) Home() string { return c.home }

// Socket returns the path of the daemon's socket.
func (c *Client) Socket() string { return c.socket }

// request describes one API call.
type request struct {
	method string
	path   string // below APIVersion, already escaped
	body   any    // JSON-encoded when not nil
	// ifMatch is sent as If-Match when > 0: the revision the write is based on.
	ifMatch int64
}

// do performs r and decodes a 2xx answer into out (when out is not nil and the
// answer has a body). A non-2xx answer becomes an *APIError.
func (c *Client) do(ctx context.Context, r request, out any) error {
	var body io.Reader
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return fmt.Errorf("encoding the request %s %s: %w", r.method, r.path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, "http://plexus"+apitype.APIVersion+r.path, body)
	if err != nil {
		return fmt.Errorf("building the request %s %s: %w", r.method, r.path, err)
	}
	req.Header.Set("Accept", "application/json")
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.ifMatch > 0 {
		req.Header.Set(apitype.HeaderIfMatch, strconv.FormatInt(r.ifMatch, 10))
	}
	if tok := c.tok.get(c.home); tok != "" {
		// Here rather than by the transport, which must copy a request
		// to add a header: this is the path of every call.
		req.Header.Set("Authorization", "Bearer "+tok)
	}

	resp, err := c.hc.Do(req)
	if err != nil {
		return c.transportError(ctx, err)
	}
	defer resp.Body.Close()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return readAPIError(resp)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		// Drain so the connection can be reused.
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return c.transportError(ctx, err)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decoding the daemon's answer to %s %s: %w (is the daemon the same version as this program?)", r.method, r.path, err)
	}
	return nil
}

// readAPIError turns a non-2xx answer into an *APIError. The daemon always
// answers with apitype.Error; anything else (an old daemon, a stray server on
// the socket) still gives a readable error rather than a decoding failure.
func readAPIError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var e apitype.Error
	if err := json.Unmarshal(raw, &e); err == nil && e.Err.Message != "" {
		return &APIError{Status: resp.StatusCode, Body: e.Err}
	}
	msg := "unexpected answer from the daemon: HTTP " + resp.Status
	if s := firstLine(string(raw)); s != "" {
		msg += ": " + s
	}
	return &APIError{Status: resp.StatusCode, Body: apitype.ErrorBody{
		Code:    codeForStatus(resp.StatusCode),
		Message: msg,
	}}
}

// firstLine returns the first non-blank line of s, capped so that a large
// unexpected body cannot flood the terminal.
func firstLine(s string) string {
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if r := []rune(line); len(r) > 200 {
			line = string(r[:200]) + "…"
		}
		return line
	}
	return ""
}

// codeForStatus guesses the error code of a status for answers that carry
// none, so callers can switch on Code alone.
func codeForStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return apitype.CodeBadRequest
	case http.StatusUnauthorized, http.StatusForbidden:
		return apitype.CodeUnauthorized
	case http.StatusNotFound:
		return apitype.CodeNotFound
	case http.StatusConflict, http.StatusPreconditionFailed:
		return apitype.CodeConflict
	case http.StatusRequestEntityTooLarge:
		return apitype.CodeTooLarge
	case http.StatusBadGateway:
		return apitype.CodeUpstream
	case http.StatusServiceUnavailable:
		return apitype.CodeUnavailable
	case http.StatusGatewayTimeout:
		return apitype.CodeTimeout
	}
	return apitype.CodeInternal
}

// transportError explains a failure to exchange a request with the daemon.
func (c *Client) transportError(ctx context.Context, err error) error {
	// The caller gave up (Ctrl-C, a deadline): that is the whole story.
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	var de *dialError
	if errors.As(err, &de) {
		return c.dialFailure(de.err)
	}
	// The connection was made but broke: the daemon stopped or crashed
	// mid-request. A write may or may not have been applied.
	return fmt.Errorf("the connection to the daemon broke (%w): check `plexus status`; a change may or may not have been applied", err)
}

// dialError marks a failure to connect to the socket.
type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// MCP returns the URL of the daemon's MCP face for profile ("" for the
// default) and the HTTP client that reaches it over the socket. The client
// has no overall timeout: MCP calls and streams last as long as they need.
func (c *Client) MCP(profile string) (string, *http.Client) {
	u := "http://plexus/mcp"
	if profile != "" {
		u += "/" + url.PathEscape(profile)
	}
	return u, c.streams
}
