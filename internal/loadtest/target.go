package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The protocol eras a Target can speak.
const (
	Protocol2026 = "2026-07-28" // stateless requests (server/discover, no session)
	Protocol2025 = "2025-11-25" // initialize and a session
	// Protocol20250618 is the session era as most editors still speak it.
	Protocol20250618 = "2025-06-18"
)

// Target is the endpoint under load: a stdio command or a URL.
type Target struct {
	// Stdio is the argv of a stdio server, started once per session.
	Stdio []string
	// Env is added to the environment of the stdio command.
	Env []string
	// Stderr receives the stdio command's stderr; nil discards it.
	Stderr io.Writer

	// URL is a streamable HTTP endpoint; Header is sent with every request.
	URL    string
	Header http.Header

	// Protocol is the version the client asks for: Protocol2026,
	// Protocol2025 or Protocol20250618 ("" is the SDK's latest). Asked for
	// a session-era version, the SDK
	// skips server/discover and initializes a session even with a server
	// that also speaks 2026-07-28.
	Protocol string

	// Client is ClientSDK (the official Go SDK's client, "" too) or
	// ClientRaw (raw.go: MCP 2026-07-28 only).
	Client string
}

// The clients a Target can be driven with.
const (
	ClientSDK = "sdk"
	ClientRaw = "raw"
)

func (t Target) validate() error {
	switch {
	case len(t.Stdio) == 0 && t.URL == "":
		return errors.New("no endpoint: give a stdio command or a URL")
	case len(t.Stdio) > 0 && t.URL != "":
		return errors.New("give a stdio command or a URL, not both")
	}
	switch t.Client {
	case "", ClientSDK:
	case ClientRaw:
		if t.Protocol == Protocol2025 || t.Protocol == Protocol20250618 {
			return fmt.Errorf("the raw client speaks %s only", Protocol2026)
		}
	default:
		return fmt.Errorf("client %q: want %s or %s", t.Client, ClientSDK, ClientRaw)
	}
	switch t.Protocol {
	case "", Protocol2026, Protocol2025, Protocol20250618:
		return nil
	}
	return fmt.Errorf("protocol %q: want %s, %s or %s", t.Protocol, Protocol2026, Protocol2025, Protocol20250618)
}

// session is one client of the endpoint: the SDK's or the raw one.
type session interface {
	protocol() string
	tools(ctx context.Context) ([]string, error)
	call(ctx context.Context, name string, args json.RawMessage) error
	close() error
	// pid is the stdio command's process, 0 for a URL.
	pid() int
}

// open opens a session with t's client, and returns its handshake time
// (none for the raw client: MCP 2026-07-28 needs no handshake).
func (t Target) open(ctx context.Context, hc *http.Client, conns int) (session, time.Duration, error) {
	if t.Client != ClientRaw {
		cs, pid, d, err := t.connect(ctx, hc)
		if err != nil {
			return nil, 0, err
		}
		return sdkSession{cs, pid}, d, nil
	}
	var s rawSessionOf
	start := time.Now()
	if t.URL != "" {
		h, err := newRawHTTP(t.URL, t.Header, conns)
		if err != nil {
			return nil, 0, err
		}
		s = rawSessionOf{send: h.send, closeFn: h.close}
	} else {
		p, err := dialRawStdio(ctx, t)
		if err != nil {
			return nil, 0, err
		}
		s = rawSessionOf{send: p.send, closeFn: p.close, procID: p.cmd.Process.Pid}
	}
	// What a 2026-07-28 client asks first; the handshake time.
	a, err := s.send(ctx, "server/discover", "", "")
	if err == nil && a.Error != nil {
		err = a.err()
	}
	if err != nil {
		s.close()
		return nil, 0, fmt.Errorf("server/discover on %s: %w", t, err)
	}
	return s, time.Since(start), nil
}

type sdkSession struct {
	cs     *mcp.ClientSession
	procID int // the stdio command's process; 0 for a URL
}

func (s sdkSession) pid() int { return s.procID }

func (s sdkSession) protocol() string {
	if init := s.cs.InitializeResult(); init != nil {
		return init.ProtocolVersion
	}
	return ""
}

func (s sdkSession) tools(ctx context.Context) ([]string, error) {
	tools, err := listTools(ctx, s.cs)
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names, err
}

func (s sdkSession) call(ctx context.Context, name string, args json.RawMessage) error {
	out, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	switch {
	case err != nil:
		return err
	case out.IsError:
		return fmt.Errorf("the tool answered with an error: %s", resultText(out))
	}
	return nil
}

func (s sdkSession) close() error { return s.cs.Close() }

// String names the endpoint for messages.
func (t Target) String() string {
	if t.URL != "" {
		return t.URL
	}
	return fmt.Sprintf("%q", t.Stdio)
}

// connect opens one MCP session and returns it with the stdio command's
// process (0 for a URL) and its handshake time.
func (t Target) connect(ctx context.Context, hc *http.Client) (*mcp.ClientSession, int, time.Duration, error) {
	var tr mcp.Transport
	var cmd *exec.Cmd
	if t.URL != "" {
		tr = &mcp.StreamableClientTransport{Endpoint: t.URL, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}
	} else {
		cmd = exec.Command(t.Stdio[0], t.Stdio[1:]...)
		cmd.Env = append(os.Environ(), t.Env...)
		cmd.Stderr = t.Stderr
		tr = &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "plexus-load", Version: "1"}, nil)
	start := time.Now()
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: t.Protocol})
	if err != nil {
		return nil, 0, 0, fmt.Errorf("connecting to %s: %w", t, err)
	}
	pid := 0
	if cmd != nil && cmd.Process != nil {
		pid = cmd.Process.Pid
	}
	return cs, pid, time.Since(start), nil
}

// httpClient keeps enough idle connections for every concurrent caller, so
// that a run measures the endpoint and not new TCP connections.
func httpClient(header http.Header, conns int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 0
	tr.MaxIdleConnsPerHost = max(conns, 2)
	return &http.Client{Transport: headerTransport{header: header, next: tr}}
}

type headerTransport struct {
	header http.Header
	next   http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.header) > 0 {
		r = r.Clone(r.Context())
		for k, vs := range h.header {
			r.Header[k] = vs
		}
	}
	return h.next.RoundTrip(r)
}
